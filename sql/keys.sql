--
-- Keys of any type: xxh3_64 against an independent implementation, the
-- jumpbackhash and jumphash overloads for text, bytea and uuid keys, how
-- PostgreSQL resolves calls to them, and their use in tables.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- Golden values, from python3-xxhash (xxhash.xxh3_64_intdigest, made signed)
-- and xxhsum -H3: the empty input, ASCII, multi-byte UTF-8, a uuid.
SELECT xxh3_64('') = 3244421341483603138 AS empty_text,
       xxh3_64(''::bytea) = 3244421341483603138 AS empty_bytea,
       xxh3_64('a') = -1817709641818812897 AS a,
       xxh3_64('abc') = 8696274497037089104 AS abc,
       xxh3_64('user@example.com') = 177853267088771956 AS email,
       xxh3_64('café') = 5513492080776525439 AS cafe,
       xxh3_64('日本語のキー') = -5594360117725200943 AS japanese,
       xxh3_64('🐘') = -682854650860879158 AS elephant,
       xxh3_64('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid) = 6187780171734267751 AS uuid,
       xxh3_64('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::text) = -4075791090940327623 AS uuid_as_text;

-- xxh3_64 of a bigint: XXH3-64 of its 8 bytes, least significant first, as
-- hash4j's Hashing.xxh3_64().hashLongToLong(v).  Golden values from
-- python3-xxhash: xxhash.xxh3_64_intdigest(struct.pack('<q', v)), made signed.
SELECT v, xxh3_64(v) AS xxh3_64, xxh3_64(v) = expected AS as_python3_xxhash
FROM (VALUES (0::bigint, -4072596861322023719::bigint), (1, 3439722301264460078), (-1, 5841669975847748627),
             (42, -3051478158665635896), (-42, 4321076967882013291), (255, 936843873771430885),
             (256, -8637261574403269405), (2147483647, 5728208738430891762), (2147483648, 7714710879142532484),
             (4294967296, -1248814493762008485), (-4294967296, 8875325589831069942),
             (1234567890123456789, -1341547991147611168), (9223372036854775807, -6758830778922508474),
             (-9223372036854775808, -9038965835861193121)) AS g(v, expected);
-- The same as xxh3_64 of the bytes, little-endian (int8send is big-endian),
-- and integer and smallint keys are their bigint.
SELECT count(*) FILTER (WHERE xxh3_64(v) <> xxh3_64(decode(
           (SELECT string_agg(substr(h, 15 - 2 * i, 2), '' ORDER BY i)
            FROM generate_series(0, 7) AS i, encode(int8send(v), 'hex') AS h), 'hex'))) AS not_little_endian_bytes,
       count(*) FILTER (WHERE xxh3_64(v::int) <> xxh3_64(v)) AS int_differs,
       count(*) FILTER (WHERE xxh3_64(v::smallint) <> xxh3_64(v)) AS smallint_differs
FROM generate_series(-1000, 1000) AS v;

-- Every vector of test/data/xxh3_64_vectors.csv (made by
-- test/data/make-xxh3-vectors with python3-xxhash, checked with xxhsum -H3):
-- as bytea, as text where the bytes are UTF-8, as uuid where there are 16.
CREATE TEMP TABLE vectors (input_hex text, is_utf8 boolean, xxh3_64 bigint);
\copy vectors FROM 'test/data/xxh3_64_vectors.csv' WITH (FORMAT csv, HEADER)
SELECT count(*) AS vectors,
       count(*) FILTER (WHERE xxh3_64(decode(input_hex, 'hex')) <> v.xxh3_64) AS bytea_mismatches,
       count(*) FILTER (WHERE is_utf8) AS texts,
       count(*) FILTER (WHERE is_utf8
                        AND xxh3_64(convert_from(decode(input_hex, 'hex'), 'UTF8')) <> v.xxh3_64) AS text_mismatches,
       count(*) FILTER (WHERE length(input_hex) = 32) AS uuids,
       count(*) FILTER (WHERE length(input_hex) = 32 AND xxh3_64(input_hex::uuid) <> v.xxh3_64) AS uuid_mismatches,
       count(*) FILTER (WHERE v.xxh3_64 < 0) AS negative,
       max(length(input_hex) / 2) AS longest
FROM vectors AS v;

-- A text hashes as its UTF-8 bytes, a uuid as its 16 bytes in network order.
SELECT count(*) FILTER (WHERE xxh3_64(t) <> xxh3_64(convert_to(t, 'UTF8'))) AS text_vs_bytes,
       count(*) FILTER (WHERE xxh3_64(md5(t)::uuid) <> xxh3_64(uuid_send(md5(t)::uuid))) AS uuid_vs_bytes
FROM (SELECT 'clé ' || i || ' 鍵' AS t FROM generate_series(1, 1000) AS i) AS keys;

-- The overloads equal the bigint functions of xxh3_64(key).
SELECT count(*) AS checks,
       count(*) FILTER (WHERE jumpbackhash(t, n) <> jumpbackhash(xxh3_64(t), n)) AS text_jbh,
       count(*) FILTER (WHERE jumpbackhash(b, n) <> jumpbackhash(xxh3_64(b), n)) AS bytea_jbh,
       count(*) FILTER (WHERE jumpbackhash(u, n) <> jumpbackhash(xxh3_64(u), n)) AS uuid_jbh,
       count(*) FILTER (WHERE jumphash(t, n) <> jumphash(xxh3_64(t), n)) AS text_jh,
       count(*) FILTER (WHERE jumphash(b, n) <> jumphash(xxh3_64(b), n)) AS bytea_jh,
       count(*) FILTER (WHERE jumphash(u, n) <> jumphash(xxh3_64(u), n)) AS uuid_jh
FROM (SELECT 'key-' || i AS t, decode(md5(i::text), 'hex') AS b, md5(i::text)::uuid AS u
      FROM generate_series(1, 2000) AS i) AS keys,
     unnest(ARRAY[1, 2, 3, 4, 7, 16, 1000, 65537, 2147483647]) AS n;

-- Text keys spread evenly: 100000 keys over 4 buckets, each within 550 of
-- 25000, four standard deviations of the binomial count (137).
SELECT bucket, abs(count(*) - 25000) < 550 AS even
FROM (SELECT jumpbackhash('user' || i || '@example.com', 4) AS bucket
      FROM generate_series(1, 100000) AS i) AS b
GROUP BY bucket ORDER BY bucket;

-- Overload resolution, as the view's definition shows it: integer literals
-- and integer types go to bigint; an unknown-typed literal ('...') goes to
-- text, because PostgreSQL prefers the string category for unknown
-- arguments, even when the literal looks like a number or a uuid; NULL too.
CREATE TEMP VIEW resolution AS
SELECT jumpbackhash(42, 16) AS int_literal,
       jumpbackhash(4200000000, 16) AS bigint_literal,
       jumpbackhash(42::int2, 16) AS int2,
       jumpbackhash('abc', 16) AS unknown_literal,
       jumpbackhash('42', 16) AS unknown_digits,
       jumpbackhash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 16) AS unknown_uuid_lookalike,
       jumpbackhash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 16) AS uuid,
       jumpbackhash('\x0102'::bytea, 16) AS bytea,
       jumpbackhash('abc'::varchar, 16) AS varchar,
       jumpbackhash('abc  '::char(5), 16) AS bpchar,
       jumpbackhash(NULL, 16) AS null_literal,
       jumphash(42, 16) AS jumphash_int,
       jumphash('abc', 16) AS jumphash_unknown;
