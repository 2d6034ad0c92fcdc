-- src/sql/resharding/reshard_cutover_shard_rows.sql
--	reshard_cutover_shard_rows: the rows that leave or enter the foreign partitions, at the cutover (internal)

-- Part of reshard_phase_cutover (reshard_phase_cutover.sql says when it
-- runs and why), resharding (adding or removing a bucket), as the table's
-- owner, under the cutover's lock, after the whole log was applied.
-- Foreign partitions (shards on other servers) cannot be replaced by a
-- shadow: a foreign partition removed must hold exactly the rows copied
-- from it; the rows that move out of one are deleted from it, found by
-- their keys, and must be exactly the copies made of them; the rows that
-- move into one are poured into it from its incoming table, in batches
-- (reshard_transfer_table).  With shard_views, its foreign table is
-- pointed at the view of the rows its bucket has from now on instead.
-- Not revoked from PUBLIC: reshard_phase_cutover runs as the table's
-- owner, any role, and calls it in SQL (a privilege checked); it runs
-- with its caller's rights and gives no others.
CREATE FUNCTION reshard_cutover_shard_rows(s reshard_state) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
    b int;
    target regclass;
    name text;
    cols text;
    insert_cols text;
    keys text;
    key_type text;
    moved_count bigint;
    moved_sum numeric;
    deleted_count bigint;
    deleted_sum numeric;
    copied_count bigint;
    copied_sum numeric;
    moving jsonb;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['cutover']);
    SELECT string_agg('t.' || quote_ident(attname), ', ' ORDER BY attnum),
           string_agg(quote_ident(attname), ', ' ORDER BY attnum) FILTER (WHERE attgenerated = '')
    INTO cols, insert_cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    -- A foreign partition removed: its rows must be exactly their copies
    -- (found by key: the rows of one key are all of one bucket).
    -- (With shard_views its server refuses direct writes: not read.)
    IF s.operation = 'remove' AND (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f'
       AND s.shard_options[array_position(s.sources, s.partition)] IS NULL THEN
        EXECUTE format('SELECT array_agg((%1$s))::text, pg_typeof(array_agg((%1$s)))::text, count(*),
                               coalesce(sum(%2$s.reshard_row_image_hash(ROW(%3$s))), 0)
                        FROM ONLY %4$s AS t',
                       s.key, '@extschema@', cols, s.partition::regclass)
        INTO keys, key_type, moved_count, moved_sum;
        copied_count := 0;
        copied_sum := 0;
        FOR b IN 0 .. s.new_buckets - 1 LOOP
            CONTINUE WHEN s.shadows[b + 1] IS NULL OR moved_count = 0;
            EXECUTE format('SELECT count(*), coalesce(sum(%1$s.reshard_row_image_hash(ROW(%2$s))), 0)
                            FROM %3$s AS t WHERE (%4$s) = ANY (%5$L::%6$s)',
                           '@extschema@', cols, s.shadows[b + 1]::regclass, s.key, keys, key_type)
            INTO deleted_count, deleted_sum;
            copied_count := copied_count + deleted_count;
            copied_sum := copied_sum + deleted_sum;
        END LOOP;
        IF moved_count <> s.rows_to_move OR copied_count <> moved_count OR copied_sum <> moved_sum THEN
            RAISE EXCEPTION 'the rows of % in % were changed on its server during the resharding',
                            s.parent_name, s.partition::regclass
                USING ERRCODE = 'data_corrupted',
                      DETAIL = format('%s rows copied, %s in the partition (or the same count, other values): written directly on the shard, not through %s.  Nothing was swapped; the table is as it was.',
                                      s.rows_to_move, moved_count, s.parent_name);
        END IF;
    END IF;
    -- The foreign partitions: rows that moved out deleted, rows that moved in poured in.
    -- Adding: the copies in the new partition read once, grouped by the
    -- bucket they leave (their keys, count and sum of row-image hashes),
    -- not once per shard and again for the keys (a foreign new partition
    -- sends all its rows each time: its reads were most of the lock's time).
    IF s.operation = 'add' AND EXISTS (SELECT FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src
                                       WHERE c.relkind = 'f' AND s.hidden_keys[u.i] IS NULL) THEN
        EXECUTE format('SELECT jsonb_object_agg(g.b, jsonb_build_array(g.k, g.kt, g.n, g.h::text))
                        FROM (SELECT (%4$s) AS b, array_agg((%2$s))::text AS k, pg_typeof(array_agg((%2$s)))::text AS kt,
                                     count(*) AS n, coalesce(sum(%1$s.reshard_row_image_hash(ROW(%3$s))), 0) AS h
                              FROM %5$s AS t GROUP BY 1) AS g',
                       '@extschema@', s.key, cols, s.old_bucket_sql, s.partition::regclass)
        INTO moving;
    END IF;
    FOR r IN SELECT u.src, u.i - 1 AS bucket FROM unnest(s.sources) WITH ORDINALITY AS u(src, i)
             JOIN pg_class c ON c.oid = u.src
             WHERE c.relkind = 'f' AND NOT (s.operation = 'remove' AND u.src = s.partition) ORDER BY u.i LOOP
        -- With shard_views, the rows that leave it (adding) are hidden on its
        -- shard instead, and the rows that enter it (removing) are there,
        -- hidden: it is pointed at the view of the rows its bucket has from
        -- now on (reshard_shard_views).
        IF s.hidden_keys[r.bucket + 1] IS NOT NULL THEN
            name := @extschema@.reshard_object_name(s, CASE s.operation WHEN 'add' THEN 'shown' ELSE 'all' END, r.src);
            EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (SET table_name %L)', r.src::regclass, name);
            CONTINUE;
        END IF;
        IF s.operation = 'add' THEN
            moved_count := coalesce((moving -> r.bucket::text ->> 2)::bigint, 0);
            moved_sum := coalesce((moving -> r.bucket::text ->> 3)::numeric, 0);
            IF moved_count > 0 THEN
                -- (the keys go to the shard's server as one array parameter)
                EXECUTE format('WITH d AS (DELETE FROM ONLY %1$s AS t WHERE (%2$s) = ANY (ARRAY(SELECT pg_catalog.unnest($1::%3$s))) RETURNING t.*)
                                SELECT count(*), coalesce(sum(%4$s.reshard_row_image_hash(ROW(%5$s))), 0) FROM d AS t',
                               r.src::regclass, s.key, moving -> r.bucket::text ->> 1, '@extschema@', cols)
                INTO deleted_count, deleted_sum
                USING moving -> r.bucket::text ->> 0;
                IF deleted_count <> moved_count OR deleted_sum <> moved_sum THEN
                    RAISE EXCEPTION 'the rows of % that move from % to % were changed on its server during the resharding',
                                    s.parent_name, r.src::regclass, s.partition::regclass
                        USING ERRCODE = 'data_corrupted',
                              DETAIL = format('%s rows copied, %s found to delete (or the same count, other values): written directly on the shard, not through %s.  Nothing was swapped; the table is as it was.',
                                              moved_count, deleted_count, s.parent_name);
                END IF;
            END IF;
        ELSIF s.shadows[r.bucket + 1] IS NOT NULL THEN
            -- (in batches: reshard_transfer_table)
            target := @extschema@.reshard_transfer_table(s, r.src);
            EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s',
                           target, insert_cols, insert_cols, s.shadows[r.bucket + 1]::regclass);
            EXECUTE format('DROP FOREIGN TABLE %s', target);
        END IF;
    END LOOP;
END
$function$;

COMMENT ON FUNCTION reshard_cutover_shard_rows(reshard_state) IS
'resharding, cutover: the rows that leave the foreign partitions deleted, those that enter them poured in, checked against their copies (internal)';
