-- src/sql/resharding/reshard_phase_undo.sql
--	reshard_phase_undo: what a resharding made before its cutover, removed (internal)

-- As the table's owner, after the engine dropped the guard of the new
-- partition: drops the change log and its sequence, the shadows, the
-- incoming tables and the new parent, and empties the new partition of an
-- addition (the engine's guard let nobody else write to it through this
-- server, and it was empty before) and drops its index and CHECK.  The
-- table is as it was.
--
-- A cutover whose COMMIT failed (postgres_fdw commits the shards' servers
-- one after the other) may have been committed on some shards: the rows
-- that move out deleted there, or the rows that move in poured in there.
-- The first are added back here from their copies in the new partition:
-- those whose key is not on the shard (the engine locked the parent and
-- its partitions SHARE ROW EXCLUSIVE, then applied the log: no writer
-- changed a row since).  cutover_commit_failed says that the engine saw the
-- COMMIT fail, or that it continues a resharding interrupted in a cutover
-- attempt.  The second are
-- deleted again, found by the keys of the incoming table and their old
-- bucket.
CREATE FUNCTION reshard_phase_undo(s reshard_state, cutover_commit_failed boolean) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rel oid;
    r record;
    key_type text;
    present text;
    insert_cols text;
    n bigint;
    ext text;
    name text;
    images text;
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['undo'];
    SELECT extnamespace::regnamespace::text INTO STRICT ext FROM pg_extension WHERE extname = 'subsetting';
    IF NOT EXISTS (SELECT FROM pg_class WHERE oid = s.parent AND relkind = 'p')
       OR EXISTS (SELECT FROM pg_class WHERE oid = s.partition AND relispartition AND s.operation = 'add')
       OR s.operation = 'move' AND NOT EXISTS (SELECT FROM pg_inherits WHERE inhrelid = s.partition) THEN
        RAISE EXCEPTION 'the resharding of % has cut over, it cannot be undone', s.parent_name
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FILTER (WHERE attgenerated = '') INTO insert_cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    FOR r IN SELECT u.src, u.i - 1 AS bucket, s.shadows[u.i] AS incoming
             FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src
             WHERE cutover_commit_failed AND c.relkind = 'f' AND u.src <> s.partition ORDER BY u.i LOOP
        IF s.operation = 'add' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
            EXECUTE format('SELECT pg_typeof(array_agg((%1$s)))::text FROM %2$s AS t WHERE (%3$s) = %4$s HAVING count(*) > 0',
                           s.key, s.partition::regclass, s.old_bucket_sql, r.bucket)
            INTO key_type;
            CONTINUE WHEN key_type IS NULL;
            EXECUTE format('SELECT array_agg(DISTINCT (%1$s))::text FROM ONLY %2$s AS t
                            WHERE (%1$s) = ANY (ARRAY(SELECT (%1$s) FROM %3$s AS t WHERE (%4$s) = %5$s))',
                           s.key, r.src::regclass, s.partition::regclass, s.old_bucket_sql, r.bucket)
            INTO present;
            EXECUTE format('INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE SELECT %2$s FROM %3$s AS t
                            WHERE (%4$s) = %5$s AND (%6$s) <> ALL ($1::%7$s)',
                           r.src::regclass, insert_cols, s.partition::regclass, s.old_bucket_sql, r.bucket, s.key, key_type)
            USING coalesce(present, '{}');
        ELSIF s.operation = 'remove' AND r.incoming IS NOT NULL AND EXISTS (SELECT FROM pg_class WHERE oid = r.incoming) THEN
            EXECUTE format('DELETE FROM ONLY %1$s AS t
                            WHERE (%2$s) = ANY (ARRAY(SELECT (%2$s) FROM %3$s AS t)) AND (%4$s) = %5$s',
                           r.src::regclass, s.key, r.incoming::regclass, s.old_bucket_sql, s.bucket);
        ELSE
            CONTINUE;
        END IF;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            RAISE WARNING '% rows of % % % from their copies: the cutover had committed on the server of % only',
                          n, s.parent_name, CASE s.operation WHEN 'add' THEN 'added back to' ELSE 'deleted again from' END,
                          r.src::regclass, r.src::regclass;
        END IF;
    END LOOP;
    FOREACH rel IN ARRAY array_remove(ARRAY[s.log, s.log_sequence, s.new_parent] || s.shadows, s.partition) LOOP
        CONTINUE WHEN rel IS NULL OR NOT EXISTS (SELECT FROM pg_class WHERE oid = rel);
        EXECUTE format('DROP %s %s', CASE WHEN rel = s.log_sequence THEN 'SEQUENCE'
                                          WHEN (SELECT relkind FROM pg_class WHERE oid = rel) = 'f' THEN 'FOREIGN TABLE'
                                          ELSE 'TABLE' END, rel::regclass);
    END LOOP;
    -- A move to a server: the table it made there dropped, if it is the
    -- one that carries its comment (reshard_phase_setup), waiting for its
    -- lock at most as long as the engine waits for its own, whatever the
    -- owner's settings there say of read-only sessions and statement
    -- timeouts; first the view of its count and sum the verification may
    -- have made there.
    IF s.operation = 'move' AND s.server IS NOT NULL THEN
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name USING s, 'moved', s.partition;
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO images USING s, 'images', s.partition;
        EXECUTE format('SELECT %s.dblink_exec(%L, %L)',
                       (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                        WHERE x.extname = 'dblink'),
                       s.server, format($remote$
            SET TRANSACTION READ WRITE;
            SET LOCAL statement_timeout = 0;
            SET LOCAL lock_timeout = %L;
            DROP VIEW IF EXISTS %s;
            DO $do$
            DECLARE
                tbl text := %L;
            BEGIN
                IF pg_catalog.obj_description(pg_catalog.to_regclass(tbl), 'pg_class') = %L THEN
                    EXECUTE pg_catalog.format('DROP TABLE %%s', tbl);
                END IF;
            END
            $do$$remote$, current_setting('lock_timeout'),
                      (SELECT format('%I.%I', n.nspname, images) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition),
                      (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition),
                      'partition_move ' || name));
    END IF;
    IF s.operation = 'add' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('TRUNCATE %s', s.partition::regclass);
        -- (its CHECK and index found by name among its own)
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name USING s, 'bound', s.partition;
        IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = s.partition AND conname = name) THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', s.partition::regclass, name);
        END IF;
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name USING s, 'key', s.partition;
        FOR rel IN SELECT x.indexrelid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
                   WHERE x.indrelid = s.partition AND c.relname = name LOOP
            EXECUTE format('DROP INDEX %s', rel::regclass);
        END LOOP;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_undo(reshard_state, boolean) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_undo(reshard_state, boolean) IS
'resharding, undo: the log, the shadows and the new parent dropped, the new partition emptied (internal)';