SELECT regexp_split_to_table(pg_get_viewdef('resolution'), E',?\n') AS resolved;

-- So '42' is the text "42", not the number 42, and a uuid written as an
-- unknown literal is hashed as its 36 characters: cast such literals.
SELECT jumpbackhash('42', 1000000) = jumpbackhash(xxh3_64('42'::text), 1000000) AS digits_are_text,
       jumpbackhash('42', 1000000) = jumpbackhash(42, 1000000) AS digits_are_number,
       jumpbackhash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1000000)
         = jumpbackhash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 1000000) AS uuid_literal_is_uuid,
       jumpbackhash('abc  '::char(5), 1000000) = jumpbackhash('abc', 1000000) AS bpchar_loses_trailing_spaces;

-- Types with no implicit cast to bigint, text, bytea or uuid are refused.
\i test/regress_helpers.sql
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackhash(1.5, 16)',
    'SELECT jumpbackhash(now(), 16)',
    'SELECT xxh3_64(42.5)',
    'SELECT xxh3_64(''abc'')']) AS q;
SELECT xxh3_64('abc') = xxh3_64('abc'::text) AS unknown_is_text;

-- Fewer than one bucket: SQLSTATE 22023 naming the value, for every overload.
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackhash(''abc''::text, 0)',
    'SELECT jumpbackhash(''\x00''::bytea, -1)',
    'SELECT jumpbackhash(gen_random_uuid(), -2147483648)',
    'SELECT jumphash(''abc''::text, 0)',
    'SELECT jumphash(''\x00''::bytea, -5)',
    'SELECT jumphash(gen_random_uuid(), 0)']) AS q;

