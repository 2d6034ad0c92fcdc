-- src/sql/resharding/reshard_shard_views.sql
--	reshard_shard_views: the rows that leave a shard hidden at the
--	cutover instead of deleted (internal)

-- reshard_add_partition and reshard_remove_partition with shard_views
-- (docs/resharding.md, "Shards: hiding the rows that leave or enter").  On
-- the server of each foreign partition of the old layout, through dblink
-- as the table's owner (its user mapping), the engine makes, next to the
-- shard's table t (schema s, key column k, o the foreign partition's OID
-- here):
--   - s.reshard_hidden_o (key): the keys of the rows to hide, written
--     through a foreign table here of the same name: adding, the rows that
--     leave t (with the copy and each change the catch-up applies; a key of
--     another bucket hidden too many does no harm); removing, the rows that
--     enter t, copied into it before the cutover (the same way);
--   - s.reshard_mark_o(): marks the transaction (a setting) as one that
--     writes through this server; s.reshard_refuse_direct_o(): fails one
--     that is not marked;
--   - views of t that call reshard_mark_o() in their WHERE and their check
--     option, and show t's ctid (postgres_fdw updates and deletes by it):
--     s.reshard_all_o, all its rows; s.reshard_shown_o, the rows whose key
--     is not hidden; s.reshard_incoming_o, the rows whose key is hidden
--     (hidden before the row is written there);
--     security_invoker: whoever reads them needs the privileges on t he
--     needs without them;
--   - triggers reshard_direct_writes_o and reshard_direct_truncate_o on t,
--     which call reshard_refuse_direct_o().  From the copy on, the rows of
--     t change only through this server (whose writes the engine logs), so
--     the rows hidden are exactly their copies.
-- Adding, the foreign partition is pointed at reshard_all_o at the
-- capture and at reshard_shown_o at the cutover (reshard_phase_cutover),
-- and back at t after the rows hidden were deleted, online, in batches,
-- on the shard.  Removing, a foreign partition that stays is pointed at
-- reshard_shown_o at the capture, the rows that enter it are written into
-- t through reshard_incoming_o (the table filled for its bucket: a foreign
-- table here), and it is pointed at reshard_all_o at the cutover; the
-- removed one is pointed at reshard_all_o (its rows are all copied, and its
-- server refuses direct writes: the cutover need not read it).  The
-- cutover deletes and pours nothing on the shards.

