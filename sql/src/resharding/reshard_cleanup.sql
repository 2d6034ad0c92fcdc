-- sql/src/resharding/reshard_cleanup.sql
--	reshard_cleanup: phase 3, the clean-up (internal)

-- Phase 3, one transaction a round, after the swap: deletes from the
-- partitions the rows that have a verified copy in their new partition,
-- and copies there those that have none (written directly to a shard since
-- the swap read it), to be deleted by the next round.  Returns the plan
-- with the rows deleted and the rows still to move.
CREATE PROCEDURE reshard_cleanup(INOUT plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    t jsonb;
    c bigint;
    deleted bigint := 0;
    left_behind bigint := 0;
    started timestamptz;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        -- A partition on this server was emptied of its moving rows by the
        -- swap, under lock; attached, its partition constraint keeps them
        -- out, and a removed one is no longer part of the table.
        -- (Called again after a failure, it looks at every partition.)
        CONTINUE WHEN (s->>'local')::boolean AND NOT (plan->>'resuming')::boolean;
        EXECUTE format('SELECT count(*) FROM %s x WHERE %s', s->>'rel', s->>'moving') INTO c;
        CONTINUE WHEN c = 0;
        started := clock_timestamp();
        EXECUTE format('CALL %I.reshard_delete_copied($1, $2, NULL)', plan->>'ext') INTO c USING plan, s;
        deleted := deleted + c;
        RAISE NOTICE 'deleted % moved rows from %', c, s->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
        EXECUTE format('SELECT count(*) FROM %s x WHERE %s', s->>'rel', s->>'moving') INTO c;
        left_behind := left_behind + c;
    END LOOP;
    IF left_behind > 0 THEN
        FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
            EXECUTE format('CALL %I.reshard_reconcile($1, $2, true, NULL)', plan->>'ext') INTO c USING plan, t;
        END LOOP;
        RAISE NOTICE '% rows written to the old partitions since the swap read them: copied, to be deleted next round',
            left_behind;
    END IF;
    plan := plan || jsonb_build_object('deleted', coalesce((plan->>'deleted')::bigint, 0) + deleted,
                                      'left', left_behind,
                                      'rounds', coalesce((plan->>'rounds')::int, 0) + 1);
END
$function$;

COMMENT ON PROCEDURE reshard_cleanup(jsonb) IS
'resharding phase 3: deletes the moved rows that have a verified copy from the old partitions, copies those written since (internal)';
