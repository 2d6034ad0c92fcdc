--
-- Hash operator classes jumpbackhash<N>_<type>_ops: PARTITION BY HASH places
-- a row in the partition of REMAINDER jumpbackhash(key, N), for every type
-- and many N; plan-time and run-time pruning; primary keys and ON CONFLICT;
-- partition-wise joins; hash joins and aggregates unchanged; the classes a
-- superuser adds; every refusal and every problem the check reports.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;
\i test/regress_helpers.sql

-- What this relies on in PostgreSQL (partbounds.c, partprune.c): the row
-- hash of a one-column key is hash_combine64(0, h) with h the extended hash
-- with HASH_PARTITION_SEED, and the row goes to REMAINDER row hash % MODULUS.
-- satisfies_hash_partition computes exactly that, so: for every hash4j
-- reference row with at most 256 buckets (independent golden values), the
-- key satisfies the partition of its bucket and no other.  A PostgreSQL
-- release that places otherwise fails here.
CREATE TEMP TABLE hash4j (key bigint, buckets int, bucket int);
\copy hash4j FROM 'test/data/jumpbackhash_hash4j.csv' WITH (FORMAT csv, HEADER)
DELETE FROM hash4j WHERE buckets > 256;
SELECT format('CREATE TEMP TABLE parent_%s (key bigint) PARTITION BY HASH (key jumpbackhash%s_int8_ops)', n, n)
FROM (SELECT DISTINCT buckets FROM hash4j) AS b(n) ORDER BY n \gexec
SELECT count(*) AS rows, count(DISTINCT buckets) AS bucket_counts,
       count(*) FILTER (WHERE NOT satisfies_hash_partition(('parent_' || buckets)::regclass, buckets, bucket, key))
           AS not_in_their_partition,
       count(*) FILTER (WHERE buckets > 1 AND
                              satisfies_hash_partition(('parent_' || buckets)::regclass, buckets, (bucket + 1) % buckets, key))
           AS also_in_another
FROM hash4j;
-- The same for int4 and int2 keys (sign-extended to bigint).
CREATE TEMP TABLE parent4 (key int) PARTITION BY HASH (key jumpbackhash16_int4_ops);
CREATE TEMP TABLE parent2 (key smallint) PARTITION BY HASH (key jumpbackhash100_int2_ops);
SELECT count(*) FILTER (WHERE buckets = 16) AS int4_rows,
       count(*) FILTER (WHERE buckets = 16 AND NOT satisfies_hash_partition('parent4'::regclass, 16, bucket, key::int)) AS int4_wrong,
       count(*) FILTER (WHERE buckets = 100) AS int2_rows,
       count(*) FILTER (WHERE buckets = 100 AND NOT satisfies_hash_partition('parent2'::regclass, 100, bucket, key::smallint)) AS int2_wrong
FROM hash4j WHERE key BETWEEN -32768 AND 32767;
-- And every 7th value of int2, every 65537th of int4 (jumpbackhash itself is
-- pinned to hash4j by sql/jump.sql).
SELECT count(*) AS int2_keys,
       count(*) FILTER (WHERE NOT satisfies_hash_partition('parent2'::regclass, 100, jumpbackhash(k, 100), k::smallint)) AS int2_wrong
FROM generate_series(-32768, 32767, 7) AS k;
SELECT count(*) AS int4_keys,
       count(*) FILTER (WHERE NOT satisfies_hash_partition('parent4'::regclass, 16, jumpbackhash(k, 16), k::int)) AS int4_wrong
FROM generate_series(-2147483648, 2147483647, 65537) AS k;

