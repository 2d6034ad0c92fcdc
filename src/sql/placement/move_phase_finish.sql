-- src/sql/placement/move_phase_finish.sql
--	move_phase_finish: what follows a move's cutover (internal)

-- As the table's owner, after the cutover committed: the partition the
-- move left dropped here (a table, or a foreign table: the engine's
-- cleaner dropped its table on the server it left first, with the objects
-- that refused direct writes to it, by their records), and a table it went to on a
-- server given the partition's comment instead of the move's, waiting for
-- its lock at most as long as the engine waits for its own, whatever the
-- owner's settings there say of read-only sessions and statement timeouts.
-- (The cleaner, before, dropped what the move made and no longer needs:
-- there, the view of its copy's count and sum, what refused direct writes;
-- here, the change log if left: reshard_state_cleanup.)
CREATE FUNCTION move_phase_finish(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    moved oid := s.shadows[s.bucket + 1];   -- the table that took the partition's place
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['finish']);
    -- (the foreign keys it keeps, made NOT VALID at the cutover, validated)
    s := @extschema@.move_foreign_keys(s, 'finish', NULL);
    IF EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('DROP %s %s', CASE WHEN (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f'
                                          THEN 'FOREIGN TABLE' ELSE 'TABLE' END, s.partition::regclass);
    END IF;
    IF s.server IS NOT NULL THEN
        EXECUTE @extschema@.reshard_remote_sql(s.server,
            (SELECT format('SET TRANSACTION READ WRITE; SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = %L; COMMENT ON TABLE %I.%I IS %L; %s',
                           current_setting('lock_timeout'),
                           o.schema_name, o.table_name, obj_description(moved, 'pg_class'),
                           -- (what an event trigger there granted for the COMMENT taken back)
                           @extschema@.reshard_remote_revoke(ARRAY[format('%I.%I', o.schema_name, o.table_name)]))
             FROM (SELECT max(t.option_value) FILTER (WHERE t.option_name = 'schema_name') AS schema_name,
                          max(t.option_value) FILTER (WHERE t.option_name = 'table_name') AS table_name
                   FROM pg_foreign_table f, pg_options_to_table(f.ftoptions) AS t
                   WHERE f.ftrelid = moved) AS o));
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_finish(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_finish(reshard_state) IS
'partition move, finish: the partition it left dropped, the table it went to on a server given the partition''s comment (internal)';
