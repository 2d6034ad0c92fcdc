--
-- reshard_add_partition: from n to n + 1 buckets, moving only the rows whose
-- bucket changes, all of them to the new partition; no row lost or
-- duplicated; the parent re-created with its columns, constraints, owner,
-- privileges and comment; every refusal.
--
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;

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
-- The dry run: per partition, the rows that would move; nothing changes.
CREATE TEMP TABLE dry AS SELECT * FROM reshard_dry_run('users');
SELECT partition, bucket, rows = (SELECT count(*) FROM users WHERE tableoid = partition) AS rows_right,
       rows_to_move = (SELECT count(*) FROM users WHERE tableoid = partition AND jumpbackhash(email, 4) = 3) AS moving_right
FROM dry ORDER BY bucket;
SELECT pg_get_partkeydef('users'::regclass) AS partition_key, (SELECT count(*) FROM users_3) AS users_3_rows;
-- Progress: a NOTICE per partition and step (with the time taken in a DETAIL,
-- not shown here).
\set VERBOSITY terse
SET client_min_messages = notice;
CALL reshard_add_partition('users', 'users_3') \gset
SET client_min_messages = warning;
\set VERBOSITY default
SELECT :moved_rows = (SELECT sum(rows_to_move) FROM dry) AS dry_run_was_right;

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

-- Running it again for the same partition finds it done: nothing moves.
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
FROM events GROUP BY 1 ORDER BY tableoid::regclass::text;

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


-- Shrinking: events from 3 to 2 buckets moves only the rows of bucket 2,
-- spread over the others by jumphash(id, 2); events_2 is detached, empty,
-- not dropped.
SET client_min_messages = warning;
CREATE TEMP TABLE events_before AS SELECT e.*, tableoid::regclass::text AS part FROM events e;
SELECT partition, bucket, rows_to_move = (CASE WHEN bucket = 2 THEN rows ELSE 0 END) AS only_bucket_2_moves
FROM reshard_dry_run('events', 2) ORDER BY bucket;
CALL reshard_remove_partition('events') \gset
SELECT :moved_rows = (SELECT count(*) FROM events_before WHERE part = 'events_2') AS moved_as_reported,
       pg_get_partkeydef('events'::regclass) AS partition_key,
       (SELECT count(*) FROM events_2) AS events_2_rows,
       (SELECT count(*) FROM pg_inherits WHERE inhrelid = 'events_2'::regclass) AS events_2_attached,
       (SELECT count(*) FROM events e JOIN events_before b USING (id)
        WHERE b.part <> e.tableoid::regclass::text AND b.part <> 'events_2') AS others_moved,
       (SELECT count(*) FROM events) = (SELECT count(*) FROM events_before) AS same_count,
       (SELECT count(*) FROM events WHERE tableoid <> format('events_%s', jumphash(id, 2))::regclass) AS misplaced;
SELECT count(*) AS lost_or_changed
FROM (SELECT id, payload FROM events_before EXCEPT ALL SELECT id, payload FROM events) AS d;
-- And back to 3 with the same partition.
CALL reshard_add_partition('events', 'events_2') \gset
SELECT :moved_rows = (SELECT count(*) FROM events_before WHERE part = 'events_2') AS same_rows_move_back,
       (SELECT count(*) FROM events e JOIN events_before b USING (id) WHERE b.part <> e.tableoid::regclass::text) AS not_home;

-- The tables the extension partitions, and the check for misplaced rows.
SELECT parent, method, key, buckets, partitions FROM sharded_tables ORDER BY parent::text;
SELECT * FROM reshard_check('events') ORDER BY bucket;
SELECT method, hash_function, key, buckets, bucket, partition FROM sharding_layout('users') ORDER BY bucket;
-- A table that is not sharded: an error, as for reshard_check, unless
-- missing_ok (the views and the engine ask so).
SELECT count(*) AS rows_for_a_plain_table FROM sharding_layout('users_0', missing_ok => true);
SELECT * FROM sharding_layout('users_0');
SELECT * FROM reshard_check('users_0');

-- Random tables, random bucket counts, random keys of every type, grown and
-- shrunk at random: after every call, every row where the hash function
-- says, the same rows as before, and the count reported equal to the rows
-- that changed partition.  Different inputs at every run; only the verdict
-- is printed.
CREATE TABLE random_runs (run int, ok boolean, detail text);
DO $$
DECLARE
    run int;
    kind text;
    fn text;
    n int;
    step int;
    moved bigint;
    changed bigint;
    misplaced bigint;
    diff bigint;
    t text;
