-- Phase undo of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_undo in src/reshard_steps.c): reshard_abort
-- of a move that has not cut over drops what it made, here and on the
-- server (to a server: the table it made there, which carries its mark;
-- back here: the triggers, views, functions and table of hidden keys next
-- to the partition's table there, the partition pointed back at that
-- table), and leaves the table as it was: its OIDs, partitions and layout,
-- em_1 where it was, and the rows of its mirror, with the writes made
-- meanwhile.
\i test/engine_move_helpers.sql
-- (the verification sums the copy there: its view is made there too)
SELECT dblink_exec('engine_move_server', 'CREATE EXTENSION subsetting');

CREATE TEMP TABLE relations_before (relname name, oid oid, relkind "char", relispartition boolean);
CREATE TEMP TABLE remote_before (object text);
CREATE TEMP TABLE options_before (options text[]);
CREATE PROCEDURE pg_temp.remember() LANGUAGE sql AS $$
    TRUNCATE relations_before, remote_before, options_before;
    INSERT INTO relations_before SELECT c.relname, c.oid, c.relkind, c.relispartition FROM pg_class c
    WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relkind IN ('r', 'p', 'i', 'I', 'f');
    INSERT INTO remote_before SELECT * FROM pg_temp.remote_objects();
    INSERT INTO options_before SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'engine_move.em_1'::regclass;
$$;
-- The table as it was: the relations that changed (or are new, or gone),
-- the rows that differ from the mirror (here, and on the server those of
-- em_1 if it is there), the engine's objects left here, what changed
-- there, and whether em_1's options changed.
CREATE FUNCTION pg_temp.as_it_was(OUT relations_changed bigint, OUT differences bigint, OUT remote_differences bigint,
                                  OUT engine_objects bigint, OUT changed_there bigint, OUT options_changed boolean) LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM ((SELECT c.relname, c.oid, c.relkind, c.relispartition FROM pg_class c
                                   WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relkind IN ('r', 'p', 'i', 'I', 'f'))
                                  EXCEPT ALL SELECT * FROM relations_before
                                  UNION ALL
                                  (SELECT * FROM relations_before
                                   EXCEPT ALL SELECT c.relname, c.oid, c.relkind, c.relispartition FROM pg_class c
                                   WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relkind IN ('r', 'p', 'i', 'I', 'f'))) AS r),
           pg_temp.differences(),
           CASE WHEN pg_temp.placement() LIKE 'engine_move_server%'
                THEN pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) END,
           (SELECT count(*) FROM pg_temp.engine_objects()),
           (SELECT count(*) FROM ((SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before)
                                  UNION ALL (SELECT * FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects())) AS o),
           (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'engine_move.em_1'::regclass)
               IS DISTINCT FROM (SELECT options FROM options_before)
$$;

-- To a server, undone in phase capture (the table made there, the capture
-- not begun), with writes made since it began.
CALL pg_temp.remember();
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('capture');
SELECT pg_temp.write_both() > 0 AS written;
SELECT count(*) > 0 AS engine_objects, (SELECT count(*) FROM pg_temp.remote_objects()) > 0 AS objects_there
FROM pg_temp.engine_objects();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();
SELECT * FROM pg_temp.remote_objects();

-- Undone in phase copy, after the copy of em_1 (its rows there).
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('copy');
CALL reshard_step('engine_move.em');
SELECT pg_temp.write_both() > 0 AS written;
SELECT phase, sources_copied, (SELECT count(*) FROM pg_temp.remote_rows()) > 0 AS rows_there FROM pg_temp.state();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();

-- Undone in phase cutover (verified, its sums' view there, not cut over).
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('copy');
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('catch up');
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('cutover');
SELECT pg_temp.write_both() > 0 AS written;
SELECT * FROM pg_temp.remote_objects();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();
-- The triggers went with the rest: em_1 can be truncated again (in a
-- transaction rolled back).
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM relations_before) AND tgname LIKE 'reshard\_%';
BEGIN;
TRUNCATE engine_move.em_1;
ROLLBACK;
-- A move undone cannot be undone again.
CALL reshard_abort('engine_move.em');

-- Back here.
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL pg_temp.remember();
SELECT * FROM remote_before;

-- Undone in phase capture (what refuses direct writes made there).
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('capture');
SELECT pg_temp.write_both() > 0 AS written;
SELECT count(*) > 0 AS engine_objects, (SELECT count(*) FROM pg_temp.remote_objects()) > (SELECT count(*) FROM remote_before) AS made_there
FROM pg_temp.engine_objects();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();

-- Undone in phase catch up (em_1 pointed at the view there, the direct
-- writes there refused, the table here filled).
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('catch up');
SELECT pg_temp.write_both() > 0 AS written;
SELECT pg_temp.rows_in(shadows[2]) > 0 AS filled_here, (SELECT options FROM options_before) IS DISTINCT FROM
       (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'engine_move.em_1'::regclass) AS em_1_pointed_elsewhere
FROM pg_temp.state();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();

-- Undone in phase cutover.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('cutover');
SELECT pg_temp.write_both() > 0 AS written;
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();
-- Direct writes there go through again (in a transaction rolled back there).
SELECT pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'BEGIN; DELETE FROM engine_move.em_1; ROLLBACK')$$)
    AS direct_write_there;
SELECT * FROM pg_temp.remote_objects();

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
