-- src/sql/resharding/reshard_apply_log.sql
--	reshard_apply_log: the log applied to the shadows (internal)

-- As the table's owner: applies at most max_changes entries of the log
-- that the transaction's snapshot sees, in the order they were written,
-- and deletes them.  A delete removes one row of the same image (same
-- bytes in every column) from the table of the old row's new bucket, found
-- by its key; there must be one, else the tables filled do not hold what
-- the old partitions hold and the call stops (data_corrupted).  An insert
-- adds the new row to the table of its new bucket.  A row of a foreign
-- partition whose new bucket is the partition's own is left alone (it stays
-- where it is); a row written to a foreign partition that holds another
-- bucket (PostgreSQL updates a key of a foreign partition in place) is an
-- error.  An entry the capture wrote once the table's columns had changed
-- (op 'x': reshard_capture) fails the call, naming the change.  Returns the state with the counts (of the changes applied, of
-- the rows to move: a change to a row that moves counts as one more or one
-- less, and of the changes the snapshot sees still waiting); the phase is
-- unchanged.  Past
-- the deadline, raises SR001 (the cutover's budget is spent: the engine
-- rolls back and tries again).
CREATE FUNCTION reshard_apply_log(s reshard_state, max_changes bigint, deadline timestamptz) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    e record;
    log_row text;            -- the entry's old or new row, as a relation x with the table's columns
    target_cols text;
    logged_cols text;
    insert_cols text;
    foreign_sources oid[];
    own int;
    old_bucket int;
    b int;
    k text;
    found_ctid tid;
    hidden oid;
    applied bigint := 0;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['catch up', 'verify', 'cutover', 'undo']);
    -- (a table filled on a server, where a partition moves, refuses writes
    -- but the engine's: this transaction's writes there marked as the
    -- engine's, and without the timeouts there: move_destination_guard)
    IF s.server IS NOT NULL AND s.phase <> 'undo' THEN
        PERFORM @extschema@.move_destination_guard(s, 'mark');
    END IF;
    -- (The rows are read from the log by the entry's ctid, never held in a
    -- variable: their type is each table's own, and a plan PL/pgSQL keeps
    -- for one table would not do for the next.)
    SELECT string_agg('u.' || quote_ident(attname), ', ' ORDER BY attnum),
           string_agg('x.' || quote_ident(attname), ', ' ORDER BY attnum),
           string_agg(quote_ident(attname), ', ' ORDER BY attnum) FILTER (WHERE attgenerated = '')
    INTO target_cols, logged_cols, insert_cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    foreign_sources := ARRAY(SELECT oid FROM pg_class WHERE oid = ANY (s.sources) AND relkind = 'f');
    FOR e IN EXECUTE format('SELECT ctid, partition, op FROM %s WHERE partition = ANY ($1) ORDER BY seq LIMIT $2',
                            s.log::regclass)
             USING s.sources, max_changes LOOP
        IF clock_timestamp() > deadline THEN
            RAISE EXCEPTION 'the cutover overran its budget' USING ERRCODE = 'SR001';
        END IF;
        old_bucket := array_position(s.sources, e.partition) - 1;
        -- the bucket of a foreign partition: its rows of that bucket stay
        -- in it, but for the partition the call names (removed, or moved:
        -- all its rows go to a table filled)
        own := CASE WHEN e.partition = ANY (foreign_sources) THEN old_bucket END;
        IF e.op = 'x' THEN
            RAISE EXCEPTION 'table % changed while it was being resharded', s.parent_name
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('%s was written after its columns were changed (ALTER TABLE ... ALTER COLUMN ... TYPE, ADD or DROP COLUMN): the copies cannot receive the write.',
                                      e.partition::regclass),
                      HINT = 'Nothing was swapped; the table is as it was.  Call it again: the checks run again.';
        END IF;
        IF e.op IN ('u', 'd') THEN
            log_row := format('(SELECT (l.old_row).* FROM %s AS l WHERE l.ctid = $1)', s.log::regclass);
            EXECUTE format('SELECT %s, (%s)::text FROM %s AS x', s.new_bucket_sql, s.key, log_row) INTO b, k USING e.ctid;
            IF b IS DISTINCT FROM old_bucket OR e.partition = s.partition THEN
                s.rows_to_move := s.rows_to_move - 1;
            END IF;
            IF b IS DISTINCT FROM own OR e.partition = s.partition THEN
                EXECUTE format('WITH x AS MATERIALIZED %1$s
                                SELECT u.ctid FROM %2$s AS u
                                WHERE %3$s AND pg_catalog.record_image_eq(ROW(%4$s), (SELECT ROW(%5$s) FROM x)) LIMIT 1',
                               log_row, s.shadows[b + 1]::regclass,
                               CASE WHEN k IS NULL THEN format('(%s) IS NULL', s.key)
                                    ELSE format('(%s) = (SELECT (%s) FROM x)', s.key, s.key) END,
                               target_cols, logged_cols)
                INTO found_ctid USING e.ctid;
                IF found_ctid IS NULL THEN
                    RAISE EXCEPTION 'the copy of a row of % that was changed meanwhile is not in %', s.parent_name, s.shadows[b + 1]::regclass
                        USING ERRCODE = 'data_corrupted',
                              DETAIL = 'Nothing was swapped; the table is as it was.';
                END IF;
                EXECUTE format('DELETE FROM %s WHERE ctid = $1', s.shadows[b + 1]::regclass) USING found_ctid;
            END IF;
        END IF;
        IF e.op IN ('u', 'i') THEN
            log_row := format('(SELECT (l.new_row).* FROM %s AS l WHERE l.ctid = $1)', s.log::regclass);
            IF own IS NOT NULL THEN
                EXECUTE format('SELECT %s FROM %s AS x', s.old_bucket_sql, log_row) INTO b USING e.ctid;
                IF b IS DISTINCT FROM own THEN
                    RAISE EXCEPTION 'a row of bucket % of % was written to its foreign partition %, which holds bucket %',
                                    coalesce(b::text, 'NULL'), s.parent_name, e.partition::regclass, own
                        USING ERRCODE = 'check_violation',
                              DETAIL = 'PostgreSQL updates the key of a row of a foreign partition in place, on its server, and does not move the row.  Nothing was swapped; the table is as it was.',
                              HINT = 'Change the key of a row of a foreign partition by DELETE and INSERT.  reshard_check lists the rows in the wrong partition.';
                END IF;
            END IF;
            EXECUTE format('SELECT %s FROM %s AS x', s.new_bucket_sql, log_row) INTO b USING e.ctid;
            IF b IS DISTINCT FROM old_bucket OR e.partition = s.partition THEN
                s.rows_to_move := s.rows_to_move + 1;
            END IF;
            IF b IS DISTINCT FROM own OR e.partition = s.partition THEN
                -- (with shard_views, its key hidden on the shard it leaves,
                -- adding, or enters, removing: reshard_shard_views)
                hidden := s.hidden_keys[CASE s.operation WHEN 'add' THEN own ELSE b END + 1];
                IF hidden IS NOT NULL THEN
                    EXECUTE format('INSERT INTO %s (key) SELECT (%s) FROM %s AS x', hidden::regclass, s.key, log_row)
                    USING e.ctid;
                END IF;
                EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s AS x',
                               s.shadows[b + 1]::regclass, insert_cols, insert_cols, log_row)
                USING e.ctid;
            END IF;
        END IF;
        EXECUTE format('DELETE FROM %s WHERE ctid = $1', s.log::regclass) USING e.ctid;
        s.changes_applied := s.changes_applied + 1;
        applied := applied + 1;
    END LOOP;
    IF applied < max_changes THEN
        s.changes_waiting := 0;
    ELSE
        EXECUTE format('SELECT count(*) FROM %s WHERE partition = ANY ($1)', s.log::regclass)
        INTO s.changes_waiting USING s.sources;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_apply_log(reshard_state, bigint, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION reshard_apply_log(reshard_state, bigint, timestamptz) IS
'resharding, catch-up: applies the change log to the shadows, checking each delete by row image (internal)';