BEGIN
    FOR run IN 1 .. 6 LOOP
        kind := (ARRAY['bigint', 'text', 'uuid', 'bytea'])[1 + floor(random() * 4)::int];
        fn := (ARRAY['jumpbackhash', 'jumphash'])[1 + floor(random() * 2)::int];
        IF fn = 'jumphash' AND kind <> 'bigint' AND random() < 0.5 THEN kind := 'bigint'; END IF;
        n := 1 + floor(random() * 6)::int;
        t := 'random_' || run;
        EXECUTE format('CREATE TABLE %I (k %s NOT NULL, v int, w text DEFAULT ''w'') PARTITION BY LIST (%s(k, %s))',
                       t, kind, fn, n);
        FOR i IN 0 .. n - 1 LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES IN (%s)', t || '_' || i, t, i);
        END LOOP;
        EXECUTE format('INSERT INTO %I (k, v) SELECT %s, i FROM generate_series(1, %s) AS i', t,
                       CASE kind WHEN 'bigint' THEN '(random() * 9e18)::bigint'
                                 WHEN 'text' THEN 'md5(random()::text)'
                                 WHEN 'uuid' THEN 'md5(random()::text)::uuid'
                                 ELSE 'decode(md5(random()::text), ''hex'')' END,
                       100 + floor(random() * 900)::int);
        -- duplicates too
        EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE v %% 7 = 0', t, t);
        FOR step IN 1 .. 4 LOOP
            EXECUTE format('CREATE TEMP TABLE snap AS SELECT x.*, tableoid::regclass::text AS part FROM %I x', t);
            IF n > 1 AND random() < 0.4 THEN
                CALL reshard_remove_partition(t::regclass, NULL, moved);
                n := n - 1;
            ELSE
                IF to_regclass(t || '_' || n) IS NULL THEN
                    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING ALL)', t || '_' || n, t);
                END IF;
                CALL reshard_add_partition(t::regclass, (t || '_' || n)::regclass, moved);
                n := n + 1;
            END IF;
            EXECUTE format('SELECT count(*) FROM (SELECT k, v, w, tableoid::regclass::text FROM %I
                                                  EXCEPT ALL SELECT k, v, w, part FROM snap) AS c', t) INTO changed;
            EXECUTE format('SELECT count(*) FROM %I x WHERE tableoid <> format(''%s_%%s'', %s(k, %s))::regclass',
                           t, t, fn, n) INTO misplaced;
            EXECUTE format('SELECT (SELECT count(*) FROM (SELECT k, v, w FROM snap EXCEPT ALL SELECT k, v, w FROM %I) a)
                                 + (SELECT count(*) FROM (SELECT k, v, w FROM %I EXCEPT ALL SELECT k, v, w FROM snap) b)',
                           t, t) INTO diff;
            INSERT INTO random_runs VALUES (run, changed = moved AND misplaced = 0 AND diff = 0,
                format('%s(%s) step %s to %s buckets: moved %s, changed %s, misplaced %s, differences %s',
                       fn, kind, step, n, moved, changed, misplaced, diff));
            DROP TABLE snap;
        END LOOP;
        EXECUTE format('DROP TABLE %I', t);
        COMMIT;
    END LOOP;
END $$;
SELECT count(*) AS steps, count(*) FILTER (WHERE ok) AS passed FROM random_runs;
SELECT detail FROM random_runs WHERE NOT ok;
DROP TABLE random_runs;
-- (the partitions the runs removed, detached and not dropped)
DO $$ DECLARE t text; BEGIN FOR t IN SELECT relname FROM pg_class WHERE relname ~ '^random_[0-9]+_[0-9]+$' AND relkind = 'r' LOOP EXECUTE format('DROP TABLE %I', t); END LOOP; END $$;
RESET client_min_messages;

DROP TABLE users, events, events_2;
DROP ROLE regress_reshard_reader;

