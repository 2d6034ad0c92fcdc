--
-- jumpbackanchorhash: hash4j's reference vectors in both forms of a set, the
-- add and remove functions replaying the calls that made each state, hash4j's
-- verdict on malformed states, every error, properties on random states and
-- keys, the per-call-site cache, use in tables, and the catalog's promises.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;
\i test/regress_helpers.sql

-- Golden values from hash4j (test/data/jumpbackanchorhash_hash4j.csv): a = 39
-- with 38 then 18 removed (a state only setState accepts), a = 2147483647 with
-- three removals, and nothing removed (= jumpbackhash).
SELECT jumpbackanchorhash(1623721439993002579, 39, '{38,18}') AS a,
       jumpbackanchorhash(1623721439993002579, '\x270000002600000012000000'::bytea) AS b,
       jumpbackanchorhash(-1, 5, '{2,0}') AS c,
       jumpbackanchorhash(-1, 5) AS d, jumpbackhash(-1, 5) AS e;

-- Every row of the reference file, through (buckets, removed) and through the
-- state bytes; the state of (buckets, removed) is hash4j's getState() and back.
CREATE TEMP TABLE anchor_ref (a int, removed_text text, state_hex text, key bigint, bucket int, ops text);
\copy anchor_ref FROM 'test/data/jumpbackanchorhash_hash4j.csv' WITH (FORMAT csv, HEADER)
CREATE TEMP TABLE anchor_rows AS
SELECT a, coalesce(string_to_array(removed_text, ' ')::int[], '{}') AS removed,
       decode(state_hex, 'hex') AS state, key, bucket, ops
FROM anchor_ref;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE jumpbackanchorhash(key, a, removed) <> bucket) AS list_mismatches,
       count(*) FILTER (WHERE jumpbackanchorhash(key, state) <> bucket) AS state_mismatches,
       count(*) FILTER (WHERE jumpbackanchorhash_state(a, removed) <> state) AS state_bytes_differ,
       count(*) FILTER (WHERE jumpbackanchorhash_buckets(state) <> a
                           OR jumpbackanchorhash_removed(state) <> removed) AS decoded_differ,
       count(*) FILTER (WHERE ops = 'setState') AS set_state_only,
       count(*) FILTER (WHERE jumpbackhash(key, a) <> bucket) AS moved_off_a_removed_bucket
FROM anchor_rows;

-- The calls in ops ('+N': N addBucket(), '-b': removeBucket(b)) from the
-- empty set, by the functions of both forms, give hash4j's state.
CREATE FUNCTION pg_temp.replay(ops text, OUT buckets int, OUT removed int[], OUT state bytea)
LANGUAGE plpgsql AS $$
DECLARE
    op text;
    n bigint;
    added int;
    added_too int;
BEGIN
    buckets := 0;
    removed := '{}';
    state := jumpbackanchorhash_state(0);
    FOREACH op IN ARRAY string_to_array(ops, ' ') LOOP
        n := substr(op, 2)::bigint;
        IF left(op, 1) = '-' THEN
            SELECT r.buckets, r.removed INTO buckets, removed
            FROM jumpbackanchorhash_remove_bucket(buckets, removed, n::int) AS r;
            state := jumpbackanchorhash_remove_bucket(state, n::int);
        ELSE
            WHILE n > 0 LOOP
                IF removed = '{}' AND n > 3 THEN
                    -- with nothing removed, n adds grow the set by n: take the
                    -- first n - 1 at once
                    buckets := buckets + n - 1;
                    state := jumpbackanchorhash_state(buckets);
                    n := 1;
                END IF;
                SELECT r.buckets, r.removed, r.bucket INTO buckets, removed, added
                FROM jumpbackanchorhash_add_bucket(buckets, removed) AS r;
                SELECT r.state, r.bucket INTO state, added_too FROM jumpbackanchorhash_add_bucket(state) AS r;
                IF added <> added_too THEN
                    RAISE 'the two forms added % and %', added, added_too;
                END IF;
                n := n - 1;
            END LOOP;
        END IF;
    END LOOP;
END $$;
SELECT count(*) AS states,
       count(*) FILTER (WHERE (r).buckets <> a OR (r).removed <> removed OR (r).state <> state) AS differ
FROM (SELECT DISTINCT a, removed, state, ops, pg_temp.replay(ops) AS r
      FROM anchor_rows WHERE ops <> 'setState') AS s;

