-- src/sql/placement/partition_unique_constraints.sql
--	A table's PRIMARY KEY and UNIQUE constraints kept by each partition, so
--	that its partitions can move to servers (docs/scaling-out.md)

-- PostgreSQL allows no foreign partition under a table with a unique index.
-- unique_constraints_to_partitions hands each of the table's PRIMARY KEY
-- and UNIQUE constraints to its partitions (each partition keeps the index
-- it has for it, as a constraint of its own: nothing is built) and records
-- the table's constraint here, by which a partition moved to a server, or
-- back from one, gets it there too, a resharding's new partition must have
-- it, and unique_constraints_to_parent gives it back to the table.  Each
-- row: a constraint, its name on the table and its definition
-- (pg_get_constraintdef).  Written only by those two procedures (C, as this
-- table's owner); read by any role, as pg_constraint is.  The engine
-- executes the definitions as the table's owner: no other role may write a
-- row, not even a member of pg_write_all_data (placement_records_guard,
-- which fires always; no row-level security: a role that is
-- not a superuser could then not pg_dump the database, which dumps the
-- rows).  A table dropped
-- takes its rows with it (placement_records_drop, colocation.sql); pg_dump
-- dumps them, each table by its name, which the restore reads back.
-- The guard of the extension's records (this table and colocated_tables):
-- a write by a role that has not the privileges of the table's owner is
-- refused, whatever its privileges (pg_write_all_data), also in a
-- subscription's apply worker (the triggers fire always).  TG_ARGV[0]: who
-- writes the table, for the hint.
CREATE FUNCTION placement_records_guard() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        RAISE EXCEPTION 'only the extension writes %', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'The extension acts on the tables it names, as their owners, by what it holds.',
                  HINT = TG_ARGV[0];
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$function$;
REVOKE ALL ON FUNCTION placement_records_guard() FROM PUBLIC;

COMMENT ON FUNCTION placement_records_guard() IS
'refuses a write to the extension''s records of tables by a role that has not the privileges of their owner (internal)';

CREATE TABLE partition_unique_constraints (
    parent regclass NOT NULL,       -- (by name in a dump: pg_dump dumps the rows)
    name name NOT NULL,
    definition text NOT NULL,
    PRIMARY KEY (parent, name)
);
REVOKE ALL ON partition_unique_constraints FROM PUBLIC;
GRANT SELECT ON partition_unique_constraints TO PUBLIC;
CREATE TRIGGER only_the_engine_writes BEFORE INSERT OR UPDATE OR DELETE ON partition_unique_constraints
FOR EACH ROW EXECUTE FUNCTION placement_records_guard('unique_constraints_to_partitions and unique_constraints_to_parent write it.');
ALTER TABLE partition_unique_constraints ENABLE ALWAYS TRIGGER only_the_engine_writes;

SELECT pg_catalog.pg_extension_config_dump('partition_unique_constraints', '');

COMMENT ON TABLE partition_unique_constraints IS
'the PRIMARY KEY and UNIQUE constraints of tables whose partitions keep them (unique_constraints_to_partitions): table, name, definition';

-- The checks of unique_constraints_to_partitions (to_partitions) and
-- unique_constraints_to_parent, as the table's owner; returns the
-- constraints to hand over: name, definition and, to the partitions, the
-- table's index of it.  To the partitions: a table partitioned by the
-- extension, no operation of the engine in progress on it, no foreign key
-- that refers to it (PostgreSQL requires a unique index on the table it
-- refers to), its unique indexes all PRIMARY KEY or UNIQUE constraints.  To
-- the table: every partition here (a table), with each recorded constraint
-- (the same definition), which the table's then takes as its partition's:
-- nothing is built.  Not revoked from PUBLIC: the procedures call it as the
-- table's owner, any role; it reads the catalog and raises errors.
CREATE FUNCTION partition_unique_plan(parent regclass, to_partitions boolean)
RETURNS TABLE (name name, definition text, index oid)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    bad text;
    call text := format('CALL %s.unique_constraints_to_%s(%L)', (SELECT quote_ident(n.nspname) FROM pg_extension x
                                                                  JOIN pg_namespace n ON n.oid = x.extnamespace
                                                                  WHERE x.extname = 'subsetting'),
                        CASE WHEN to_partitions THEN 'partitions' ELSE 'parent' END, parent);
BEGIN
    IF NOT EXISTS (SELECT FROM @extschema@.sharding_layout(parent, true)) THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension', parent
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'sharded_tables lists the tables partitioned by its functions and operator classes.';
    END IF;
    IF EXISTS (SELECT FROM @extschema@.reshard_progress p
               WHERE p.relid = partition_unique_plan.parent AND p.phase NOT IN ('done', 'aborted')) THEN
        RAISE EXCEPTION 'table % has an operation in progress', parent
            USING ERRCODE = 'object_in_use',
                  HINT = 'See reshard_progress; finish it (call it again) or reshard_abort it first.';
    END IF;
    IF to_partitions THEN
        SELECT string_agg(x, '; ') INTO bad FROM (
            SELECT format('foreign key %I of %s refers to it', c.conname, c.conrelid::regclass) AS x
            FROM pg_constraint c WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
            UNION ALL
            SELECT format('unique index %s is no PRIMARY KEY or UNIQUE constraint''s', x.indexrelid::regclass)
            FROM pg_index x WHERE x.indrelid = parent AND x.indisunique
              AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))
            UNION ALL
            SELECT format('exclusion constraint %I', c.conname)
            FROM pg_constraint c WHERE c.conrelid = parent AND c.contype = 'x') AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot hand the unique constraints of % to its partitions: %', parent, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Each partition keeps the index of each PRIMARY KEY and UNIQUE constraint as a constraint of its own, and the table none: a foreign key needs one on the table it refers to.',
                      HINT = 'Drop these first (docs/scaling-out.md, "Tables with a primary key").';
        END IF;
        RETURN QUERY SELECT c.conname, pg_get_constraintdef(c.oid), c.conindid
                     FROM pg_constraint c WHERE c.conrelid = parent AND c.contype IN ('p', 'u') ORDER BY c.conname;
        IF NOT FOUND THEN
            IF EXISTS (SELECT FROM @extschema@.partition_unique_constraints u WHERE u.parent = partition_unique_plan.parent) THEN
                RAISE NOTICE 'the partitions of % keep its unique constraints already', parent;
            ELSE
                RAISE NOTICE 'table % has no PRIMARY KEY or UNIQUE constraint', parent;
            END IF;
        END IF;
    ELSE
        SELECT string_agg(x, '; ') INTO bad FROM (
            SELECT format('partition %s is on server "%s"', i.inhrelid::regclass, v.srvname) AS x
            FROM pg_inherits i JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
            JOIN pg_foreign_server v ON v.oid = f.ftserver
            WHERE i.inhparent = partition_unique_plan.parent
            UNION ALL
            SELECT format('partition %s lacks %s', i.inhrelid::regclass, u.definition)
            FROM pg_inherits i CROSS JOIN @extschema@.partition_unique_constraints u
            WHERE i.inhparent = partition_unique_plan.parent AND u.parent = partition_unique_plan.parent
              AND NOT EXISTS (SELECT FROM pg_foreign_table f WHERE f.ftrelid = i.inhrelid)
              AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = i.inhrelid AND c.contype IN ('p', 'u')
                                                            AND pg_get_constraintdef(c.oid) = u.definition)
            UNION ALL
            SELECT format('it has a constraint %I already', c.conname)
            FROM pg_constraint c JOIN @extschema@.partition_unique_constraints u
                 ON u.parent = partition_unique_plan.parent AND u.name = c.conname
            WHERE c.conrelid = partition_unique_plan.parent) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot give % its unique constraints back: %', parent, bad
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'The table takes each partition''s constraint as its own partition''s; every partition must be here and have it.',
                      HINT = 'Move its partitions here first: CALL partition_move(partition, NULL).';
        END IF;
        RETURN QUERY SELECT u.name, u.definition, 0::oid FROM @extschema@.partition_unique_constraints u
                     WHERE u.parent = partition_unique_plan.parent ORDER BY u.name;
        IF NOT FOUND THEN
            RAISE NOTICE 'the partitions of % keep no unique constraint of it', parent
                USING HINT = call || ' is what hands them over.';
        END IF;
    END IF;
