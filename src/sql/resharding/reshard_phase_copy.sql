-- src/sql/resharding/reshard_phase_copy.sql
--	reshard_phase_copy: the copy of one old partition into the shadows (internal)

-- As the table's owner, in a REPEATABLE READ transaction: copies the rows of
-- the next old partition into the tables of their new buckets (of a
-- foreign partition, only the rows that move: the others stay where they
-- are), and deletes the log entries of that partition that the same
-- snapshot sees (their effect is in the copy; for a foreign partition the
-- engine took the snapshots of both servers while no write to it was
-- under way).  Returns the state with the counts.
CREATE FUNCTION reshard_phase_copy(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    source oid;
    cols text;
    b int;
    n bigint;
    is_foreign boolean;
    target oid;
    index_name text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['copy']);
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'reshard_phase_copy must run in a repeatable read transaction';
    END IF;
    LOOP
        s.sources_copied := s.sources_copied + 1;
        IF s.sources_copied > cardinality(s.sources) THEN
            -- All copied (the engine has built the shadows' indexes): the
            -- catch-up finds rows by the key.
            -- (recorded: the undo drops the one on an addition's new
            -- partition, a table of the user's)
            FOREACH index_name IN ARRAY @extschema@.reshard_key_indexes(s) LOOP
                s := @extschema@.reshard_cleanup_record(s, 'index', index_name, NULL, 'always');
            END LOOP;
            RETURN s;
        END IF;
        source := s.sources[s.sources_copied];
        EXIT WHEN source IS NOT NULL;
    END LOOP;
    is_foreign := (SELECT relkind FROM pg_class WHERE oid = source) = 'f';
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        -- Adding, the rows of an old partition stay in its bucket or go to
        -- the new one; removing, the removed partition's go anywhere.
        CONTINUE WHEN NOT (b + 1 = s.sources_copied OR b = s.bucket AND s.operation = 'add'
                           OR s.operation = 'remove' AND source = s.partition);
        CONTINUE WHEN b + 1 = s.sources_copied AND is_foreign;
        -- Removing with shard_views, a foreign partition's shard hides the
        -- rows that enter it until the cutover (reshard_shard_views).
        IF s.operation = 'remove' AND s.hidden_keys[b + 1] IS NOT NULL THEN
            EXECUTE format('INSERT INTO %s (key) SELECT DISTINCT (%s) FROM ONLY %s WHERE %s = %s',
                           s.hidden_keys[b + 1]::regclass, s.key, source::regclass, s.new_bucket_sql, b);
        END IF;
        -- (into a shard, in batches: reshard_transfer_table)
        target := @extschema@.reshard_transfer_table(s, s.shadows[b + 1]);
        EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM ONLY %s WHERE %s = %s',
                       target::regclass, cols, cols, source::regclass, s.new_bucket_sql, b);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF target <> s.shadows[b + 1] THEN
            EXECUTE format('DROP FOREIGN TABLE %s', target::regclass);
        END IF;
        s.rows_copied := s.rows_copied + n;
        IF b <> s.sources_copied - 1 THEN
            s.rows_to_move := s.rows_to_move + n;
        END IF;
    END LOOP;
    -- Adding with shard_views, the keys of the rows that leave a foreign
    -- partition are hidden on its shard at the cutover.
    IF s.operation = 'add' AND is_foreign AND s.hidden_keys[s.sources_copied] IS NOT NULL THEN
        EXECUTE format('INSERT INTO %s (key) SELECT DISTINCT (%s) FROM %s AS t WHERE (%s) = %s',
                       s.hidden_keys[s.sources_copied]::regclass, s.key, s.shadows[s.bucket + 1]::regclass,
                       s.old_bucket_sql, s.sources_copied - 1);
    END IF;
    EXECUTE format('DELETE FROM %s WHERE partition = $1', s.log::regclass) USING source;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_copy(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_copy(reshard_state) IS
'resharding, copy: the rows of the next old partition into the tables of their new buckets (internal)';
