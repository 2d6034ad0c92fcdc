-- src/sql/subsets/subset_metrics.sql
--	the article's properties of a whole job: balance, diversity, churn, spread

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
