--
-- rocksteadier_subset: golden values of the documented construction, the
-- starting rows, the article's properties, and errors.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- The article's Tables 2 to 5: 55 backends in lots of 10 (the last lot padded
-- with 5 tasks that are skipped), frontends 10, 11 and 12 of frontend lot 1,
-- subsets of 10.  Lot 1 visits the backend lots in the order [1, 5, 3, 0, 4, 2]
-- (Ringsteady frontend 1 over 6 backends, Figure 4c); frontends 10, 11 and 12
-- start on rows 0, 8 and 4.  (These arrays are pinned in test/test_subsets.c
-- too, where a reference that lists every lot computes them.)
SELECT m AS frontend, rocksteadier_subset(m, 55, 10) AS subset
FROM generate_series(10, 12) AS m;

-- The lot of each member: frontend 10 reads row 0 of lots 1, 5, 3, 0, 4, 2,
-- then row 1 of lots 1, (5: padding, skipped), 3, 0, 4.
SELECT array_agg(b / 10 ORDER BY i) AS lots
FROM unnest(rocksteadier_subset(10, 55, 10)) WITH ORDINALITY AS s(b, i);

-- A whole fleet (a subset larger than the fleet is all of it, in reading
-- order): 23 backends in lots of 4.
SELECT rocksteadier_subset(5, 23, 100, 4) AS all_23;

-- The starting rows are the Ringsteady order of L: frontend m of a lot reads
-- first the row where frontend 0 of that lot reads member number row + 1.
-- For L = 10 the rows are [0, 8, 4, 2, 6, 1, 9, 5, 3, 7] (the article prints
-- [0, 8, 2, 4, 6, 1, 9, 5, 3, 7]; see the README).
SELECT array_agg(array_position(rocksteadier_subset(0, 10, 10),
                                (rocksteadier_subset(m, 10, 1))[1]) - 1 ORDER BY m) AS rows
FROM generate_series(0, 9) AS m;

-- Distinct members in range; every backend once when subset_size >= backends.
SELECT bool_and(cardinality(s) = least(k, n)
                AND (SELECT count(DISTINCT b) FROM unnest(s) AS b) = least(k, n)
                AND (SELECT bool_and(b BETWEEN 0 AND n - 1) FROM unnest(s) AS b)) AS distinct_in_range
FROM generate_series(1, 120, 7) AS n, generate_series(0, 130, 11) AS k, generate_series(0, 40, 9) AS m,
     LATERAL rocksteadier_subset(m, n, k, 1 + (m + n) % 12) AS s;

-- A subset is a prefix of every larger one.
SELECT bool_and(rocksteadier_subset(m, 1000, k) = (rocksteadier_subset(m, 1000, k + 7))[1:k]) AS prefixes
FROM generate_series(0, 200, 3) AS m, generate_series(1, 40) AS k;

-- Connection balance: 100 frontends (10 whole lots), 100 backends, subsets of
-- 10: every backend gets exactly 10 connections.
SELECT min(c), max(c) FROM (
    SELECT count(*) AS c
    FROM generate_series(0, 99) AS m, unnest(rocksteadier_subset(m, 100, 10)) AS b
    GROUP BY b) AS per_backend;

-- The largest fleet, and the largest lots.
SELECT cardinality(rocksteadier_subset(123456789, 2147483647, 20)) AS members,
       cardinality(rocksteadier_subset(7, 2147483647, 5, 65536)) AS members_with_large_lots;

-- Bad input: SQLSTATE and a message naming the value.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT rocksteadier_subset(-1, 10, 3)',
    'SELECT rocksteadier_subset(0, 0, 3)',
    'SELECT rocksteadier_subset(0, -7, 3)',
    'SELECT rocksteadier_subset(0, 10, -1)',
    'SELECT rocksteadier_subset(0, 10, 3, 0)',
    'SELECT rocksteadier_subset(0, 10, 3, -10)',
    'SELECT rocksteadier_subset(0, 10, 3, 65537)',
    'SELECT rocksteadier_subset(0, 10, 3, 2147483647)',
    'SELECT rocksteadier_subset(0, 2147483647, 16777217)',
    'SELECT rocksteadier_subset(0, 2147483647, 16777216, 65536)']) AS q;

-- NULL in, NULL out; an empty subset.
SELECT rocksteadier_subset(NULL, 10, 3) IS NULL AS a, rocksteadier_subset(0, 10, 3, NULL) IS NULL AS b,
       rocksteadier_subset(3, 10, 0) AS empty;

SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p WHERE p.proname = 'rocksteadier_subset';
