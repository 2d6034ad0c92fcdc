--
-- The measuring functions: subset_balance, subset_diversity, subset_churn and
-- subset_spread, checked against counts made in SQL from the subsets.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- Connection balance agrees with counting the connections in SQL.
CREATE TEMP TABLE jobs AS
SELECT a, m, n, k
FROM unnest(ARRAY['random', 'round_robin', 'deterministic', 'consistent',
                  'ringsteady', 'ringsteady_unscaled', 'rocksteadier']) AS a,
     (VALUES (7, 10, 3), (40, 25, 6), (100, 33, 20), (13, 200, 20)) AS j(m, n, k);
CREATE TEMP TABLE subsets AS
SELECT a, m, n, k, f,
       CASE a WHEN 'random' THEN random_subset(f, n, k)
              WHEN 'round_robin' THEN round_robin_subset(f, n, k)
              WHEN 'deterministic' THEN deterministic_subset(f, n, k)
              WHEN 'consistent' THEN consistent_subset(f, n, k)
              WHEN 'ringsteady' THEN ringsteady_subset(f, n, k)
              WHEN 'ringsteady_unscaled' THEN ringsteady_subset(f, n, k, false)
              ELSE rocksteadier_subset(f, n, k) END AS s
FROM jobs, generate_series(0, m - 1) AS f;
SELECT j.a, j.m, j.n, j.k,
       (b.min_connections, b.max_connections) = (c.lo, c.hi) AS balance_ok,
       b.utilization = (j.m * least(j.k, j.n))::float8 / (j.n * c.hi) AS utilization_ok,
       d.distinct_subsets = c.distinct_subsets AS diversity_ok
FROM jobs j,
     LATERAL subset_balance(j.a, j.m, j.n, j.k) AS b,
     LATERAL subset_diversity(j.a, j.m, j.n, j.k) AS d,
     LATERAL (SELECT min(coalesce(cnt, 0)) AS lo, max(coalesce(cnt, 0)) AS hi,
                     (SELECT count(DISTINCT (SELECT array_agg(x ORDER BY x) FROM unnest(s.s) AS x))
                      FROM subsets s WHERE (s.a, s.m, s.n, s.k) = (j.a, j.m, j.n, j.k)) AS distinct_subsets
              FROM generate_series(0, j.n - 1) AS backend
              LEFT JOIN (SELECT x, count(*) AS cnt FROM subsets s, unnest(s.s) AS x
                         WHERE (s.a, s.m, s.n, s.k) = (j.a, j.m, j.n, j.k) GROUP BY x) AS per
                     ON per.x = backend) AS c
ORDER BY 1, 2;

-- The SRE book's example: 300 clients, 300 backends, subsets of 30%.  Random
-- subsetting leaves the least loaded backend well below the mean and the most
-- loaded well above (the book saw 63% and 121%); deterministic subsetting
-- balances exactly, Rocksteadier nearly.
SELECT a, min_connections, max_connections,
       round((min_connections / mean_connections)::numeric, 2) AS least_of_mean,
       round((max_connections / mean_connections)::numeric, 2) AS most_of_mean,
       round(achievable_utilization::numeric, 3) AS achievable_utilization
FROM unnest(ARRAY['random', 'deterministic', 'ringsteady', 'rocksteadier']) AS a,
     LATERAL subset_balance(a, 300, 300, 90)
ORDER BY a;

-- Subset diversity: round robin has N / gcd(k, N) distinct subsets,
-- Ringsteady at most N, Rocksteadier about one per frontend.
SELECT a, distinct_subsets, largest_group
FROM unnest(ARRAY['round_robin', 'ringsteady', 'rocksteadier', 'deterministic']) AS a,
     LATERAL subset_diversity(a, 1000, 100, 10)
ORDER BY a;

-- Churn.  Frontend churn (frontends 100 -> 150): none for any algorithm.
SELECT a, dropped FROM unnest(ARRAY['random', 'round_robin', 'deterministic', 'consistent',
                                    'ringsteady', 'ringsteady_unscaled', 'rocksteadier']) AS a,
     LATERAL subset_churn(a, 100, 95, 20, 150, 95, 20)
ORDER BY a;

