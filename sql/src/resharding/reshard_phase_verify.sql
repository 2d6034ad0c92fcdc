-- sql/src/resharding/reshard_phase_verify.sql
--	reshard_phase_verify: the shadows compared with the old partitions (internal)

-- As the table's owner, in a REPEATABLE READ transaction, after
-- reshard_phase_apply has applied all of the log that the snapshot sees:
-- compares each table filled for a new bucket
-- with the rows of the old partitions that belong to that bucket, as
-- multisets of row images (count, and the sum of a 64-bit hash of each
-- row's bytes: reshard_row_image_hash).  A difference is an error
-- (data_corrupted).  Then gives each of them a CHECK constraint that
-- implies its new bound, so that attaching it needs no scan.
CREATE FUNCTION reshard_phase_verify(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    ext text;
    cols text;
    b int;
    i int;
    sources_sql text;
    shadow_count bigint;
    shadow_sum numeric;
    source_count bigint;
    source_sum numeric;
    bound text;
BEGIN
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'reshard_phase_verify must run in a repeatable read transaction';
    END IF;
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_extension WHERE extname = 'subsetting';
    SELECT string_agg('t.' || quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    s.rows_verified := 0;
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(ROW(%s))), 0) FROM %s AS t',
                       ext, cols, s.shadows[b + 1]::regclass)
        INTO shadow_count, shadow_sum;
        SELECT string_agg(format('SELECT %s FROM ONLY %s AS t WHERE %s = %s', cols, src::regclass, s.new_bucket_sql, b), ' UNION ALL ')
        INTO sources_sql FROM unnest(s.sources) AS src WHERE src IS NOT NULL;
        EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(t)), 0) FROM (%s) AS t', ext, sources_sql)
        INTO source_count, source_sum;
        IF shadow_count <> source_count OR shadow_sum <> source_sum THEN
            RAISE EXCEPTION 'the rows of bucket % of % differ from their copies in %', b, s.parent_name, s.shadows[b + 1]::regclass
                USING ERRCODE = 'data_corrupted',
                      DETAIL = format('%s rows, %s copies (or the same count, other values).  Nothing was swapped; the table is as it was.',
                                      source_count, shadow_count);
        END IF;
        s.rows_verified := s.rows_verified + shadow_count;
        bound := CASE WHEN s.method = 'hash_operator_class'
                      THEN format('satisfies_hash_partition(%s::oid, %s, %s, %s)', s.new_parent, s.new_buckets, b, s.key)
                      ELSE format('%1$s IS NOT NULL AND %1$s = %2$s', s.new_bucket_sql, b) END;
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s)', s.shadows[b + 1]::regclass, 'reshard_bound_' || s.shadows[b + 1], bound);
    END LOOP;
    s.phase := 'cutover';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_verify(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_verify(reshard_state) IS
'resharding, verification: the shadows against the old partitions, by row image (internal)';
