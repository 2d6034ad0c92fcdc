/* sql/subsetting--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION subsetting" to load this file. \quit

--
-- Key to bucket: consistent hashing
--

CREATE FUNCTION jumpbackhash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by JumpBackHash with SplitMix64 (Ertl 2024), as hash4j''s ConsistentHashing.jumpBackHash(splitMix64_V1())';

CREATE FUNCTION jumphash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by jump consistent hash (Lamping and Veach 2014), as the paper''s C++ code and ClickHouse''s jumpConsistentHash';

--
-- Backend subsetting
--

CREATE FUNCTION ringsteady_subset(frontend int, backends int, subset_size int,
                                  backend_scaling boolean DEFAULT true)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ringsteady_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ringsteady_subset(int, int, int, boolean) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Ringsteady subsetting (Google, ACM Queue 2023), in ring order; with backend_scaling (Figure 4c) exactly the Ringsteady post''s code, with an exact rotation';

CREATE FUNCTION rocksteadier_subset(frontend int, backends int, subset_size int,
                                    lot_size int DEFAULT 10)
RETURNS int[]
AS 'MODULE_PATHNAME', 'rocksteadier_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION rocksteadier_subset(int, int, int, int) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Rocksteadier subsetting (Google, ACM Queue 2023): lots of lot_size backends shuffled per lot of frontends, visited in Ringsteady order';

CREATE FUNCTION random_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'random_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION random_subset(int, int, int, bigint) IS
'the first subset_size backends of a shuffle of all backends (SplitMix64, Fisher-Yates) seeded by seed and frontend: random subsetting';

CREATE FUNCTION round_robin_subset(frontend int, backends int, subset_size int)
RETURNS int[]
AS 'MODULE_PATHNAME', 'round_robin_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION round_robin_subset(int, int, int) IS
'the subset_size consecutive backends from (frontend * subset_size) mod backends on: round-robin subsetting';

CREATE FUNCTION deterministic_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'deterministic_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION deterministic_subset(int, int, int, bigint) IS
'deterministic subsetting (Site Reliability Engineering, chapter 20) with the Google article''s round-robin choice of leftover backends: frontends in rounds of floor(backends / subset_size) share one seeded shuffle';

CREATE FUNCTION consistent_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'consistent_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION consistent_subset(int, int, int, bigint) IS
'the first subset_size backends clockwise from the frontend on a circle where frontends and backends sit at seeded random positions: consistent subsetting (Figure 4a of the Google article)';

CREATE FUNCTION subset_balance(algorithm text, frontends int, backends int, subset_size int,
                               seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                               OUT connections bigint, OUT min_connections int,
                               OUT max_connections int, OUT mean_connections float8,
                               OUT utilization float8, OUT achievable_utilization float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_balance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_balance(text, int, int, int, bigint, int) IS
'connection balance of a job (frontends 0..frontends-1) under a subsetting algorithm: connections per backend, the article''s utilization M*k/(N*max) and achievable utilization ceil(M*k/N)/max';

CREATE FUNCTION subset_diversity(algorithm text, frontends int, backends int, subset_size int,
                                 seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                                 OUT distinct_subsets int, OUT largest_group int)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_diversity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_diversity(text, int, int, int, bigint, int) IS
'subset diversity of a job under a subsetting algorithm: the number of distinct subsets and the most frontends sharing one';

CREATE FUNCTION subset_churn(algorithm text, frontends int, backends int, subset_size int,
                             new_frontends int, new_backends int, new_subset_size int,
                             seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                             OUT frontends_compared int, OUT dropped bigint,
                             OUT mean_dropped float8, OUT max_dropped int,
                             OUT frontends_losing_all int, OUT share_losing_all float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_churn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_churn(text, int, int, int, int, int, int, bigint, int) IS
'connection churn when a job is resized (frontend, backend or subset-size churn): connections dropped per frontend present before and after, and the frontends that lose their whole subset';

CREATE FUNCTION subset_spread(algorithm text, frontends int, backends int, subset_size int,
                              restart_width int, seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                              OUT max_down int, OUT max_down_share float8,
                              OUT mean_max_down_share float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_spread'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_spread(text, int, int, int, int, bigint, int) IS
'subset spread of a job during a rolling restart of restart_width consecutive backends: the most of any frontend''s subset down at once';
--
-- Partition ring
--

CREATE TYPE partition_ring;

CREATE FUNCTION partition_ring_in(cstring)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_out(partition_ring)
RETURNS cstring
AS 'MODULE_PATHNAME', 'partition_ring_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_recv(internal)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_send(partition_ring)
RETURNS bytea
AS 'MODULE_PATHNAME', 'partition_ring_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: large rings live out of line uncompressed, so that the
-- lookups read their header with a cheap slice fetch.
CREATE TYPE partition_ring (
    INPUT = partition_ring_in,
    OUTPUT = partition_ring_out,
    RECEIVE = partition_ring_recv,
    SEND = partition_ring_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = external
);

COMMENT ON TYPE partition_ring IS
'2^part_power partitions, each with replicas placed on distinct weighted nodes in distinct failure domains; text form is JSON';

COMMENT ON FUNCTION partition_ring_in(cstring) IS 'partition_ring from its JSON text form (validated)';
COMMENT ON FUNCTION partition_ring_out(partition_ring) IS 'JSON text form of a partition_ring';
COMMENT ON FUNCTION partition_ring_recv(internal) IS 'partition_ring from its binary form (validated)';
COMMENT ON FUNCTION partition_ring_send(partition_ring) IS 'binary form of a partition_ring (fixed-width little-endian)';

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

CREATE FUNCTION ring_partition(ring partition_ring, key bigint)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, bigint) IS
'partition of a 64-bit key: its top part_power bits, taken as unsigned';

CREATE FUNCTION ring_nodes(ring partition_ring, key bigint)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, bigint) IS
'node ids of the replicas of a 64-bit key''s partition, primary first';

CREATE FUNCTION ring_partition_nodes(ring partition_ring, partition int)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_partition_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition_nodes(partition_ring, int) IS
'node ids of the replicas of a partition, primary first';

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

COMMENT ON FUNCTION ring_info(partition_ring) IS
'summary of a ring: sizes, seed, content fingerprint, largest |balance| in percent, zone and region dispersion';

CREATE FUNCTION ring_moves(old_ring partition_ring, new_ring partition_ring,
                           OUT partition int, OUT replica int,
                           OUT from_node int, OUT to_node int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_moves'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 100;

COMMENT ON FUNCTION ring_moves(partition_ring, partition_ring) IS
'the replicas that change node from old_ring to new_ring (same part power and replicas): the data copies to plan';