-- Backend churn (95 -> 96 backends), the article's Figure 3 and Figure 5:
-- deterministic subsetting replaces much of every subset and some frontends
-- lose all of it; Rocksteadier (the new backend fills a padded place in the
-- last lot) and Ringsteady without scaling change at most one member.
SELECT a, round(mean_dropped::numeric, 2) AS mean_dropped, max_dropped, frontends_losing_all
FROM unnest(ARRAY['deterministic', 'ringsteady_unscaled', 'rocksteadier']) AS a,
     LATERAL subset_churn(a, 200, 95, 20, 200, 96, 20)
ORDER BY a;

-- Churn agrees with counting in SQL.
SELECT sum(cardinality(ARRAY(SELECT unnest(rocksteadier_subset(f, 50, 10))
                             EXCEPT SELECT unnest(rocksteadier_subset(f, 73, 12))))) AS counted,
       (SELECT dropped FROM subset_churn('rocksteadier', 40, 50, 10, 40, 73, 12)) AS measured
FROM generate_series(0, 39) AS f;

-- Subset spread: a rolling restart of 10 consecutive backends takes down all
-- of some round-robin subsets of 10, a tenth of every Ringsteady subset.
SELECT a, max_down, round(max_down_share::numeric, 2) AS max_down_share
FROM unnest(ARRAY['round_robin', 'ringsteady', 'rocksteadier', 'random']) AS a,
     LATERAL subset_spread(a, 100, 1000, 10, 10)
ORDER BY a;

-- Spread agrees with counting every window of the restart in SQL.
SELECT max(down) AS counted,
       (SELECT max_down FROM subset_spread('random', 30, 200, 15, 12)) AS measured
FROM (SELECT f, w, count(*) AS down
      FROM generate_series(0, 29) AS f, generate_series(0, 200 - 12) AS w,
           unnest(random_subset(f, 200, 15)) AS b
      WHERE b >= w AND b < w + 12
      GROUP BY f, w) AS windows;

-- Bad input: SQLSTATE and a message naming the value; absurd jobs are refused.
-- subset_churn names the arguments of the resized job (new_frontends,
-- new_backends, new_subset_size) as such.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT subset_balance(''rendezvous'', 10, 10, 3)',
    'SELECT subset_balance(''random'', 0, 10, 3)',
    'SELECT subset_balance(''random'', -4, 10, 3)',
    'SELECT subset_balance(''random'', 10, 0, 3)',
    'SELECT subset_balance(''random'', 10, 10, 0)',
    'SELECT subset_balance(''rocksteadier'', 10, 10, 3, lot_size => 0)',
    'SELECT subset_diversity(''random'', 10, 10, -1)',
    'SELECT subset_churn(''random'', 10, 10, 3, 10, -10, 3)',
    'SELECT subset_churn(''random'', 10, 10, 3, 0, 10, 3)',
    'SELECT subset_churn(''random'', 10, 10, 3, 10, 10, 0)',
    'SELECT subset_churn(''random'', 0, 10, 3, 10, 10, 3)',
    'SELECT subset_churn(''random'', 10, -1, 3, 10, 10, 3)',
    'SELECT subset_churn(''random'', 10, 10, -3, 10, 10, 3)',
    'SELECT subset_churn(''random'', 10, 10, 3, 10, 16777217, 3)',
    'SELECT subset_churn(''random'', 10, 16777217, 3, 10, 10, 3)',
    'SELECT subset_spread(''random'', 10, 10, 3, 0)',
    'SELECT subset_balance(''random'', 10, 16777217, 3)',
    'SELECT subset_balance(''ringsteady'', 16777217, 10, 3)',
    'SELECT subset_balance(''consistent'', 1000000, 1000000, 3)',
    'SELECT subset_balance(''consistent'', 1, 16777216, 1048577)']) AS q;

-- The detail gives the job's work estimate, which stops at 2^64 - 1 for jobs
-- far above the limits instead of wrapping around (it said 4611686048492158929).
SELECT subset_balance('ringsteady', 2147483647, 2147483647, 2147483647);

-- A consistent subset has at most 2^20 members (each costs heap moves).
SELECT subset_balance('consistent', 1, 16777216, 1048577);

-- Long measurements can be cancelled: 600,000 frontends, each reading 21
-- lots of 10, take most of a second; a statement timeout stops them.  (PL/pgSQL's
-- WHEN OTHERS does not catch a cancel, hence no error_of here.)
SET statement_timeout = '50ms';
SELECT subset_balance('rocksteadier', 600000, 1000000, 20);
RESET statement_timeout;

SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p
WHERE p.proname IN ('subset_balance', 'subset_diversity', 'subset_churn', 'subset_spread')
ORDER BY p.proname;
