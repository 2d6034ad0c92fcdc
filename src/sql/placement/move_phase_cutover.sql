-- src/sql/placement/move_phase_cutover.sql
--	move_phase_cutover: the table a partition moved into put in its place (internal)

-- As the table's owner, in the transaction that holds ACCESS EXCLUSIVE on
-- the parent, the partition and the table that takes its place, after the
-- whole log was applied and the engine's triggers dropped (unit_move_cutover,
-- which gives the grants after): the partition detached and renamed away
-- (the finish drops it), the table that takes its place given its name and
-- comments and attached (a foreign table without a scan; a table here too:
-- its CHECK implies the bound, move_phase_verify; then its CHECK and its
-- key's index of the engine's, if it has one, go, and its indexes are
-- named after it, as PostgreSQL names a partition's); the log and its
-- sequence dropped.  Catalog work only: the same whatever the partition's
-- size and the table's number of partitions.
CREATE FUNCTION move_phase_cutover(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
    target regclass;
    target_name name;   -- its name before it takes the partition's
    target_schema name;
    kind text;          -- TABLE or FOREIGN TABLE, as the table that takes the partition's place is
    name text;
    statement text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['cutover']);
    target := s.shadows[s.bucket + 1];
    SELECT relname INTO STRICT name FROM pg_class WHERE oid = s.partition;
    -- ('TABLE' or 'FOREIGN TABLE', as each is)
    SELECT CASE c.relkind WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, c.relname, n.nspname
    INTO STRICT kind, target_name, target_schema
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = target;
    EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', s.parent::regclass, s.partition::regclass);
    statement := @extschema@.reshard_object_name(s, 'old', s.partition);
    EXECUTE format('ALTER %s %s RENAME TO %I', CASE WHEN (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f'
                                                    THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                   s.partition::regclass, statement);
    EXECUTE format('ALTER %s %s RENAME TO %I', kind, target, name);
    FOR r IN SELECT d.objsubid, d.description, a.attname FROM pg_description d
             LEFT JOIN pg_attribute a ON a.attrelid = d.objoid AND a.attnum = d.objsubid
             WHERE d.classoid = 'pg_class'::regclass AND d.objoid = s.partition LOOP
        IF r.objsubid = 0 THEN
            EXECUTE format('COMMENT ON %s %s IS %L', kind, target, r.description);
        ELSE
            EXECUTE format('COMMENT ON COLUMN %s.%I IS %L', target, r.attname, r.description);
        END IF;
    END LOOP;
    -- (a table here is attached without a scan: its CHECK implies the
    -- bound, move_phase_verify; then its CHECK and its key's index
    -- of the engine's, if it has one, go)
    EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.parent::regclass, target, format(s.new_bound, s.bucket));
    IF kind = 'TABLE' THEN
        statement := @extschema@.reshard_object_name(s, 'bound', target);
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, statement);
        statement := @extschema@.reshard_object_name(s, 'key', target);
        IF EXISTS (SELECT FROM pg_class c WHERE c.relname = statement AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = target_schema)) THEN
            EXECUTE format('DROP INDEX %I.%I', target_schema, statement);
        END IF;
        -- (its indexes named after it, as PostgreSQL names a partition's:
        -- reshard_free_name)
        FOR r IN SELECT i.relname, substr(i.relname, length(target_name) + 1) AS suffix
                 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                 WHERE x.indrelid = target AND starts_with(i.relname, target_name) LOOP
            EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', target_schema, r.relname,
                           @extschema@.reshard_free_name((SELECT oid FROM pg_namespace WHERE nspname = target_schema), name, r.suffix));
        END LOOP;
    END IF;
    -- (a table on a server lets every write through from now on: move_destination_guard)
    PERFORM @extschema@.move_destination_guard(s, 'cut');
    EXECUTE format('DROP TABLE %s', s.log::regclass);
    EXECUTE format('DROP SEQUENCE %s', s.log_sequence::regclass);
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_cutover(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_cutover(reshard_state) IS
'partition move, cutover: the partition detached, the table it moved into attached in its place under its name (internal)';
