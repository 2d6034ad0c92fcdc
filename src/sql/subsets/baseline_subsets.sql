-- src/sql/subsets/baseline_subsets.sql
--	the article's baseline subset algorithms: random, round robin, deterministic, consistent

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
