-- src/sql/ring/ring_handoff_nodes.sql
--	ring handoff nodes: the nodes to try when a primary is down, as Swift's get_more_nodes

CREATE FUNCTION ring_partition_handoff_nodes(ring partition_ring, partition int,
                                             count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_partition_handoff_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition_handoff_nodes(partition_ring, int, int) IS
'up to count further nodes to try for a partition when its primaries are down, in the order of OpenStack Swift''s get_more_nodes: nodes in new regions first, then in new zones, then the others; never a primary, never a node twice';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key bigint, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, bigint, int) IS
'up to count handoff nodes of a 64-bit key: ring_partition_handoff_nodes(ring, ring_partition(ring, key), count). The key is taken as already hashed: hash integer ids first, ring_handoff_nodes(ring, xxh3_64(id), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key text, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, text, int) IS
'up to count handoff nodes of a text key: ring_handoff_nodes(ring, xxh3_64(key), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key bytea, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, bytea, int) IS
'up to count handoff nodes of a bytea key: ring_handoff_nodes(ring, xxh3_64(key), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key uuid, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, uuid, int) IS
'up to count handoff nodes of a uuid key: ring_handoff_nodes(ring, xxh3_64(key), count)';
