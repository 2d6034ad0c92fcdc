--
-- The article's other algorithms: random_subset, round_robin_subset,
-- deterministic_subset and consistent_subset.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- Round robin, the article's Table 1 (10 backends, subsets of 4): frontend 5
-- is back at {0, 1, 2, 3}, and there are N / gcd(k, N) = 5 distinct subsets.
SELECT m AS frontend, round_robin_subset(m, 10, 4) AS subset FROM generate_series(0, 5) AS m;

-- Deterministic subsetting, 10 backends, subsets of 4: two subsets per round,
-- and the 2 leftover tasks of round r are chosen round robin ({0, 1}, then
-- {2, 3}, ...), as in the article.
SELECT m / 2 AS round,
       (SELECT array_agg(b ORDER BY b) FROM generate_series(0, 9) AS b
        WHERE b <> ALL (deterministic_subset(m, 10, 4) || deterministic_subset(m + 1, 10, 4))) AS left_out
FROM generate_series(0, 8, 2) AS m;

-- Golden values of the documented constructions (see the README; pinned in
-- test/test_subsets.c too, where straightforward references compute them).
SELECT random_subset(3, 100, 8) AS random, random_subset(3, 100, 8, seed => -7) AS random_seed_7,
       deterministic_subset(7, 100, 8, -7) AS deterministic,
       consistent_subset(3, 100, 8) AS consistent, consistent_subset(3, 100, 8, -7) AS consistent_seed_7;
SELECT m AS frontend, deterministic_subset(m, 10, 4) AS subset FROM generate_series(0, 3) AS m;

-- Every algorithm: distinct members in range, all N when subset_size >= N.
SELECT a, bool_and(cardinality(s) = least(k, n)
                   AND (SELECT count(DISTINCT b) FROM unnest(s) AS b) = least(k, n)
                   AND (SELECT bool_and(b BETWEEN 0 AND n - 1) FROM unnest(s) AS b)) AS distinct_in_range
FROM generate_series(1, 100, 9) AS n, generate_series(0, 110, 13) AS k, generate_series(0, 30, 7) AS m,
     unnest(ARRAY['random', 'round_robin', 'deterministic', 'consistent']) AS a,
     LATERAL (SELECT CASE a WHEN 'random' THEN random_subset(m, n, k, m + n)
                            WHEN 'round_robin' THEN round_robin_subset(m, n, k)
                            WHEN 'deterministic' THEN deterministic_subset(m, n, k, -n)
                            ELSE consistent_subset(m, n, k, 42) END) AS x(s)
GROUP BY a ORDER BY a;

-- Random and consistent subsets are prefixes of larger ones; round robin and
-- deterministic ones are not.
SELECT bool_and(random_subset(m, 500, k) = (random_subset(m, 500, k + 5))[1:k]) AS random_prefixes,
       bool_and(consistent_subset(m, 500, k) = (consistent_subset(m, 500, k + 5))[1:k]) AS consistent_prefixes,
       bool_and(deterministic_subset(m, 500, k) = (deterministic_subset(m, 500, k + 5))[1:k]) AS deterministic_prefixes
FROM generate_series(0, 60, 7) AS m, generate_series(1, 30) AS k;

-- The seed changes the subsets; the same arguments give the same subset.
SELECT random_subset(3, 100, 5) = random_subset(3, 100, 5, 0) AS default_seed_is_0,
       random_subset(3, 100, 5, 1) <> random_subset(3, 100, 5, 2) AS seeds_differ,
       consistent_subset(3, 100, 5, 1) <> consistent_subset(3, 100, 5, 2) AS consistent_seeds_differ,
       deterministic_subset(3, 100, 5, 1) <> deterministic_subset(3, 100, 5, 2) AS deterministic_seeds_differ;

-- Consistent subsetting: adding a backend changes at most one member.
SELECT max((SELECT count(*) FROM unnest(consistent_subset(m, n, 8)) AS b
            WHERE b <> ALL (consistent_subset(m, n + 1, 8)))) AS most_changed
FROM generate_series(0, 50) AS m, generate_series(8, 60) AS n;

-- Random subsetting of a large fleet (it costs O(k)); round robin from
-- 715827882 * 3 mod (2^31 - 1) = 2^31 - 2, wrapping around.
SELECT cardinality(random_subset(5, 2147483647, 1000)) AS members,
       (SELECT count(DISTINCT b) FROM unnest(random_subset(5, 2147483647, 1000)) AS b) AS distinct_members,
       round_robin_subset(715827882, 2147483647, 3) AS round_robin_wraps;

-- Bad input: SQLSTATE and a message naming the value.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT random_subset(-1, 10, 3)',
    'SELECT random_subset(0, 0, 3)',
    'SELECT random_subset(0, 10, -1)',
    'SELECT random_subset(0, 2147483647, 16777217)',
    'SELECT random_subset(0, 2147483647, 4194305)',
    'SELECT round_robin_subset(-5, 10, 3)',
    'SELECT round_robin_subset(0, -1, 3)',
    'SELECT round_robin_subset(0, 10, -2)',
    'SELECT deterministic_subset(-1, 10, 3)',
    'SELECT deterministic_subset(0, 0, 3)',
    'SELECT deterministic_subset(0, 10, -3)',
    'SELECT deterministic_subset(0, 16777217, 3)',
    'SELECT consistent_subset(-2, 10, 3)',
    'SELECT consistent_subset(0, 0, 3)',
    'SELECT consistent_subset(0, 10, -4)',
    'SELECT consistent_subset(0, 16777217, 3)',
    'SELECT consistent_subset(0, 16777216, 1048577)']) AS q;

-- At their algorithms' own limits: 2^22 random members, 2^20 consistent ones.
SELECT cardinality(random_subset(1, 2147483647, 4194304)) AS random_members,
       cardinality(consistent_subset(1, 2000000, 1048576)) AS consistent_members;

-- NULL in, NULL out.
SELECT random_subset(0, 10, 3, NULL) IS NULL AS a, round_robin_subset(NULL, 10, 3) IS NULL AS b,
       deterministic_subset(0, NULL, 3) IS NULL AS c, consistent_subset(0, 10, NULL) IS NULL AS d;

SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p
WHERE p.proname IN ('random_subset', 'round_robin_subset', 'deterministic_subset', 'consistent_subset')
ORDER BY p.proname;
