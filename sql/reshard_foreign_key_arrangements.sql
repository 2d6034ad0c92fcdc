--
-- Foreign keys of every arrangement PostgreSQL allows, carried over by
-- resharding: to and from partitioned tables, between two sharded tables,
-- from a multi-level range-partitioned table, NOT VALID, with comments and
-- actions.  After each call every constraint is as the DBA left it: the same
-- names, definitions and validation, on the same tables, and as many of the
-- rows PostgreSQL keeps for each partition of a partitioned table referred
-- to (internal), valid as they were.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
CREATE EXTENSION subsetting;
RESET client_min_messages;
\set SHOW_CONTEXT never
-- The tables in a schema of their own (dropped at the end, whatever
-- happened); the calls with a budget no loaded machine overruns (the
-- cutover's catalog work grows with the foreign keys).
CREATE SCHEMA fkeys;
SET search_path = fkeys, public;

-- The foreign keys on or to the tables of this test: on which table, to
-- which, name, validated, definition, comment, and how many internal rows
-- hang from it (of those, how many valid).  An internal row of a
-- partition's foreign key (inherited from its parent's) is shown too, with
-- inherited = t.
CREATE FUNCTION fks() RETURNS TABLE (on_table text, refers_to text, name text, inherited boolean, valid boolean,
                                     definition text, comment text, internal bigint, internal_valid bigint)
LANGUAGE sql AS $$
    SELECT k.conrelid::regclass::text, k.confrelid::regclass::text, k.conname::text, k.conparentid <> 0, k.convalidated,
           pg_get_constraintdef(k.oid), obj_description(k.oid, 'pg_constraint'),
           (SELECT count(*) FROM pg_constraint i WHERE i.conparentid = k.oid AND i.conrelid = k.conrelid),
           (SELECT count(*) FROM pg_constraint i WHERE i.conparentid = k.oid AND i.conrelid = k.conrelid AND i.convalidated)
    FROM pg_constraint k
    WHERE k.contype = 'f'
      AND k.conrelid::regclass::text ~ '^(kinds|orders|lines|events|notes)'
      AND (k.conparentid = 0 OR k.conrelid <> (SELECT p.conrelid FROM pg_constraint p WHERE p.oid = k.conparentid))
    ORDER BY k.conrelid::regclass::text COLLATE "C", k.conname COLLATE "C"
$$;
-- kinds: partitioned by range, not sharded.  orders: sharded (3 buckets),
-- refers to kinds (a foreign key to a partitioned table).  lines: sharded
-- (2 buckets), refers to orders ON DELETE CASCADE (a foreign key between
-- two sharded tables).  events: partitioned by range on two levels, refers
-- to orders ON DELETE SET NULL (a foreign key from a partitioned table that
-- is not sharded).  notes: a plain table, a foreign key to orders NOT VALID
-- with a comment, and one DEFERRABLE.
CREATE TABLE kinds (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE kinds_low PARTITION OF kinds FOR VALUES FROM (0) TO (50);
CREATE TABLE kinds_high PARTITION OF kinds FOR VALUES FROM (50) TO (100);
INSERT INTO kinds SELECT generate_series(0, 99);
CREATE TABLE orders (id bigint PRIMARY KEY, kind int NOT NULL CONSTRAINT orders_kind REFERENCES kinds)
    PARTITION BY HASH (id jumpbackhash3_int8_ops);
CREATE TABLE orders_0 PARTITION OF orders FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE orders_1 PARTITION OF orders FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE orders_2 PARTITION OF orders FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO orders SELECT i, i % 100 FROM generate_series(1, 600) AS i;
CREATE TABLE lines (id bigint PRIMARY KEY, order_id bigint CONSTRAINT lines_order REFERENCES orders ON DELETE CASCADE)
    PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE lines_0 PARTITION OF lines FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE lines_1 PARTITION OF lines FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO lines SELECT i, (i - 1) % 600 + 1 FROM generate_series(1, 900) AS i;
CREATE TABLE events (at int NOT NULL, order_id bigint CONSTRAINT events_order REFERENCES orders ON DELETE SET NULL)
    PARTITION BY RANGE (at);
CREATE TABLE events_old PARTITION OF events FOR VALUES FROM (0) TO (100) PARTITION BY RANGE (at);
CREATE TABLE events_old_a PARTITION OF events_old FOR VALUES FROM (0) TO (50);
CREATE TABLE events_old_b PARTITION OF events_old FOR VALUES FROM (50) TO (100);
CREATE TABLE events_new PARTITION OF events FOR VALUES FROM (100) TO (200);
INSERT INTO events SELECT i % 200, i FROM generate_series(1, 600) AS i;
CREATE TABLE notes (order_id bigint, also bigint, note text);
INSERT INTO notes SELECT i, i, 'note' FROM generate_series(1, 50) AS i;
INSERT INTO notes VALUES (100000, 1, 'of an order that does not exist');
ALTER TABLE notes ADD CONSTRAINT notes_order FOREIGN KEY (order_id) REFERENCES orders NOT VALID;
COMMENT ON CONSTRAINT notes_order ON notes IS 'checked from now on';
ALTER TABLE notes ADD CONSTRAINT notes_also FOREIGN KEY (also) REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED;
CREATE TABLE orders_3 (LIKE orders INCLUDING ALL);
CREATE TABLE lines_2 (LIKE lines INCLUDING ALL);
CREATE TABLE before AS SELECT * FROM fks();
TABLE before;
-- Rows of each table, and rows whose key is in the wrong partition.
CREATE FUNCTION counts() RETURNS TABLE (orders bigint, lines bigint, events bigint, notes bigint, misplaced numeric)
LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM lines), (SELECT count(*) FROM events),
           (SELECT count(*) FROM notes),
           (SELECT sum(misplaced_rows) FROM reshard_check('orders')) + (SELECT sum(misplaced_rows) FROM reshard_check('lines'))
