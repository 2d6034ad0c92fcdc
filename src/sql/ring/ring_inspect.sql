-- src/sql/ring/ring_inspect.sql
--	what a ring holds and what a change moves: assignments, node statistics, dispersion, summary, moves

CREATE FUNCTION ring_assignments(ring partition_ring,
                                 OUT partition int, OUT replica int, OUT node int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_assignments'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_assignments(partition_ring) IS
'every (partition, replica, node) of the ring, by partition then replica';

CREATE FUNCTION ring_node_stats(ring partition_ring,
                                OUT node int, OUT zone int, OUT region int,
                                OUT weight float8, OUT partitions bigint,
                                OUT primaries bigint, OUT wanted float8,
                                OUT quota bigint, OUT balance float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_node_stats'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 100;

COMMENT ON FUNCTION ring_node_stats(partition_ring) IS
'per node: partition-replicas held, primaries held, wanted (exact weighted share R * 2^p * w / W), quota (the builder''s target, below wanted where failure domains cap the node), and balance = 100 * (partitions - wanted) / wanted';

CREATE FUNCTION ring_dispersion(ring partition_ring, tier text DEFAULT 'zone')
RETURNS float8
AS 'MODULE_PATHNAME', 'ring_dispersion'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_dispersion(partition_ring, text) IS
'share of partition-replicas placed in a failure domain (tier ''region'', ''zone'' or ''node'') that already holds a replica of the same partition';

CREATE FUNCTION ring_info(ring partition_ring,
                          OUT part_power int, OUT replicas int, OUT partitions int,
                          OUT nodes int, OUT zones int, OUT regions int,
                          OUT seed bigint, OUT fingerprint text, OUT bytes bigint,
                          OUT max_balance float8, OUT zone_dispersion float8,
                          OUT region_dispersion float8)
RETURNS record
AS 'MODULE_PATHNAME', 'ring_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Values carry a SHA-256 digest since 1.1 (format 2; format 1 still reads):
-- ring_info's fingerprint is that digest, in hex.
COMMENT ON FUNCTION ring_info(partition_ring) IS
'summary of a ring: sizes, seed, fingerprint (SHA-256 digest of its contents, hex), largest |balance| in percent, zone and region dispersion';

CREATE FUNCTION ring_moves(old_ring partition_ring, new_ring partition_ring,
                           OUT partition int, OUT replica int,
                           OUT from_node int, OUT to_node int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_moves'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 100;

COMMENT ON FUNCTION ring_moves(partition_ring, partition_ring) IS
'the replicas that change node from old_ring to new_ring (same part power and replicas): the data copies to plan';