-- hash4j's setState on malformed and empty states: accepted here exactly where
-- hash4j accepts them; then the bucket of key 0, or no bucket.
CREATE TEMP TABLE anchor_verdicts (state_hex text, set_state text, bucket_of_0 text);
\copy anchor_verdicts FROM 'test/data/jumpbackanchorhash_hash4j_errors.csv' WITH (FORMAT csv, HEADER)
CREATE FUNCTION pg_temp.result_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    EXECUTE query INTO result;
    RETURN result;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT state_hex, set_state, bucket_of_0,
       pg_temp.result_of(format('SELECT jumpbackanchorhash_buckets(%L::bytea)', '\x' || coalesce(state_hex, ''))) AS buckets_here,
       pg_temp.result_of(format('SELECT jumpbackanchorhash(0, %L::bytea)', '\x' || coalesce(state_hex, ''))) AS bucket_of_0_here
FROM anchor_verdicts;

-- Errors: SQLSTATE 22023 naming the problem; 54000 for the limits.
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackanchorhash(1, 0)',
    'SELECT jumpbackanchorhash(1, -3)',
    'SELECT jumpbackanchorhash(1, 5, ''{2,7}'')',
    'SELECT jumpbackanchorhash(1, 5, ''{-1}'')',
    'SELECT jumpbackanchorhash(1, 0, ''{0}'')',
    'SELECT jumpbackanchorhash(1, 5, ''{3,1,4,1}'')',
    'SELECT jumpbackanchorhash(1, 3, ''{0,2,1}'')',
    'SELECT jumpbackanchorhash(1, 5, ''{{1,2},{3,4}}'')',
    'SELECT jumpbackanchorhash(1, 5, ''{1,NULL}'')',
    'SELECT jumpbackanchorhash(1, ''\x''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\x0500000002''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\xffffffff''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\x00000000''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\x0100000000000000''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\x0500000007000000''::bytea)',
    'SELECT jumpbackanchorhash(1, ''\x050000000100000001000000''::bytea)',
    'SELECT jumpbackanchorhash(''k''::text, 2, ''{0,1}'')',
    'SELECT jumpbackanchorhash_state(-1)',
    'SELECT jumpbackanchorhash_state(3, ''{3}'')',
    'SELECT jumpbackanchorhash_removed(''\x01000000000000000000''::bytea)',
    'SELECT jumpbackanchorhash_remove_bucket(5, ''{2}'', 2)',
    'SELECT jumpbackanchorhash_remove_bucket(5, ''{2}'', 5)',
    'SELECT jumpbackanchorhash_remove_bucket(0, ''{}'', 0)',
    'SELECT jumpbackanchorhash_remove_bucket(''\x0500000002000000''::bytea, -1)',
    'SELECT jumpbackanchorhash_add_bucket(2147483647)',
    'SELECT jumpbackanchorhash_add_bucket(5, ''{5}'')',
    'SELECT jumpbackanchorhash(1, 2147483647, array_fill(0, ARRAY[1048577]))',
    'SELECT jumpbackanchorhash(1, decode(''ffffff7f'' || repeat(''00000000'', 1048577), ''hex''))']) AS q;

