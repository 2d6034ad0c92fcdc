-- src/sql/resharding/reshard_cleanup.sql
--	reshard_state_cleanup: what each resharding made, here and on servers, and when it goes (internal)

-- One row per object a call of the engine made (or, on a server, is about
-- to make), written by the engine (src/resharding/state.c) as this table's
-- owner, in the transaction that makes it: the routines that make an
-- object add it to their state row (reshard_cleanup_record, the column
-- made), and the engine moves those rows here when it writes the state
-- row, in the same transaction; the engine's triggers on the tables of the
-- user's it writes these rows itself (src/resharding/cleanup.c,
-- record_triggers).  What is made on a server commits there on its own
-- (dblink): it is recorded by a step before the one that makes it (a
-- move's by its plan, written with the state row), so that no object
-- there is ever left unrecorded.  One cleaner walks the rows, newest first
-- (src/resharding/cleanup.c, each drop by reshard_cleanup_drop as the
-- table's owner, the triggers here by the engine): the undo (a failure,
-- reshard_abort) drops every one; the finish drops those of policy
-- 'always' and forgets the others (the tables that took the old ones'
-- places at the cutover).  (A record of policy 'on_success' is of an
-- object the call did not make, which its success removes and its failure
-- keeps: the table of a partition that moved from a server, there; the old
-- parent a resharding renamed away.)  Each drop is of an object that still
-- is the one recorded (here: the OID the name still names, or a constraint
-- or trigger of that name on it; on a server: the comment the move gave
-- it, where it has one), and finds nothing to do when done again; one that
-- is gone takes no lock.  The rows follow their state row (the parent's
-- OID changes at a rebuild's cutover) and go with it.
-- (Named as reshard_state, which it belongs to; its constraints and index
-- not reshard_...: those are the names of what the engine makes.)
CREATE TABLE reshard_state_cleanup (
    parent oid CONSTRAINT cleanup_parent_not_null NOT NULL
        CONSTRAINT cleanup_of_a_state REFERENCES reshard_state ON UPDATE CASCADE ON DELETE CASCADE,
    ordinal int CONSTRAINT cleanup_ordinal_not_null NOT NULL,    -- in the order made: dropped newest first
    kind text CONSTRAINT cleanup_kind_not_null NOT NULL
        CONSTRAINT cleanup_kind CHECK (kind IN ('table', 'foreign table', 'sequence', 'view', 'index', 'function',
                                                'constraint', 'trigger')),
    object text CONSTRAINT cleanup_object_not_null NOT NULL,    -- schema-qualified and quoted; a function with
                                                                -- its (); a constraint's or trigger's table
    member name,                         -- a constraint's or trigger's own name (on the table object)
    relation oid,                        -- here: the relation object named when it was made
    server text,                         -- the foreign server it is on (NULL: this database)
    marker text,                         -- there: dropped only while its comment is this
    policy text CONSTRAINT cleanup_policy_not_null NOT NULL
        CONSTRAINT cleanup_policy CHECK (policy IN ('always', 'on_failure', 'on_success')),
    CONSTRAINT cleanup_key PRIMARY KEY (parent, ordinal),
    CONSTRAINT cleanup_member CHECK ((member IS NOT NULL) = (kind IN ('constraint', 'trigger'))),
    CONSTRAINT cleanup_here_or_there CHECK (
        server IS NULL AND relation IS NOT NULL AND kind <> 'function'
        OR server IS NOT NULL AND relation IS NULL AND kind IN ('table', 'view', 'function', 'trigger'))
);
REVOKE ALL ON reshard_state_cleanup FROM PUBLIC;

-- As reshard_state: the engine drops what a row names, as the owner of
-- the table resharded; no other role may write a row (row-level security
-- without a policy, the guard for roles that bypass it), nor read one.
ALTER TABLE reshard_state_cleanup ENABLE ROW LEVEL SECURITY;

CREATE TRIGGER only_the_engine_writes BEFORE INSERT OR UPDATE OR DELETE ON reshard_state_cleanup
FOR EACH ROW EXECUTE FUNCTION reshard_state_guard();
ALTER TABLE reshard_state_cleanup ENABLE ALWAYS TRIGGER only_the_engine_writes;

COMMENT ON TABLE reshard_state_cleanup IS
'what each resharding made, here and on servers, dropped by its undo or its finish (internal)';

-- The state row with one more object recorded in its column made (a row
-- of kind, object, relation, server, marker, policy, member), which the
-- engine writes into reshard_state_cleanup with the state row.  Here
-- (server NULL) the object must exist: the OID of the relation it names is
-- recorded with its name.  A constraint or trigger is recorded by its
-- table (object) and its name (member).  Not revoked from PUBLIC: the
-- routines that run as the table's owner call it in SQL; it reads nothing
-- but the name, and writes nothing.
CREATE FUNCTION reshard_cleanup_record(s reshard_state, kind text, object text, server text, policy text,
                                       marker text DEFAULT NULL, member name DEFAULT NULL) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    relation oid;
BEGIN
    IF kind IS NULL OR kind NOT IN ('table', 'foreign table', 'sequence', 'view', 'index', 'function', 'constraint', 'trigger')
       OR policy IS NULL OR policy NOT IN ('always', 'on_failure', 'on_success') OR object IS NULL
       OR (member IS NULL) <> (kind NOT IN ('constraint', 'trigger')) THEN
        RAISE EXCEPTION 'cannot record % % of policy %', coalesce(kind, 'NULL'),
                        coalesce(quote_ident(member) || ' ON ', '') || coalesce(object, 'NULL'), coalesce(policy, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF server IS NULL THEN
        relation := to_regclass(object);
        IF relation IS NULL THEN
            RAISE EXCEPTION 'cannot record %: it does not exist', object USING ERRCODE = 'undefined_table';
        END IF;
    END IF;
    s.made := coalesce(s.made, '{}') || ARRAY[[kind, object, relation::text, server, marker, policy, member]];
    RETURN s;
END
$function$;

COMMENT ON FUNCTION reshard_cleanup_record(reshard_state, text, text, text, text, text, name) IS
'resharding: the state with an object it made recorded, for its undo or finish (internal)';

-- The cleaner's drop of one record r, as the table's owner, in the undo or
-- the finish: here, the relation if its name still names the OID
-- recorded, or its constraint of that name (its triggers are the
-- engine's, which drops them itself: cleanup.c); on a server (waiting for
-- its lock at most as long as the engine waits for its own, whatever the
-- owner's settings there say of read-only sessions and statement
-- timeouts), the object if it exists (a trigger: its table is locked only
-- if it has it) and, if r has a marker, carries it as its comment (a
-- table of a user's of that name is never dropped).
CREATE FUNCTION reshard_cleanup_drop(s reshard_state, r reshard_state_cleanup) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    condition text;     -- (on a server: of the drop)
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['finish', 'undo']);
    IF r.parent IS DISTINCT FROM s.parent THEN
        RAISE EXCEPTION 'record % is not one of the resharding of %', r.ordinal, s.parent_name;
    END IF;
    IF r.server IS NULL THEN
        IF r.kind = 'trigger' THEN
            RAISE EXCEPTION 'the engine drops its triggers here itself';
        ELSIF r.kind = 'constraint' THEN
            IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = r.relation AND conname = r.member) THEN
                EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.relation::regclass, r.member);
            END IF;
        ELSIF to_regclass(r.object) = r.relation THEN
            EXECUTE format('DROP %s %s', r.kind, r.relation::regclass);
        END IF;
        RETURN s;
    END IF;
    condition := CASE WHEN r.kind = 'trigger'
                      THEN format('EXISTS (SELECT FROM pg_catalog.pg_trigger WHERE tgrelid = pg_catalog.to_regclass(%L) AND tgname = %L)',
                                  r.object, r.member)
                      WHEN r.marker IS NOT NULL
                      THEN format('pg_catalog.obj_description(pg_catalog.to_regclass(%L), ''pg_class'') = %L', r.object, r.marker) END;
    IF condition IS NULL THEN
        EXECUTE @extschema@.reshard_remote_sql(r.server, format(
            'SET TRANSACTION READ WRITE; SET LOCAL lock_timeout = %L; DROP %s IF EXISTS %s',
            current_setting('lock_timeout'), r.kind, r.object));
    ELSE
        EXECUTE @extschema@.reshard_remote_sql(r.server, format($remote$
            SET TRANSACTION READ WRITE;
            SET LOCAL lock_timeout = %L;
            DO $do$
            BEGIN
                IF %s THEN
                    EXECUTE %L;
                END IF;
            END
            $do$$remote$, current_setting('lock_timeout'), condition,
            CASE r.kind WHEN 'trigger' THEN format('DROP TRIGGER %I ON %s', r.member, r.object)
                        ELSE format('DROP %s %s', r.kind, r.object) END));
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_cleanup_drop(reshard_state, reshard_state_cleanup) FROM PUBLIC;

COMMENT ON FUNCTION reshard_cleanup_drop(reshard_state, reshard_state_cleanup) IS
'resharding, undo and finish: one object a resharding made, dropped if it is still there (internal)';
