-- src/sql/placement/move_destination_guard.sql
--	move_destination_guard: the table a partition moves into on a server refuses direct writes (internal)

-- A partition moving to a server (partition_move): from the setup to the
-- cutover, the table the move made there holds copies of the partition's
-- rows, which the engine keeps equal to them; a row written there directly
-- would be lost at the cutover (deleted or changed) or attached as a
-- phantom (inserted).  So the table refuses every write but the engine's,
-- as the table of a partition leaving a server does (reshard_shard_views).
-- On the server, in the parent's schema, each name ending in a hash of its
-- own (reshard_object_name, for the partition's OID o):
--   - reshard_into_mark_o(): marks the transaction (a setting) as one of
--     the engine's, and turns the timeouts of the role's or the database's
--     there off for it (reshard_remote_untimed: postgres_fdw sets none);
--     the engine's connections through dblink and its own
--     (reshard_copy_rows) set the setting themselves;
--   - reshard_into_marker_o: a view whose row calls it: the engine reads it
--     through postgres_fdw before it writes the table through postgres_fdw
--     (the catch-up, the cutover), in the same remote transaction;
--   - reshard_into_cut_o: a table, empty until the cutover writes a row
--     into it through postgres_fdw, in the transaction that attaches the
--     table here: from then on the table is a partition, written through the
--     parent by anybody who may, and the triggers let every write through;
--   - reshard_into_refuse_o(), a trigger function (SECURITY DEFINER: it
--     reads reshard_into_cut_o whoever writes), and the trigger
--     reshard_into_writes_o on the table, BEFORE INSERT OR UPDATE OR DELETE
--     OR TRUNCATE FOR EACH STATEMENT: once a statement, not once a row (the
--     copy's millions of rows fire nothing more than its one statement).
-- The finish drops them all (the table is then a plain table again), and
-- so does the undo, by their records (move_plan records them before they
-- are made: reshard_state_cleanup).  As the table's owner.  action:
--   create   the objects above (the setup, after the table is made);
--   mark     this transaction's writes through postgres_fdw marked;
--   cut      the row of reshard_into_cut_o written (the cutover);
--   link     the foreign keys the partition keeps made there, NOT VALID,
--            in the cutover's remote transaction (move_foreign_keys): by
--            reshard_into_link_o(), which the setup made with the view
--            reshard_into_links_o whose row calls it, where the partition
--            keeps foreign keys (partition_foreign_keys).
-- Not revoked from PUBLIC: the move's routines call it as the table's
-- owner, any role; it does only what dblink and postgres_fdw let its
-- caller do.
-- (As on a server a partition leaves, a role that may write the table can
-- call the mark function itself: the triggers guard against mistakes, not
-- against a role that may write the table and means to get around them.)
CREATE FUNCTION move_destination_guard(s reshard_state, action text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    schema_name name;
    remote_name name;   -- the table on the server
    setting text := 'subsetting_reshard.into_' || s.partition;
    mark text;
    marker text;
    cut text;
    refuse text;
    here text;          -- a foreign table here, for this transaction
    link text;
    links text;
    statements text;
    n bigint;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup', 'copy', 'catch up', 'verify', 'cutover', 'finish', 'undo']);
    IF s.server IS NULL THEN
        RETURN;
    END IF;
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.parent;
    -- (the table there: as the foreign table here names it, else as the setup names it)
    SELECT max(t.option_value) FILTER (WHERE t.option_name = 'table_name') INTO remote_name
    FROM pg_foreign_table f, pg_options_to_table(f.ftoptions) AS t WHERE f.ftrelid = s.shadows[s.bucket + 1];
    IF remote_name IS NULL THEN
        remote_name := (SELECT relname FROM pg_class WHERE oid = s.partition);
    END IF;
    link := format('%I.%I', schema_name, @extschema@.reshard_object_name(s, 'into_link', s.partition));
    links := @extschema@.reshard_object_name(s, 'into_links', s.partition);
    mark := format('%I.%I', schema_name, @extschema@.reshard_object_name(s, 'into_mark', s.partition));
    marker := @extschema@.reshard_object_name(s, 'into_marker', s.partition);
    cut := @extschema@.reshard_object_name(s, 'into_cut', s.partition);
    refuse := format('%I.%I', schema_name, @extschema@.reshard_object_name(s, 'into_refuse', s.partition));
    CASE action
    WHEN 'create' THEN
        EXECUTE @extschema@.reshard_remote_sql(s.server, format($remote$
            CREATE OR REPLACE FUNCTION %1$s() RETURNS boolean LANGUAGE sql VOLATILE
                SET search_path = pg_catalog, pg_temp
                AS %2$L;
            CREATE OR REPLACE VIEW %3$I.%4$I WITH (security_invoker = true) AS SELECT 1 AS marked WHERE %1$s();
            CREATE TABLE IF NOT EXISTS %3$I.%5$I (cut boolean);
            CREATE OR REPLACE FUNCTION %6$s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp
                AS %7$L;
            REVOKE ALL ON FUNCTION %6$s() FROM PUBLIC;
            CREATE OR REPLACE TRIGGER %8$I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %3$I.%9$I
                FOR EACH STATEMENT EXECUTE FUNCTION %6$s();
            %10$s$remote$,
            -- (and the rest of the transaction without the timeouts of the
            -- role's or the database's there: postgres_fdw sets none)
            mark, format('SELECT pg_catalog.set_config(%L, ''on'', true) IS NOT NULL AND %s',
                         setting, @extschema@.reshard_remote_untimed()),
            schema_name, marker, cut, refuse,
            format($trigger$BEGIN
                IF pg_catalog.current_setting(%L, true) IS DISTINCT FROM 'on' AND NOT EXISTS (SELECT FROM %I.%I) THEN
                    RAISE EXCEPTION 'cannot write to %% directly while it is moved here', TG_TABLE_NAME::text
                        USING ERRCODE = 'object_in_use',
                              DETAIL = 'A partition is moving into this table; until the move''s cutover the table holds copies of its rows, which only the move writes.',
                              HINT = 'Write through the partitioned table the partition is of: it reaches the partition wherever it is.';
                END IF;
                RETURN NULL;
            END$trigger$, setting, schema_name, cut),
            @extschema@.reshard_object_name(s, 'into_writes', s.partition), remote_name,
            -- (what the schema's default privileges granted on them revoked)
            @extschema@.reshard_remote_revoke(ARRAY[format('%I.%I', schema_name, marker), format('%I.%I', schema_name, cut)],
                                              ARRAY[mark || '()', refuse || '()'])));
        -- (the foreign keys the partition keeps, made there at the cutover:
        -- move_foreign_keys; a function that makes them and a view whose
        -- row calls it, read through postgres_fdw in the cutover's remote
        -- transaction)
        -- (each made once: a cutover whose COMMIT there was done, and not
        -- here, is tried again)
        SELECT string_agg(format('IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint WHERE conrelid = %1$L::pg_catalog.regclass AND conname = %3$L) THEN
                                      ALTER TABLE %1$s ADD CONSTRAINT %3$I FOREIGN KEY (%4$s) REFERENCES %2$s(%5$s)%6$s NOT VALID;
                                  END IF;',
                                 format('%I.%I', schema_name, remote_name), format('%I.%I', n.nspname, c.relname), k.name,
                                 k.columns, k.referenced_columns, k.options), ' ' ORDER BY k.name)
        INTO statements
        FROM @extschema@.partition_foreign_keys k
        JOIN @extschema@.sharding_layout(k.referenced) AS l ON l.bucket = s.bucket
        JOIN pg_class c ON c.oid = l.partition JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.parent = s.parent;
        IF statements IS NOT NULL THEN
            EXECUTE @extschema@.reshard_remote_sql(s.server, format($remote$
                CREATE OR REPLACE FUNCTION %1$s() RETURNS boolean LANGUAGE plpgsql VOLATILE
                    SET search_path = pg_catalog, pg_temp
                    AS %2$L;
                CREATE OR REPLACE VIEW %3$I.%4$I WITH (security_invoker = true) AS SELECT 1 AS linked WHERE %1$s();
                %5$s$remote$,
                link, format('BEGIN %s RETURN true; END', statements), schema_name, links,
                @extschema@.reshard_remote_revoke(ARRAY[format('%I.%I', schema_name, links)], ARRAY[link || '()'])));
        END IF;
    WHEN 'mark', 'cut', 'link' THEN
        -- (through a foreign table here, for this transaction: postgres_fdw
        -- writes the table over the same connection, in the same remote
        -- transaction)
        here := format('%I.%I', schema_name, CASE action WHEN 'mark' THEN marker WHEN 'link' THEN links ELSE cut END);
        EXECUTE format('CREATE FOREIGN TABLE %s (%s) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                       here, CASE action WHEN 'mark' THEN 'marked int' WHEN 'link' THEN 'linked int' ELSE 'cut boolean' END,
                       s.server, schema_name, CASE action WHEN 'mark' THEN marker WHEN 'link' THEN links ELSE cut END);
        IF action IN ('mark', 'link') THEN
            EXECUTE format('SELECT count(*) FROM %s', here) INTO n;
            IF n <> 1 THEN
                RAISE EXCEPTION 'could not % the move of % on %', CASE action WHEN 'mark' THEN 'mark the writes of'
                                                                     ELSE 'make the foreign keys of' END,
                                s.partition::regclass, s.server;
            END IF;
        ELSE
            EXECUTE format('INSERT INTO %s VALUES (true)', here);
        END IF;
        EXECUTE format('DROP FOREIGN TABLE %s', here);
    ELSE
        RAISE EXCEPTION 'unknown action %', action;
    END CASE;
END
$function$;

COMMENT ON FUNCTION move_destination_guard(reshard_state, text) IS
'partition move to a server: the table it moves into there refuses direct writes until the cutover (internal)';
