-- src/sql/resharding/reshard_phase_setup.sql
--	reshard_phase_setup: the shadows, the new parent and the change log (internal)

-- As the table's owner: for each new bucket whose partition is an old
-- local partition, a shadow (LIKE it, in its tablespace, with its
-- persistence; its indexes are built once the copy has filled it:
-- src/reshard_indexes.c) that is filled with all the bucket's rows and
-- takes the old partition's place; for each whose partition is a foreign
-- table (a shard on another server), an incoming table that receives the
-- rows that move to it, poured into it at the cutover; the new parent (LIKE the
-- old one, empty, partitioned by the new key); the change log with its
-- sequence (logged: after a crash it must still hold the writes the
-- shadows have not received).  The engine then guards
-- the tables it fills and starts the capture triggers (C).  Returns the
-- state with their OIDs.
CREATE FUNCTION reshard_phase_setup(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET default_tablespace = ''   -- (the tables it makes go where the ones they copy are,
SET default_table_access_method = heap    -- and are of their access method, whatever the caller's settings)
AS $function$
DECLARE
    schema_name name;
    shadow text;
    source oid;
    target oid;
    b int;
    r record;
    name_of text;   -- the query of a name (reshard_object_name: $1 the state, $2 a kind, $3 an OID)
    new_parent_name text;
    log_name text;
    sequence_name text;
    moved_name name;    -- moving: the partition's name, here and on the server
    cols text;
    marker text;
    revoke_sql text;    -- (reshard_remote_revoke)
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['setup'];
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = s.parent;
    name_of := format('SELECT %s.reshard_object_name($1, $2, $3)',
                      (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'));
    s.shadows := array_fill(NULL::oid, ARRAY[s.new_buckets]);
    -- Moving a partition to a server (partition_move): its table there,
    -- under its schema and name, with the parent's columns (types,
    -- collations, NOT NULL), no right for any other role; and here a
    -- foreign table on it, with the partition's defaults and CHECK
    -- constraints, which takes the partition's place at the cutover.
    -- dblink commits the table there at once: it carries a comment that
    -- only this move can write (reshard_object_name), by which a call cut
    -- short finds it again, and an undo knows it is its own.  Moving one
    -- here (s.server NULL): a table here, of the same columns, defaults and
    -- CHECK constraints, in the parent's tablespace, of the parent's access
    -- method (PostgreSQL 17 on; else heap, as a partition of it would be).
    IF s.operation = 'move' AND s.server IS NOT NULL THEN
        SELECT relname INTO STRICT moved_name FROM pg_class WHERE oid = s.partition;
        EXECUTE name_of INTO marker USING s, 'moved', s.partition;
        marker := 'partition_move ' || marker;
        -- (a stored generated column is computed there: postgres_fdw sends
        -- it as DEFAULT; the plan refused an expression of functions,
        -- operators or types that are not built in)
        SELECT string_agg(format('%I %s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                 CASE WHEN a.attcollation <> t.typcollation
                                      THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END,
                                 CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                                 CASE WHEN a.attgenerated = 's'
                                      THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                                      ELSE '' END),
                          ', ' ORDER BY a.attnum)
        INTO cols FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = s.partition AND a.attnum > 0 AND NOT a.attisdropped;
        EXECUTE format('SELECT %s.reshard_remote_revoke($1)',
                       (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
        INTO revoke_sql USING ARRAY[format('%I.%I', schema_name, moved_name)];
        EXECUTE format('SELECT %s.dblink_exec(%L, %L)',
                       (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                        WHERE x.extname = 'dblink'),
                       s.server, format($remote$
            DO $do$
            DECLARE
                tbl text := %L;
                marker text := %L;
            BEGIN
                IF pg_catalog.to_regclass(tbl) IS NOT NULL THEN
                    IF pg_catalog.obj_description(pg_catalog.to_regclass(tbl), 'pg_class') IS DISTINCT FROM marker THEN
                        RAISE EXCEPTION 'table %% already exists', tbl USING ERRCODE = 'duplicate_table';
                    END IF;
                    EXECUTE pg_catalog.format('TRUNCATE %%s', tbl);
                ELSE
                    EXECUTE pg_catalog.format('CREATE TABLE %%s (%%s)', tbl, %L);
                    EXECUTE pg_catalog.format('COMMENT ON TABLE %%s IS %%L', tbl, marker);
                END IF;
            END
            $do$;
            %s$remote$, format('%I.%I', schema_name, moved_name), marker, cols,
                       revoke_sql));
    END IF;
    IF s.operation = 'move' THEN
        EXECUTE name_of INTO shadow USING s, 'shadow', s.partition;
        -- (NOT NULL constraints named as the partition's, on PostgreSQL 18)
        SELECT string_agg(format('%I %s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                 CASE WHEN a.attcollation <> t.typcollation
                                      THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END,
                                 CASE WHEN a.attnotnull
                                      THEN coalesce(' CONSTRAINT ' || (SELECT quote_ident(c.conname) FROM pg_constraint c
                                                                       WHERE c.conrelid = a.attrelid AND c.contype = 'n'
                                                                         AND c.conkey = ARRAY[a.attnum]), '') || ' NOT NULL'
                                      ELSE '' END,
                                 CASE WHEN a.attgenerated = 's' THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                                      WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                                      ELSE '' END),
                          ', ' ORDER BY a.attnum)
        INTO cols FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = s.partition AND a.attnum > 0 AND NOT a.attisdropped;
        IF s.server IS NULL THEN
            EXECUTE (SELECT format('CREATE TABLE %I.%I (%s)%s%s', schema_name, shadow, cols,
                                   (SELECT ' USING ' || quote_ident(amname) FROM pg_am WHERE oid = c.relam),
                                   CASE WHEN c.reltablespace <> 0
                                        THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                        ELSE '' END)
                     FROM pg_class c WHERE c.oid = s.parent);
        ELSE
            EXECUTE format('CREATE FOREIGN TABLE %I.%I (%s) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                           schema_name, shadow, cols, s.server, schema_name, moved_name);
        END IF;
        shadow := format('%I.%I', schema_name, shadow);
        FOR r IN SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
                 WHERE c.conrelid = s.partition AND c.contype = 'c' ORDER BY c.conname LOOP
            EXECUTE format('ALTER %s %s ADD CONSTRAINT %I %s', CASE WHEN s.server IS NULL THEN 'TABLE' ELSE 'FOREIGN TABLE' END,
                           shadow, r.conname, r.def);
        END LOOP;
        s.shadows[s.bucket + 1] := shadow::regclass;
    END IF;
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.operation = 'move';
        IF s.operation = 'add' AND b = s.bucket THEN
            target := s.partition;
        ELSE
            source := s.sources[b + 1];
            -- (no source: a bucket of jumpbackanchorhash's removed ones, or the one removed now)
            CONTINUE WHEN source IS NULL OR s.operation = 'remove' AND b = s.bucket;
            IF (SELECT relkind FROM pg_class WHERE oid = source) = 'f' THEN
                EXECUTE name_of INTO shadow USING s, 'incoming', source;
                shadow := format('%I.%I', schema_name, shadow);
                EXECUTE format('CREATE TABLE %s (LIKE %s INCLUDING GENERATED)', shadow, s.parent::regclass);
            ELSE
                EXECUTE name_of INTO shadow USING s, 'shadow', source;
                shadow := format('%I.%I', schema_name, shadow);
                EXECUTE (SELECT format('CREATE %sTABLE %s (LIKE %s INCLUDING ALL EXCLUDING INDEXES) USING %I%s',
                                       CASE c.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END, shadow,
                                       source::regclass, (SELECT amname FROM pg_am WHERE oid = c.relam),
                                       CASE WHEN c.reltablespace <> 0
                                            THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                            ELSE '' END)
                         FROM pg_class c WHERE c.oid = source);
            END IF;
            target := shadow::regclass;
        END IF;
        s.shadows[b + 1] := target;
    END LOOP;
    EXECUTE name_of INTO new_parent_name USING s, 'parent', s.parent;
    EXECUTE name_of INTO log_name USING s, 'log', s.parent;
    EXECUTE name_of INTO sequence_name USING s, 'log_seq', s.parent;
    EXECUTE (SELECT format('CREATE TABLE %I.%I (LIKE %s INCLUDING ALL) PARTITION BY %s%s%s',
                           schema_name, new_parent_name, s.parent::regclass, s.new_partition_by,
                           (SELECT ' USING ' || quote_ident(amname) FROM pg_am WHERE oid = c.relam),
                           CASE WHEN c.reltablespace <> 0
                                THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                ELSE '' END)
             FROM pg_class c WHERE c.oid = s.parent);
    s.new_parent := format('%I.%I', schema_name, new_parent_name)::regclass;
    -- (its rows of the new parent's row type, not the table's: a column's
    -- type changed during the call is then the definition check's to name)
    EXECUTE format('CREATE TABLE %I.%I (seq bigint NOT NULL, partition oid NOT NULL, op "char" NOT NULL, old_row %s, new_row %s)',
                   schema_name, log_name,
                   (SELECT format('%s.%I', t.typnamespace::regnamespace, t.typname) FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = s.new_parent),
                   (SELECT format('%s.%I', t.typnamespace::regnamespace, t.typname) FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = s.new_parent));
    s.log := format('%I.%I', schema_name, log_name)::regclass;
    EXECUTE format('CREATE SEQUENCE %I.%I', schema_name, sequence_name);
    s.log_sequence := format('%I.%I', schema_name, sequence_name)::regclass;
    -- Nobody but the owner may use what the engine makes: the schema's
    -- default privileges reach every table its owner creates there, and so
    -- may an event trigger's grants, of columns too; what they granted is
    -- revoked in the same transaction (REVOKE on a table revokes its
    -- columns' privileges too; the cutover gives the tables that take the
    -- old ones' places the old ones' grants).
    FOR r IN SELECT DISTINCT c.oid, c.relkind, a.grantee
             FROM pg_class c,
                  LATERAL (SELECT c.relacl UNION ALL SELECT attacl FROM pg_attribute WHERE attrelid = c.oid) AS x(acl),
                  aclexplode(x.acl) AS a
             WHERE c.oid = ANY (s.shadows || s.new_parent || s.log || s.log_sequence)
               AND c.oid IS DISTINCT FROM s.partition AND a.grantee <> c.relowner LOOP
        EXECUTE format('REVOKE ALL ON %s %s FROM %s', CASE r.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
                       r.oid::regclass, CASE r.grantee WHEN 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END);
    END LOOP;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_setup(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_setup(reshard_state) IS
'resharding, setup: the shadows, the new parent and the change log (internal)';
