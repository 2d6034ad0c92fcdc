-- Phase cutover of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; unit_move_cutover in src/reshard_cutover.c): under
-- ACCESS EXCLUSIVE on the parent, the partition and the table that takes
-- its place, the last changes applied; the partition detached and renamed
-- away (the finish drops it), the other table given its name, comment and
-- grants and attached in its place; the engine's log, new parent and
-- triggers dropped.  The parent keeps its OID.  Writers waiting for the
-- lock: the isolation spec reshard_move_cutover.
\i test/engine_move_helpers.sql

-- The relations of the schema but the mirror, with their OIDs and kinds.
CREATE FUNCTION pg_temp.relations() RETURNS TABLE (name text, oid oid, relkind "char") LANGUAGE sql AS $$
    SELECT c.relname::text, c.oid, c.relkind FROM pg_class c
    WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relkind IN ('r', 'p', 'f') AND c.relname <> 'mirror'
$$;
CREATE TEMP TABLE before (name text, oid oid, relkind "char");
-- A relation as it was named before, the OID in its name replaced by the
-- name of the relation it was then (and the hash after it left out).
CREATE FUNCTION pg_temp.was(relation oid) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(m[1] || '{' || (SELECT o.name FROM before o WHERE o.oid = m[2]::oid) || '}', b.name)
    FROM before b, regexp_match(b.name, '^(reshard_[a-z_]*_)([0-9]+)(_[0-9a-f]{16})?$') AS m WHERE b.oid = relation
$$;
-- Which relation took which place, and its kind before and now.
CREATE FUNCTION pg_temp.places() RETURNS TABLE (before text, kind_before "char", now text, kind_now "char", attached boolean)
LANGUAGE sql AS $$
    SELECT pg_temp.was(b.oid), b.relkind, pg_temp.normalized(c.relname::text), c.relkind, c.relispartition
    FROM before b LEFT JOIN pg_class c ON c.oid = b.oid ORDER BY pg_temp.was(b.oid) COLLATE "C"
$$;
-- em_1: its kind, server and options, comment, whether the reader may read
-- it, its rows against the mirror's of bucket 1, and its bound.
CREATE FUNCTION pg_temp.em_1(OUT placement text, OUT options text[], OUT comment text, OUT reader_may_read boolean,
                             OUT rows_as_mirror boolean, OUT bound text) LANGUAGE sql AS $$
    SELECT pg_temp.placement(), (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = c.oid),
           obj_description(c.oid, 'pg_class'), has_table_privilege('engine_move_reader', c.oid, 'SELECT'),
           pg_temp.differ('SELECT * FROM engine_move.em_1', pg_temp.bucket_1('engine_move.mirror')) = 0,
           pg_get_expr(c.relpartbound, c.oid)
    FROM pg_class c WHERE c.oid = 'engine_move.em_1'::regclass
$$;

-- To a server.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('cutover');
INSERT INTO before SELECT * FROM pg_temp.relations();
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();
-- Writes since the verification: the cutover applies them.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);