END
$function$;

COMMENT ON FUNCTION partition_unique_plan(regclass, boolean) IS
'the checks of unique_constraints_to_partitions and unique_constraints_to_parent, and the constraints they hand over (internal)';

CREATE PROCEDURE unique_constraints_to_partitions(parent regclass, cutover_budget interval DEFAULT '500 ms',
                                                  cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'unique_constraints_to_partitions';

COMMENT ON PROCEDURE unique_constraints_to_partitions(regclass, interval, int) IS
'hands each PRIMARY KEY and UNIQUE constraint of a table partitioned by the extension to its partitions (each keeps its index as a constraint of its own: nothing is built, no row read), so that they can move to servers; in one transaction that holds the table at most cutover_budget, tried at most cutover_attempts times (see docs/scaling-out.md)';

CREATE PROCEDURE unique_constraints_to_parent(parent regclass, cutover_budget interval DEFAULT '500 ms',
                                              cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'unique_constraints_to_parent';

COMMENT ON PROCEDURE unique_constraints_to_parent(regclass, interval, int) IS
'gives a table back the PRIMARY KEY and UNIQUE constraints that unique_constraints_to_partitions handed to its partitions, once every partition is on this server (the table takes each partition''s as its partition: nothing is built); in one transaction that holds the table at most cutover_budget, tried at most cutover_attempts times (see docs/scaling-out.md)';