$$;

-- What differs from before: now, not before; before, not now.
CREATE FUNCTION changes() RETURNS TABLE (side text, on_table text, refers_to text, name text, inherited boolean, valid boolean,
                                         definition text, comment text, internal bigint, internal_valid bigint)
LANGUAGE sql AS $$
    SELECT * FROM (SELECT 'now', * FROM (SELECT * FROM fks() EXCEPT ALL SELECT * FROM before) AS d
                   UNION ALL
                   SELECT 'before', * FROM (SELECT * FROM before EXCEPT ALL SELECT * FROM fks()) AS d) AS t
    ORDER BY t.on_table COLLATE "C", t.name COLLATE "C", 1
$$;
SELECT * FROM counts();

-- (a, c, b) orders, referred to by a sharded table, a range-partitioned
-- table on two levels and a plain one, and referring to a partitioned
-- table: 3 -> 4 buckets.  Every foreign key as it was; the internal rows of
-- those that refer to orders: one more (orders_3), valid as they were.
SET client_min_messages = warning;
CALL reshard_add_partition('orders', 'orders_3', cutover_budget => '60 s');
RESET client_min_messages;
SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.orders';
SELECT * FROM changes();
SELECT * FROM counts();

-- (b) lines, the sharded table that refers to orders: 2 -> 3 buckets.
-- Its foreign key, and the rows PostgreSQL keeps for each partition of
-- orders, as they were (not one constraint for each of them).
SET client_min_messages = warning;
CALL reshard_add_partition('lines', 'lines_2', cutover_budget => '60 s');
RESET client_min_messages;
SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.lines';
SELECT * FROM changes();
SELECT * FROM counts();

-- Back to 3 buckets of orders: every foreign key as before, but lines' new
-- partition's.
SET client_min_messages = warning;
CALL reshard_remove_partition('orders', 'orders_3', cutover_budget => '60 s');
RESET client_min_messages;
SELECT * FROM changes();
SELECT * FROM counts();

-- They act as before: the cascade, SET NULL, the checks of each table.
DELETE FROM notes WHERE order_id = 7 OR also = 7;
DELETE FROM orders WHERE id = 7;
SELECT (SELECT count(*) FROM lines WHERE order_id = 7) AS lines_of_7,
       (SELECT count(*) FROM events WHERE order_id IS NULL) AS events_without_order;
INSERT INTO lines VALUES (5000, 7);
INSERT INTO events VALUES (10, 7);
INSERT INTO notes VALUES (7, NULL, 'no such order');
INSERT INTO orders VALUES (5000, 100);
-- (the names PostgreSQL gives its internal rows differ between versions)
\set VERBOSITY sqlstate
DELETE FROM orders WHERE id = 1;
DELETE FROM kinds WHERE id = 1;
\set VERBOSITY default

-- Interrupted after the cutover (reshard_begin, then steps until phase
-- finish; the removed partition keeps the foreign key of orders, as DETACH
-- does: dropped first).  The foreign keys of events and lines are on their
-- partitions only, NOT VALID until the finish validates them, and the
-- finish adds them to the partitioned tables; each refuses an unknown order
-- already.  Calling again finishes it.
ALTER TABLE orders_3 DROP CONSTRAINT orders_kind;
CALL reshard_begin('orders', 'add', 'orders_3');
DO $$
BEGIN
    FOR i IN 1 .. 20 LOOP
        EXIT WHEN (SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.orders') IN ('finish', 'done', 'aborted');
        CALL reshard_step('orders', '60 s');
    END LOOP;
END
$$;
SELECT on_table, name, inherited, valid, internal FROM fks() WHERE refers_to = 'orders';
INSERT INTO events VALUES (10, 7);
SET client_min_messages = warning;
CALL reshard_add_partition('orders', 'orders_3', cutover_budget => '60 s');
RESET client_min_messages;
SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.orders';
SELECT * FROM changes();
SELECT * FROM counts();

-- Interrupted before the cutover, then undone: nothing changed.
CALL reshard_begin('lines', 'remove', 'lines_2');
DO $$
BEGIN
    FOR i IN 1 .. 20 LOOP
        EXIT WHEN (SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.lines') IN ('cutover', 'done', 'aborted');
        CALL reshard_step('lines', '60 s');
    END LOOP;
END
$$;
SET client_min_messages = warning;
CALL reshard_abort('lines');
RESET client_min_messages;
SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.lines';
SELECT * FROM changes();
SELECT * FROM counts();

-- Refused before anything is made: a partition of a referring partitioned
-- table owned by another role (its foreign key is added again by the
-- table's owner).
CREATE ROLE regress_fk_other;
ALTER TABLE events_new OWNER TO regress_fk_other;
CALL reshard_remove_partition('orders', 'orders_3', cutover_budget => '60 s');
SELECT phase FROM reshard_state WHERE parent_name = 'fkeys.orders';
ALTER TABLE events_new OWNER TO CURRENT_USER;
DROP ROLE regress_fk_other;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA fkeys CASCADE;
RESET client_min_messages;
DELETE FROM reshard_state;
