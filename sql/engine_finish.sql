-- Phase finish of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_finish in src/resharding/steps.c): after the cutover, the
-- foreign keys it added NOT VALID are validated (those of other tables to
-- the table, and the table's own on each partition), the table's own are
-- added to the new parent, the new parent is analyzed if the old one had
-- statistics, and the removed partition is emptied; then the resharding is
-- done, and nothing of the engine's is left.
\i test/engine_phase_helpers.sql

-- The table refers to another (its own foreign key), and another to it.
SET ROLE engine_phase_owner;
CREATE TABLE engine_phase.kinds (v text PRIMARY KEY);
INSERT INTO engine_phase.kinds SELECT v FROM engine_phase.ep UNION SELECT unnest(ARRAY['new', 'upsert', 'upserted']);
ALTER TABLE engine_phase.ep ADD CONSTRAINT ep_v_fkey FOREIGN KEY (v) REFERENCES engine_phase.kinds;
CREATE TABLE engine_phase.child (id bigint PRIMARY KEY REFERENCES engine_phase.ep);
INSERT INTO engine_phase.child SELECT id FROM engine_phase.ep WHERE id <= 50;
RESET ROLE;
ANALYZE engine_phase.ep;

-- The foreign keys of the schema's tables, on which table, whether
-- inherited from its parent's, and whether validated (not the copies
-- PostgreSQL keeps of a foreign key for each partition it refers to, whose
-- convalidated VALIDATE CONSTRAINT leaves as it is).
CREATE FUNCTION pg_temp.foreign_keys() RETURNS TABLE (on_table text, foreign_key text, inherited boolean, validated boolean)
LANGUAGE sql AS $$
    SELECT c.relname::text, k.conname::text, k.conparentid <> 0, k.convalidated
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
    WHERE k.contype = 'f' AND c.relnamespace = 'engine_phase'::regnamespace AND (k.conparentid = 0 OR c.relispartition)
    ORDER BY c.relname COLLATE "C", k.conname COLLATE "C"
$$;
CREATE FUNCTION pg_temp.analyzed() RETURNS boolean LANGUAGE sql AS $$
    SELECT EXISTS (SELECT FROM pg_statistic WHERE starelid = 'engine_phase.ep'::regclass)
$$;
SELECT * FROM pg_temp.foreign_keys();

-- Adding a bucket.  After the cutover: the foreign keys NOT VALID, the
-- table's own on the partitions only; the new parent not analyzed.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('finish');
SELECT * FROM pg_temp.foreign_keys();
SELECT phase, validate IS NOT NULL AS to_validate, foreign_keys IS NOT NULL AS to_add, analyze_parent, pg_temp.analyzed() AS analyzed
FROM pg_temp.state();
SELECT pg_temp.write_both() > 0 AS written;

-- One step: phase finish, then done.
CALL reshard_step('engine_phase.ep');
SELECT phase, validate IS NULL AS validated, foreign_keys IS NULL AS added, pg_temp.analyzed() AS analyzed FROM pg_temp.state();
SELECT * FROM pg_temp.foreign_keys();
SELECT * FROM pg_temp.engine_objects();
SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'engine_phase.ep'::regclass) AS partitions,
       pg_temp.differences() AS differences, (SELECT sum(misplaced_rows) FROM reshard_check('engine_phase.ep')) AS misplaced;
-- The foreign keys hold (foreign_key_violation).
SELECT pg_temp.sqlstate_of($$INSERT INTO engine_phase.ep VALUES (-1, 'no such kind', 0)$$) AS unknown_kind,
       pg_temp.sqlstate_of('DELETE FROM engine_phase.ep WHERE id = 1') AS row_referred_to;
-- A step of a resharding that is done does nothing.
CALL reshard_step('engine_phase.ep');
SELECT phase FROM pg_temp.state();

-- The routine of phase finish refuses a NULL state and a state of another phase.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('finish'), 'cutover', 'done');

-- Removing the bucket just added: the removed partition, detached at the
-- cutover with its rows (now in the others), is emptied.
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_3');
CALL pg_temp.step_to('finish');
SELECT relispartition AS attached, count(*) = (SELECT count(*) FROM engine_phase.mirror WHERE jumpbackhash(id, 4) = 3) AS rows_of_bucket_3,
       pg_temp.analyzed() AS analyzed
FROM engine_phase.ep_3, pg_class WHERE pg_class.oid = 'engine_phase.ep_3'::regclass GROUP BY 1;
-- Until the finish empties it, it refuses every write (one would be lost):
-- even its owner's.
SET ROLE engine_phase_owner;
INSERT INTO engine_phase.ep_3 SELECT * FROM engine_phase.ep_3 LIMIT 1;
DELETE FROM engine_phase.ep_3;
TRUNCATE engine_phase.ep_3;
RESET ROLE;
CALL reshard_step('engine_phase.ep');
SELECT phase, validate IS NULL AS validated, foreign_keys IS NULL AS added, pg_temp.analyzed() AS analyzed FROM pg_temp.state();
SELECT count(*) AS rows_left_in_removed_partition FROM engine_phase.ep_3;
SELECT * FROM pg_temp.foreign_keys();
SELECT * FROM pg_temp.engine_objects();
SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'engine_phase.ep'::regclass) AS partitions,
       pg_temp.differences() AS differences, (SELECT sum(misplaced_rows) FROM reshard_check('engine_phase.ep')) AS misplaced;

CALL pg_temp.engine_phase_drop();

-- A foreign key's actions on a removed partition's rows (its copies) go
-- through between the cutover and the finish: ON DELETE and ON UPDATE
-- CASCADE from the referenced table change the copies and the rows alike;
-- a write of the removed partition's own is refused.
CREATE TABLE fk_kinds (kind int PRIMARY KEY);
INSERT INTO fk_kinds SELECT generate_series(0, 9);
CREATE TABLE fk_items (id bigint NOT NULL, kind int REFERENCES fk_kinds ON DELETE CASCADE ON UPDATE CASCADE)
    PARTITION BY LIST (jumpbackhash(id, 3));
CREATE TABLE fk_items_0 PARTITION OF fk_items FOR VALUES IN (0);
CREATE TABLE fk_items_1 PARTITION OF fk_items FOR VALUES IN (1);
CREATE TABLE fk_items_2 PARTITION OF fk_items FOR VALUES IN (2);
INSERT INTO fk_items SELECT i, i % 10 FROM generate_series(1, 3000) AS i;
CALL reshard_begin('fk_items', 'remove', 'fk_items_2');
DO $$ BEGIN
    WHILE (SELECT phase FROM reshard_state WHERE parent = 'fk_items'::regclass) <> 'finish' LOOP
        CALL reshard_step('fk_items');
    END LOOP;
END $$;
DELETE FROM fk_kinds WHERE kind = 3;
UPDATE fk_kinds SET kind = 40 WHERE kind = 4;
INSERT INTO fk_items_2 VALUES (-1, 1);
CALL reshard_step('fk_items');
SELECT phase FROM reshard_progress WHERE "table" = 'public.fk_items';
SELECT count(*) FILTER (WHERE kind = 3) AS kind_3, count(*) FILTER (WHERE kind = 4) AS kind_4,
       count(*) FILTER (WHERE kind = 40) AS kind_40, count(*) AS all_rows,
       (SELECT count(*) FROM fk_items_2) AS left_in_removed_partition
FROM fk_items;
DROP TABLE fk_items, fk_items_2, fk_kinds;
DELETE FROM reshard_state WHERE parent IS NULL OR NOT EXISTS (SELECT FROM pg_class WHERE oid = parent);
