--
-- Co-located tables (issue 44, item 2; docs/scaling-out.md, "Co-located
-- tables"): colocate declares tables sharded alike a group, kept in
-- colocated_tables (only colocate and uncolocate write it), shown by
-- partition_placement; placement_plan and rebalance of one table of the
-- group move each bucket of every table of the group to the same server,
-- partition_move of one partition moves its bucket's partitions of the
-- other tables with it, all cut over in one transaction (one that cannot
-- move leaves the others waiting at their cutover, for the next call); a
-- resharding of a table of a group is refused;
-- uncolocate and DROP TABLE take a table out.
--
\i test/engine_move_helpers.sql
SET client_min_messages = warning;
DROP ROLE IF EXISTS colocation_other;
SET client_min_messages = notice;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE engine_move.orders (customer_id bigint NOT NULL, order_id bigint NOT NULL, total numeric)
    PARTITION BY HASH (customer_id jumpbackhash3_int8_ops);
CREATE TABLE engine_move.order_items (customer_id bigint NOT NULL, order_id bigint NOT NULL, item int, quantity int)
    PARTITION BY HASH (customer_id jumpbackhash3_int8_ops);
CREATE TABLE engine_move.notes (customer_id bigint NOT NULL, note text)
    PARTITION BY HASH (customer_id jumpbackhash3_int8_ops);
CREATE TABLE engine_move.listed (customer_id bigint NOT NULL) PARTITION BY LIST (jumpbackhash(customer_id, 3));
CREATE TABLE engine_move.wider (customer_id bigint NOT NULL) PARTITION BY HASH (customer_id jumpbackhash4_int8_ops);
CREATE TABLE engine_move.texts (customer text NOT NULL) PARTITION BY HASH (customer jumpbackhash3_text_ops);
SELECT format('CREATE TABLE engine_move.%1$s_%2$s PARTITION OF engine_move.%1$s FOR VALUES WITH (MODULUS %3$s, REMAINDER %2$s)',
              t, b, m)
FROM (VALUES ('orders', 3), ('order_items', 3), ('notes', 3), ('wider', 4), ('texts', 3)) AS x(t, m), generate_series(0, m - 1) AS b \gexec
SELECT format('CREATE TABLE engine_move.listed_%1$s PARTITION OF engine_move.listed FOR VALUES IN (%1$s)', b)
FROM generate_series(0, 2) AS b \gexec
INSERT INTO engine_move.orders SELECT c, o, o * 1.5 FROM generate_series(1, 60) AS c, generate_series(1, 3) AS o;
INSERT INTO engine_move.order_items SELECT c, o, i, i FROM generate_series(1, 60) AS c, generate_series(1, 3) AS o,
                                                            generate_series(1, 2) AS i;

-- Refused: no table, one table, a table not sharded, another role's,
-- tables sharded otherwise (each difference named).
SELECT colocate(NULL);
SELECT colocate(ARRAY['engine_move.orders', NULL]::regclass[]);
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.orders']::regclass[]);
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.mirror']::regclass[]);
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.wider', 'engine_move.texts', 'engine_move.listed']::regclass[]);
CREATE ROLE colocation_other;
GRANT USAGE ON SCHEMA engine_move TO colocation_other;
SET ROLE colocation_other;
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.order_items']::regclass[]);
SELECT uncolocate('engine_move.orders');
RESET ROLE;

-- A group: shown by partition_placement and colocated_with.
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.order_items']::regclass[]);
SELECT partition, bucket, server, colocation_group FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) ORDER BY bucket, partition::text;
SELECT colocated_with('engine_move.order_items'), colocated_with('engine_move.em');
-- Only colocate and uncolocate write the groups, whoever may write every table.
GRANT pg_write_all_data TO colocation_other;
SET ROLE colocation_other;
INSERT INTO colocated_tables VALUES ('engine_move.em'::regclass, 1);
DELETE FROM colocated_tables;
SELECT count(*) FROM colocated_tables WHERE colocation_group = 1;
RESET ROLE;
REVOKE pg_write_all_data FROM colocation_other;

-- The plan of one table moves the group's partitions of each bucket.
SELECT * FROM placement_plan('engine_move.orders', ARRAY[NULL, 'engine_move_server']);
SELECT * FROM placement_plan('engine_move.order_items', ARRAY['engine_move_server']);

