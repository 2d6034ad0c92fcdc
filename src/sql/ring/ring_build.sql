-- src/sql/ring/ring_build.sql
--	ring_build and ring_rebalance: a partition ring, and the ring for changed nodes

CREATE FUNCTION ring_build(nodes int[], weights float8[], zones int[],
                           regions int[] DEFAULT NULL,
                           part_power int DEFAULT 16, replicas int DEFAULT 3,
                           seed bigint DEFAULT 0)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'ring_build'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION ring_build(int[], float8[], int[], int[], int, int, bigint) IS
'a new ring of 2^part_power partitions with replicas on the given nodes (one id, weight, zone and optional region each): every node within one partition-replica of its weighted share, replicas in distinct zones and regions as far as the topology allows; NULL if any argument but regions is NULL';

CREATE FUNCTION ring_rebalance(ring partition_ring, nodes int[], weights float8[],
                               zones int[], regions int[] DEFAULT NULL,
                               seed bigint DEFAULT 0)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'ring_rebalance'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION ring_rebalance(partition_ring, int[], float8[], int[], int[], bigint) IS
'the ring rebuilt for a new node table (added and removed nodes, changed weights and zones), moving as few replicas as the new shares allow and at most one replica of any partition (apart from replicas on removed nodes); repeat until ring_moves is empty to finish larger changes';