-- Text, bytea and uuid keys: golden buckets from XXH3-64 (python3-xxhash)
-- and an independent JumpBackHash, test/data/partition_hash_golden.py.
CREATE TEMP TABLE golden (type text, key text, buckets int, bucket int);
INSERT INTO golden VALUES
('text', '', 3, 2),
('text', '', 16, 14),
('text', '', 100, 17),
('text', '', 256, 238),
('text', 'user42@example.com', 3, 2),
('text', 'user42@example.com', 16, 8),
('text', 'user42@example.com', 100, 40),
('text', 'user42@example.com', 256, 246),
('text', 'Jérôme', 3, 2),
('text', 'Jérôme', 16, 6),
('text', 'Jérôme', 100, 56),
('text', 'Jérôme', 256, 56),
('text', '東京', 3, 1),
('text', '東京', 16, 4),
('text', '東京', 100, 65),
('text', '東京', 256, 127),
('bytea', '\x', 3, 2),
('bytea', '\x', 16, 14),
('bytea', '\x', 100, 17),
('bytea', '\x', 256, 238),
('bytea', '\x00', 3, 1),
('bytea', '\x00', 16, 1),
('bytea', '\x00', 100, 26),
('bytea', '\x00', 256, 203),
('bytea', '\xdeadbeef', 3, 2),
('bytea', '\xdeadbeef', 16, 15),
('bytea', '\xdeadbeef', 100, 68),
('bytea', '\xdeadbeef', 256, 68),
('uuid', '00000000-0000-0000-0000-000000000000', 3, 2),
('uuid', '00000000-0000-0000-0000-000000000000', 16, 12),
('uuid', '00000000-0000-0000-0000-000000000000', 100, 52),
('uuid', '00000000-0000-0000-0000-000000000000', 256, 148),
('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 3, 2),
('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 16, 13),
('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 100, 90),
('uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 256, 101);
SELECT format('CREATE TEMP TABLE parent_%s_%s (key %s) PARTITION BY HASH (key jumpbackhash%s_%s_ops)', t, n, t, n, t)
FROM (SELECT DISTINCT type, buckets FROM golden) AS g(t, n) ORDER BY t, n \gexec
CREATE FUNCTION pg_temp.satisfies(type text, key text, buckets int, remainder int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE result boolean;
BEGIN
    EXECUTE format('SELECT satisfies_hash_partition(%L::regclass, %s, %s, %L::%s)',
                   format('parent_%s_%s', type, buckets), buckets, remainder, key, type) INTO result;
    RETURN result;
END $$;
SELECT type, count(*) AS rows,
       count(*) FILTER (WHERE NOT pg_temp.satisfies(type, key, buckets, bucket)) AS not_in_their_partition,
       count(*) FILTER (WHERE pg_temp.satisfies(type, key, buckets, (bucket + 1) % buckets)) AS also_in_another
FROM golden GROUP BY type ORDER BY type;

-- Real tables: random keys of every type, for several N, each in the
-- partition named after its bucket, checked against jumpbackhash(key, N).
CREATE FUNCTION pg_temp.sharded(name text, type text, buckets int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (key %s, payload int) PARTITION BY HASH (key jumpbackhash%s_%s_ops)',
                   name, type, buckets, type);
    FOR b IN 0 .. buckets - 1 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                       name || '_' || b, name, buckets, b);
    END LOOP;
END $$;
-- misplaced: rows not in the partition of their bucket; buckets_used: how
-- many partitions hold rows.
CREATE FUNCTION pg_temp.misplaced(name text, buckets int, OUT rows bigint, OUT misplaced bigint, OUT partitions_used bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT count(*), count(*) FILTER (WHERE tableoid::regclass::text <> %L || jumpbackhash(key, %s)),
                           count(DISTINCT tableoid) FROM %I', name || '_', buckets, name)
    INTO rows, misplaced, partitions_used;
END $$;
SELECT setseed(0.42);
CREATE TEMP TABLE cases AS
SELECT type, buckets, format('t_%s_%s', type, buckets) AS name
FROM unnest(ARRAY['int2', 'int4', 'int8', 'text', 'bytea', 'uuid']) AS type,
     unnest(ARRAY[1, 2, 7, 16, 100]) AS buckets;
INSERT INTO cases VALUES ('int8', 256, 't_int8_256'), ('text', 256, 't_text_256');
SELECT count(pg_temp.sharded(name, type, buckets)) AS tables FROM cases;
SELECT format('INSERT INTO %I (key) SELECT %s FROM generate_series(1, 3000)', name,
              CASE type WHEN 'int2' THEN '(random() * 65535 - 32768)::int::smallint'
                        WHEN 'int4' THEN '(random() * 4294967295 - 2147483648)::bigint::int'
                        WHEN 'int8' THEN '(random() * 2^62)::bigint * (CASE WHEN random() < 0.5 THEN -2 ELSE 2 END) + (random() * 2)::int'
                        WHEN 'text' THEN '''user'' || (random() * 1e9)::bigint || ''@example.com'''
                        WHEN 'bytea' THEN 'decode(md5(random()::text), ''hex'')'
                        WHEN 'uuid' THEN 'md5(random()::text)::uuid' END)
FROM cases \gexec
SELECT c.type, c.buckets, m.rows, m.misplaced, m.partitions_used
FROM cases AS c, pg_temp.misplaced(c.name, c.buckets) AS m ORDER BY c.type, c.buckets;
-- The extremes of each integer type, zero and -1.
INSERT INTO t_int2_100 (key) VALUES (-32768), (32767), (0), (-1);
INSERT INTO t_int4_100 (key) VALUES (-2147483648), (2147483647), (0), (-1);
INSERT INTO t_int8_100 (key) VALUES (-9223372036854775808), (9223372036854775807), (0), (-1);
SELECT tableoid::regclass, key FROM t_int8_100 WHERE key IN (-9223372036854775808, 9223372036854775807, 0, -1) ORDER BY key;
SELECT (pg_temp.misplaced('t_int2_100', 100)).misplaced AS int2, (pg_temp.misplaced('t_int4_100', 100)).misplaced AS int4,
       (pg_temp.misplaced('t_int8_100', 100)).misplaced AS int8;
-- NULL keys go to REMAINDER 0 (PostgreSQL leaves NULLs out of the row hash).
INSERT INTO t_text_16 (key, payload) VALUES (NULL, -1);
SELECT tableoid::regclass FROM t_text_16 WHERE key IS NULL;
-- A text key is placed by its UTF-8 bytes, as jumpbackhash(text) places it.
INSERT INTO t_text_16 (key) VALUES ('J' || chr(233) || 'r' || chr(244) || 'me');
SELECT tableoid::regclass, jumpbackhash(key, 16) FROM t_text_16 WHERE key = 'J' || chr(233) || 'r' || chr(244) || 'me';
SELECT g.bucket AS golden, jumpbackhash(g.key, 16) AS computed FROM golden AS g
WHERE g.type = 'text' AND g.buckets = 16 AND g.key = 'J' || chr(233) || 'r' || chr(244) || 'me';

-- Pruning at plan time: =, IN, a literal of another integer type.
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL) PARTITION BY HASH (id jumpbackhash16_int8_ops);
SELECT format('CREATE TABLE users_%s PARTITION OF users FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
FROM generate_series(0, 15) AS b \gexec
INSERT INTO users SELECT i, 'user ' || i FROM generate_series(1, 10000) AS i;
SELECT jumpbackhash(42, 16) AS bucket_of_42, jumpbackhash(7, 16) AS bucket_of_7, jumpbackhash(1000, 16) AS bucket_of_1000;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 42;
SELECT tableoid::regclass, * FROM users WHERE id = 42;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 42::int;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 42::smallint;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id IN (42, 7, 1000);
SELECT count(*) FROM users WHERE id IN (42, 7, 1000);
-- An OR of keys reads the partitions of those keys only (the plan itself
-- differs: a BitmapOr of two index scans before 18, one = ANY from 18 on).
CREATE FUNCTION pg_temp.plan(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP plan := plan || line || E'\n'; END LOOP;
    RETURN plan;
END $$;
SELECT array_agg(DISTINCT m[1] ORDER BY m[1]) AS partitions_read
FROM regexp_matches(pg_temp.plan('SELECT * FROM users WHERE id = 42 OR id = 7'), ' on (users_\d+) ', 'g') AS m;
-- An int4 key pruned by a bigint and a smallint.
EXPLAIN (COSTS OFF) SELECT * FROM t_int4_16 WHERE key = 42::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM t_int2_16 WHERE key = 42::bigint;
-- Text, bytea and uuid keys.
EXPLAIN (COSTS OFF) SELECT * FROM t_text_16 WHERE key = 'user42@example.com';
SELECT jumpbackhash('user42@example.com'::text, 16) AS text_bucket,
       jumpbackhash('\xdeadbeef'::bytea, 16) AS bytea_bucket,
       jumpbackhash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 16) AS uuid_bucket;
EXPLAIN (COSTS OFF) SELECT * FROM t_bytea_16 WHERE key = '\xdeadbeef';
EXPLAIN (COSTS OFF) SELECT * FROM t_uuid_16 WHERE key = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
-- IS NULL prunes to REMAINDER 0.
EXPLAIN (COSTS OFF) SELECT * FROM t_text_16 WHERE key IS NULL;

-- Pruning at run time: a generic plan removes all partitions but one when
-- it starts.
SET plan_cache_mode = force_generic_plan;
PREPARE one_user(bigint) AS SELECT name FROM users WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE one_user(42);
EXECUTE one_user(42);
PREPARE some_users(bigint[]) AS SELECT count(*) FROM users WHERE id = ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE some_users('{42, 7}');
EXECUTE some_users('{42, 7, 1000}');
PREPARE one_text(text) AS SELECT count(*) FROM t_text_16 WHERE key = $1;
EXPLAIN (COSTS OFF) EXECUTE one_text('user42@example.com');
RESET plan_cache_mode;
DEALLOCATE ALL;

-- Primary key, unique index, INSERT ... ON CONFLICT on the key.
SELECT pg_temp.error_of('INSERT INTO users VALUES (42, ''again'')');
INSERT INTO users VALUES (42, 'renamed'), (10001, 'new')
ON CONFLICT (id) DO UPDATE SET name = excluded.name;
SELECT tableoid::regclass, * FROM users WHERE id IN (42, 10001) ORDER BY id;
INSERT INTO users VALUES (42, 'ignored') ON CONFLICT DO NOTHING;
SELECT name FROM users WHERE id = 42;
CREATE UNIQUE INDEX ON t_text_16 (key);
SELECT pg_temp.error_of('INSERT INTO t_text_16 (key) SELECT key FROM t_text_16 WHERE key IS NOT NULL LIMIT 1');
-- Changing the key moves the row to its new partition.
UPDATE users SET id = 1000042 WHERE id = 42;
SELECT tableoid::regclass, jumpbackhash(id, 16) FROM users WHERE id = 1000042;
UPDATE users SET id = 42 WHERE id = 1000042;
SELECT count(*) FILTER (WHERE tableoid::regclass::text <> 'users_' || jumpbackhash(id, 16)) AS misplaced FROM users;

-- Partition-wise join of two tables with the same N (one int4 key table of
-- another N does not join partition-wise).
CREATE TABLE orders (id bigint, user_id bigint NOT NULL, amount int NOT NULL)
    PARTITION BY HASH (user_id jumpbackhash16_int8_ops);
SELECT format('CREATE TABLE orders_%s PARTITION OF orders FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
FROM generate_series(0, 15) AS b \gexec
INSERT INTO orders SELECT i, 1 + i % 10000, i % 100 FROM generate_series(1, 30000) AS i;
ANALYZE users, orders;
SET enable_partitionwise_join = on;
SET enable_partitionwise_aggregate = on;
SELECT (SELECT count(*) FROM regexp_matches(plan, '(Hash|Merge|Nested Loop) Join', 'g')) AS joins,
       (SELECT count(*) FROM regexp_matches(plan, 'Scan on users_\d+', 'g')) AS users_scans,
       (SELECT count(*) FROM regexp_matches(plan, 'Scan on orders_\d+', 'g')) AS orders_scans
FROM pg_temp.plan('SELECT u.name, o.amount FROM users u JOIN orders o ON o.user_id = u.id') AS plan;
SELECT count(*), sum(o.amount) FROM users u JOIN orders o ON o.user_id = u.id;
EXPLAIN (COSTS OFF) SELECT u.name, sum(o.amount) FROM users u JOIN orders o ON o.user_id = u.id WHERE u.id = 42 GROUP BY u.name;
RESET enable_partitionwise_join;
RESET enable_partitionwise_aggregate;

-- Hash joins and hash aggregates on the key give the same answers as
-- merge joins and sorted aggregates: support function 1 of every class is
-- the type's built-in hash, support function 2 PostgreSQL's own extended
-- hash for every seed but the partition seed.
SELECT count(*) AS support_1_not_built_in
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
WHERE f.opfname ~ '^jumpbackhash[0-9]+_' AND p.amprocnum = 1
  AND p.amproc::regproc::text NOT IN ('hashint2', 'hashint4', 'hashint8', 'hashtext', 'hashvarlena', 'uuid_hash');
SELECT count(*) AS families, count(*) FILTER (WHERE f.opfname ~ '_integer_ops$') AS integer_families
FROM pg_opfamily f JOIN pg_namespace n ON n.oid = f.opfnamespace
WHERE f.opfname ~ '^jumpbackhash[0-9]+_' AND f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'hash');
SELECT count(*) AS opclasses, count(*) FILTER (WHERE opcdefault) AS default_opclasses
FROM pg_opclass WHERE opcname ~ '^jumpbackhash[0-9]+_';
-- (8816678312871386365 is HASH_PARTITION_SEED, 0x7A5B22367996DCFD.)
SELECT k, seed, seed = 8816678312871386365 AS partition_seed,
       subsetting_partition_hash.jumpbackhash16_int8_partition_hash(k, seed) = hashint8extended(k, seed) AS same_as_built_in
FROM (VALUES (42::bigint, 0::bigint), (42, 1), (-1, 8816678312871386364), (-1, 8816678312871386365), (0, -1)) AS t(k, seed);
SELECT subsetting_partition_hash.jumpbackhash16_text_partition_hash('a', 7) = hashtextextended('a', 7) AS text,
       subsetting_partition_hash.jumpbackhash16_uuid_partition_hash(md5('a')::uuid, 7) = uuid_hash_extended(md5('a')::uuid, 7) AS uuid,
       subsetting_partition_hash.jumpbackhash16_int2_partition_hash(3::smallint, 7) = hashint2extended(3::smallint, 7) AS int2,
       subsetting_partition_hash.jumpbackhash16_int4_partition_hash(3, 7) = hashint4extended(3, 7) AS int4;
-- With the partition seed, the partition hash plus 0x49a0f4dd15e5a8e3
-- (5305509591434766563) is the bucket.
SELECT (subsetting_partition_hash.jumpbackhash16_int8_partition_hash(k, 8816678312871386365)::numeric + 5305509591434766563
        + 18446744073709551616) % 18446744073709551616 AS bucket,
       jumpbackhash(k, 16) AS expected
FROM (VALUES (42::bigint), (-1), (9223372036854775807)) AS t(k);
CREATE TEMP TABLE a AS SELECT (random() * 1000)::bigint AS k, i FROM generate_series(1, 20000) AS i;
CREATE TEMP TABLE b AS SELECT (random() * 1000)::bigint AS k, i FROM generate_series(1, 20000) AS i;
ANALYZE a, b;
SET enable_mergejoin = off; SET enable_nestloop = off; SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM a JOIN users u ON u.id = a.k;
CREATE TEMP TABLE hashed AS
SELECT (SELECT count(*) || ' ' || sum(a.i) FROM a JOIN users u ON u.id = a.k) AS join_users,
       (SELECT count(*) || ' ' || sum(a.i) FROM a JOIN b ON a.k = b.k) AS join_ab,
       (SELECT md5(string_agg(k || ':' || n, ',' ORDER BY k)) FROM (SELECT k, count(*) AS n FROM a GROUP BY k) AS g) AS groups;
RESET enable_mergejoin; RESET enable_nestloop; RESET enable_sort;
SET enable_hashjoin = off; SET enable_hashagg = off;
SELECT h.join_users = (SELECT count(*) || ' ' || sum(a.i) FROM a JOIN users u ON u.id = a.k) AS join_users_same,
       h.join_ab = (SELECT count(*) || ' ' || sum(a.i) FROM a JOIN b ON a.k = b.k) AS join_ab_same,
       h.groups = (SELECT md5(string_agg(k || ':' || n, ',' ORDER BY k)) FROM (SELECT k, count(*) AS n FROM a GROUP BY k) AS g) AS groups_same
FROM hashed AS h;
RESET enable_hashjoin; RESET enable_hashagg;

-- Refusals.
-- A nondeterministic collation: no key can be placed by its bytes.
CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE names (name text COLLATE case_insensitive) PARTITION BY HASH (name jumpbackhash4_text_ops);
SELECT format('CREATE TABLE names_%s PARTITION OF names FOR VALUES WITH (MODULUS 4, REMAINDER %s)', b, b)
FROM generate_series(0, 3) AS b \gexec
INSERT INTO names VALUES ('Alice');
SELECT * FROM jumpbackhash_partitioning_problems('names');
-- The same key with a deterministic collation is accepted.
CREATE TABLE c_names (name text COLLATE "C") PARTITION BY HASH (name jumpbackhash4_text_ops);
CREATE TABLE c_names_0 PARTITION OF c_names FOR VALUES WITH (MODULUS 4, REMAINDER 0);
SELECT jumpbackhash('Alice', 4) AS bucket, pg_temp.error_of('INSERT INTO c_names VALUES (''Alice'')');

-- Problems the check reports: a MODULUS other than N, two key columns,
-- missing buckets; none for a complete table.
SELECT * FROM jumpbackhash_partitioning_problems('users');
-- (a table made so before 1.2, whose event trigger refuses such partitions:
-- sql/partition_bounds.sql)
ALTER EVENT TRIGGER jumpbackhash_partition_bounds DISABLE;
CREATE TABLE wrong_modulus (id bigint) PARTITION BY HASH (id jumpbackhash16_int8_ops);
SELECT format('CREATE TABLE wrong_modulus_%s PARTITION OF wrong_modulus FOR VALUES WITH (MODULUS 8, REMAINDER %s)', b, b)
FROM generate_series(0, 7) AS b \gexec
ALTER EVENT TRIGGER jumpbackhash_partition_bounds ENABLE ALWAYS;
-- What PostgreSQL does then (silently): bucket % 8.
INSERT INTO wrong_modulus SELECT i FROM generate_series(1, 1000) AS i;
SELECT count(*) FILTER (WHERE tableoid::regclass::text <> 'wrong_modulus_' || jumpbackhash(id, 16) % 8) AS not_bucket_mod_8,
       count(*) FILTER (WHERE jumpbackhash(id, 16) >= 8) AS buckets_8_to_15
FROM wrong_modulus;
SELECT * FROM jumpbackhash_partitioning_problems('wrong_modulus') LIMIT 3;
CREATE TABLE two_columns (id bigint, region int) PARTITION BY HASH (id jumpbackhash4_int8_ops, region);
SELECT * FROM jumpbackhash_partitioning_problems('two_columns');
CREATE TABLE second_column (region int, id bigint) PARTITION BY HASH (region, id jumpbackhash4_int8_ops);
SELECT * FROM jumpbackhash_partitioning_problems('second_column');
CREATE TABLE native (id bigint) PARTITION BY HASH (id);
SELECT * FROM jumpbackhash_partitioning_problems('native');
SELECT pg_temp.error_of('SELECT jumpbackhash_partitioning_problems(''cases'')');

-- The classes a superuser adds for another N.
SELECT jumpbackhash_create_operator_classes(300);
CREATE TABLE wide (id int PRIMARY KEY) PARTITION BY HASH (id jumpbackhash300_int4_ops);
SELECT format('CREATE TABLE wide_%s PARTITION OF wide FOR VALUES WITH (MODULUS 300, REMAINDER %s)', b, b)
FROM generate_series(0, 299) AS b \gexec
INSERT INTO wide SELECT i FROM generate_series(1, 5000) AS i;
SELECT count(*) AS rows, count(*) FILTER (WHERE tableoid::regclass::text <> 'wide_' || jumpbackhash(id, 300)) AS misplaced,
       count(DISTINCT tableoid) AS partitions_used
FROM wide;
EXPLAIN (COSTS OFF) SELECT * FROM wide WHERE id = 42::bigint;
SELECT jumpbackhash(42, 300) AS bucket_of_42;
-- Laid out as the installed classes: the same classes, operators, support
-- functions (in schema subsetting_partition_hash) and comment, but for N.
SELECT count(*) AS families, count(DISTINCT layout) AS layouts, min(layout) AS layout
FROM (SELECT replace(concat_ws(E'\n', f.opfnamespace::regnamespace, obj_description(f.oid, 'pg_opfamily'),
                               (SELECT string_agg(concat_ws(' ', c.opcname, c.opcintype::regtype, c.opcdefault,
                                                            c.opcnamespace::regnamespace), ', ' ORDER BY c.opcname)
                                FROM pg_opclass c WHERE c.opcfamily = f.oid),
                               (SELECT string_agg(concat_ws(' ', a.amopstrategy, a.amopopr::regoperator), ', '
                                                  ORDER BY a.amopopr::regoperator::text)
                                FROM pg_amop a WHERE a.amopfamily = f.oid),
                               (SELECT string_agg(concat_ws(' ', a.amprocnum, a.amproc::regprocedure,
                                                            obj_description(a.amproc, 'pg_proc')), E'\n'
                                                  ORDER BY a.amproc::regprocedure::text)
                                FROM pg_amproc a WHERE a.amprocfamily = f.oid)),
                     substring(f.opfname FROM '[0-9]+'), 'N') AS layout
      FROM pg_opfamily f WHERE f.opfname IN ('jumpbackhash16_ops', 'jumpbackhash300_ops')) AS families;
-- Not members of the extension (so that pg_dump dumps them), and no
-- dependency on it.
SELECT count(*) AS on_the_extension
FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE p.proname ~ '^jumpbackhash300_' AND d.refclassid = 'pg_extension'::regclass;
SELECT pg_temp.error_of('SELECT jumpbackhash_create_operator_classes(300)');
SELECT pg_temp.error_of('SELECT jumpbackhash_create_operator_classes(16)');
SELECT pg_temp.error_of('SELECT jumpbackhash_create_operator_classes(0)');
CREATE ROLE regress_partition_hash_user;
SET ROLE regress_partition_hash_user;
SELECT pg_temp.error_of('SELECT jumpbackhash_create_operator_classes(500)');
-- Everyone may use the installed classes.
CREATE TEMP TABLE mine (id bigint) PARTITION BY HASH (id jumpbackhash3_int8_ops);
CREATE TEMP TABLE mine_0 PARTITION OF mine FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TEMP TABLE mine_1 PARTITION OF mine FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TEMP TABLE mine_2 PARTITION OF mine FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO mine SELECT i FROM generate_series(1, 300) AS i;
SELECT count(*) FILTER (WHERE tableoid::regclass::text <> 'mine_' || jumpbackhash(id, 3)) AS misplaced FROM mine;
DROP TABLE mine;
RESET ROLE;
DROP ROLE regress_partition_hash_user;

-- A support function that is renamed no longer knows its N: it refuses
-- (in a new session; one that placed rows already keeps N in its cache).
ALTER FUNCTION subsetting_partition_hash.jumpbackhash300_int4_partition_hash(int, bigint) RENAME TO renamed_partition_hash;
\c -
\i test/regress_helpers.sql
SELECT pg_temp.error_of('INSERT INTO wide VALUES (100001)');
ALTER FUNCTION subsetting_partition_hash.renamed_partition_hash(int, bigint) RENAME TO jumpbackhash300_int4_partition_hash;
INSERT INTO wide VALUES (100001);
SELECT tableoid::regclass, jumpbackhash(100001, 300) FROM wide WHERE id = 100001;

-- DROP EXTENSION refuses while a table uses the classes it installed, and
-- while classes a superuser added exist: their support functions are in
-- the extension's schema subsetting_partition_hash (it names them).
DROP TABLE users, orders, wrong_modulus, two_columns, second_column, native, names, c_names;
SELECT format('DROP TABLE %I', name) FROM (SELECT format('t_%s_%s', type, buckets) AS name
    FROM unnest(ARRAY['int2', 'int4', 'int8', 'text', 'bytea', 'uuid']) AS type,
         unnest(ARRAY[1, 2, 7, 16, 100]) AS buckets
    UNION ALL VALUES ('t_int8_256'), ('t_text_256')) AS cases \gexec
DROP COLLATION case_insensitive;
CREATE TABLE narrow (id bigint) PARTITION BY HASH (id jumpbackhash16_int8_ops);
SELECT pg_temp.error_of('DROP EXTENSION subsetting');
DROP TABLE narrow;
SELECT pg_proc.oid::regprocedure AS support_function FROM pg_proc WHERE proname ~ '^jumpbackhash300_' ORDER BY 1;
DROP EXTENSION subsetting;
SELECT pg_temp.error_of('SELECT jumpbackhash_create_operator_classes(300)');
-- How a superuser drops them: the family with its classes (CASCADE: and the
-- tables that use them), then the six functions.
DROP OPERATOR FAMILY jumpbackhash300_ops USING hash CASCADE;
SELECT format('DROP FUNCTION %s', oid::regprocedure) FROM pg_proc WHERE proname ~ '^jumpbackhash300_' ORDER BY 1 \gexec
SELECT to_regclass('wide') AS wide, count(*) AS left_behind FROM pg_proc WHERE proname ~ '^jumpbackhash300_';
DROP EXTENSION subsetting;
SELECT count(*) AS classes_left, count(DISTINCT opcfamily) AS families_left
FROM pg_opclass WHERE opcname ~ '^jumpbackhash';
CREATE EXTENSION subsetting;

-- Where the lock table cannot hold DROP EXTENSION's locks (one per object it
-- drops, about 9,600), jumpbackhash_drop_operator_classes first drops the
-- classes a few families per transaction (test/t/017_drop_extension_small_server.pl
-- does it at max_connections = 40).  It checks its argument, and drops
-- nothing while a table uses a class.
SELECT pg_temp.error_of('CALL jumpbackhash_drop_operator_classes(0)');
SELECT pg_temp.error_of('CALL jumpbackhash_drop_operator_classes(NULL)');
CREATE TABLE kept (id bigint) PARTITION BY HASH (id jumpbackhash7_int8_ops);
CREATE TABLE kept_text (id text) PARTITION BY HASH (id jumpbackhash200_text_ops);
CALL jumpbackhash_drop_operator_classes();
DROP TABLE kept, kept_text;
-- Its transactions are its own: in a transaction block it fails at its
-- first COMMIT, and the block's ROLLBACK undoes what it did.
BEGIN;
CALL jumpbackhash_drop_operator_classes(10);
ROLLBACK;
SELECT count(*) AS classes, count(DISTINCT opcfamily) AS families
FROM pg_opclass WHERE opcname ~ '^jumpbackhash';
CALL jumpbackhash_drop_operator_classes(100);
SELECT count(*) AS classes_left,
       (SELECT count(*) FROM pg_proc WHERE proname ~ '^jumpbackhash[0-9]+_') AS support_functions_left
FROM pg_opclass WHERE opcname ~ '^jumpbackhash';
-- Called again, it finds nothing to drop.  DROP EXTENSION then takes a few
-- hundred locks, not 9,600.
CALL jumpbackhash_drop_operator_classes();
BEGIN;
DROP EXTENSION subsetting;
SELECT count(*) < 500 AS few_locks FROM pg_locks WHERE pid = pg_backend_pid();
COMMIT;
CREATE EXTENSION subsetting;
