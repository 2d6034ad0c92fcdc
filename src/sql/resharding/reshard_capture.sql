-- src/sql/resharding/reshard_capture.sql
--	reshard_capture: the trigger that logs the writes to an old partition (internal)

-- Internal triggers of the engine call it (they need no privilege on it);
-- nobody may create a trigger with it.
CREATE FUNCTION reshard_capture() RETURNS trigger
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_capture';
REVOKE ALL ON FUNCTION reshard_capture() FROM PUBLIC;

COMMENT ON FUNCTION reshard_capture() IS
'resharding: appends each write to an old partition to the change log (internal)';

-- The change log the capture triggers write, and its sequence, made by the
-- setup of every operation in the parent's schema (reshard_object_name),
-- the log's rows of the row type of the table row_type (the new parent of a
-- resharding, the table a partition moves into: a column's type changed
-- during the call is then the definition check's to name), both recorded
-- for the cleaner, policy always (the cutover drops the log; the undo, or
-- the finish if it is left).  Returns the state with them.  Not revoked
-- from PUBLIC: the setups run as the table's owner, any role, and call it
-- in SQL; it makes only what its caller may make.
CREATE FUNCTION reshard_make_change_log(s reshard_state, row_type regclass) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    schema_name name;
    log_name text := @extschema@.reshard_object_name(s, 'log', s.parent);
    sequence_name text := @extschema@.reshard_object_name(s, 'log_seq', s.parent);
    row_type_name text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT n.nspname INTO STRICT schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.parent;
    SELECT format('%s.%I', t.typnamespace::regnamespace, t.typname) INTO STRICT row_type_name
    FROM pg_type t JOIN pg_class c ON c.reltype = t.oid WHERE c.oid = row_type;
    EXECUTE format('CREATE TABLE %1$I.%2$I (seq bigint NOT NULL, partition oid NOT NULL, op "char" NOT NULL, old_row %3$s, new_row %3$s)',
                   schema_name, log_name, row_type_name);
    s.log := format('%I.%I', schema_name, log_name)::regclass;
    s := @extschema@.reshard_cleanup_record(s, 'table', format('%I.%I', schema_name, log_name), NULL, 'always');
    EXECUTE format('CREATE SEQUENCE %I.%I', schema_name, sequence_name);
    s.log_sequence := format('%I.%I', schema_name, sequence_name)::regclass;
    s := @extschema@.reshard_cleanup_record(s, 'sequence', format('%I.%I', schema_name, sequence_name), NULL, 'always');
    RETURN s;
END
$function$;

COMMENT ON FUNCTION reshard_make_change_log(reshard_state, regclass) IS
'resharding, setup: the change log and its sequence (internal)';
