-- sql/src/resharding/reshard_phase_apply.sql
--	reshard_phase_apply: the log applied to the shadows (internal)

-- As the table's owner: applies at most max_changes entries of the log
-- that the transaction's snapshot sees, in the order they were written,
-- and deletes them.  A delete removes one row of the same image (same
-- bytes in every column) from the table of the old row's new bucket, found
-- by its key; there must be one, else the shadows do not hold what the old
-- partitions hold and the call stops (data_corrupted).  An insert adds the
-- new row to the table of its new bucket.  Returns the state with the
-- count; the phase is unchanged.  Past the deadline, raises SR001 (the
-- cutover's budget is spent: the engine rolls back and tries again).
CREATE FUNCTION reshard_phase_apply(s reshard_state, max_changes bigint, deadline timestamptz) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    e record;
    cols text;
    image_cols text;
    target_cols text;
    b int;
    k text;
    found_row boolean;
BEGIN
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum),
           string_agg('($2).' || quote_ident(attname), ', ' ORDER BY attnum),
           string_agg('u.' || quote_ident(attname), ', ' ORDER BY attnum)
    INTO image_cols, cols, target_cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    FOR e IN EXECUTE format('SELECT ctid, op, old_row, new_row FROM %s WHERE partition = ANY ($1) ORDER BY seq LIMIT $2',
                            s.log::regclass)
             USING s.sources, max_changes LOOP
        IF clock_timestamp() > deadline THEN
            RAISE EXCEPTION 'the cutover overran its budget' USING ERRCODE = 'SR001';
        END IF;
        IF e.op IN ('u', 'd') THEN
            EXECUTE format('SELECT %s, (%s)::text FROM (SELECT ($1).*) AS x', s.new_bucket_sql, s.key) INTO b, k USING e.old_row;
            EXECUTE format('WITH gone AS (DELETE FROM %1$s AS t WHERE t.ctid = (SELECT u.ctid FROM %1$s AS u
                                                                              WHERE %2$s AND pg_catalog.record_image_eq(ROW(%3$s), ROW(%4$s)) LIMIT 1)
                                          RETURNING 1)
                            SELECT EXISTS (SELECT FROM gone)',
                           s.shadows[b + 1]::regclass,
                           CASE WHEN k IS NULL THEN format('(%s) IS NULL', s.key)
                                ELSE format('(%s) = (SELECT (%s) FROM (SELECT ($2).*) AS x)', s.key, s.key) END,
                           target_cols, cols)
            INTO found_row USING NULL::int, e.old_row;
            IF NOT found_row THEN
                RAISE EXCEPTION 'the copy of a row of % that was changed meanwhile is not in %', s.parent_name, s.shadows[b + 1]::regclass
                    USING ERRCODE = 'data_corrupted',
                          DETAIL = 'Nothing was swapped; the table is as it was.';
            END IF;
        END IF;
        IF e.op IN ('u', 'i') THEN
            EXECUTE format('SELECT %s FROM (SELECT ($1).*) AS x', s.new_bucket_sql) INTO b USING e.new_row;
            EXECUTE (SELECT format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM (SELECT ($1).*) AS x',
                                   s.shadows[b + 1]::regclass, string_agg(quote_ident(attname), ', ' ORDER BY attnum),
                                   string_agg(quote_ident(attname), ', ' ORDER BY attnum))
                     FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '')
            USING e.new_row;
        END IF;
        EXECUTE format('DELETE FROM %s WHERE ctid = $1', s.log::regclass) USING e.ctid;
        s.changes_applied := s.changes_applied + 1;
    END LOOP;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_apply(reshard_state, bigint, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_apply(reshard_state, bigint, timestamptz) IS
'resharding, catch-up: applies the change log to the shadows, checking each delete by row image (internal)';