-- As the table's owner.  action:
--   create   the objects on the shards (above), the foreign tables on
--            their hidden keys here, and removing, the foreign tables on
--            their incoming rows, which replace the incoming tables of
--            reshard_phase_setup (setup);
--   point    each foreign partition at its view before the cutover
--            (capture; the engine holds ACCESS EXCLUSIVE on them);
--   arm      the triggers that refuse the direct writes (first copy step;
--            lock_ms: the longest the shard waits for its table); then,
--            removing, no row of another bucket in a shard rows enter;
--   clean    adding, the hidden rows deleted on the shards, in batches of
--            transactions of their own there (after the cutover);
--   unpour   removing, the same: the incoming rows deleted (to undo);
--   restore  the triggers dropped, each foreign partition pointed back at
--            its table, the foreign tables here dropped (after clean, or
--            to undo; the engine holds ACCESS EXCLUSIVE on them);
--   drop     the objects on the shards dropped (after restore committed).
-- Each statement on a shard can be done again, so that an action cut short
-- is done again; create starts from an empty list of hidden keys (a list
-- an earlier resharding left would hide rows that stay, and their
-- deletion after the cutover would delete them).
CREATE FUNCTION reshard_shard_views(s reshard_state, action text, lock_ms int) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
    dblink text;
    schema_name name;
    rs text;
    o text;
    remote text;
    current_options text[];
    original text[];
    key_type text;
    hidden_rows bigint;
    misplaced bigint;
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['setup', 'capture', 'copy', 'finish', 'undo'];
    SELECT quote_ident(n.nspname) INTO dblink FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
    WHERE x.extname = 'dblink';
    IF dblink IS NULL THEN
        RAISE EXCEPTION 'extension dblink is not installed' USING ERRCODE = 'undefined_object';
    END IF;
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = s.parent;
    -- The foreign partitions of the old layout: their index in s.sources,
    -- the server, the shard's table (schema, name), its key column, the
    -- foreign table here on the hidden keys, and whether rows enter it.
    FOR r IN SELECT u.i::int AS i, u.source, v.srvname AS server,
                    coalesce((SELECT substr(x, 13) FROM unnest(u.options::text[]) AS x WHERE x LIKE 'schema\_name=%'),
                             n.nspname) AS remote_schema,
                    coalesce((SELECT substr(x, 12) FROM unnest(u.options::text[]) AS x WHERE x LIKE 'table\_name=%'),
                             c.relname) AS remote_table,
                    coalesce((SELECT substr(x, 13) FROM unnest(a.attfdwoptions) AS x WHERE x LIKE 'column\_name=%'),
                             a.attname) AS remote_key,
                    s.hidden_keys[u.i] AS hidden,
                    s.operation = 'remove' AND u.source <> s.partition AS receives
             FROM unnest(s.sources, s.shard_options) WITH ORDINALITY AS u(source, options, i)
             JOIN pg_class c ON c.oid = u.source
             JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_foreign_table f ON f.ftrelid = u.source
             JOIN pg_foreign_server v ON v.oid = f.ftserver
             JOIN pg_attribute a ON a.attrelid = u.source AND quote_ident(a.attname) = s.key AND NOT a.attisdropped
             WHERE u.options IS NOT NULL
             ORDER BY u.i LOOP
        rs := quote_ident(r.remote_schema);
        o := r.source::text;
        remote := format('%s.%I', rs, r.remote_table);
        current_options := (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = r.source);
        original := s.shard_options[r.i]::text[];
        CASE action
        WHEN 'create' THEN
            EXECUTE format('SELECT %s.dblink_exec(%L, %L)', dblink, r.server, format($remote$
                DROP VIEW IF EXISTS %1$s.reshard_shown_%2$s, %1$s.reshard_incoming_%2$s;
                DROP TABLE IF EXISTS %1$s.reshard_hidden_%2$s;
                CREATE TABLE %1$s.reshard_hidden_%2$s AS SELECT %3$I AS key FROM %4$s WITH NO DATA;
                CREATE INDEX reshard_hidden_%2$s_key ON %1$s.reshard_hidden_%2$s (key);
                CREATE OR REPLACE FUNCTION %1$s.reshard_mark_%2$s() RETURNS boolean LANGUAGE sql VOLATILE
                    SET search_path = pg_catalog, pg_temp
                    AS 'SELECT pg_catalog.set_config(''subsetting_reshard.through_%2$s'', ''on'', true) IS NOT NULL';
                CREATE OR REPLACE FUNCTION %1$s.reshard_refuse_direct_%2$s() RETURNS trigger LANGUAGE plpgsql
                    SET search_path = pg_catalog, pg_temp
                    AS %5$L;
                CREATE OR REPLACE VIEW %1$s.reshard_all_%2$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t WHERE %1$s.reshard_mark_%2$s()
                    WITH CASCADED CHECK OPTION;
                CREATE VIEW %1$s.reshard_shown_%2$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t
                    WHERE NOT EXISTS (SELECT FROM %1$s.reshard_hidden_%2$s AS h WHERE h.key = t.%3$I)
                      AND %1$s.reshard_mark_%2$s()
                    WITH CASCADED CHECK OPTION;
                CREATE VIEW %1$s.reshard_incoming_%2$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t
                    WHERE EXISTS (SELECT FROM %1$s.reshard_hidden_%2$s AS h WHERE h.key = t.%3$I)
                      AND %1$s.reshard_mark_%2$s()
                    WITH CASCADED CHECK OPTION;
                GRANT SELECT, INSERT, UPDATE, DELETE
                    ON %1$s.reshard_all_%2$s, %1$s.reshard_shown_%2$s, %1$s.reshard_incoming_%2$s TO PUBLIC;
                DO %6$L;
                $remote$,
                rs, o, r.remote_key, remote,
                format($trigger$BEGIN
                    IF pg_catalog.current_setting('subsetting_reshard.through_%s', true) IS DISTINCT FROM 'on' THEN
                        RAISE EXCEPTION 'cannot write to %% directly while it is resharded', TG_TABLE_NAME::text
                            USING ERRCODE = 'object_in_use',
                                  DETAIL = 'Rows of this table are moving to another shard; the table is written to only through the partitioned table it is a partition of.',
                                  HINT = 'Write through that table, or wait until its resharding ended.';
                    END IF;
                    RETURN NULL;
                END$trigger$, o),
                -- whoever may read the key of the table may read the hidden keys
                format($grants$DECLARE g text;
                BEGIN
                    FOR g IN SELECT quote_ident(rolname) FROM pg_catalog.pg_roles
                             WHERE pg_catalog.has_column_privilege(oid, %L::pg_catalog.regclass, %L, 'SELECT')
                               AND rolname !~ '^pg_' LOOP
                        EXECUTE 'GRANT SELECT ON %s.reshard_hidden_%s TO ' || g;
                    END LOOP;
                END$grants$, remote, r.remote_key, rs, o)));
            SELECT format_type(atttypid, atttypmod) INTO STRICT key_type FROM pg_attribute
            WHERE attrelid = r.source AND quote_ident(attname) = s.key;
            EXECUTE format('CREATE FOREIGN TABLE %I.%I (key %s) SERVER %I OPTIONS (schema_name %L, table_name %L, batch_size %L)',
                           schema_name, 'reshard_hidden_' || o, key_type, r.server, r.remote_schema,
                           'reshard_hidden_' || o, '1000');
            s.hidden_keys[r.i] := format('%I.%I', schema_name, 'reshard_hidden_' || o)::regclass;
            -- Removing, the rows that enter a foreign partition that stays
            -- are written into its shard's table, hidden, not into a table here.
            IF r.receives THEN
                EXECUTE format('DROP TABLE %s', s.shadows[r.i]::regclass);
                EXECUTE (SELECT format('CREATE FOREIGN TABLE %I.%I (%s) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                                       schema_name, 'reshard_incoming_' || o,
                                       string_agg(format('%I %s OPTIONS (column_name %L)%s', a.attname,
                                                         format_type(a.atttypid, a.atttypmod),
                                                         coalesce((SELECT substr(x, 13) FROM unnest(fa.attfdwoptions) AS x
                                                                   WHERE x LIKE 'column\_name=%'), a.attname),
                                                         CASE WHEN a.attgenerated = 's'
                                                              THEN format(' GENERATED ALWAYS AS (%s) STORED',
                                                                          pg_get_expr(d.adbin, d.adrelid))
                                                              ELSE '' END),
                                                  ', ' ORDER BY a.attnum),
                                       r.server, r.remote_schema, 'reshard_incoming_' || o)
                         FROM pg_attribute a
                         JOIN pg_attribute fa ON fa.attrelid = r.source AND fa.attname = a.attname
                         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                         WHERE a.attrelid = s.parent AND a.attnum > 0 AND NOT a.attisdropped);
                s.shadows[r.i] := format('%I.%I', schema_name, 'reshard_incoming_' || o)::regclass;
            END IF;
        WHEN 'point' THEN
            EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (%s schema_name %L, %s table_name %L)', r.source::regclass,
                           CASE WHEN EXISTS (SELECT FROM unnest(current_options) AS x WHERE x LIKE 'schema\_name=%') THEN 'SET' ELSE 'ADD' END,
                           r.remote_schema,
                           CASE WHEN EXISTS (SELECT FROM unnest(current_options) AS x WHERE x LIKE 'table\_name=%') THEN 'SET' ELSE 'ADD' END,
                           CASE WHEN r.receives THEN 'reshard_shown_' ELSE 'reshard_all_' END || o);
        WHEN 'arm' THEN
            EXECUTE format('SELECT %s.dblink_exec(%L, %L)', dblink, r.server, format($remote$
                SET LOCAL lock_timeout = %3$L;
                CREATE OR REPLACE TRIGGER reshard_direct_writes_%2$s AFTER INSERT OR UPDATE OR DELETE ON %4$s
                    FOR EACH ROW EXECUTE FUNCTION %1$s.reshard_refuse_direct_%2$s();
                CREATE OR REPLACE TRIGGER reshard_direct_truncate_%2$s BEFORE TRUNCATE ON %4$s
                    FOR EACH STATEMENT EXECUTE FUNCTION %1$s.reshard_refuse_direct_%2$s();
                $remote$, rs, o, lock_ms || 'ms', remote));
            -- Removing, the rows written into it are found by their key
            -- (to verify them, and to delete them if the call is undone): a
            -- row of another bucket already there could be taken for one.
            -- From now on none can be written there.
            IF r.receives THEN
                EXECUTE format('SELECT count(*) FROM ONLY %s AS t WHERE (%s) IS DISTINCT FROM %s',
                               r.source::regclass, s.old_bucket_sql, r.i - 1)
                INTO misplaced;
                IF misplaced > 0 THEN
                    RAISE EXCEPTION 'foreign partition % of % holds % rows of other buckets', r.source::regclass,
                                    s.parent_name, misplaced
                        USING ERRCODE = 'check_violation',
                              DETAIL = 'Nothing was moved; the table is as it was.',
                              HINT = format('SELECT * FROM reshard_check(%L) lists them; move each by DELETE and INSERT through the parent.', s.parent_name);
                END IF;
            END IF;
        WHEN 'clean', 'unpour' THEN
            CONTINUE WHEN r.receives <> (action = 'unpour') OR s.operation = 'remove' AND r.source = s.partition;
            LOOP
                EXECUTE format('SELECT n FROM %s.dblink(%L, %L) AS x(n bigint)', dblink, r.server, format($remote$
                    WITH mark AS MATERIALIZED (SELECT pg_catalog.set_config('subsetting_reshard.through_%2$s', 'on', true)),
                         k AS (DELETE FROM %1$s.reshard_hidden_%2$s
                               WHERE ctid = ANY (ARRAY(SELECT ctid FROM %1$s.reshard_hidden_%2$s LIMIT 10000))
                               RETURNING key),
                         d AS (DELETE FROM %3$s WHERE %4$I IN (SELECT key FROM k) AND EXISTS (SELECT FROM mark))
                    SELECT count(*) FROM k
                    $remote$, rs, o, remote, r.remote_key))
                INTO hidden_rows;
                EXIT WHEN hidden_rows = 0;
            END LOOP;
        WHEN 'restore' THEN
            EXECUTE format('SELECT %s.dblink_exec(%L, %L)', dblink, r.server, format($remote$
                SET LOCAL lock_timeout = %3$L;
                DROP TRIGGER IF EXISTS reshard_direct_writes_%2$s ON %4$s;
                DROP TRIGGER IF EXISTS reshard_direct_truncate_%2$s ON %4$s;
                $remote$, rs, o, lock_ms || 'ms', remote));
            IF EXISTS (SELECT FROM unnest(current_options) AS x
                       WHERE x IN ('table_name=reshard_all_' || o, 'table_name=reshard_shown_' || o)) THEN
                EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (%s, %s)', r.source::regclass,
                               CASE WHEN EXISTS (SELECT FROM unnest(original) AS x WHERE x LIKE 'schema\_name=%')
                                    THEN format('SET schema_name %L', r.remote_schema) ELSE 'DROP schema_name' END,
                               CASE WHEN EXISTS (SELECT FROM unnest(original) AS x WHERE x LIKE 'table\_name=%')
                                    THEN format('SET table_name %L', r.remote_table) ELSE 'DROP table_name' END);
            END IF;
            IF r.hidden IS NOT NULL AND EXISTS (SELECT FROM pg_class WHERE oid = r.hidden) THEN
                EXECUTE format('DROP FOREIGN TABLE %s', r.hidden::regclass);
            END IF;
            s.hidden_keys[r.i] := NULL;
        WHEN 'drop' THEN
            EXECUTE format('SELECT %s.dblink_exec(%L, %L)', dblink, r.server, format($remote$
                DROP VIEW IF EXISTS %1$s.reshard_shown_%2$s, %1$s.reshard_incoming_%2$s, %1$s.reshard_all_%2$s;
                DROP FUNCTION IF EXISTS %1$s.reshard_mark_%2$s(), %1$s.reshard_refuse_direct_%2$s();
                DROP TABLE IF EXISTS %1$s.reshard_hidden_%2$s;
                $remote$, rs, o));
        ELSE
            RAISE EXCEPTION 'unknown action %', action;
        END CASE;
    END LOOP;
    IF action = 'restore' THEN
        s.hidden_keys := NULL;
    ELSIF action = 'drop' THEN
        s.shard_options := NULL;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_shard_views(reshard_state, text, int) FROM PUBLIC;

COMMENT ON FUNCTION reshard_shard_views(reshard_state, text, int) IS
'resharding with shard_views: the views, hidden keys and triggers on the shards made, used and removed (internal)';