-- A schema and tables whose names need quoting: resharded both ways, each
-- row where its bucket says, nothing of the engine left.
CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."T t" (k bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(k, 2));
CREATE TABLE "Odd Schema"."T t_0" PARTITION OF "Odd Schema"."T t" FOR VALUES IN (0);
CREATE TABLE "Odd Schema"."T t_1" PARTITION OF "Odd Schema"."T t" FOR VALUES IN (1);
INSERT INTO "Odd Schema"."T t" SELECT i, 'v' || i FROM generate_series(1, 1000) AS i;
CREATE TABLE "Odd Schema"."T t_2" (LIKE "Odd Schema"."T t" INCLUDING ALL);
CALL reshard_add_partition('"Odd Schema"."T t"', '"Odd Schema"."T t_2"');
SELECT count(*) AS rows, count(*) FILTER (WHERE tableoid <> format('"Odd Schema"."T t_%s"', jumpbackhash(k, 3))::regclass) AS misplaced
FROM "Odd Schema"."T t";
CALL reshard_remove_partition('"Odd Schema"."T t"');
SELECT count(*) AS rows, count(*) FILTER (WHERE tableoid <> format('"Odd Schema"."T t_%s"', jumpbackhash(k, 2))::regclass) AS misplaced
FROM "Odd Schema"."T t";
SELECT relname FROM pg_class WHERE relname ~ '^reshard_(shadow|incoming|parent|log|key)_';
DROP SCHEMA "Odd Schema" CASCADE;

-- The extension in a schema whose name needs quoting, beside a schema
-- named like that name quoted ("Odd Ext" with its quotes, as another role
-- could create) holding a jumpbackhash of its own: sharding_layout names
-- the extension's schema quoted once, and resharding keys the tables by
-- the extension's functions and operator classes, never the impostor's.
-- (The extension is not relocatable: it is created there.)
CREATE SCHEMA "Odd Ext";
CREATE SCHEMA """Odd Ext""";
CREATE FUNCTION """Odd Ext""".jumpbackhash(bigint, int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 0';
DROP EXTENSION subsetting;
CREATE EXTENSION subsetting SCHEMA "Odd Ext";
CREATE TABLE odd_hash (k bigint NOT NULL) PARTITION BY HASH (k "Odd Ext".jumpbackhash2_int8_ops);
CREATE TABLE odd_hash_0 PARTITION OF odd_hash FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE odd_hash_1 PARTITION OF odd_hash FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE odd_list (k bigint NOT NULL) PARTITION BY LIST ("Odd Ext".jumpbackhash(k, 2));
CREATE TABLE odd_list_0 PARTITION OF odd_list FOR VALUES IN (0);
CREATE TABLE odd_list_1 PARTITION OF odd_list FOR VALUES IN (1);
INSERT INTO odd_hash SELECT generate_series(1, 1000);
INSERT INTO odd_list SELECT generate_series(1, 1000);
SELECT DISTINCT parent, method, hash_function, key, buckets
FROM unnest(ARRAY['odd_hash', 'odd_list']::regclass[]) AS parent, "Odd Ext".sharding_layout(parent) ORDER BY 1;
CREATE TABLE odd_hash_2 (LIKE odd_hash INCLUDING ALL);
CREATE TABLE odd_list_2 (LIKE odd_list INCLUDING ALL);
CALL "Odd Ext".reshard_add_partition('odd_hash', 'odd_hash_2');
CALL "Odd Ext".reshard_add_partition('odd_list', 'odd_list_2');
SELECT parent, pg_get_partkeydef(parent) AS partition_key,
       (SELECT count(*) FROM pg_depend d JOIN pg_proc p ON p.oid = d.refobjid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_proc'::regclass
          AND p.pronamespace = '"""Odd Ext"""'::regnamespace) AS impostor_used
FROM unnest(ARRAY['odd_hash', 'odd_list']::regclass[]) AS parent ORDER BY 1;
SELECT (SELECT count(*) FROM odd_hash WHERE tableoid <> format('odd_hash_%s', "Odd Ext".jumpbackhash(k, 3))::regclass)
       + (SELECT count(*) FROM odd_list WHERE tableoid <> format('odd_list_%s', "Odd Ext".jumpbackhash(k, 3))::regclass)
           AS misplaced,
       (SELECT count(*) FROM odd_hash) + (SELECT count(*) FROM odd_list) AS rows;
DROP TABLE odd_hash, odd_hash_2, odd_list, odd_list_2;
DROP EXTENSION subsetting;
CREATE EXTENSION subsetting SCHEMA public;
DROP SCHEMA "Odd Ext", """Odd Ext""" CASCADE;