-- A large state: 2^17 removals, ids near 2^31 (memory follows their number,
-- not their values; test/test_jumpbackanchor.c decodes the largest, 2^20);
-- every key lands on a bucket that is not removed.
CREATE TEMP TABLE big_state AS
SELECT array_agg(2147483646 - 2 * (i # 43690)) AS removed
FROM generate_series(0, 131071) AS i;
SELECT count(*) AS keys,
       count(*) FILTER (WHERE b < 0 OR b >= 2147483647 OR (b % 2 = 0 AND b >= 2147483646 - 2 * 131071)) AS on_removed
FROM (SELECT jumpbackanchorhash(k, 2147483647, (SELECT removed FROM big_state)) AS b
      FROM generate_series(1, 2000) AS k) AS s;
SELECT array_length(jumpbackanchorhash_removed(jumpbackanchorhash_state(2147483647, removed)), 1) AS round_trip
FROM big_state;

-- The special cases of add and remove: the last bucket with none removed
-- shrinks; the only bucket left empties the set; adding re-uses the most
-- recent removal, and grows only when none is removed.
SELECT * FROM jumpbackanchorhash_remove_bucket(5, '{}', 4);
SELECT * FROM jumpbackanchorhash_remove_bucket(5, '{}', 2);
SELECT * FROM jumpbackanchorhash_remove_bucket(3, '{0,2}', 1);
SELECT * FROM jumpbackanchorhash_add_bucket(5, '{2,0}');
SELECT * FROM jumpbackanchorhash_add_bucket(0);
SELECT * FROM jumpbackanchorhash_add_bucket(jumpbackanchorhash_state(2, '{0,1}'));
SELECT jumpbackanchorhash_remove_bucket(jumpbackanchorhash_state(5), 4) AS shrunk,
       jumpbackanchorhash_remove_bucket(jumpbackanchorhash_state(5), 1) AS pushed;

-- NULL in, NULL out.
SELECT jumpbackanchorhash(NULL::bigint, 5) IS NULL AS a, jumpbackanchorhash(1, NULL::int) IS NULL AS b,
       jumpbackanchorhash(1, 5, NULL) IS NULL AS c, jumpbackanchorhash(1, NULL::bytea) IS NULL AS d,
       jumpbackanchorhash_state(NULL) IS NULL AS e, jumpbackanchorhash_removed(NULL) IS NULL AS f;

-- Text, bytea and uuid keys are their xxh3_64.
SELECT count(*) FILTER (WHERE jumpbackanchorhash(t, 50, '{7,3,49}') <> jumpbackanchorhash(xxh3_64(t), 50, '{7,3,49}')
                           OR jumpbackanchorhash(t, s) <> jumpbackanchorhash(xxh3_64(t), s)
                           OR jumpbackanchorhash(convert_to(t, 'UTF8'), 50, '{7,3,49}')
                              <> jumpbackanchorhash(xxh3_64(convert_to(t, 'UTF8')), 50, '{7,3,49}')
                           OR jumpbackanchorhash(convert_to(t, 'UTF8'), s) <> jumpbackanchorhash(xxh3_64(convert_to(t, 'UTF8')), s)
                           OR jumpbackanchorhash(u, 50, '{7,3,49}') <> jumpbackanchorhash(xxh3_64(u), 50, '{7,3,49}')
                           OR jumpbackanchorhash(u, s) <> jumpbackanchorhash(xxh3_64(u), s)) AS differ
FROM (SELECT 'key ' || i AS t, md5(i::text)::uuid AS u, jumpbackanchorhash_state(50, '{7,3,49}') AS s
      FROM generate_series(1, 2000) AS i) AS k;

-- Properties on random states (not seen anywhere else): with nothing removed,
-- jumpbackhash; removing a bucket moves only its keys and none onto a removed
-- bucket; adding it back returns exactly those keys.
SELECT setseed(0.25);
CREATE TEMP TABLE random_states AS
SELECT s, a, (SELECT coalesce(array_agg(b ORDER BY random()), '{}')
              FROM (SELECT DISTINCT (random() * (a - 1))::int AS b
                    FROM generate_series(1, (random() * a * 0.8)::int + 0 * s)) AS d) AS removed
FROM (SELECT s, 2 + (random() * 300)::int AS a FROM generate_series(1, 40) AS s) AS x;
CREATE TEMP TABLE random_changes AS
SELECT s, a, removed, victim, (r).buckets AS new_a, (r).removed AS new_removed,
       (jumpbackanchorhash_add_bucket((r).buckets, (r).removed)).buckets AS back_a,
       (jumpbackanchorhash_add_bucket((r).buckets, (r).removed)).removed AS back_removed
FROM (SELECT s, a, removed, victim, jumpbackanchorhash_remove_bucket(a, removed, victim) AS r
      FROM (SELECT s, a, removed,
                   (SELECT b FROM generate_series(0, a - 1) AS b
                    WHERE b <> ALL (removed) ORDER BY random() + 0 * s LIMIT 1) AS victim
            FROM random_states) AS v) AS c;
SELECT count(*) FILTER (WHERE back_a <> a OR back_removed <> removed) AS not_the_same_set_back,
       count(*) AS keys,
       count(*) FILTER (WHERE before <> victim AND after <> before) AS moved_from_other_buckets,
       count(*) FILTER (WHERE before = victim) AS on_victim,
       count(*) FILTER (WHERE after = victim OR after = ANY (new_removed) OR after >= new_a) AS on_removed,
       count(*) FILTER (WHERE back <> before) AS not_back,
       count(*) FILTER (WHERE plain <> jumpbackhash(k, a)) AS unlike_jumpbackhash
FROM (SELECT k, a, removed, victim, new_removed, new_a, back_a, back_removed,
             jumpbackanchorhash(k, a, removed) AS before,
             jumpbackanchorhash(k, new_a, new_removed) AS after,
             jumpbackanchorhash(k, back_a, back_removed) AS back,
             jumpbackanchorhash(k, a) AS plain
      FROM random_changes, generate_series(-500::bigint, 500) AS i,
           LATERAL (SELECT (i * 4611686018427387) # (s::bigint << 50) AS k) AS kk) AS t;

-- Uniformity: 100,000 keys over the 40 buckets left of 100 (60 removed): a
-- chi-squared statistic below 73.4 (the 0.999 quantile for 39 degrees of freedom).
SELECT count(DISTINCT b) AS buckets_used, sum((n - 2500.0) ^ 2 / 2500.0) < 73.4 AS even
FROM (SELECT b, count(*) AS n
      FROM (SELECT jumpbackanchorhash(k, 100, (SELECT array_agg(i ORDER BY hashint4(i)) FROM generate_series(0, 99) AS i
                                               WHERE i % 5 <> 2 AND i % 5 <> 4)) AS b
            FROM generate_series(1, 100000) AS k) AS s
      GROUP BY b) AS c;

-- The cache keeps one set per call site: a set that changes from row to row
-- gives the same as one call per set with constant arguments.
CREATE TEMP TABLE per_set AS
SELECT k, jumpbackanchorhash(k, 10, '{1}') AS b1, jumpbackanchorhash(k, 10, '{2,1}') AS b2,
       jumpbackanchorhash(k, 11, '{1}') AS b3, jumpbackanchorhash(k, '\x0a0000000100000002000000'::bytea) AS b4
FROM generate_series(1, 3000) AS k;
SELECT count(*) FILTER (WHERE jumpbackanchorhash(k, n, r) <> expected) AS list_differ,
       count(*) FILTER (WHERE jumpbackanchorhash(k, jumpbackanchorhash_state(n, r)) <> expected) AS state_differ
FROM (SELECT k, CASE k % 3 WHEN 0 THEN '{1}'::int[] WHEN 1 THEN '{2,1}' ELSE '{1}' END AS r,
             CASE k % 3 WHEN 2 THEN 11 ELSE 10 END AS n,
             CASE k % 3 WHEN 0 THEN b1 WHEN 1 THEN b2 ELSE b3 END AS expected
      FROM per_set) AS s;
SELECT count(*) FILTER (WHERE b4 <> b2) AS state_unlike_list FROM per_set;
-- The same in PL/pgSQL, where one call site sees its variables change.
CREATE FUNCTION pg_temp.differ_in_loop() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    p record;
    r int[];
    n int;
    st bytea;
    expected int;
    differ int := 0;
BEGIN
    FOR p IN SELECT * FROM per_set ORDER BY k LOOP
        r := CASE p.k % 3 WHEN 0 THEN '{1}'::int[] WHEN 1 THEN '{2,1}' ELSE '{1}' END;
        n := CASE p.k % 3 WHEN 2 THEN 11 ELSE 10 END;
        expected := CASE p.k % 3 WHEN 0 THEN p.b1 WHEN 1 THEN p.b2 ELSE p.b3 END;
        st := jumpbackanchorhash_state(n, r);
        IF jumpbackanchorhash(p.k, n, r) <> expected OR jumpbackanchorhash(p.k, st) <> expected THEN
            differ := differ + 1;
        END IF;
    END LOOP;
    RETURN differ;
END $$;
SELECT pg_temp.differ_in_loop() AS differ_in_loop;

-- In tables: a partition key (with pruning), a generated column, an index.
CREATE TABLE anchored (id bigint, v text) PARTITION BY LIST (jumpbackanchorhash(id, 4, '{1}'));
CREATE TABLE anchored_0 PARTITION OF anchored FOR VALUES IN (0);
CREATE TABLE anchored_2 PARTITION OF anchored FOR VALUES IN (2);
CREATE TABLE anchored_3 PARTITION OF anchored FOR VALUES IN (3);
INSERT INTO anchored SELECT i, 'v' || i FROM generate_series(1, 3000) AS i;
SELECT tableoid::regclass AS partition, count(*) FROM anchored GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT * FROM anchored WHERE jumpbackanchorhash(id, 4, '{1}') = 2;
CREATE TABLE anchored_gen (id bigint, shard int GENERATED ALWAYS AS (jumpbackanchorhash(id, 8, '{5,0}')) STORED);
INSERT INTO anchored_gen SELECT i FROM generate_series(1, 1000) AS i;
CREATE INDEX ON anchored_gen (jumpbackanchorhash(id, '\x080000000500000000000000'::bytea));
SELECT count(*) FILTER (WHERE shard IN (0, 5)) AS on_removed,
       count(*) FILTER (WHERE shard <> jumpbackanchorhash(id, '\x080000000500000000000000'::bytea)) AS differ
FROM anchored_gen;
DROP TABLE anchored, anchored_gen;

-- The promises users rely on: immutable, strict, parallel safe, commented.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p
WHERE p.proname LIKE 'jumpbackanchorhash%'
ORDER BY p.oid::regprocedure::text;
