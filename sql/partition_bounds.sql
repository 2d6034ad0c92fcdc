-- A partition whose MODULUS is not the bucket count of its table's
-- jumpbackhash<N> operator class is refused when it is made or attached
-- (the event trigger jumpbackhash_partition_bounds; docs/sharding.md):
-- by CREATE TABLE ... PARTITION OF, CREATE FOREIGN TABLE ... PARTITION OF
-- and ALTER TABLE ... ATTACH PARTITION, by any role, also under
-- session_replication_role = replica; the statement is rolled back and no
-- row lands where jumpbackhash does not place it.  Tables partitioned by
-- other hash operator classes are left alone.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;
CREATE SCHEMA bounds;
SET search_path = bounds, public;
CREATE TABLE t (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash16_int8_ops);
\set VERBOSITY default
\set SHOW_CONTEXT never

-- Made with MODULUS 8: refused, with what to do.
CREATE TABLE t_0 PARTITION OF t FOR VALUES WITH (MODULUS 8, REMAINDER 0);
\set VERBOSITY terse
SELECT to_regclass('t_0') AS not_made;
-- With MODULUS 16: made.
SELECT format('CREATE TABLE t_%s PARTITION OF t FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
FROM generate_series(0, 14) AS b \gexec
-- Attached with MODULUS 32, then 16.
CREATE TABLE t_15 (id bigint NOT NULL);
ALTER TABLE t ATTACH PARTITION t_15 FOR VALUES WITH (MODULUS 32, REMAINDER 15);
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 't'::regclass;
ALTER TABLE t ATTACH PARTITION t_15 FOR VALUES WITH (MODULUS 16, REMAINDER 15);
-- Every row where jumpbackhash places it.
INSERT INTO t SELECT i FROM generate_series(1, 2000) AS i;
SELECT count(*) FILTER (WHERE tableoid <> format('bounds.t_%s', jumpbackhash(id, 16))::regclass) AS misplaced,
       count(*) AS rows
FROM t;
SELECT * FROM jumpbackhash_partitioning_problems('t');

-- A foreign table as a partition, the same.
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'postgres_fdw') AS fdw_made \gset
CREATE EXTENSION IF NOT EXISTS postgres_fdw SCHEMA public;
CREATE SERVER bounds_elsewhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'elsewhere.invalid');
CREATE TABLE f (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash4_int8_ops);
CREATE FOREIGN TABLE f_0 PARTITION OF f FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER bounds_elsewhere;
CREATE FOREIGN TABLE f_0 PARTITION OF f FOR VALUES WITH (MODULUS 4, REMAINDER 0) SERVER bounds_elsewhere;

-- By another role, on its own table; and under session_replication_role = replica.
CREATE ROLE bounds_owner;
GRANT CREATE, USAGE ON SCHEMA bounds TO bounds_owner;
SET ROLE bounds_owner;
CREATE TABLE u (k text) PARTITION BY HASH (k jumpbackhash3_text_ops);
CREATE TABLE u_0 PARTITION OF u FOR VALUES WITH (MODULUS 1, REMAINDER 0);
CREATE TABLE u_0 PARTITION OF u FOR VALUES WITH (MODULUS 3, REMAINDER 0);
RESET ROLE;
SET session_replication_role = replica;
CREATE TABLE u_1 PARTITION OF u FOR VALUES WITH (MODULUS 6, REMAINDER 1);
RESET session_replication_role;
SELECT string_agg(inhrelid::regclass::text, ', ' ORDER BY inhrelid::regclass::text) AS partitions_of_u
FROM pg_inherits WHERE inhparent = 'u'::regclass;

-- A resharding's own statements are not checked (its bounds are its own);
-- after it, this session's are again.
CREATE TABLE r (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE r_0 PARTITION OF r FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE r_1 PARTITION OF r FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE r_2 (LIKE r);
CALL reshard_add_partition('r', 'r_2');
SELECT (SELECT opcname FROM pg_opclass WHERE oid = partclass[0]) AS class,
       (SELECT count(*) FROM pg_inherits WHERE inhparent = 'r'::regclass) AS partitions
FROM pg_partitioned_table WHERE partrelid = 'r'::regclass;
CREATE TABLE q (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE q_0 PARTITION OF q FOR VALUES WITH (MODULUS 4, REMAINDER 0);

-- Other hash operator classes: any modulus, as PostgreSQL allows.
CREATE TABLE native (id bigint) PARTITION BY HASH (id);
CREATE TABLE native_0 PARTITION OF native FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE native_1 PARTITION OF native FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE native_3 PARTITION OF native FOR VALUES WITH (MODULUS 4, REMAINDER 3);

-- Nobody calls the function: it is the event trigger's.
SELECT has_function_privilege('bounds_owner', 'jumpbackhash_partition_bound_guard()', 'EXECUTE') AS owner_may_call;

RESET search_path;
DROP SCHEMA bounds CASCADE;
DROP SERVER bounds_elsewhere;
\if :fdw_made
DROP EXTENSION postgres_fdw;
\endif
DROP ROLE bounds_owner;
