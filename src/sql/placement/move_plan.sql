-- src/sql/placement/move_plan.sql
--	move_plan: the checks of a partition's move, and its state row (internal)

-- The plan of a move (partition_move), as the table's owner, in a
-- security-restricted operation (the engine, src/resharding/driver.c,
-- checked that the caller owns the table or is a superuser): the layout
-- stays; the partition goes, whole, from here or a foreign server
-- (postgres_fdw) to another server or here (s.server NULL).  Checks, in
-- this order, each a routine of what it is named for: the table and its
-- layout (reshard_plan_table), the partition and the servers
-- (reshard_plan_move: what a foreign partition cannot have, or what would
-- be lost with the partition dropped where it was), the layout's key
-- (reshard_plan_key).  Returns the state row of the move (not yet
-- written): the partition is the one source, in its bucket's place; what
-- the move will make on a server recorded (reshard_cleanup_record).
-- operation is the operation table's word, 'move'.
CREATE FUNCTION move_plan(s reshard_state, operation text) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    lay record;           -- the table's layout (reshard_plan_table)
    schema_name name;     -- moving to a server: the parent's schema, there too
    remote text;          -- the table there
    kind text;
    name text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    IF operation IS DISTINCT FROM 'move' THEN
        RAISE EXCEPTION 'move_plan plans a move, not %', coalesce(operation, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO lay FROM @extschema@.reshard_plan_table(s, operation);
    s := @extschema@.reshard_plan_move(s, lay.partitions, lay.key);
    s.parent_name := s.parent::regclass::text;
    s.operation := operation;
    s.method := lay.method;
    s.key := lay.key;
    s.old_buckets := lay.buckets;
    s.new_buckets := lay.buckets;
    s := @extschema@.reshard_plan_key(s, lay.hash_function, lay.operator_class, lay.removed, lay.removed);
    s.sources := array_fill(NULL::oid, ARRAY[lay.buckets]);
    s.sources[s.bucket + 1] := s.partition;
    s.shadows := '{}';
    -- What the move makes on a server, recorded before it is made there
    -- (dblink commits it at once; the state row and its records commit
    -- before the setup): the table there, only on failure and only while it
    -- carries the move's comment (move_phase_setup); always, what refuses
    -- direct writes to it (move_destination_guard) and the view of its
    -- copy's count and sum (move_phase_verify).
    IF s.server IS NOT NULL THEN
        SELECT n.nspname INTO STRICT schema_name
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.parent;
        remote := format('%I.%I', schema_name, (SELECT relname FROM pg_class WHERE oid = s.partition));
        s := @extschema@.reshard_cleanup_record(s, 'table', remote, s.server, 'on_failure',
                                                'partition_move ' || @extschema@.reshard_object_name(s, 'moved', s.partition));
        FOREACH kind IN ARRAY ARRAY['into_refuse', 'into_mark', 'into_cut', 'into_marker', 'into_writes', 'images'] LOOP
            name := @extschema@.reshard_object_name(s, kind, s.partition);
            s := @extschema@.reshard_cleanup_record(s,
                     CASE kind WHEN 'into_refuse' THEN 'function' WHEN 'into_mark' THEN 'function' WHEN 'into_cut' THEN 'table'
                               WHEN 'into_writes' THEN 'trigger' ELSE 'view' END,
                     CASE WHEN kind IN ('into_refuse', 'into_mark') THEN format('%I.%I()', schema_name, name)
                          WHEN kind = 'into_writes' THEN remote
                          ELSE format('%I.%I', schema_name, name) END,
                     s.server, 'always', NULL, CASE WHEN kind = 'into_writes' THEN name END);
        END LOOP;
        -- (where the partition keeps foreign keys: what makes them there, move_destination_guard)
        IF EXISTS (SELECT FROM @extschema@.partition_foreign_keys k WHERE k.parent = s.parent) THEN
            s := @extschema@.reshard_cleanup_record(s, 'function',
                     format('%I.%I()', schema_name, @extschema@.reshard_object_name(s, 'into_link', s.partition)),
                     s.server, 'always');
            s := @extschema@.reshard_cleanup_record(s, 'view',
                     format('%I.%I', schema_name, @extschema@.reshard_object_name(s, 'into_links', s.partition)),
                     s.server, 'always');
        END IF;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_plan(reshard_state, text) FROM PUBLIC;

COMMENT ON FUNCTION move_plan(reshard_state, text) IS
'partition move: the checks before anything is made, and the state row of a new move (internal)';