-- NULL in, NULL out.
SELECT xxh3_64(NULL::text) IS NULL AS a, xxh3_64(NULL::bytea) IS NULL AS b, xxh3_64(NULL::uuid) IS NULL AS c,
       jumpbackhash(NULL::uuid, 4) IS NULL AS d, jumpbackhash('abc'::text, NULL) IS NULL AS e,
       jumphash(NULL::bytea, 4) IS NULL AS f;

-- A text key as a partition key, with pruning.
CREATE TABLE users (email text NOT NULL, name text) PARTITION BY LIST (jumpbackhash(email, 4));
CREATE TABLE users_0 PARTITION OF users FOR VALUES IN (0);
CREATE TABLE users_1 PARTITION OF users FOR VALUES IN (1);
CREATE TABLE users_2 PARTITION OF users FOR VALUES IN (2);
CREATE TABLE users_3 PARTITION OF users FOR VALUES IN (3);
INSERT INTO users SELECT 'user' || i || '@example.com', 'user ' || i FROM generate_series(1, 10000) AS i;
SELECT count(*) AS misplaced FROM users WHERE tableoid <> format('users_%s', jumpbackhash(email, 4))::regclass;
SELECT tableoid::regclass = format('users_%s', jumpbackhash(xxh3_64('user42@example.com'), 4))::regclass AS right_partition
FROM users WHERE email = 'user42@example.com';
EXPLAIN (COSTS OFF)
SELECT * FROM users
WHERE jumpbackhash(email, 4) = jumpbackhash('user42@example.com', 4) AND email = 'user42@example.com';

-- A composite key (tenant bigint, order uuid) as the bytes of its parts,
-- int8send (8 bytes, big-endian) || uuid_send (16 bytes): the same bytes
-- are easy to build in any language.
CREATE TABLE orders (tenant bigint NOT NULL, id uuid NOT NULL)
    PARTITION BY LIST (jumpbackhash(int8send(tenant) || uuid_send(id), 2));
CREATE TABLE orders_0 PARTITION OF orders FOR VALUES IN (0);
CREATE TABLE orders_1 PARTITION OF orders FOR VALUES IN (1);
INSERT INTO orders SELECT i % 7, md5(i::text)::uuid FROM generate_series(1, 1000) AS i;
SELECT count(*) AS misplaced FROM orders
WHERE tableoid <> format('orders_%s', jumpbackhash(xxh3_64(int8send(tenant) || uuid_send(id)), 2))::regclass;
SELECT xxh3_64(int8send(1) || uuid_send('00000000-0000-0000-0000-000000000002'))
       = xxh3_64('\x0000000000000001' || '\x00000000000000000000000000000002'::bytea) AS bytes_as_documented;

-- A stored generated column, and an index on the expression.
CREATE TABLE sessions (token uuid NOT NULL,
                       shard int GENERATED ALWAYS AS (jumpbackhash(token, 16)) STORED);
CREATE INDEX ON sessions (jumphash(token, 8));
INSERT INTO sessions (token) SELECT md5(i::text)::uuid FROM generate_series(1, 100) AS i;
SELECT count(*) FILTER (WHERE shard <> jumpbackhash(xxh3_64(token), 16)) AS wrong_shard FROM sessions;
DROP TABLE users, orders, sessions;

-- The promises users rely on: immutable, strict, parallel safe, commented.
SELECT p.oid::regprocedure AS function, p.prosrc, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
FROM pg_proc p
WHERE p.proname IN ('xxh3_64', 'jumpbackhash', 'jumphash')
ORDER BY p.oid::regprocedure::text;
