--
-- jumpbackhash and jumphash: golden values, every reference vector, NULLs,
-- the extremes of bigint, errors, and the promises in the catalog.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- Golden values, from hash4j (jumpbackhash) and the Lamping-Veach C++ code (jumphash).
SELECT jumpbackhash(0, 4), jumpbackhash(-1, 1000000), jumpbackhash(1, 2147483647);
SELECT jumphash(1, 2147483647), jumphash(-1378172617505958997, 1000000),
       jumphash(334261211570490908, 1400989867);

-- Every row of the reference files in test/data (see test/data/README.md).
CREATE TEMP TABLE hash4j (key bigint, buckets int, bucket int);
\copy hash4j FROM 'test/data/jumpbackhash_hash4j.csv' WITH (FORMAT csv, HEADER)
SELECT count(*) AS rows, count(*) FILTER (WHERE jumpbackhash(key, buckets) <> bucket) AS mismatches
FROM hash4j;

CREATE TEMP TABLE guava (key bigint, buckets int, bucket int);
\copy guava FROM 'test/data/jumphash_guava.csv' WITH (FORMAT csv, HEADER)
SELECT count(*) AS rows, count(*) FILTER (WHERE jumphash(key, buckets) <> bucket) AS mismatches
FROM guava;

-- Where Guava differs from the paper's C++ code, jumphash follows the C++ code.
CREATE TEMP TABLE divergences (key bigint, buckets int, guava_bucket int, paper_cpp_bucket int);
\copy divergences FROM 'test/data/jumphash_guava_vs_paper_divergences.csv' WITH (FORMAT csv, HEADER)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE jumphash(key, buckets) <> paper_cpp_bucket) AS mismatches,
       count(*) FILTER (WHERE jumphash(key, buckets) = guava_bucket) AS equal_to_guava
FROM divergences;

-- Every bigint key is accepted (values as in the reference files); one bucket always gives 0.
SELECT key, jumpbackhash(key, 1) AS one, jumpbackhash(key, 1000000) AS jbh, jumphash(key, 1000000) AS jh
FROM unnest(ARRAY[-9223372036854775808, -1, 0, 1, 9223372036854775807]) AS key;

-- NULL in, NULL out.
SELECT jumpbackhash(NULL, 10) IS NULL AS a, jumpbackhash(1, NULL) IS NULL AS b,
       jumphash(NULL, 10) IS NULL AS c, jumphash(1, NULL) IS NULL AS d;

-- Fewer than one bucket: SQLSTATE 22023 naming the value.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackhash(42, 0)',
    'SELECT jumpbackhash(42, -1)',
    'SELECT jumphash(42, -2147483648)',
    'SELECT jumphash(42, 0)']) AS q;

-- Integer literals and smaller integer types resolve to the bigint function.
SELECT jumpbackhash(42::int2, 7::int2) = jumpbackhash(42::bigint, 7) AS int2_ok,
       jumpbackhash(42::int4, 7) = jumpbackhash(42::bigint, 7) AS int4_ok;

-- The promises users rely on: immutable, strict, parallel safe, commented.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p
WHERE p.proname IN ('jumpbackhash', 'jumphash') AND p.proargtypes[0] = 'bigint'::regtype
ORDER BY p.oid::regprocedure::text;
