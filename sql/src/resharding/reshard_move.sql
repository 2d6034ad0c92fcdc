-- sql/src/resharding/reshard_move.sql
--	reshard_move: the catch-up and verification of the copies (internal)

-- Brings the copies in the targets up to date and verifies them, then
-- deletes the copied rows from the sources on this server (locked, so
-- nothing is written to them meanwhile); returns the rows moved (internal).
CREATE PROCEDURE reshard_move(plan jsonb, INOUT moved_rows bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    t jsonb;
    s jsonb;
    c bigint;
    deleted bigint;
    moved bigint := 0;
    started timestamptz;
BEGIN
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
        started := clock_timestamp();
        EXECUTE format('CALL %I.reshard_reconcile($1, $2, false, NULL)', plan->>'ext') INTO c USING plan, t;
        moved := moved + c;
        RAISE NOTICE '% holds the % rows that move there, verified', t->>'rel', c
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    -- The partitions on this server: locked, so nothing is written to them
    -- meanwhile; every moving row has its copy.
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN NOT (s->>'local')::boolean;
        started := clock_timestamp();
        -- Locked since the copies were verified against its rows: its
        -- moving rows are exactly the ones copied.
        EXECUTE format('DELETE FROM %s x WHERE %s', s->>'rel', s->>'moving');
        GET DIAGNOSTICS deleted = ROW_COUNT;
        RAISE NOTICE 'deleted the % moved rows from %', deleted, s->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;

    moved_rows := moved;
END
$function$;

COMMENT ON PROCEDURE reshard_move(jsonb, bigint) IS
'resharding, in the swap: makes the copies of the moving rows exact and verified, and deletes the moved rows from the partitions on this server (internal)';
