-- sql/src/resharding/reshard_phase_finish.sql
--	reshard_phase_finish: what follows the cutover (internal)

-- As the table's owner, after the cutover committed: validates the foreign
-- keys that refer to the table (SHARE UPDATE EXCLUSIVE: writers go on),
-- and empties the removed partition (detached at the cutover; its rows are
-- in the others).
CREATE FUNCTION reshard_phase_finish(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    statement text;
BEGIN
    FOREACH statement IN ARRAY coalesce(s.validate, '{}') LOOP
        EXECUTE statement;
    END LOOP;
    s.validate := NULL;
    IF s.operation = 'remove' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('TRUNCATE %s', s.partition::regclass);
    END IF;
    s.phase := 'done';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_finish(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_finish(reshard_state) IS
'resharding, finish: foreign keys validated, the removed partition emptied (internal)';
