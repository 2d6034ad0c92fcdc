-- src/sql/resharding/reshard_phase_verify.sql
--	reshard_phase_verify: the shadows compared with the old partitions (internal)

-- As the table's owner, in a REPEATABLE READ transaction, after
-- reshard_apply_log has applied all of the log that the snapshot sees
-- (for foreign partitions, the engine took the snapshots of both servers
-- while no write to them was under way): compares each table filled for a
-- new bucket with the rows of the old partitions that belong to that bucket
-- and are not already in it (a foreign partition's own rows stay), as
-- multisets of row images (count, and the sum of a 64-bit hash of each
-- row's bytes: reshard_row_image_hash), reading each old partition once.  A
-- difference is an error (data_corrupted), and so is a row of a foreign
-- partition that is not of its bucket (reshard_check lists them).  Then
-- gives each local table filled a CHECK constraint that implies its new
-- bound, so that attaching it needs no scan (attaching a foreign table
-- checks nothing), and attaches each shadow (not the new partition) to the
-- new parent and drops its CHECK: that is catalog work for each partition
-- that the cutover, under its lock, no longer does.
CREATE FUNCTION reshard_phase_verify(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    cols text;
    r record;
    b int;
    sources_sql text;
    filled regclass;   -- the table filled for a bucket, or one to read it in batches
    filled_count bigint;
    filled_sum numeric;
    source_counts bigint[];
    source_sums numeric[];
    filled_sql text;
    filled_counts bigint[];
    filled_sums numeric[];
    -- (the count and sum of row images by bucket b of the rows h of a query)
    by_bucket constant text := 'SELECT array_agg(b), array_agg(n), array_agg(total)
                                FROM (SELECT b, count(*) AS n, sum(h) AS total FROM (%s) AS x GROUP BY b) AS g';
    buckets_seen int[];
    counts_seen bigint[];
    sums_seen numeric[];
    misplaced bigint;
    bound text;
    bound_name text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['verify']);
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'reshard_phase_verify must run in a repeatable read transaction';
    END IF;
    SELECT string_agg('t.' || quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    -- The old partitions' rows by new bucket, each partition read once.
    SELECT string_agg(format('SELECT %s AS b, %s.reshard_row_image_hash(ROW(%s)) AS h FROM ONLY %s AS t%s',
                             s.new_bucket_sql,
                             '@extschema@', cols, u.source::regclass,
                             CASE WHEN c.relkind = 'f'
                                  THEN format(' WHERE (%s) IS DISTINCT FROM %s', s.new_bucket_sql, u.i - 1)
                                  ELSE '' END),
                      ' UNION ALL ')
    INTO sources_sql
    FROM unnest(s.sources) WITH ORDINALITY AS u(source, i) JOIN pg_class c ON c.oid = u.source;
    source_counts := array_fill(0::bigint, ARRAY[s.new_buckets]);
    source_sums := array_fill(0::numeric, ARRAY[s.new_buckets]);
    -- (one statement, not a loop over a query, which PostgreSQL runs
    -- without parallel workers: they read the partitions side by side; so
    -- for the tables filled, below)
    EXECUTE format(by_bucket, sources_sql) INTO buckets_seen, counts_seen, sums_seen;
    FOR i IN 1 .. coalesce(array_length(buckets_seen, 1), 0) LOOP
        b := buckets_seen[i];
        IF b IS NULL OR b < 0 OR b >= s.new_buckets OR s.shadows[b + 1] IS NULL THEN
            RAISE EXCEPTION '% rows of % have no bucket in the new layout (bucket %)', counts_seen[i], s.parent_name, coalesce(b::text, 'NULL')
                USING ERRCODE = 'data_corrupted',
                      DETAIL = 'Nothing was swapped; the table is as it was.';
        END IF;
        source_counts[b + 1] := counts_seen[i];
        source_sums[b + 1] := sums_seen[i];
    END LOOP;
    -- The local tables filled, read the same way, each once.
    SELECT string_agg(format('SELECT %s AS b, %s.reshard_row_image_hash(ROW(%s)) AS h FROM %s AS t',
                             u.i - 1, '@extschema@', cols, u.shadow::regclass), ' UNION ALL ')
    INTO filled_sql
    FROM unnest(s.shadows) WITH ORDINALITY AS u(shadow, i) JOIN pg_class c ON c.oid = u.shadow
    WHERE c.relkind <> 'f';
    filled_counts := array_fill(0::bigint, ARRAY[s.new_buckets]);
    filled_sums := array_fill(0::numeric, ARRAY[s.new_buckets]);
    IF filled_sql IS NOT NULL THEN
        EXECUTE format(by_bucket, filled_sql) INTO buckets_seen, counts_seen, sums_seen;
        FOR i IN 1 .. coalesce(array_length(buckets_seen, 1), 0) LOOP
            filled_counts[buckets_seen[i] + 1] := counts_seen[i];
            filled_sums[buckets_seen[i] + 1] := sums_seen[i];
        END LOOP;
    END IF;
    -- A foreign partition holds only rows of its bucket (its rows that stay
    -- are not compared, and its rows that move are found by their bucket).
    -- (moving, a row of another bucket has no table to be copied to: above)
    FOR r IN SELECT u.source, u.i - 1 AS bucket FROM unnest(s.sources) WITH ORDINALITY AS u(source, i)
             JOIN pg_class c ON c.oid = u.source WHERE c.relkind = 'f' LOOP
        EXECUTE format('SELECT count(*) FROM ONLY %s AS t WHERE (%s) IS DISTINCT FROM %s', r.source::regclass, s.old_bucket_sql, r.bucket)
        INTO misplaced;
        IF misplaced > 0 THEN
            RAISE EXCEPTION 'foreign partition % of % holds % rows of other buckets', r.source::regclass, s.parent_name, misplaced
                USING ERRCODE = 'check_violation',
                      DETAIL = 'Nothing was swapped; the table is as it was.',
                      HINT = format('SELECT * FROM reshard_check(%L) lists them; move each by DELETE and INSERT through the parent.', s.parent_name);
        END IF;
    END LOOP;
    s.rows_verified := 0;
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        filled_count := filled_counts[b + 1];
        filled_sum := filled_sums[b + 1];
        -- A foreign table filled (a foreign new partition, or the incoming
        -- table of a foreign partition): read whole, in batches of 10,000
        -- rows (reshard_transfer_table).
        IF (SELECT relkind FROM pg_class WHERE oid = s.shadows[b + 1]) = 'f' THEN
            filled := @extschema@.reshard_transfer_table(s, s.shadows[b + 1]);
            EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(ROW(%s))), 0) FROM %s AS t',
                           '@extschema@', cols, filled)
            INTO filled_count, filled_sum;
            IF filled <> s.shadows[b + 1] THEN
                EXECUTE format('DROP FOREIGN TABLE %s', filled);
            END IF;
        END IF;
        IF filled_count <> source_counts[b + 1] OR filled_sum <> source_sums[b + 1] THEN
            RAISE EXCEPTION 'the rows of bucket % of % differ from their copies in %', b, s.parent_name, s.shadows[b + 1]::regclass
                USING ERRCODE = 'data_corrupted',
                      DETAIL = format('%s rows, %s copies (or the same count, other values).  Nothing was swapped; the table is as it was.',
                                      source_counts[b + 1], filled_count);
        END IF;
        s.rows_verified := s.rows_verified + filled_count;
        -- (a foreign new partition, or the incoming rows of a foreign one)
        CONTINUE WHEN EXISTS (SELECT FROM pg_class WHERE oid = s.shadows[b + 1] AND relkind = 'f')
                      OR EXISTS (SELECT FROM pg_class WHERE oid = s.sources[b + 1] AND relkind = 'f');
        bound := CASE WHEN s.method = 'hash_operator_class'
                      THEN format('satisfies_hash_partition(%s::oid, %s, %s, %s)',
                                  s.new_parent, s.new_buckets, b, s.key)
                      ELSE format('%1$s IS NOT NULL AND %1$s = %2$s', s.new_bucket_sql, b) END;
        bound_name := @extschema@.reshard_object_name(s, 'bound', s.shadows[b + 1]);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s)', s.shadows[b + 1]::regclass, bound_name, bound);
        -- A shadow is attached to the new parent now, not at the cutover
        -- (no reader or writer but the engine uses either), and its CHECK
        -- dropped: the cutover only renames it.  Not when foreign keys of
        -- other tables refer to the table: the cutover adds them to the new
        -- parent before attaching its partitions, so that PostgreSQL makes
        -- the rows it keeps for each partition valid (15 to 17 leave them
        -- not valid when the key is added to a parent that has partitions).
        -- The CHECK is then the cutover's to drop, and recorded (the undo
        -- drops the one of an addition's new partition, the user's table).
        IF s.shadows[b + 1] = s.partition
           OR EXISTS (SELECT FROM pg_constraint c
                      WHERE c.confrelid = s.parent AND c.contype = 'f' AND c.conrelid <> s.parent) THEN
            s := @extschema@.reshard_cleanup_record(s, 'constraint', s.shadows[b + 1]::regclass::text, NULL, 'always',
                                                    NULL, bound_name);
            CONTINUE;
        END IF;
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.new_parent::regclass, s.shadows[b + 1]::regclass,
                       format(s.new_bound, b));
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', s.shadows[b + 1]::regclass, bound_name);
    END LOOP;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_verify(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_verify(reshard_state) IS
'resharding, verification: the shadows against the old partitions, by row image (internal)';
