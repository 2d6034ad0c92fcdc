-- sql/src/resharding/reshard_delete_copied.sql
--	reshard_delete_copied: deletes the moved rows that have a copy (internal)

-- Deletes from a source the moving rows that have a copy in a target,
-- as a multiset; returns how many it deleted (internal).
CREATE PROCEDURE reshard_delete_copied(plan jsonb, source jsonb, INOUT deleted bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    t jsonb;
    copies_sql text := '';
    c bigint;
BEGIN
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
        CONTINUE WHEN t->>'rel' = source->>'rel';
        copies_sql := copies_sql || CASE WHEN copies_sql = '' THEN '' ELSE ' UNION ALL ' END
            || format('SELECT %s AS t FROM %s x WHERE %s', plan->>'row', t->>'rel', t->>'copies');
    END LOOP;
    IF copies_sql = '' THEN
        deleted := 0;   -- its rows move nowhere
        RETURN;
    END IF;
    -- The copies, read once a transaction (the targets are not written to
    -- between the deletes).
    IF to_regclass('pg_temp.reshard_copied') IS NULL THEN
        EXECUTE format('CREATE TEMP TABLE reshard_copied ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                       copies_sql);
    END IF;
    EXECUTE format('DELETE FROM %s WHERE ctid = ANY (ARRAY(
                        SELECT y.ctid FROM (SELECT x.ctid, %s AS t, row_number() OVER (PARTITION BY %s) AS rn
                                            FROM %s x WHERE %s) y
                        JOIN pg_temp.reshard_copied k ON k.t = y.t
                        WHERE y.rn <= k.cnt))',
                   source->>'rel', plan->>'row', plan->>'row', source->>'rel', source->>'moving');
    GET DIAGNOSTICS c = ROW_COUNT;
    deleted := c;
END
$function$;

COMMENT ON PROCEDURE reshard_delete_copied(jsonb, jsonb, bigint) IS
'deletes from a source partition the moving rows that have a verified copy in their new partition (internal)';
