-- src/sql/resharding/reshard_phase_undo.sql
--	reshard_phase_undo: what a resharding made before its cutover, removed (internal)

-- As the table's owner, after the engine dropped the guard of the new
-- partition: the rows of the table repaired.  Empties the new partition of
-- an addition (the engine's guard let nobody else write to it through this
-- server, and it was empty before).  The engine then drops what the call
-- made (the change log and its sequence, the shadows, the incoming tables,
-- the new parent, the new partition's index and CHECK, the capture
-- triggers) by their records (reshard_state_cleanup,
-- src/resharding/cleanup.c).  The table is as it was.
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
    r record;
    key_type text;
    present text;
    insert_cols text;
    n bigint;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['undo']);
    IF NOT EXISTS (SELECT FROM pg_class WHERE oid = s.parent AND relkind = 'p')
       OR EXISTS (SELECT FROM pg_class WHERE oid = s.partition AND relispartition AND s.operation = 'add') THEN
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
    IF s.operation = 'add' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('TRUNCATE %s', s.partition::regclass);
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_undo(reshard_state, boolean) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_undo(reshard_state, boolean) IS
'resharding, undo: rows a failed cutover commit moved on shards repaired, the new partition emptied (internal)';
