-- src/sql/placement/move_phase_setup.sql
--	move_phase_setup: the table a partition moves into, and the change log (internal)

-- As the table's owner, the setup of a move (partition_move): the table
-- that takes the partition's place, and the change log with its sequence
-- (logged, of that table's row type: the partition's columns).
--
-- Moving a partition to a server: its table there, under the parent's
-- schema and the partition's name, with the partition's columns (types, collations, NOT NULL), no
-- right for any other role; and here a foreign table on it, with the
-- partition's defaults and CHECK constraints, which takes the partition's
-- place at the cutover.  dblink commits the table there at once: it
-- carries a comment that only this move can write (reshard_object_name),
-- by which a call cut short finds it again, and an undo knows it is its
-- own; a table of that name and comment is taken only if the role the
-- move works as there owns it (a role that read the name_key could make
-- one).  Moving one here: a table here, of the same columns, defaults and
-- CHECK constraints, in the parent's tablespace, of the parent's access
-- method (PostgreSQL 17 on; else heap, as a partition of it would be).
-- Its indexes are built once the copy has filled it (src/resharding/
-- indexes.c).  What it makes here is recorded (reshard_cleanup_record;
-- what it makes there, by move_plan).  The engine then guards the tables
-- it fills and starts the capture triggers (C).  Returns the state with
-- their OIDs.
CREATE FUNCTION move_phase_setup(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET default_tablespace = ''   -- (the table it makes goes where the parent is,
SET default_table_access_method = heap    -- and is of its access method, whatever the caller's settings)
AS $function$
DECLARE
    schema_name name;
    moved_name name;    -- the partition's name, here and on the server
    target text;        -- the table that takes its place
    marker text;
    r record;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.parent;
    SELECT relname INTO STRICT moved_name FROM pg_class WHERE oid = s.partition;
    IF s.server IS NOT NULL THEN
        marker := 'partition_move ' || @extschema@.reshard_object_name(s, 'moved', s.partition);
        -- (the engine's transaction there: a table taken again refuses other writes, move_destination_guard)
        EXECUTE @extschema@.reshard_remote_sql(s.server, format('SELECT pg_catalog.set_config(%L, ''on'', true);',
                                                                'subsetting_reshard.into_' || s.partition) || format($remote$
            DO $do$
            DECLARE
                tbl text := %L;
                marker text := %L;
            BEGIN
                IF pg_catalog.to_regclass(tbl) IS NOT NULL THEN
                    IF pg_catalog.obj_description(pg_catalog.to_regclass(tbl), 'pg_class') IS DISTINCT FROM marker
                       OR (SELECT c.relowner FROM pg_catalog.pg_class c
                           WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(tbl))
                          IS DISTINCT FROM (SELECT r.oid FROM pg_catalog.pg_roles r
                                            WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
                        RAISE EXCEPTION 'table %% already exists', tbl USING ERRCODE = 'duplicate_table';
                    END IF;
                    EXECUTE pg_catalog.format('TRUNCATE %%s', tbl);
                ELSE
                    EXECUTE pg_catalog.format('CREATE TABLE %%s (%%s)', tbl, %L);
                    EXECUTE pg_catalog.format('COMMENT ON TABLE %%s IS %%L', tbl, marker);
                END IF;
            END
            $do$;
            %s$remote$, format('%I.%I', schema_name, moved_name), marker,
            @extschema@.move_column_definitions(s.partition, false),
            @extschema@.reshard_remote_revoke(ARRAY[format('%I.%I', schema_name, moved_name)])));
    END IF;
    -- (the table there refuses every write but the move's until the cutover)
    IF s.server IS NOT NULL THEN
        PERFORM @extschema@.move_destination_guard(s, 'create');
    END IF;
    target := format('%I.%I', schema_name, @extschema@.reshard_object_name(s, 'shadow', s.partition));
    IF s.server IS NULL THEN
        EXECUTE (SELECT format('CREATE TABLE %s (%s)%s%s', target, @extschema@.move_column_definitions(s.partition, true),
                               (SELECT ' USING ' || quote_ident(amname) FROM pg_am WHERE oid = c.relam),
                               CASE WHEN c.reltablespace <> 0
                                    THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                    ELSE '' END)
                 FROM pg_class c WHERE c.oid = s.parent);
    ELSE
        -- (a table co-located with others: the planner asks the server
        -- what a join there costs, so that it sends a join of a bucket's
        -- partitions there, docs/scaling-out.md)
        EXECUTE format('CREATE FOREIGN TABLE %s (%s) SERVER %I OPTIONS (schema_name %L, table_name %L%s)',
                       target, @extschema@.move_column_definitions(s.partition, true), s.server, schema_name, moved_name,
                       CASE WHEN cardinality(@extschema@.colocated_with(s.parent)) > 1
                            THEN ', use_remote_estimate ''true''' ELSE '' END);
    END IF;
    FOR r IN SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
             WHERE c.conrelid = s.partition AND c.contype = 'c' ORDER BY c.conname LOOP
        EXECUTE format('ALTER %s %s ADD CONSTRAINT %I %s', CASE WHEN s.server IS NULL THEN 'TABLE' ELSE 'FOREIGN TABLE' END,
                       target, r.conname, r.def);
    END LOOP;
    s.shadows := array_fill(NULL::oid, ARRAY[s.new_buckets]);
    s.shadows[s.bucket + 1] := target::regclass;
    -- (it takes the partition's place at the cutover)
    s := @extschema@.reshard_cleanup_record(s, CASE WHEN s.server IS NULL THEN 'table' ELSE 'foreign table' END,
                                            target, NULL, 'on_failure');
    -- The change log: its rows of the target's row type (the partition's
    -- columns).
    s := @extschema@.reshard_make_change_log(s, target::regclass);
    -- (what the schema's default privileges or an event trigger granted
    -- others revoked)
    PERFORM @extschema@.reshard_revoke_others(s);
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_setup(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_setup(reshard_state) IS
'partition move, setup: the table the partition moves into, here or on a server, and the change log (internal)';
