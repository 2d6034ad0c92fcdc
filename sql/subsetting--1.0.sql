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