-- A move of one partition: the group's partitions of its bucket with it,
-- cut over in one transaction (each attached by the same one).
CALL partition_move('engine_move.orders_1', 'engine_move_server');
SELECT partition, server FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) ORDER BY bucket, partition::text;
SELECT count(DISTINCT xmin::text) AS cutover_transactions FROM pg_inherits
WHERE inhrelid IN ('engine_move.orders_1'::regclass, 'engine_move.order_items_1'::regclass);
-- Back, from the other table: the same; called again, nothing to do.
CALL partition_move('engine_move.order_items_1', NULL);
CALL partition_move('engine_move.orders_1', NULL);
-- One of a bucket there already (moved before the group was declared), the
-- other not: the other goes.
SELECT uncolocate('engine_move.orders');
CALL partition_move('engine_move.order_items_1', 'engine_move_server');
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.order_items']::regclass[]);
SELECT * FROM placement_plan('engine_move.orders', ARRAY[NULL]::name[]);
CALL partition_move('engine_move.order_items_1', 'engine_move_server');
SELECT partition, server FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) ORDER BY bucket, partition::text;
CALL partition_move('engine_move.order_items_1', NULL);

-- A move of the bucket that one of its partitions cannot make (a trigger
-- on it): the other's waits at its cutover, and the next call, once the
-- way is clear, cuts both over together.
CREATE FUNCTION engine_move.nothing() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE TRIGGER in_the_way BEFORE INSERT ON engine_move.order_items_2 FOR EACH ROW EXECUTE FUNCTION engine_move.nothing();
CALL partition_move('engine_move.orders_2', 'engine_move_server');
SELECT "table", phase FROM reshard_progress
WHERE "table" IN ('engine_move.orders', 'engine_move.order_items') AND phase NOT IN ('done', 'aborted')
ORDER BY 1;
INSERT INTO engine_move.orders
SELECT c, 1000, 1 FROM generate_series(1, 60) AS c WHERE jumpbackhash(c, 3) = 2 ORDER BY c LIMIT 1;
DROP TRIGGER in_the_way ON engine_move.order_items_2;
CALL partition_move('engine_move.orders_2', 'engine_move_server');
SELECT partition, server FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) AND bucket = 2 ORDER BY partition::text;
SELECT count(DISTINCT xmin::text) AS cutover_transactions FROM pg_inherits
WHERE inhrelid IN ('engine_move.orders_2'::regclass, 'engine_move.order_items_2'::regclass);
SELECT count(*) AS written_while_it_waited FROM engine_move.orders WHERE order_id = 1000;
DELETE FROM engine_move.orders WHERE order_id = 1000;
CALL partition_move('engine_move.orders_2', NULL);

-- rebalance: bucket by bucket, every table of the group, each bucket's
-- partitions cut over together.
CALL rebalance('engine_move.order_items', ARRAY[NULL, 'engine_move_server']);
SELECT partition, server FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) ORDER BY bucket, partition::text;
SELECT p.bucket, count(DISTINCT i.xmin::text) AS cutover_transactions
FROM partition_placement p JOIN pg_inherits i ON i.inhrelid = p.partition
WHERE p."table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) AND p.server IS NOT NULL
GROUP BY 1 ORDER BY 1;
-- A join of the two on the key: every row there, as here.
SELECT count(*), sum(i.quantity * o.total) FROM engine_move.orders o
JOIN engine_move.order_items i USING (customer_id, order_id);
CALL rebalance('engine_move.orders', ARRAY[NULL]::name[]);
SELECT count(*) AS on_the_server FROM partition_placement
WHERE "table" IN ('engine_move.orders'::regclass, 'engine_move.order_items'::regclass) AND server IS NOT NULL;

-- A resharding of a table of a group: refused, with the way out.
CREATE TABLE engine_move.orders_3 (LIKE engine_move.orders INCLUDING ALL);
CALL reshard_add_partition('engine_move.orders', 'engine_move.orders_3');
DROP TABLE engine_move.orders_3;

-- A third table joins the group; out again: a group of two.
SELECT colocate(ARRAY['engine_move.notes', 'engine_move.orders']::regclass[]);
SELECT colocated_with('engine_move.orders');
SELECT uncolocate('engine_move.notes');
SELECT colocated_with('engine_move.orders');
-- A group of one table is none; a dropped table takes its record with it.
SELECT uncolocate('engine_move.orders');
SELECT count(*) FROM colocated_tables;
SELECT colocate(ARRAY['engine_move.orders', 'engine_move.order_items']::regclass[]) > 0 AS grouped;
DROP TABLE engine_move.order_items;
SELECT count(*) FROM colocated_tables;

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
DROP ROLE colocation_other;
