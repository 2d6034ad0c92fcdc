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
    key_name text;
    remote text;   -- moving: the partition's table on the server
    read_from oid; -- the source, or a foreign table on it read in batches
    model oid;     -- moving to a server: the table whose indexes it gets
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['copy'];
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'reshard_phase_copy must run in a repeatable read transaction';
    END IF;
    LOOP
        s.sources_copied := s.sources_copied + 1;
        IF s.sources_copied > cardinality(s.sources) THEN
            -- All copied (the engine has built the shadows' indexes): the
            -- catch-up finds a row of each local table filled by its key,
            -- through an index of the table's that leads with it (plain
            -- btree, the key's default operator class and collation), else
            -- through one of its own, dropped at the cutover.
            FOR target IN SELECT t FROM unnest(s.shadows) AS u(t) JOIN pg_class c ON c.oid = u.t WHERE c.relkind <> 'f' LOOP
                EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)',
                               (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
                INTO key_name USING s, 'key', target;
                CONTINUE WHEN EXISTS (
                    SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam
                    LEFT JOIN pg_attribute k ON k.attrelid = x.indrelid AND k.attnum = x.indkey[0]
                    LEFT JOIN pg_opclass o ON o.oid = x.indclass[0]
                    WHERE x.indrelid = target
                      AND (i.relname = key_name
                           OR a.amname = 'btree' AND x.indpred IS NULL AND x.indisvalid
                              AND quote_ident(k.attname) = s.key AND o.opcdefault AND o.opcintype = k.atttypid
                              AND x.indcollation[0] = k.attcollation));
                EXECUTE format('CREATE INDEX %I ON %s ((%s))', key_name, target::regclass, s.key);
            END LOOP;
            -- Moving a partition to a server: its table there gets the
            -- indexes of the partition, or of the parent if it came from a
            -- server (named after it there); the catch-up and the cutover
            -- find rows by the key: one leading with it, if none does.
            IF s.operation = 'move' AND s.server IS NOT NULL THEN
                model := CASE WHEN (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f' THEN s.parent ELSE s.partition END;
                SELECT format('%I.%I', n.nspname, c.relname) INTO STRICT remote
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition;
                EXECUTE format('SELECT %s.dblink_exec(%L, %L)',
                               (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                                WHERE x.extname = 'dblink'),
                               s.server,
                               -- (as long as the table takes: no time limit of the role's there)
                               (SELECT 'SET LOCAL statement_timeout = 0;' || string_agg(u.statement || ';', E'\n')
                                FROM (SELECT format('CREATE INDEX IF NOT EXISTS %I ON %s USING %I (%s)%s%s',
                                                    CASE WHEN model = s.partition THEN i.relname::text
                                                         ELSE left((SELECT relname FROM pg_class WHERE oid = s.partition) || '_' || i.relname, 63) END,
                                                    remote, a.amname,
                                                    (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                                                     FROM generate_series(1, x.indnkeyatts) AS k),
                                                    CASE WHEN x.indnatts > x.indnkeyatts
                                                         THEN format(' INCLUDE (%s)',
                                                                     (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                                                                      FROM generate_series(x.indnkeyatts + 1, x.indnatts) AS k))
                                                         ELSE '' END,
                                                    CASE WHEN x.indpred IS NOT NULL
                                                         THEN ' WHERE ' || pg_get_expr(x.indpred, x.indrelid, true) ELSE '' END) AS statement
                                      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam
                                      WHERE x.indrelid = model
                                      UNION ALL
                                      SELECT format('CREATE INDEX IF NOT EXISTS %I ON %s ((%s))',
                                                    (SELECT relname FROM pg_class WHERE oid = s.partition) || '_key_idx', remote, s.key)
                                      WHERE NOT EXISTS (SELECT FROM pg_index x JOIN pg_attribute k ON k.attrelid = x.indrelid
                                                                                             AND k.attnum = x.indkey[0]
                                                        WHERE x.indrelid = model AND x.indpred IS NULL
                                                          AND quote_ident(k.attname) = s.key)) AS u));
            END IF;
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
        CONTINUE WHEN b + 1 = s.sources_copied AND is_foreign AND s.operation <> 'move';
        -- Removing with shard_views, a foreign partition's shard hides the
        -- rows that enter it until the cutover (reshard_shard_views).
        IF s.operation = 'remove' AND s.hidden_keys[b + 1] IS NOT NULL THEN
            EXECUTE format('INSERT INTO %s (key) SELECT DISTINCT (%s) FROM ONLY %s WHERE %s = %s',
                           s.hidden_keys[b + 1]::regclass, s.key, source::regclass, s.new_bucket_sql, b);
        END IF;
        IF s.operation = 'move' AND NOT is_foreign AND (SELECT relkind FROM pg_class WHERE oid = s.shadows[b + 1]) = 'f' THEN
            -- A partition here to a server: the table there emptied (what a
            -- step cut short left there: through dblink, committed at once),
            -- then the rows sent with COPY over a connection of the engine's
            -- own, committed there at once too (reshard_copy_rows).
            EXECUTE format('SELECT %s.dblink_exec(%L, %L)',
                           (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                            WHERE x.extname = 'dblink'),
                           s.server,
                           format('TRUNCATE %s', (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
                                                  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition)));
            EXECUTE format('SELECT %s.reshard_copy_rows($1, $2)',
                           (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
            INTO n USING source, s.shadows[b + 1];
        ELSE
            -- (into a shard, in batches: reshard_transfer_table)
            EXECUTE format('SELECT %s.reshard_transfer_table($1, $2)',
                           (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
            INTO target USING s, s.shadows[b + 1];
            -- (moving, the copy is the partition's one step: what a step cut
            -- short after the server committed left there goes first)
            IF s.operation = 'move' THEN
                EXECUTE format('TRUNCATE %s', target::regclass);
            END IF;
            -- (moving, every row of the partition: its bound says they are of
            -- its bucket; one on a server is read 10,000 rows at a time)
            IF s.operation = 'move' THEN
                EXECUTE format('SELECT %s.reshard_transfer_table($1, $2)',
                               (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
                INTO read_from USING s, source;
            ELSE
                read_from := source;
            END IF;
            EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM ONLY %s WHERE %s',
                           target::regclass, cols, cols, read_from::regclass,
                           CASE WHEN s.operation = 'move' THEN 'true' ELSE format('%s = %s', s.new_bucket_sql, b) END);
            GET DIAGNOSTICS n = ROW_COUNT;
            IF target <> s.shadows[b + 1] THEN
                EXECUTE format('DROP FOREIGN TABLE %s', target::regclass);
            END IF;
            IF read_from <> source THEN
                EXECUTE format('DROP FOREIGN TABLE %s', read_from::regclass);
            END IF;
        END IF;
        s.rows_copied := s.rows_copied + n;
        IF b <> s.sources_copied - 1 OR s.operation = 'move' THEN
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
