--
-- Foreign keys between co-located tables kept by their partitions, each to
-- the partition of the same bucket (issue 44, item 3; docs/scaling-out.md,
-- "Foreign keys between co-located tables"): foreign_keys_to_partitions
-- refuses a table whose foreign key it cannot hand over (naming each
-- reason: an ON DELETE CASCADE one among them, which a key changed through
-- the table referred to would turn into a delete, and an ON UPDATE SET
-- NULL one), and in a transaction block; hands them over (the table's
-- dropped, each partition's added and validated); a row whose row referred
-- to is missing is refused through the table and in the partition, and so
-- is a row referred to deleted, or its key changed; called again, it
-- validates what a call cut short left NOT VALID; uncolocate is refused
-- while they hold; the tables referred to can then hand their unique
-- constraints over, and a bucket's partitions of all three move to the
-- server together, the foreign keys made there (held through the tables)
-- and back here; foreign_keys_to_parent gives them back once it has its
-- unique constraint again; what the records hold only the engine writes,
-- and a dropped table takes its records with it.
--
\i test/engine_move_helpers.sql
SET client_min_messages = warning;
DROP ROLE IF EXISTS foreign_keys_writer;
SET client_min_messages = notice;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE engine_move.customers (id bigint PRIMARY KEY, name text)
    PARTITION BY HASH (id jumpbackhash4_int8_ops);
CREATE TABLE engine_move.orders (customer_id bigint REFERENCES engine_move.customers,
                                 order_id bigint, total numeric, PRIMARY KEY (customer_id, order_id))
    PARTITION BY HASH (customer_id jumpbackhash4_int8_ops);
CREATE TABLE engine_move.order_items (customer_id bigint, order_id bigint, item int,
                                      CONSTRAINT items_order FOREIGN KEY (customer_id, order_id)
                                          REFERENCES engine_move.orders MATCH FULL ON DELETE CASCADE ON UPDATE CASCADE
                                                     DEFERRABLE)
    PARTITION BY HASH (customer_id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE engine_move.%1$s_%2$s PARTITION OF engine_move.%1$s FOR VALUES WITH (MODULUS 4, REMAINDER %2$s)', t, b)
FROM unnest(ARRAY['customers', 'orders', 'order_items']) AS t, generate_series(0, 3) AS b \gexec
INSERT INTO engine_move.customers SELECT i, 'c' || i FROM generate_series(1, 40) AS i;
INSERT INTO engine_move.orders SELECT c, o, c * o FROM generate_series(1, 40) AS c, generate_series(1, 3) AS o;
INSERT INTO engine_move.order_items SELECT c, o, i FROM generate_series(1, 40) AS c, generate_series(1, 3) AS o,
                                                        generate_series(1, 2) AS i;
CREATE FUNCTION pg_temp.foreign_keys(t regclass) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT format('%s %s %s%s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid),
                  CASE WHEN NOT c.convalidated THEN ' (not valid)' ELSE '' END)
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.conparentid = 0
      AND c.conrelid IN (SELECT relid FROM pg_partition_tree(t))
    ORDER BY c.conrelid::regclass::text, c.conname
$$;

-- Refused: not co-located; a table that is not sharded; null arguments;
-- a foreign key that does not refer to the key by the key.
CALL foreign_keys_to_partitions('engine_move.orders');
CALL foreign_keys_to_partitions('engine_move.mirror');
CALL foreign_keys_to_partitions(NULL);
CALL foreign_keys_to_partitions('engine_move.orders', cutover_budget => NULL);
SELECT colocate(ARRAY['engine_move.customers', 'engine_move.orders', 'engine_move.order_items']::regclass[]);
CREATE TABLE engine_move.crossed (customer_id bigint, order_id bigint,
                                  FOREIGN KEY (order_id, customer_id) REFERENCES engine_move.orders)
    PARTITION BY HASH (customer_id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE engine_move.crossed_%1$s PARTITION OF engine_move.crossed FOR VALUES WITH (MODULUS 4, REMAINDER %1$s)', b)
FROM generate_series(0, 3) AS b \gexec
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.crossed']::regclass[]);
CALL foreign_keys_to_partitions('engine_move.crossed');
DROP TABLE engine_move.crossed;
-- ON DELETE CASCADE: a key changed through the table referred to would be
-- a delete for a partition's foreign key, and take the items with it.
CALL foreign_keys_to_partitions('engine_move.order_items');
-- ON UPDATE SET NULL: the items of an order whose id changed would get a
-- NULL key, of another bucket than their partition's.
ALTER TABLE engine_move.order_items DROP CONSTRAINT items_order;
ALTER TABLE engine_move.order_items ADD CONSTRAINT items_order FOREIGN KEY (customer_id, order_id)
    REFERENCES engine_move.orders MATCH FULL ON UPDATE SET NULL DEFERRABLE;
CALL foreign_keys_to_partitions('engine_move.order_items');
ALTER TABLE engine_move.order_items DROP CONSTRAINT items_order;
ALTER TABLE engine_move.order_items ADD CONSTRAINT items_order FOREIGN KEY (customer_id, order_id)
    REFERENCES engine_move.orders MATCH FULL ON UPDATE CASCADE DEFERRABLE;
-- In a transaction block: it commits.
BEGIN;
CALL foreign_keys_to_partitions('engine_move.orders');
ROLLBACK;

-- Handed over: each partition refers to the partition of its bucket.
CALL foreign_keys_to_partitions('engine_move.orders');
CALL foreign_keys_to_partitions('engine_move.order_items');
SELECT * FROM pg_temp.foreign_keys('engine_move.orders');
SELECT * FROM pg_temp.foreign_keys('engine_move.order_items');
SELECT parent, name, referenced, columns, referenced_columns, options FROM partition_foreign_keys ORDER BY 1, 2;
-- Held: an item of no order is refused, through the table and in its
-- partition.
INSERT INTO engine_move.order_items VALUES (7, 9, 1);
SELECT 'engine_move.order_items'::regclass::text AS t, p.partition::text AS p
FROM sharding_layout('engine_move.order_items') AS p WHERE p.bucket = jumpbackhash(7::bigint, 4) \gset
INSERT INTO :p VALUES (7, 9, 1);
INSERT INTO engine_move.order_items VALUES (7, 1, NULL);
INSERT INTO engine_move.orders VALUES (41, 1, 0);
-- A customer with orders cannot go, nor change its key (to another
-- bucket: the table's foreign key refused it too); without them, it can.
DELETE FROM engine_move.customers WHERE id = 7;
UPDATE engine_move.customers SET id = 1007 WHERE id = 7;
UPDATE engine_move.orders SET customer_id = 1007 WHERE customer_id = 7 AND order_id = 1;
-- An order's key changed within the bucket: its items follow (ON UPDATE
-- CASCADE).
UPDATE engine_move.orders SET order_id = 100 WHERE customer_id = 7 AND order_id = 1;
SELECT order_id, count(*) AS items FROM engine_move.order_items WHERE customer_id = 7 GROUP BY 1 ORDER BY 1;
DELETE FROM engine_move.order_items WHERE customer_id = 7;
DELETE FROM engine_move.orders WHERE customer_id = 7;
DELETE FROM engine_move.customers WHERE id = 7;
SELECT (SELECT count(*) FROM engine_move.orders WHERE customer_id = 7) AS orders_of_7,
       (SELECT count(*) FROM engine_move.order_items WHERE customer_id = 7) AS items_of_7,
       (SELECT count(*) FROM engine_move.order_items) AS items;
-- Called again: nothing left to hand over; a partition's foreign key left
-- NOT VALID (a call cut short) is validated.
CALL foreign_keys_to_partitions('engine_move.orders');
ALTER TABLE engine_move.order_items_2 DROP CONSTRAINT items_order;
ALTER TABLE engine_move.order_items_2 ADD CONSTRAINT items_order FOREIGN KEY (customer_id, order_id)
    REFERENCES engine_move.orders_2 (customer_id, order_id) MATCH FULL ON UPDATE CASCADE DEFERRABLE NOT VALID;
CALL foreign_keys_to_partitions('engine_move.order_items');
SELECT * FROM pg_temp.foreign_keys('engine_move.order_items_2');

-- While they hold, no table leaves the group.
SELECT uncolocate('engine_move.orders');
-- The tables referred to have no foreign key that refers to them any
-- more: their unique constraints can go to their partitions.
CALL unique_constraints_to_partitions('engine_move.customers');
CALL unique_constraints_to_partitions('engine_move.orders');

-- A bucket's partitions of the three tables move together, and the
-- foreign keys with them: made on the server between the tables there,
-- validated; held there, through the tables.
CALL partition_move('engine_move.orders_1', 'engine_move_server');
SELECT "table", phase, rows_to_move FROM reshard_progress ORDER BY 1;
SELECT partition, server FROM partition_placement WHERE bucket = 1 ORDER BY partition::text;
SELECT * FROM pg_temp.remote($$SELECT format('%s %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid), convalidated)
                               FROM pg_constraint WHERE contype = 'f' ORDER BY 1$$);
SELECT min(c) AS customer FROM generate_series(1, 40) AS c WHERE jumpbackhash(c, 4) = 1 AND c <> 7 \gset
INSERT INTO engine_move.order_items VALUES (:customer, 9, 1);
INSERT INTO engine_move.orders VALUES (:customer, 9, 0);
INSERT INTO engine_move.order_items VALUES (:customer, 9, 1);
DELETE FROM engine_move.customers WHERE id = :customer;
DELETE FROM engine_move.order_items WHERE customer_id = :customer;
DELETE FROM engine_move.orders WHERE customer_id = :customer;
DELETE FROM engine_move.customers WHERE id = :customer;
SELECT (SELECT count(*) FROM engine_move.orders WHERE customer_id = :customer) AS orders,
       (SELECT count(*) FROM engine_move.order_items WHERE customer_id = :customer) AS items,
       (SELECT count(*) FROM engine_move.order_items) AS all_items;
-- Back here, together: the foreign keys made here, validated.
CALL partition_move('engine_move.order_items_1', NULL);
SELECT * FROM pg_temp.foreign_keys('engine_move.order_items_1');
SELECT * FROM pg_temp.foreign_keys('engine_move.orders_1');
SELECT * FROM pg_temp.remote($$SELECT count(*)::text FROM pg_class WHERE relname ~ '_1$'$$);
INSERT INTO engine_move.order_items VALUES (:customer, 9, 1);

-- Only the engine writes the records, not even a member of
-- pg_write_all_data.
CREATE ROLE foreign_keys_writer IN ROLE pg_write_all_data;
SET ROLE foreign_keys_writer;
DELETE FROM partition_foreign_keys;
RESET ROLE;

-- Back: refused while the table referred to lacks its unique constraint.
CALL foreign_keys_to_parent('engine_move.orders');
CALL unique_constraints_to_parent('engine_move.customers');
CALL foreign_keys_to_parent('engine_move.orders');
CALL foreign_keys_to_parent('engine_move.order_items');
CALL unique_constraints_to_parent('engine_move.orders');
CALL foreign_keys_to_parent('engine_move.order_items');
SELECT * FROM pg_temp.foreign_keys('engine_move.orders');
SELECT * FROM pg_temp.foreign_keys('engine_move.order_items');
SELECT count(*) FROM partition_foreign_keys;
CALL foreign_keys_to_parent('engine_move.orders');
INSERT INTO engine_move.order_items VALUES (7, 9, 1);

-- A table dropped takes its records with it, and so does the table referred to.
CALL foreign_keys_to_partitions('engine_move.order_items');
SELECT count(*) FROM partition_foreign_keys;
DROP TABLE engine_move.order_items;
CALL foreign_keys_to_partitions('engine_move.orders');
SELECT count(*) FROM partition_foreign_keys;
SET client_min_messages = warning;
DROP TABLE engine_move.customers CASCADE;
RESET client_min_messages;
SELECT count(*) FROM partition_foreign_keys;

DROP TABLE engine_move.orders;
CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
DROP ROLE foreign_keys_writer;
