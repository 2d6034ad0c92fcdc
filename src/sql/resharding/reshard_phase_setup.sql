-- src/sql/resharding/reshard_phase_setup.sql
--	reshard_phase_setup: the shadows, the new parent and the change log (internal)

-- As the table's owner: for each new bucket whose partition is an old
-- local partition, a shadow (LIKE it, in its tablespace, with its
-- persistence; its indexes are built once the copy has filled it:
-- src/resharding/indexes.c) that is filled with all the bucket's rows and
-- takes the old partition's place; for each whose partition is a foreign
-- table (a shard on another server), an incoming table that receives the
-- rows that move to it, poured into it at the cutover; the new parent (LIKE the
-- old one, empty, partitioned by the new key); the change log with its
-- sequence (logged: after a crash it must still hold the writes the
-- shadows have not received).  Each recorded for the undo and the finish
-- (reshard_cleanup_record).  The engine then guards
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
    new_parent_name text;
    policy text;        -- of a table's record: gone at the finish, or only on failure
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = s.parent;
    s.shadows := array_fill(NULL::oid, ARRAY[s.new_buckets]);
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        IF s.operation = 'add' AND b = s.bucket THEN
            target := s.partition;
        ELSE
            source := s.sources[b + 1];
            -- (no source: a bucket of jumpbackanchorhash's removed ones, or the one removed now)
            CONTINUE WHEN source IS NULL OR s.operation = 'remove' AND b = s.bucket;
            IF (SELECT relkind FROM pg_class WHERE oid = source) = 'f' THEN
                shadow := @extschema@.reshard_object_name(s, 'incoming', source);
                shadow := format('%I.%I', schema_name, shadow);
                EXECUTE format('CREATE TABLE %s (LIKE %s INCLUDING GENERATED)', shadow, s.parent::regclass);
                policy := 'always';         -- (poured at the cutover, and dropped there)
            ELSE
                shadow := @extschema@.reshard_object_name(s, 'shadow', source);
                policy := 'on_failure';     -- (it takes its old partition's place)
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
            s := @extschema@.reshard_cleanup_record(s, 'table', shadow, NULL, policy);
        END IF;
        s.shadows[b + 1] := target;
    END LOOP;
    new_parent_name := @extschema@.reshard_object_name(s, 'parent', s.parent);
    EXECUTE (SELECT format('CREATE TABLE %I.%I (LIKE %s INCLUDING ALL) PARTITION BY %s%s%s',
                           schema_name, new_parent_name, s.parent::regclass, s.new_partition_by,
                           (SELECT ' USING ' || quote_ident(amname) FROM pg_am WHERE oid = c.relam),
                           CASE WHEN c.reltablespace <> 0
                                THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                ELSE '' END)
             FROM pg_class c WHERE c.oid = s.parent);
    s.new_parent := format('%I.%I', schema_name, new_parent_name)::regclass;
    s := @extschema@.reshard_cleanup_record(s, 'table', format('%I.%I', schema_name, new_parent_name), NULL, 'on_failure');
    -- (its rows of the new parent's row type, not the table's)
    s := @extschema@.reshard_make_change_log(s, s.new_parent);
    -- (what the schema's default privileges or an event trigger granted
    -- others revoked)
    PERFORM @extschema@.reshard_revoke_others(s);
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_setup(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_setup(reshard_state) IS
'resharding, setup: the shadows, the new parent and the change log (internal)';
