-- src/sql/placement/move_phase_undo.sql
--	move_phase_undo: what a move made before its cutover, removed (internal)

-- As the table's owner: refuses a move that has cut over (the table it
-- made is then a partition of the table: nothing is undone).  There is
-- nothing else to repair: the move changed no row of the table, and a
-- move's cutover commits on this server only (cutover_commit_failed,
-- every undo routine's argument, changes nothing).  The engine then drops
-- what the move made, here and on the server, by their records
-- (reshard_state_cleanup, src/resharding/cleanup.c): the change log and its
-- sequence, the table it was moving into here, and on a server the view of
-- its count and sum, what refused direct writes, and the table there if it
-- still carries the move's comment.  A partition dropped or detached while
-- its move waited does not stop the undo: what the move made goes all the
-- same.
CREATE FUNCTION move_phase_undo(s reshard_state, cutover_commit_failed boolean) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['undo']);
    IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = s.shadows[s.bucket + 1] AND inhparent = s.parent) THEN
        RAISE EXCEPTION 'the move of % of % has cut over, it cannot be undone', s.partition::regclass, s.parent_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_undo(reshard_state, boolean) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_undo(reshard_state, boolean) IS
'partition move, undo: refused once the move has cut over (what it made is dropped by its records) (internal)';
