-- src/sql/ring/ring_lookups.sql
--	ring lookups: the partition and the nodes of a key, one or an array, and the nodes of a partition

CREATE FUNCTION ring_partition(ring partition_ring, key bigint)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, bigint) IS
'partition of a 64-bit key: its top part_power bits, taken as unsigned. The key is taken as already hashed, its bits as they are: hash integer ids first, ring_partition(ring, xxh3_64(id)), or small ids all fall in partition 0';

CREATE FUNCTION ring_nodes(ring partition_ring, key bigint)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, bigint) IS
'node ids of the replicas of a 64-bit key''s partition, primary first. The key is taken as already hashed, its bits as they are: hash integer ids first, ring_nodes(ring, xxh3_64(id)), or small ids all fall in partition 0';

CREATE FUNCTION ring_partition_nodes(ring partition_ring, partition int)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_partition_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition_nodes(partition_ring, int) IS
'node ids of the replicas of a partition, primary first';

-- Lookups by key type, handoff nodes, batches
CREATE FUNCTION ring_partition(ring partition_ring, key text)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, text) IS
'partition of a text key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_partition(ring partition_ring, key bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, bytea) IS
'partition of a bytea key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_partition(ring partition_ring, key uuid)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, uuid) IS
'partition of a uuid key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key text)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, text) IS
'node ids of the replicas of a text key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key bytea)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, bytea) IS
'node ids of the replicas of a bytea key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key uuid)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, uuid) IS
'node ids of the replicas of a uuid key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, keys bigint[],
                           OUT key bigint, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, bigint[]) IS
'one row per key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)), looked up with the ring''s memory latency hidden; at most 4194304 keys. The keys are taken as already hashed: hash integer ids first (xxh3_64(id))';

CREATE FUNCTION ring_nodes(ring partition_ring, keys text[],
                           OUT key text, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, text[]) IS
'one row per text key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';

CREATE FUNCTION ring_nodes(ring partition_ring, keys bytea[],
                           OUT key bytea, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, bytea[]) IS
'one row per bytea key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';

CREATE FUNCTION ring_nodes(ring partition_ring, keys uuid[],
                           OUT key uuid, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, uuid[]) IS
'one row per uuid key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';
