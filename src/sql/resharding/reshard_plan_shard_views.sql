-- src/sql/resharding/reshard_plan_shard_views.sql
--	reshard_plan_shard_views: whether a resharding hides the rows that leave or enter its shards (internal)

-- reshard_plan's checks of shard_views, resharding (adding or removing a
-- bucket), after reshard_plan_partitions': s.shard_views NULL is decided
-- here, where the shards allow it; true requires what it needs, of the
-- table's key (key, a column) and of its foreign partitions (the table's
-- partitions by bucket).  Returns s with shard_views decided and, with it,
-- the foreign partitions' options by bucket.  Not revoked from PUBLIC:
-- reshard_plan runs as the table's owner, any role, and calls it in SQL (a
-- privilege checked); it reads the catalog, raises errors or a NOTICE,
-- and runs queries that only read on the shards' servers through dblink,
-- as its caller's user mappings allow.
CREATE FUNCTION reshard_plan_shard_views(s reshard_state, partitions regclass[], key text) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    r record;
    bad text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    -- shard_views NULL: where the shards allow it.  Every foreign
    -- partition a postgres_fdw one, dblink here, the key a column, and on
    -- each shard's server, as the owner reaches it (its user mapping):
    -- sessions that may write, and the shard's table a table of the
    -- owner's in a schema where the owner may create (what
    -- reshard_shard_views makes there).  Otherwise without, and a
    -- NOTICE says why.
    IF s.shard_views IS NULL THEN
        s.shard_views := false;
        IF EXISTS (SELECT FROM pg_foreign_table f WHERE f.ftrelid = ANY (partitions)) THEN
            bad := CASE
                WHEN NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'dblink')
                THEN 'extension dblink is not installed'
                WHEN NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped
                                                           AND quote_ident(attname) = key)
                THEN format('its key %s is not a column', key)
                ELSE (SELECT format('%s is not a postgres_fdw foreign table', f.ftrelid::regclass)
                      FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
                      JOIN pg_foreign_data_wrapper w ON w.oid = v.srvfdw
                      WHERE f.ftrelid = ANY (partitions) AND w.fdwname <> 'postgres_fdw' ORDER BY f.ftrelid LIMIT 1)
            END;
            FOR r IN SELECT v.srvname AS server,
                            format('%I.%I', coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'schema_name'), n.nspname),
                                   coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'table_name'), c.relname)) AS remote
                     FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
                     JOIN pg_class c ON c.oid = f.ftrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                     LEFT JOIN LATERAL pg_options_to_table(f.ftoptions) AS o ON true
                     WHERE f.ftrelid = ANY (partitions)
                     GROUP BY f.ftrelid, v.srvname, n.nspname, c.relname ORDER BY f.ftrelid LOOP
                EXIT WHEN bad IS NOT NULL;
                BEGIN
                    EXECUTE @extschema@.reshard_remote_query(r.server,
                                'SELECT CASE ' || @extschema@.reshard_remote_owner_checks(r.remote) || ' END', 'problem text')
                    INTO bad;
                EXCEPTION WHEN OTHERS THEN
                    bad := SQLERRM;
                END;
                IF bad IS NOT NULL THEN
                    bad := format('on server "%s", %s', r.server, bad);
                END IF;
            END LOOP;
            IF bad IS NULL THEN
                s.shard_views := true;
            ELSE
                RAISE NOTICE 'resharding % without shard_views: %', parent, bad
                    USING DETAIL = 'The cutover then deletes the rows that leave the shards, or writes those that enter them, under its lock: its work grows with them, and the default cutover_budget may not suffice.',
                          HINT = 'docs/resharding.md, "Shards: hiding the rows that leave or enter", says what shard_views needs; shard_views => false does without it and says nothing.';
            END IF;
        END IF;
    END IF;

    -- shard_views: the rows leaving or entering the foreign partitions are
    -- hidden by their key on the shards' servers, reached through dblink.
    IF s.shard_views THEN
        IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'dblink') THEN
            RAISE EXCEPTION 'extension dblink is not installed'
                USING ERRCODE = 'undefined_object',
                      DETAIL = 'shard_views reaches the shards'' servers through dblink.',
                      HINT = 'A superuser can install it: CREATE EXTENSION dblink.';
        END IF;
        IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped
                                                  AND quote_ident(attname) = key) THEN
            RAISE EXCEPTION 'cannot hide the rows that leave the shards of %: its key % is not a column', parent, key
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'shard_views hides rows on a shard''s server by the value of their key column.';
        END IF;
        SELECT string_agg(format('%s (server %I)', f.ftrelid::regclass, v.srvname), ', ') INTO bad
        FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
        JOIN pg_foreign_data_wrapper w ON w.oid = v.srvfdw
        WHERE f.ftrelid = ANY (partitions) AND w.fdwname <> 'postgres_fdw';
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot hide the rows that leave the shards of %: not postgres_fdw: %', parent, bad
                USING ERRCODE = 'feature_not_supported';
        END IF;
        s.shard_options := ARRAY(SELECT (SELECT coalesce(f.ftoptions, '{}')::text FROM pg_foreign_table f WHERE f.ftrelid = u.x)
                                 FROM unnest(partitions) WITH ORDINALITY AS u(x, i) ORDER BY u.i);
    END IF;
    RETURN s;
END
$function$;

COMMENT ON FUNCTION reshard_plan_shard_views(reshard_state, regclass[], text) IS
'resharding: the plan''s checks of shard_views, decided where the shards allow it (internal)';
