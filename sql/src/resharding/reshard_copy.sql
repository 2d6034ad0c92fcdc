-- sql/src/resharding/reshard_copy.sql
--	reshard_copy: phase 1, the copy (internal)

-- Phase 1, its own transaction: copies the moving rows into the new
-- partition, which is not attached yet (add only); reads and writes of the
-- table go on.  Returns the plan with the count.
CREATE PROCEDURE reshard_copy(INOUT plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    t jsonb;
    c bigint;
    total bigint := 0;
    started timestamptz;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    IF plan->>'operation' <> 'add' THEN
        RETURN;    -- a removal copies during the swap: the targets are attached
    END IF;
    t := plan->'targets'->0;
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        started := clock_timestamp();
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM %s x WHERE %s = %s',
                       t->>'rel', plan->>'cols', plan->>'cols', s->>'rel', plan->>'new_expr', t->>'bucket');
        GET DIAGNOSTICS c = ROW_COUNT;
        total := total + c;
        RAISE NOTICE 'copied % rows from % to %', c, s->>'rel', t->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    plan := plan || jsonb_build_object('copied', total);
END
$function$;

COMMENT ON PROCEDURE reshard_copy(jsonb) IS
'resharding phase 1: copies the moving rows to the new partition, not attached yet (internal)';
