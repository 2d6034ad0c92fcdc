-- sql/src/resharding/reshard_phase_undo.sql
--	reshard_phase_undo: what a resharding made before its cutover, removed (internal)

-- As the table's owner, after the engine dropped its triggers: drops the
-- change log and its sequence, the shadows and the new parent, and empties
-- the new partition of an addition (the engine's guard let nobody else
-- write to it, and it was empty before) and drops its index and CHECK.  The table is as it was.
CREATE FUNCTION reshard_phase_undo(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rel oid;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_class WHERE oid = s.parent AND relkind = 'p')
       OR EXISTS (SELECT FROM pg_class WHERE oid = s.partition AND relispartition AND s.operation = 'add') THEN
        RAISE EXCEPTION 'the resharding of % has cut over, it cannot be undone', s.parent_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    FOREACH rel IN ARRAY array_remove(ARRAY[s.log, s.log_sequence, s.new_parent] || s.shadows, s.partition) LOOP
        CONTINUE WHEN rel IS NULL OR NOT EXISTS (SELECT FROM pg_class WHERE oid = rel);
        EXECUTE format('DROP %s %s', CASE WHEN rel = s.log_sequence THEN 'SEQUENCE' ELSE 'TABLE' END, rel::regclass);
    END LOOP;
    IF s.operation = 'add' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('TRUNCATE %s', s.partition::regclass);
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I', s.partition::regclass, 'reshard_bound_' || s.partition);
        EXECUTE (SELECT format('DROP INDEX IF EXISTS %I.%I', relnamespace::regnamespace, 'reshard_key_' || s.partition)
                 FROM pg_class WHERE oid = s.partition);
    END IF;
    s.phase := 'aborted';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_undo(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_undo(reshard_state) IS
'resharding, undo: the log, the shadows and the new parent dropped, the new partition emptied (internal)';