-- One step: phase cutover (attempts within the budget: a lock that
-- autovacuum holds may fail one), then phase finish.
CALL reshard_step('engine_move.em');
SELECT s.phase, s.cutover_attempts > 0 AS cut_over_in_attempts,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       s.parent = b.parent AS parent_kept, s.parent = 'engine_move.em'::regclass AS parent_is_the_table
FROM pg_temp.state() s, state_before b;
-- The foreign table took em_1's place (and name); em_1 was detached and
-- renamed away (reshard_old_ and its OID, N), for the finish to drop; the
-- parent and the other partitions kept their OIDs.
SELECT * FROM pg_temp.places();
SELECT * FROM pg_temp.em_1();
SELECT pg_temp.differences() AS differences, (SELECT sum(misplaced_rows) FROM reshard_check('engine_move.em')) AS misplaced,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences;
-- Nothing else of the engine's left here: the log, its sequence, the new
-- parent, the triggers; there, the table and its index (its comment still
-- the move's until the finish).
SELECT * FROM pg_temp.engine_objects();
SELECT count(*) AS triggers_left FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'engine_move'::regnamespace AND t.tgname LIKE 'reshard\_%';
SELECT * FROM pg_temp.remote_objects();
-- Writes go to the server.
TRUNCATE pg_temp.writes;
SELECT pg_temp.write_both() > 0 AS written_to_em_1;
SELECT pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences;
CALL pg_temp.step_to('done');

-- Back here.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('cutover');
TRUNCATE before, state_before;
INSERT INTO before SELECT * FROM pg_temp.relations();
INSERT INTO state_before SELECT * FROM pg_temp.state();
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);
-- (an event trigger there that grants each table a statement alters to
-- PUBLIC: what it grants for the cutover's rename is taken back)
SELECT dblink_exec('engine_move_server', $$
    CREATE FUNCTION public.grant_all() RETURNS event_trigger LANGUAGE plpgsql AS $f$
    DECLARE
        r record;
    BEGIN
        FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' LOOP
            EXECUTE format('GRANT ALL ON %s TO PUBLIC', r.object_identity);
        END LOOP;
    END
    $f$;
    CREATE EVENT TRIGGER grant_all ON ddl_command_end EXECUTE FUNCTION public.grant_all()$$);
CREATE FUNCTION pg_temp.rights_there(relname text) RETURNS text LANGUAGE sql AS $$
    SELECT rights FROM dblink('engine_move_server', format($q$
        SELECT coalesce(string_agg(CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END || ' ' || a.privilege_type,
                                   ', ' ORDER BY a.grantee::regrole::text, a.privilege_type), 'none')
        FROM pg_class c, aclexplode(c.relacl) AS a WHERE c.relname = %L AND a.grantee <> c.relowner$q$, relname)) AS t(rights text)
$$;
SELECT pg_temp.rights_there('em_1') AS rights_before \gset
CALL reshard_step('engine_move.em');
SELECT dblink_exec('engine_move_server', 'DROP EVENT TRIGGER grant_all; DROP FUNCTION public.grant_all()');
SELECT rights AS rights_after, rights = :'rights_before' AS rights_kept_there
FROM pg_temp.rights_there((SELECT reshard_object_name(s, 'gone', s.partition) FROM pg_temp.state() AS s)) AS rights;
SELECT s.phase, s.cutover_attempts > 0 AS cut_over_in_attempts,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       s.parent = b.parent AS parent_kept
FROM pg_temp.state() s, state_before b;
-- The table here took em_1's place, its CHECK gone (attached without a
-- scan), its index named after it and attached to the parent's; the
-- foreign table em_1 renamed away.
SELECT * FROM pg_temp.places();
SELECT * FROM pg_temp.em_1();
SELECT i.relname AS index, pg_get_indexdef(i.oid) AS definition, i.relispartition AS of_the_parents
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = 'engine_move.em_1'::regclass;
SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
WHERE conrelid = 'engine_move.em_1'::regclass AND contype = 'c';
SELECT pg_temp.differences() AS differences, (SELECT sum(misplaced_rows) FROM reshard_check('engine_move.em')) AS misplaced;
SELECT * FROM pg_temp.engine_objects();
SELECT count(*) AS triggers_left FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'engine_move'::regnamespace AND t.tgname LIKE 'reshard\_%';
-- The table there was renamed away in the cutover's remote transaction
-- (reshard_gone_o), and waits so for the finish, which drops it: by its
-- name, reads and writes fail (undefined_table: an application that routes
-- keys by an older layout reloads it, and never reads the rows as they were
-- at the cutover); by the new one it still refuses direct writes
-- (object_in_use).
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'DELETE FROM engine_move.em_1')$$) AS direct_write_there;
SELECT pg_temp.sqlstate_of($$SELECT * FROM dblink('engine_move_server', 'SELECT id FROM engine_move.em_1 WHERE id = 1') AS t(id bigint)$$) AS direct_read_there;
SELECT relname AS gone FROM dblink('engine_move_server', $$SELECT relname FROM pg_class
    WHERE relnamespace = 'engine_move'::regnamespace AND relname LIKE 'reshard\_gone\_%'$$) AS t(relname name) \gset
SELECT pg_temp.sqlstate_of(format('SELECT dblink_exec(%L, %L)', 'engine_move_server',
                                  format('DELETE FROM engine_move.%I', :'gone'))) AS direct_write_renamed;
-- Writes stay here.
TRUNCATE pg_temp.writes;
CREATE TEMP TABLE remote_rows_before AS SELECT * FROM pg_temp.remote_rows(:'gone');
SELECT pg_temp.write_both() > 0 AS written_to_em_1;
SELECT pg_temp.differences() AS differences,
       pg_temp.differ(format('SELECT * FROM pg_temp.remote_rows(%L)', :'gone'), 'SELECT * FROM remote_rows_before') AS remote_changes;
CALL pg_temp.step_to('done');

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
