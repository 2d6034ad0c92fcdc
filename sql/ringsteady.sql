--
-- ringsteady_subset: the Ringsteady post's outputs, the exact rotation, the
-- ring without backend scaling, errors, and assigning workers to backends.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- The post's example: 6 backends, subsets of 2, frontends 0..4 get
-- {0,4}, {1,5}, {2,1}, {3,0}, {4,2}.
SELECT m AS frontend, ringsteady_subset(m, 6, 2) AS subset FROM generate_series(0, 4) AS m;

-- Every row of the post's Rust code's outputs (test/data/ringsteady_blog.csv).
CREATE TEMP TABLE post (backends int, frontend int, subset_size int, subset text);
\copy post FROM 'test/data/ringsteady_blog.csv' WITH (FORMAT csv, HEADER)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE ringsteady_subset(frontend, backends, subset_size)
                              <> string_to_array(subset, ' ')::int[]) AS mismatches
FROM post;

-- The post computes the rotation in f64, which rounds wrong here: the exact
-- rotation ceil(reverse_bits64(2^31 - 1) * (2^31 - 1) / 2^64) is 2^31 - 1,
-- which is rank 0: backend 0, then the backends at positions 1 and 2 of 31
-- bits, 2^30 and 2^29.  (The post's code starts one rank earlier.)
SELECT ringsteady_subset(2147483647, 2147483647, 3);

-- A subset larger than the fleet is the whole ring order; 10 backends are in
-- the order [0, 8, 4, 2, 6, 1, 9, 5, 3, 7] (the 4-bit bit-reversal permutation).
SELECT ringsteady_subset(0, 10, 100) AS ring_order, ringsteady_subset(3, 10, 0) AS empty;

-- Without backend scaling (Figure 4b) frontend m < N starts at backend m.
SELECT m AS frontend, ringsteady_subset(m, 10, 3, backend_scaling => false) AS subset
FROM generate_series(0, 11) AS m;

-- A subset is a prefix of the larger ones.
SELECT bool_and(ringsteady_subset(m, 1000, k) = (ringsteady_subset(m, 1000, k + 1))[1:k])
       AS prefixes
FROM generate_series(0, 300) AS m, generate_series(1, 30) AS k;

-- Connection balance: 16 frontends, 10 backends, subsets of 5 (80 connections):
-- every backend has 8 (with scaling and a power-of-two number of frontends).
SELECT b AS backend, count(*) AS connections
FROM generate_series(0, 15) AS m, unnest(ringsteady_subset(m, 10, 5)) AS b
GROUP BY b ORDER BY b;

-- Bad input: SQLSTATE and a message naming the value.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT ringsteady_subset(-1, 10, 3)',
    'SELECT ringsteady_subset(0, 0, 3)',
    'SELECT ringsteady_subset(0, -5, 3, false)',
    'SELECT ringsteady_subset(0, 10, -1)',
    'SELECT ringsteady_subset(0, 2147483647, 2147483647)',
    'SELECT ringsteady_subset(0, 2147483647, 16777217)']) AS q;
SELECT cardinality(ringsteady_subset(0, 2147483647, 16777216)) AS largest_subset;

-- NULL in, NULL out.
SELECT ringsteady_subset(NULL, 10, 3) IS NULL AS a, ringsteady_subset(0, NULL, 3) IS NULL AS b,
       ringsteady_subset(0, 10, NULL) IS NULL AS c, ringsteady_subset(0, 10, 3, NULL) IS NULL AS d;

-- Assigning a table of workers to a table of backends.
CREATE TABLE workers (id text PRIMARY KEY, idx int NOT NULL);
CREATE TABLE backends (idx int PRIMARY KEY, host text NOT NULL);
INSERT INTO workers SELECT 'worker-' || i, i FROM generate_series(0, 5) AS i;
INSERT INTO backends SELECT i, 'db-' || i || '.example' FROM generate_series(0, 7) AS i;
SELECT w.id, array_agg(b.host ORDER BY s.ord) AS connects_to
FROM workers w
CROSS JOIN LATERAL unnest(ringsteady_subset(w.idx, (SELECT count(*)::int FROM backends), 3))
    WITH ORDINALITY AS s(backend, ord)
JOIN backends b ON b.idx = s.backend
GROUP BY w.id ORDER BY w.id;
DROP TABLE workers, backends;

SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p WHERE p.proname = 'ringsteady_subset';
