-- src/sql/resharding/reshard_expect_phase.sql
--	reshard_expect_phase: a state row refused by a routine that does not work on its phase (internal)

-- Each SQL routine the engine calls with the state row calls it first,
-- with the phases it works on: a NULL state, or a state in another phase,
-- is an error (object_not_in_prerequisite_state) that names the table and
-- its phase, and the phases the routine works on.  Not revoked from
-- PUBLIC, unlike the routines: they run as the table's owner, any role,
-- and call it in SQL (a privilege checked); it reads nothing.
CREATE FUNCTION reshard_expect_phase(s reshard_state, VARIADIC phases text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    n int := cardinality(phases);
BEGIN
    IF s.phase = ANY (phases) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION '%', CASE WHEN s.phase IS NULL THEN 'no resharding: the state is NULL'
                              ELSE format('the resharding of %s is in phase %s',
                                          coalesce(s.parent_name, s.parent::regclass::text), s.phase) END
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('This is done in phase %s.',
                              CASE WHEN n > 1 THEN array_to_string(phases[1:n - 1], ', ') || ' or ' || phases[n]
                                   ELSE coalesce(phases[1], 'none') END);
END
$function$;

COMMENT ON FUNCTION reshard_expect_phase(reshard_state, text[]) IS
'resharding: refuses a NULL state, or a state in a phase other than the ones given (internal)';
