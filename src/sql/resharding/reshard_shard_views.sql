-- src/sql/resharding/reshard_shard_views.sql
--	reshard_shard_views: the rows that leave a shard hidden at the
--	cutover instead of deleted (internal)

-- reshard_add_partition and reshard_remove_partition with shard_views
-- (docs/resharding.md, "Shards: hiding the rows that leave or enter").  On
-- the server of each foreign partition of the old layout, through dblink
-- as the table's owner (its user mapping), the engine makes, next to the
-- shard's table t (schema s, key column k, o the foreign partition's OID
-- here; each name below ends in a hash of its own, reshard_object_name:
-- no other role can make an object of that name first):
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
--   - s.reshard_untimed_o: a view whose row turns the timeouts of the
--     owner's role or database there off for the rest of the transaction
--     (reshard_remote_untimed), the owner's only: the engine reads it
--     through postgres_fdw early in its transactions that read or write
--     there for long (action untime, below);
--   - triggers reshard_direct_writes_o and reshard_direct_truncate_o on t,
--     which call reshard_refuse_direct_o().  From the copy on, the rows of
--     t change only through this server (whose writes the engine logs), so
--     the rows hidden are exactly their copies;
--   - a move from the server: s.reshard_leave_o(back), which renames t
--     (known by its OID there) to s.reshard_gone_o once, or back (back:
--     an undo), and s.reshard_leaving_o, a view whose row
--     calls it: the cutover reads it through postgres_fdw (action leave),
--     so that from the cutover on nobody reads or writes t by its name
--     there (an application routing keys by an older layout gets
--     undefined_table, not the rows as they were at the cutover); the
--     foreign partition here reads a view bound to t, which the name does
--     not change.  The finish drops s.reshard_gone_o.
-- What the default privileges of s grant on these is revoked in the
-- transaction on the shard that makes them, and what the schema's here
-- grant on the foreign tables here in the one that makes those; then the
-- views (security_invoker) and the mark function are granted to whoever
-- may read or write t, and the hidden keys to whoever may read t's key.
-- (A role that may write t can still call the mark function itself and
-- write t directly: the triggers guard against mistakes, not against a
-- role that may write the table and means to get around them.)
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
--   record   the objects above recorded for the cleaner,
--            before anything is made (after the plan: they commit with the
--            state row, before the setup makes them), policy always; and a
--            move's table there that the partition leaves, policy
--            on_success (its finish drops it, with its triggers);
--   create   the objects on the shards (above), the foreign tables on
--            their hidden keys here, and removing, the foreign tables on
--            their incoming rows, which replace the incoming tables of
--            reshard_phase_setup (setup);
--   point    each foreign partition at its view before the cutover
--            (capture; the engine holds ACCESS EXCLUSIVE on them);
--   arm      the triggers that refuse the direct writes (first copy step;
--            lock_ms: the longest the shard waits for its table); then,
--            removing, no row of another bucket in a shard rows enter;
--   leave    a move's cutover: t renamed away on its server, in the
--            cutover's remote transaction there (above);
--   untime   the rest of this transaction on the shards without their
--            timeouts (the copy's and the verification's, after their
--            snapshots: the copy, on the shard it reads next, and
--            removing, on those the removed partition's rows enter; a
--            round of the catch-up's, also those before a cutover
--            attempt);
--   clean    adding, the hidden rows deleted on the shards, in batches of
--            transactions of their own there (after the cutover);
--   unpour   removing, the same: the incoming rows deleted (to undo);
--   restore  the triggers dropped (a move's table given its name back
--            first), each foreign partition pointed back at its table
--            (after clean, or to undo; the engine holds ACCESS EXCLUSIVE
--            on them).
-- The objects on the shards go by their records (src/resharding/cleanup.c),
-- after restore.
-- Each statement on a shard can be done again, so that an action cut short
-- is done again; create starts from an empty list of hidden keys (one a
-- create cut short left would hide rows that stay, and their deletion
-- after the cutover would delete them; another resharding's has another
-- name).
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
    columns text;   -- of a foreign table on the shard's table (reshard_foreign_columns)
    current_options text[];
    original text[];
    key_type text;
    hidden_rows bigint;
    untimed bigint;     -- (the rows of the untimed view read)
    leaving bigint;     -- (the rows of the leaving view read)
    remote_oid oid;     -- (a move's table on the server it leaves, there)
    next_source int;    -- (the index of the source the copy copies next, as the engine finds it)
    remote_view text;
    misplaced bigint;
    names text[];   -- the names of what is made for a foreign partition (reshard_object_name), by kind
    q text[];       -- the same, schema-qualified on its shard and quoted
    revoke_sql text;    -- (reshard_remote_revoke)
    g record;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup', 'capture', 'copy', 'catch up', 'verify', 'cutover', 'finish', 'undo']);
    SELECT quote_ident(n.nspname) INTO dblink FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
    WHERE x.extname = 'dblink';
    IF dblink IS NULL THEN
        RAISE EXCEPTION 'extension dblink is not installed' USING ERRCODE = 'undefined_object';
    END IF;
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = s.parent;
    next_source := (SELECT min(x.i) FROM unnest(s.sources) WITH ORDINALITY AS x(source, i)
                    WHERE x.i > s.sources_copied AND x.source IS NOT NULL);
    -- The foreign partitions of the old layout: their index in s.sources,
    -- the server, the shard's table (schema, name), its key column, and
    -- whether rows enter it.
    FOR r IN SELECT u.i::int AS i, u.source, v.srvname AS server,
                    coalesce((SELECT substr(x, 13) FROM unnest(u.options::text[]) AS x WHERE x LIKE 'schema\_name=%'),
                             n.nspname) AS remote_schema,
                    coalesce((SELECT substr(x, 12) FROM unnest(u.options::text[]) AS x WHERE x LIKE 'table\_name=%'),
                             c.relname) AS remote_table,
                    coalesce((SELECT substr(x, 13) FROM unnest(a.attfdwoptions) AS x WHERE x LIKE 'column\_name=%'),
                             a.attname) AS remote_key,
                    s.operation = 'remove' AND u.source <> s.partition AS receives
             FROM unnest(s.sources, s.shard_options) WITH ORDINALITY AS u(source, options, i)
             JOIN pg_class c ON c.oid = u.source
             JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_foreign_table f ON f.ftrelid = u.source
             JOIN pg_foreign_server v ON v.oid = f.ftserver
             JOIN pg_attribute a ON a.attrelid = u.source AND quote_ident(a.attname) = s.key AND NOT a.attisdropped
             WHERE u.options IS NOT NULL
               -- (untime in the copy: the shard it reads, and removing, those
               -- the removed partition's rows enter when it copies them)
               AND (action <> 'untime' OR s.phase <> 'copy' OR u.i = next_source
                    OR s.operation = 'remove' AND u.source <> s.partition AND s.sources[next_source] = s.partition)
             ORDER BY u.i LOOP
        rs := quote_ident(r.remote_schema);
        o := r.source::text;
        remote := format('%s.%I', rs, r.remote_table);
        current_options := (SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = r.source);
        original := s.shard_options[r.i]::text[];
        -- 1 hidden, 2 hidden_key, 3 mark, 4 refuse_direct, 5 all, 6 shown, 7 incoming, 8 direct_writes, 9 direct_truncate,
        -- 10 untimed, 11 leave, 12 leaving, 13 gone
        SELECT array_agg(@extschema@.reshard_object_name(s, u.k, r.source) ORDER BY u.i) INTO names
        FROM unnest(ARRAY['hidden', 'hidden_key', 'mark', 'refuse_direct', 'all', 'shown', 'incoming',
                          'direct_writes', 'direct_truncate', 'untimed', 'leave', 'leaving', 'gone']) WITH ORDINALITY AS u(k, i);
        q := ARRAY(SELECT format('%s.%I', rs, x) FROM unnest(names) WITH ORDINALITY AS u(x, i) ORDER BY i);
        CASE action
        WHEN 'record' THEN
            -- (in the order made: the cleaner drops them newest first, the
            -- views before the functions and the tables they use, the
            -- triggers before their function.  A move's table there goes
            -- with its triggers, before them.  restore drops the triggers
            -- first, in a transaction of its own: their records take no
            -- lock there then, which this transaction's writes through
            -- postgres_fdw may hold)
            s := @extschema@.reshard_cleanup_record(s, 'table', q[1], r.server, 'always');
            s := @extschema@.reshard_cleanup_record(s, 'function', q[3] || '()', r.server, 'always');
            s := @extschema@.reshard_cleanup_record(s, 'function', q[4] || '()', r.server, 'always');
            s := @extschema@.reshard_cleanup_record(s, 'trigger', remote, r.server, 'always', NULL, names[8]);
            s := @extschema@.reshard_cleanup_record(s, 'trigger', remote, r.server, 'always', NULL, names[9]);
            IF s.operation = 'move' THEN
                s := @extschema@.reshard_cleanup_record(s, 'function', q[11] || '(boolean)', r.server, 'always');
                s := @extschema@.reshard_cleanup_record(s, 'view', q[12], r.server, 'always');
                -- (under the name the cutover gives it)
                s := @extschema@.reshard_cleanup_record(s, 'table', q[13], r.server, 'on_success');
            END IF;
            FOREACH remote_view IN ARRAY ARRAY[q[5], q[6], q[7], q[10]] LOOP
                s := @extschema@.reshard_cleanup_record(s, 'view', remote_view, r.server, 'always');
            END LOOP;
        WHEN 'create' THEN
            revoke_sql := @extschema@.reshard_remote_revoke(ARRAY[q[1], q[5], q[6], q[7], q[10]], ARRAY[q[3] || '()', q[4] || '()']);
            -- (%5$s .. %11$s: q[1] .. q[7]; %12$I: the index on the hidden keys)
            EXECUTE @extschema@.reshard_remote_sql(r.server, format($remote$
                DROP VIEW IF EXISTS %10$s, %11$s;
                DROP TABLE IF EXISTS %5$s;
                CREATE TABLE %5$s AS SELECT %3$I AS key FROM %4$s WITH NO DATA;
                CREATE INDEX %12$I ON %5$s (key);
                CREATE OR REPLACE FUNCTION %7$s() RETURNS boolean LANGUAGE sql VOLATILE
                    SET search_path = pg_catalog, pg_temp
                    AS 'SELECT pg_catalog.set_config(''subsetting_reshard.through_%2$s'', ''on'', true) IS NOT NULL';
                CREATE OR REPLACE FUNCTION %8$s() RETURNS trigger LANGUAGE plpgsql
                    SET search_path = pg_catalog, pg_temp
                    AS %13$L;
                CREATE OR REPLACE VIEW %9$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t WHERE %7$s()
                    WITH CASCADED CHECK OPTION;
                CREATE VIEW %10$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t
                    WHERE NOT EXISTS (SELECT FROM %5$s AS h WHERE h.key = t.%3$I)
                      AND %7$s()
                    WITH CASCADED CHECK OPTION;
                CREATE VIEW %11$s WITH (security_invoker = true) AS
                    SELECT t.*, t.ctid AS ctid FROM %4$s AS t
                    WHERE EXISTS (SELECT FROM %5$s AS h WHERE h.key = t.%3$I)
                      AND %7$s()
                    WITH CASCADED CHECK OPTION;
                CREATE OR REPLACE VIEW %17$s WITH (security_invoker = true) AS SELECT 1 AS untimed WHERE %18$s;
                %16$s;
                DO %15$L;
                DO %14$L;
                $remote$,
                rs, o, r.remote_key, remote, q[1], q[2], q[3], q[4], q[5], q[6], q[7], names[2],
                format($trigger$BEGIN
                    IF pg_catalog.current_setting('subsetting_reshard.through_%s', true) IS DISTINCT FROM 'on' THEN
                        RAISE EXCEPTION 'cannot write to %% directly while it is %s', TG_TABLE_NAME::text
                            USING ERRCODE = 'object_in_use',
                                  DETAIL = %L,
                                  HINT = %L;
                    END IF;
                    RETURN NULL;
                END$trigger$, o,
                CASE s.operation WHEN 'move' THEN 'moved' ELSE 'resharded' END,
                CASE s.operation
                    WHEN 'move' THEN 'This table is moving, whole, to another server; until then it is written to only through the partitioned table it is a partition of, and then it is dropped.'
                    ELSE 'Rows of this table are moving to another shard; the table is written to only through the partitioned table it is a partition of.' END,
                CASE s.operation
                    WHEN 'move' THEN 'Write through that table: it reaches the partition wherever it is.'
                    ELSE 'Write through that table, or wait until its resharding ended.' END),
                -- whoever may read the key of the table may read the hidden keys
                format($grants$DECLARE g text;
                BEGIN
                    FOR g IN SELECT pg_catalog.quote_ident(rolname) FROM pg_catalog.pg_roles
                             WHERE pg_catalog.has_column_privilege(oid, %L::pg_catalog.regclass, %L, 'SELECT')
                               AND rolname !~ '^pg_' LOOP
                        EXECUTE %L || g;
                    END LOOP;
                END$grants$, remote, r.remote_key, format('GRANT SELECT ON %s TO ', q[1])),
                -- whoever may read or write the table may use the views (as
                -- himself: security_invoker) and the function that marks his
                -- writes (a trigger's function needs no grant to fire)
                format($grants$DECLARE g text;
                BEGIN
                    FOR g IN SELECT pg_catalog.quote_ident(rolname) FROM pg_catalog.pg_roles
                             WHERE (pg_catalog.has_table_privilege(oid, %1$L::pg_catalog.regclass, 'SELECT, INSERT, UPDATE, DELETE')
                                    OR pg_catalog.has_any_column_privilege(oid, %1$L::pg_catalog.regclass, 'SELECT, INSERT, UPDATE'))
                               AND rolname !~ '^pg_' LOOP
                        EXECUTE %2$L || g;
                        EXECUTE %3$L || g;
                    END LOOP;
                END$grants$, remote, format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s, %s, %s TO ', q[5], q[6], q[7]),
                format('GRANT EXECUTE ON FUNCTION %s() TO ', q[3])),
                -- what the schema's default privileges granted on them, revoked
                -- (in the transaction that made them, before the grants)
                revoke_sql, q[10], @extschema@.reshard_remote_untimed()));
            -- (a move from the server hides nothing: it refuses direct writes,
            -- and at its cutover renames the table away, by the row of a view
            -- read through postgres_fdw in the cutover's remote transaction
            -- there: action leave)
            IF s.operation = 'move' THEN
                -- (the table known by its OID there, not by a name: another
                -- role that may create in its schema could take either)
                EXECUTE @extschema@.reshard_remote_query(r.server, format('SELECT %L::pg_catalog.regclass::pg_catalog.oid', remote), 'o oid')
                INTO remote_oid;
                EXECUTE @extschema@.reshard_remote_sql(r.server, format($remote$
                    CREATE OR REPLACE FUNCTION %1$s(back boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE
                        SET search_path = pg_catalog, pg_temp
                        AS %2$L;
                    CREATE OR REPLACE VIEW %3$s WITH (security_invoker = true) AS SELECT 1 AS gone WHERE %1$s(false);
                    %4$s$remote$,
                    q[11],
                    -- (renamed away, and what an event trigger there granted
                    -- for it taken back: the rights of the roles but the
                    -- owner on it and its columns, before and after; back:
                    -- given its name again, if it has the one it was given)
                    format($leave$DECLARE
                        t pg_catalog.oid := %2$s;
                        current_name name := (SELECT relname FROM pg_catalog.pg_class WHERE oid = t);
                        rights text := 'SELECT a.attname, x.grantee, x.privilege_type
                                        FROM pg_catalog.pg_class c
                                        JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND NOT a.attisdropped,
                                             pg_catalog.aclexplode(a.attacl) AS x
                                        WHERE c.oid = $1 AND x.grantee <> c.relowner
                                        UNION ALL
                                        SELECT NULL, x.grantee, x.privilege_type
                                        FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) AS x
                                        WHERE c.oid = $1 AND x.grantee <> c.relowner';
                        before text[];
                        x record;
                    BEGIN
                        PERFORM %1$s;
                        IF back THEN
                            IF current_name = %4$L THEN
                                IF pg_catalog.to_regclass(%3$L) IS NOT NULL THEN
                                    RAISE EXCEPTION 'cannot undo the move of %%: a table of that name was made meanwhile', %3$L
                                        USING ERRCODE = 'duplicate_table',
                                              DETAIL = pg_catalog.format('The move renamed the table to %%s, which must have its name back.', %4$L),
                                              HINT = 'Rename or drop the table made, then call reshard_abort again.';
                                END IF;
                                EXECUTE pg_catalog.format('ALTER TABLE %%s RENAME TO %%I', t::pg_catalog.regclass, %5$L);
                            END IF;
                        ELSIF current_name IS DISTINCT FROM %4$L AND current_name IS NOT NULL THEN
                            EXECUTE 'SELECT pg_catalog.array_agg(r::text) FROM (' || rights || ') AS r' INTO before USING t;
                            EXECUTE pg_catalog.format('ALTER TABLE %%s RENAME TO %%I', t::pg_catalog.regclass, %4$L);
                            FOR x IN EXECUTE 'SELECT * FROM (' || rights || ') AS r WHERE r::text <> ALL ($2)' USING t, coalesce(before, '{}') LOOP
                                EXECUTE pg_catalog.format('REVOKE %%s%%s ON %%s FROM %%s', x.privilege_type,
                                                          ' (' || pg_catalog.quote_ident(x.attname) || ')', t::pg_catalog.regclass,
                                                          CASE x.grantee WHEN 0 THEN 'PUBLIC'
                                                               ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(x.grantee)) END);
                            END LOOP;
                        END IF;
                        RETURN true;
                    END$leave$, @extschema@.reshard_remote_untimed(), remote_oid, remote, names[13], r.remote_table),
                    q[12], @extschema@.reshard_remote_revoke(ARRAY[q[12]], ARRAY[q[11] || '(boolean)'])));
                CONTINUE;
            END IF;
            SELECT format_type(atttypid, atttypmod) INTO STRICT key_type FROM pg_attribute
            WHERE attrelid = r.source AND quote_ident(attname) = s.key;
            EXECUTE format('CREATE FOREIGN TABLE %I.%I (key %s) SERVER %I OPTIONS (schema_name %L, table_name %L, batch_size %L)',
                           schema_name, names[1], key_type, r.server, r.remote_schema, names[1], '1000');
            s.hidden_keys[r.i] := format('%I.%I', schema_name, names[1])::regclass;
            s := @extschema@.reshard_cleanup_record(s, 'foreign table', format('%I.%I', schema_name, names[1]), NULL, 'always');
            -- Removing, the rows that enter a foreign partition that stays
            -- are written into its shard's table, hidden, not into a table here.
            IF r.receives THEN
                EXECUTE format('DROP TABLE %s', s.shadows[r.i]::regclass);
                columns := @extschema@.reshard_foreign_columns(s.parent::regclass, r.source::regclass);
                EXECUTE format('CREATE FOREIGN TABLE %I.%I (%s) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                               schema_name, names[7], columns, r.server, r.remote_schema, names[7]);
                s.shadows[r.i] := format('%I.%I', schema_name, names[7])::regclass;
                -- (the table it replaces was recorded by the setup: this one, of its name, is another)
                s := @extschema@.reshard_cleanup_record(s, 'foreign table', format('%I.%I', schema_name, names[7]), NULL, 'always');
            END IF;
        WHEN 'point' THEN
            EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (%s schema_name %L, %s table_name %L)', r.source::regclass,
                           CASE WHEN EXISTS (SELECT FROM unnest(current_options) AS x WHERE x LIKE 'schema\_name=%') THEN 'SET' ELSE 'ADD' END,
                           r.remote_schema,
                           CASE WHEN EXISTS (SELECT FROM unnest(current_options) AS x WHERE x LIKE 'table\_name=%') THEN 'SET' ELSE 'ADD' END,
                           CASE WHEN r.receives THEN names[6] ELSE names[5] END);
        WHEN 'arm' THEN
            EXECUTE @extschema@.reshard_remote_sql(r.server, format($remote$
                SET LOCAL lock_timeout = %3$L;
                CREATE OR REPLACE TRIGGER %5$I AFTER INSERT OR UPDATE OR DELETE ON %4$s
                    FOR EACH ROW EXECUTE FUNCTION %1$s();
                CREATE OR REPLACE TRIGGER %6$I BEFORE TRUNCATE ON %4$s
                    FOR EACH STATEMENT EXECUTE FUNCTION %1$s();
                $remote$, q[4], o, lock_ms || 'ms', remote, names[8], names[9]));
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
        WHEN 'untime' THEN
            -- (through a foreign table here, for this transaction:
            -- postgres_fdw reads the shard over the same connection, in the
            -- same remote transaction; a view the cleaner dropped already
            -- leaves the timeouts on)
            BEGIN
                EXECUTE format('CREATE FOREIGN TABLE %I.%I (untimed int) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                               schema_name, names[10], r.server, r.remote_schema, names[10]);
                EXECUTE format('SELECT count(*) FROM %I.%I', schema_name, names[10]) INTO untimed;
                EXECUTE format('DROP FOREIGN TABLE %I.%I', schema_name, names[10]);
            EXCEPTION WHEN undefined_table THEN
                untimed := 1;
            END;
            IF untimed <> 1 THEN
                RAISE EXCEPTION 'could not turn the timeouts of server % off', r.server;
            END IF;
        WHEN 'leave' THEN
            CONTINUE WHEN s.operation <> 'move';
            EXECUTE format('CREATE FOREIGN TABLE %I.%I (gone int) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                           schema_name, names[12], r.server, r.remote_schema, names[12]);
            EXECUTE format('SELECT count(*) FROM %I.%I', schema_name, names[12]) INTO leaving;
            EXECUTE format('DROP FOREIGN TABLE %I.%I', schema_name, names[12]);
            IF leaving <> 1 THEN
                RAISE EXCEPTION 'could not rename % away on server %', remote, r.server;
            END IF;
        WHEN 'clean', 'unpour' THEN
            CONTINUE WHEN r.receives <> (action = 'unpour') OR s.operation = 'remove' AND r.source = s.partition;
            LOOP
                EXECUTE @extschema@.reshard_remote_query(r.server, format($remote$
                    WITH mark AS MATERIALIZED (SELECT pg_catalog.set_config('subsetting_reshard.through_%2$s', 'on', true)),
                         k AS (DELETE FROM %1$s
                               WHERE ctid = ANY (ARRAY(SELECT ctid FROM %1$s LIMIT 10000))
                               RETURNING key),
                         d AS (DELETE FROM %3$s WHERE %4$I IN (SELECT key FROM k) AND EXISTS (SELECT FROM mark))
                    SELECT pg_catalog.count(*) FROM k
                    $remote$, q[1], o, remote, r.remote_key), 'n bigint')
                INTO hidden_rows;
                EXIT WHEN hidden_rows = 0;
            END LOOP;
        WHEN 'restore' THEN
            -- (a partition moved from the server: its table there, renamed
            -- away, keeps refusing direct writes until it is dropped; a
            -- move undone gives it its name back first, if a cutover whose
            -- COMMIT was done there, and not here, renamed it)
            IF s.operation <> 'move' OR s.phase <> 'finish' THEN
            EXECUTE @extschema@.reshard_remote_sql(r.server, format($remote$
                SET LOCAL lock_timeout = %3$L;
                %5$s
                DROP TRIGGER IF EXISTS %1$I ON %4$s;
                DROP TRIGGER IF EXISTS %2$I ON %4$s;
                $remote$, names[8], names[9], lock_ms || 'ms', remote,
                CASE WHEN s.operation = 'move' THEN format('DO %L;', format($back$BEGIN
                    IF pg_catalog.to_regprocedure(%1$L) IS NOT NULL THEN
                        PERFORM %2$s(true);
                    END IF;
                END$back$, q[11] || '(boolean)', q[11])) ELSE '' END));
            END IF;
            IF EXISTS (SELECT FROM unnest(current_options) AS x
                       WHERE x IN ('table_name=' || names[5], 'table_name=' || names[6])) THEN
                EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (%s, %s)', r.source::regclass,
                               CASE WHEN EXISTS (SELECT FROM unnest(original) AS x WHERE x LIKE 'schema\_name=%')
                                    THEN format('SET schema_name %L', r.remote_schema) ELSE 'DROP schema_name' END,
                               CASE WHEN EXISTS (SELECT FROM unnest(original) AS x WHERE x LIKE 'table\_name=%')
                                    THEN format('SET table_name %L', r.remote_table) ELSE 'DROP table_name' END);
            END IF;
            -- (the foreign table on its hidden keys, no longer written, goes by its record)
            s.hidden_keys[r.i] := NULL;
        ELSE
            RAISE EXCEPTION 'unknown action %', action;
        END CASE;
    END LOOP;
    IF action = 'create' THEN
        -- Nor here may anybody but the owner use the foreign tables made
        -- (what the schema's default privileges or an event trigger granted
        -- revoked, as reshard_phase_setup does).
        FOR g IN SELECT DISTINCT c.oid, a.grantee
                 FROM pg_class c,
                      LATERAL (SELECT c.relacl UNION ALL SELECT attacl FROM pg_attribute WHERE attrelid = c.oid) AS x(acl),
                      aclexplode(x.acl) AS a
                 WHERE c.oid = ANY (s.hidden_keys || s.shadows) AND c.oid IS DISTINCT FROM s.partition
                   AND c.relkind = 'f' AND a.grantee <> c.relowner LOOP
            EXECUTE format('REVOKE ALL ON TABLE %s FROM %s', g.oid::regclass,
                           CASE g.grantee WHEN 0 THEN 'PUBLIC' ELSE g.grantee::regrole::text END);
        END LOOP;
    ELSIF action = 'restore' THEN
        s.hidden_keys := NULL;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_shard_views(reshard_state, text, int) FROM PUBLIC;

COMMENT ON FUNCTION reshard_shard_views(reshard_state, text, int) IS
'resharding with shard_views: the views, hidden keys and triggers on the shards made, used and removed (internal)';
