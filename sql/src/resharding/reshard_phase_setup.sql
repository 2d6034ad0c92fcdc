-- sql/src/resharding/reshard_phase_setup.sql
--	reshard_phase_setup: the shadows, the new parent and the change log (internal)

-- As the table's owner: one shadow per new bucket whose partition is an old
-- local partition (LIKE it, in its tablespace, with its persistence), an
-- index on the key of each table filled (the shadows and the new
-- partition), the new parent (LIKE the old one, empty, partitioned by the
-- new key) and the change log with its sequence (logged: after a crash it
-- must still hold the writes the shadows have not received).  The engine then guards
-- the tables it fills and starts the capture triggers (C).  Returns the
-- state with their OIDs.
CREATE FUNCTION reshard_phase_setup(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    schema_name name;
    shadow text;
    source oid;
    target oid;
    b int;
BEGIN
    SELECT relnamespace::regnamespace::name INTO STRICT schema_name FROM pg_class WHERE oid = s.parent;
    s.shadows := array_fill(NULL::oid, ARRAY[s.new_buckets]);
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        IF s.operation = 'add' AND b = s.bucket THEN
            target := s.partition;
        ELSE
            source := s.sources[b + 1];
            CONTINUE WHEN source IS NULL;
            shadow := format('%I.%I', schema_name, 'reshard_shadow_' || source);
            EXECUTE (SELECT format('CREATE %sTABLE %s (LIKE %s INCLUDING ALL)%s',
                                   CASE c.relpersistence WHEN 'u' THEN 'UNLOGGED ' ELSE '' END, shadow, source::regclass,
                                   CASE WHEN c.reltablespace <> 0
                                        THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                        ELSE '' END)
                     FROM pg_class c WHERE c.oid = source);
            target := shadow::regclass;
        END IF;
        s.shadows[b + 1] := target;
        EXECUTE format('CREATE INDEX %I ON %s ((%s))', 'reshard_key_' || target, target::regclass, s.key);
    END LOOP;
    EXECUTE (SELECT format('CREATE TABLE %I.%I (LIKE %s INCLUDING ALL) PARTITION BY %s%s',
                           schema_name, 'reshard_parent_' || s.parent, s.parent::regclass, s.new_partition_by,
                           CASE WHEN c.reltablespace <> 0
                                THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace))
                                ELSE '' END)
             FROM pg_class c WHERE c.oid = s.parent);
    s.new_parent := format('%I.%I', schema_name, 'reshard_parent_' || s.parent)::regclass;
    EXECUTE format('CREATE TABLE %I.%I (seq bigint NOT NULL, partition oid NOT NULL, op "char" NOT NULL, old_row %s, new_row %s)',
                   schema_name, 'reshard_log_' || s.parent,
                   (SELECT format('%I.%I', t.typnamespace::regnamespace, t.typname) FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = s.parent),
                   (SELECT format('%I.%I', t.typnamespace::regnamespace, t.typname) FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = s.parent));
    s.log := format('%I.%I', schema_name, 'reshard_log_' || s.parent)::regclass;
    EXECUTE format('CREATE SEQUENCE %I.%I', schema_name, 'reshard_log_seq_' || s.parent);
    s.log_sequence := format('%I.%I', schema_name, 'reshard_log_seq_' || s.parent)::regclass;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_setup(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_setup(reshard_state) IS
'resharding, setup: the shadows, the new parent and the change log (internal)';
