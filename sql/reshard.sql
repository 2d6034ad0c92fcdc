--
-- reshard_add_partition: from n to n + 1 buckets, moving only the rows whose
-- bucket changes, all of them to the new partition; no row lost or
-- duplicated; the parent re-created with its columns, constraints, owner,
-- privileges and comment; every refusal.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

CREATE TABLE users (email text NOT NULL, name text NOT NULL DEFAULT 'anonymous', visits int CHECK (visits >= 0))
    PARTITION BY LIST (jumpbackhash(email, 3));
CREATE TABLE users_0 PARTITION OF users FOR VALUES IN (0);
CREATE TABLE users_1 PARTITION OF users FOR VALUES IN (1);
CREATE TABLE users_2 PARTITION OF users FOR VALUES IN (2);
INSERT INTO users SELECT 'user' || i || '@example.com', 'user ' || i, i % 10 FROM generate_series(1, 30000) AS i;
COMMENT ON TABLE users IS 'one row per user';
CREATE ROLE regress_reshard_reader;
GRANT SELECT ON users TO regress_reshard_reader;

-- Where every row is, and a checksum of all rows, before.
CREATE TEMP TABLE before AS SELECT email, tableoid::regclass::text AS part FROM users;
CREATE TEMP TABLE checksum_before AS
SELECT count(*) AS n, md5(string_agg(u::text, ',' ORDER BY email)) AS checksum FROM users AS u;

-- The new partition, a table like the others, not attached.
CREATE TABLE users_3 (LIKE users INCLUDING ALL);
CALL reshard_add_partition('users', 'users_3') \gset

-- The moved rows: about a quarter (7500, binomial standard deviation 75;
-- within four of them), every one into users_3, and every row of users_3 one
-- that was elsewhere; hash % n would have moved about three quarters.
SELECT count(*) FILTER (WHERE b.part <> u.tableoid::regclass::text) = :moved_rows AS moved_as_reported,
       abs(count(*) FILTER (WHERE b.part <> u.tableoid::regclass::text) - 7500) <= 300 AS about_a_quarter,
       count(*) FILTER (WHERE b.part <> u.tableoid::regclass::text AND u.tableoid <> 'users_3'::regclass) AS moved_elsewhere,
       count(*) FILTER (WHERE u.tableoid = 'users_3'::regclass AND b.part = 'users_3') AS already_there,
       abs(count(*) FILTER (WHERE abs(xxh3_64(u.email) % 3) <> abs(xxh3_64(u.email) % 4)) - 22500) <= 300
           AS modulo_moves_three_quarters
FROM users AS u JOIN before AS b USING (email);

-- No row lost or duplicated, none changed.
SELECT b.n = a.n AS same_count, b.checksum = a.checksum AS same_rows
FROM checksum_before AS b,
     (SELECT count(*) AS n, md5(string_agg(u::text, ',' ORDER BY email)) AS checksum FROM users AS u) AS a;

-- Every row where jumpbackhash(email, 4) says, and nowhere else.
SELECT (SELECT count(*) FROM users_0) + (SELECT count(*) FROM users_1) + (SELECT count(*) FROM users_2)
         + (SELECT count(*) FROM users_3) AS rows_in_partitions,
       count(*) FILTER (WHERE tableoid <> format('users_%s', jumpbackhash(email, 4))::regclass) AS misplaced
FROM users;

-- The new parent: four buckets, the same columns, defaults, constraints,
-- comment and privileges.
SELECT pg_get_partkeydef('users'::regclass) AS partition_key;
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'users'::regclass ORDER BY 1;
\d users
SELECT obj_description('users'::regclass, 'pg_class') AS comment,
       has_table_privilege('regress_reshard_reader', 'users', 'SELECT') AS reader_can_select,
       has_table_privilege('regress_reshard_reader', 'users', 'INSERT') AS reader_can_insert;
INSERT INTO users (email) VALUES ('new@example.com');
SELECT tableoid::regclass AS partition, name, visits FROM users WHERE email = 'new@example.com';
DELETE FROM users WHERE email = 'new@example.com';

-- Running it again for the same partition only finishes the clean-up: nothing
-- is left to move.
CALL reshard_add_partition('users', 'users_3');

-- jumphash, a bigint key, and 1 -> 2 -> 3 buckets.
CREATE TABLE events (id bigint NOT NULL, payload text) PARTITION BY LIST (jumphash(id, 1));
CREATE TABLE events_0 PARTITION OF events FOR VALUES IN (0);
INSERT INTO events SELECT i, md5(i::text) FROM generate_series(1, 3000) AS i;
CREATE TABLE events_1 (LIKE events);
CALL reshard_add_partition('events', 'events_1') \gset
SELECT :moved_rows = count(*) AS moved_as_reported FROM events_1;
CREATE TABLE events_2 (LIKE events);
CALL reshard_add_partition('events', 'events_2') \gset
SELECT :moved_rows = count(*) AS moved_as_reported FROM events_2;
-- About a third in each (1000, binomial standard deviation 26; within four of them).
SELECT tableoid::regclass AS partition, abs(count(*) - 1000) <= 104 AS about_a_third,
       count(*) FILTER (WHERE tableoid <> format('events_%s', jumphash(id, 3))::regclass) AS misplaced
FROM events GROUP BY 1 ORDER BY 1;

-- A composite key, an expression of two columns, 2 -> 3 buckets.
CREATE TABLE orders (tenant bigint NOT NULL, id uuid NOT NULL)
    PARTITION BY LIST (jumpbackhash(int8send(tenant) || uuid_send(id), 2));
