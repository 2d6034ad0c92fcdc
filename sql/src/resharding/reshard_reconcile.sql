-- sql/src/resharding/reshard_reconcile.sql
--	reshard_reconcile: makes the copies in a target equal to the moving rows (internal)

-- Makes the copies in a target equal, as a multiset of rows, to the rows
-- of the sources that belong there; with insert_only, only adds the
-- missing ones.  Returns how many copies the target holds (internal).
CREATE PROCEDURE reshard_reconcile(plan jsonb, target jsonb, insert_only boolean, INOUT copies bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    src_sql text := '';
    copies_sql text;
    c bigint;
    expected_n bigint;
    copies_n bigint;
BEGIN
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN s->>'rel' = target->>'rel';
        src_sql := src_sql || CASE WHEN src_sql = '' THEN '' ELSE ' UNION ALL ' END
            || format('SELECT %s AS t FROM %s x WHERE (%s) AND %s = %s',
                      plan->>'row', s->>'rel', s->>'moving', plan->>'new_expr', target->>'bucket');
    END LOOP;
    copies_sql := format('SELECT %s AS t FROM %s x WHERE %s', plan->>'row', target->>'rel', target->>'copies');
    IF to_regclass('pg_temp.reshard_expected') IS NOT NULL THEN
        DROP TABLE pg_temp.reshard_expected, pg_temp.reshard_copies;
    END IF;
    EXECUTE format('CREATE TEMP TABLE reshard_expected ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   src_sql);
    EXECUTE format('CREATE TEMP TABLE reshard_copies ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   copies_sql);
    -- Verified by comparing the two multisets of rows exactly; when they are
    -- equal already (nothing was written since the copy), nothing to do.
    SELECT count(*) INTO c
    FROM pg_temp.reshard_expected e FULL JOIN pg_temp.reshard_copies k ON k.t = e.t
    WHERE e.cnt IS DISTINCT FROM k.cnt;
    IF c = 0 THEN
        SELECT coalesce(sum(cnt), 0) INTO copies_n FROM pg_temp.reshard_copies;
        copies := copies_n;
        RETURN;
    END IF;
    IF NOT insert_only THEN
        -- Copies with no row behind them any more (updated or deleted since
        -- they were copied).
        EXECUTE format('DELETE FROM %s WHERE ctid = ANY (ARRAY(
                            SELECT y.ctid FROM (SELECT x.ctid, %s AS t, row_number() OVER (PARTITION BY %s) AS rn
                                                FROM %s x WHERE %s) y
                            LEFT JOIN pg_temp.reshard_expected e ON e.t = y.t
                            WHERE y.rn > coalesce(e.cnt, 0)))',
                       target->>'rel', plan->>'row', plan->>'row', target->>'rel', target->>'copies');
    END IF;
    -- Rows not copied yet (written since the copy).
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN s->>'rel' = target->>'rel';
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM (
                            SELECT x.*, %s AS "reshard row", row_number() OVER (PARTITION BY %s) AS "reshard n"
                            FROM %s x WHERE (%s) AND %s = %s) y
                        JOIN (SELECT e.t, e.cnt - coalesce(k.cnt, 0) AS need
                              FROM pg_temp.reshard_expected e LEFT JOIN pg_temp.reshard_copies k ON k.t = e.t) m
                          ON m.t = y."reshard row"
                        WHERE y."reshard n" <= m.need',
                       target->>'rel', plan->>'cols', plan->>'cols', plan->>'row', plan->>'row',
                       s->>'rel', s->>'moving', plan->>'new_expr', target->>'bucket');
    END LOOP;
    -- Verified: the copies as they are now, against the rows they copy.
    DROP TABLE pg_temp.reshard_copies;
    EXECUTE format('CREATE TEMP TABLE reshard_copies ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   copies_sql);
    SELECT coalesce(sum(cnt), 0) INTO expected_n FROM pg_temp.reshard_expected;
    SELECT coalesce(sum(cnt), 0) INTO copies_n FROM pg_temp.reshard_copies;
    SELECT count(*) INTO c
    FROM pg_temp.reshard_expected e FULL JOIN pg_temp.reshard_copies k ON k.t = e.t
    WHERE CASE WHEN insert_only THEN coalesce(k.cnt, 0) < e.cnt ELSE e.cnt IS DISTINCT FROM k.cnt END;
    IF c <> 0 THEN
        RAISE EXCEPTION 'could not verify the copies in %: % rows there, % rows to copy, % differ', target->>'rel',
                        copies_n, expected_n, c
            USING ERRCODE = 'data_corrupted',
                  DETAIL = 'Nothing was changed: every row is where it was.';
    END IF;
    copies := copies_n;
END
$function$;

COMMENT ON PROCEDURE reshard_reconcile(jsonb, jsonb, boolean, bigint) IS
'makes the copies of moving rows in a target partition match the rows they copy, and verifies them (internal)';