CREATE TABLE orders_0 PARTITION OF orders FOR VALUES IN (0);
CREATE TABLE orders_1 PARTITION OF orders FOR VALUES IN (1);
INSERT INTO orders SELECT i % 7, md5(i::text)::uuid FROM generate_series(1, 3000) AS i;
CREATE TABLE orders_2 (LIKE orders);
CALL reshard_add_partition('orders', 'orders_2') \gset
SELECT pg_get_partkeydef('orders'::regclass) AS partition_key, count(*) AS rows,
       :moved_rows = count(*) FILTER (WHERE tableoid = 'orders_2'::regclass) AS moved_as_reported,
       count(*) FILTER (WHERE tableoid <> format('orders_%s', jumpbackhash(int8send(tenant) || uuid_send(id), 3))::regclass)
           AS misplaced
FROM orders;
DROP TABLE orders;

-- The extension's schema not on the search_path: the partition key reads
-- public.jumpbackhash(...), and the new one too.
SET search_path = pg_catalog;
CREATE TABLE public.qualified (k text NOT NULL) PARTITION BY LIST (public.jumpbackhash(k, 1));
CREATE TABLE public.qualified_0 PARTITION OF public.qualified FOR VALUES IN (0);
INSERT INTO public.qualified SELECT 'k' || i FROM generate_series(1, 100) AS i;
CREATE TABLE public.qualified_1 (LIKE public.qualified);
CALL public.reshard_add_partition('public.qualified', 'public.qualified_1') \gset
SELECT pg_get_partkeydef('public.qualified'::regclass) AS partition_key,
       count(*) FILTER (WHERE tableoid = 'public.qualified_1'::regclass) = :moved_rows AS moved_as_reported,
       count(*) FILTER (WHERE tableoid <> format('public.qualified_%s', public.jumpbackhash(k, 2))::regclass) AS misplaced
FROM public.qualified;
DROP TABLE public.qualified;
RESET search_path;

-- Refusals, each naming what is wrong; nothing changes.
\i test/regress_helpers.sql
CREATE TABLE plain (id bigint);
CREATE TABLE by_hash (id bigint) PARTITION BY HASH (id);
CREATE TABLE by_other (id bigint) PARTITION BY LIST ((id % 3));
CREATE TABLE full_3 (LIKE users);
INSERT INTO full_3 VALUES ('x@example.com', 'x', 1);
CREATE TABLE gap (id bigint) PARTITION BY LIST (jumpbackhash(id, 3));
CREATE TABLE gap_0 PARTITION OF gap FOR VALUES IN (0);
CREATE TABLE gap_2 PARTITION OF gap FOR VALUES IN (2);
CREATE TABLE two_values (id bigint) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE two_values_01 PARTITION OF two_values FOR VALUES IN (0, 1);
CREATE TABLE with_default (id bigint) PARTITION BY LIST (jumpbackhash(id, 1));
CREATE TABLE with_default_0 PARTITION OF with_default FOR VALUES IN (0);
CREATE TABLE with_default_d PARTITION OF with_default DEFAULT;
CREATE TABLE with_serial (id bigserial) PARTITION BY LIST (jumpbackhash(id, 1));
CREATE TABLE with_serial_0 PARTITION OF with_serial FOR VALUES IN (0);
CREATE TABLE with_trigger (id bigint) PARTITION BY LIST (jumpbackhash(id, 1));
CREATE TABLE with_trigger_0 PARTITION OF with_trigger FOR VALUES IN (0);
CREATE FUNCTION pg_temp.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER noop BEFORE INSERT ON with_trigger FOR EACH ROW EXECUTE FUNCTION pg_temp.noop();
CREATE TABLE events_spare (LIKE events);
CREATE VIEW user_names AS SELECT name FROM users;
CREATE TABLE users_4 (LIKE users INCLUDING ALL);
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'CALL reshard_add_partition(''plain'', ''events_spare'')',
    'CALL reshard_add_partition(''by_hash'', ''events_spare'')',
    'CALL reshard_add_partition(''by_other'', ''events_spare'')',
    'CALL reshard_add_partition(''users'', ''users_0'')',
    'CALL reshard_add_partition(''users'', ''full_3'')',
    'CALL reshard_add_partition(''gap'', ''events_spare'')',
    'CALL reshard_add_partition(''two_values'', ''events_spare'')',
    'CALL reshard_add_partition(''with_default'', ''events_spare'')',
    'CALL reshard_add_partition(''with_serial'', ''events_spare'')',
    'CALL reshard_add_partition(''with_trigger'', ''events_spare'')',
    'CALL reshard_add_partition(''events'', ''users_4'')',
    'CALL reshard_add_partition(NULL, ''users_4'')']) AS q;

-- A view on the parent stops the re-creation; the rows copied in the same
-- transaction are rolled back with it.
\set VERBOSITY terse
CALL reshard_add_partition('users', 'users_4');
SELECT pg_get_partkeydef('users'::regclass) AS partition_key, (SELECT count(*) FROM users_4) AS users_4_rows,
       count(*) AS rows, count(*) FILTER (WHERE tableoid <> format('users_%s', jumpbackhash(email, 4))::regclass) AS misplaced
FROM users;

-- Inside a transaction block it cannot commit its steps, and nothing changes.
BEGIN;
CALL reshard_add_partition('events', 'events_spare');
ROLLBACK;
\set VERBOSITY default
SELECT pg_get_partkeydef('events'::regclass) AS partition_key, (SELECT count(*) FROM events_spare) AS spare_rows;

DROP VIEW user_names;
DROP TABLE users, users_4, events, events_spare, plain, by_hash, by_other, full_3, gap, two_values,
    with_default, with_serial, with_trigger;
DROP ROLE regress_reshard_reader;
