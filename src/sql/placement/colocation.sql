-- src/sql/placement/colocation.sql
--	Co-located tables: tables sharded alike whose partitions of a bucket
--	live on the same server (docs/scaling-out.md, "Co-located tables")

-- One row per table of a group that colocate declared: the table and its
-- group.  Written only by colocate and uncolocate (C, as this table's
-- owner), read by anyone (placement_plan, rebalance, partition_move and
-- partition_placement read it as their caller); protected, and dumped, as
-- partition_unique_constraints is.
CREATE TABLE colocated_tables (
    parent regclass PRIMARY KEY,    -- (by name in a dump: pg_dump dumps the rows)
    colocation_group int NOT NULL
);
REVOKE ALL ON colocated_tables FROM PUBLIC;
GRANT SELECT ON colocated_tables TO PUBLIC;
CREATE TRIGGER only_the_engine_writes BEFORE INSERT OR UPDATE OR DELETE ON colocated_tables
FOR EACH ROW EXECUTE FUNCTION placement_records_guard('colocate and uncolocate write it.');
ALTER TABLE colocated_tables ENABLE ALWAYS TRIGGER only_the_engine_writes;

SELECT pg_catalog.pg_extension_config_dump('colocated_tables', '');

COMMENT ON TABLE colocated_tables IS
'the tables placed together (colocate): table, group';

-- The tables of parent's group, parent first, then by name; parent alone
-- if it is in none.
CREATE FUNCTION colocated_with(parent regclass) RETURNS regclass[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT coalesce(array_agg(c.parent::regclass ORDER BY c.parent <> $1, c.parent::regclass::text), ARRAY[$1])
    FROM @extschema@.colocated_tables c
    WHERE c.colocation_group = (SELECT g.colocation_group FROM @extschema@.colocated_tables g WHERE g.parent = $1)
$function$;

COMMENT ON FUNCTION colocated_with(regclass) IS
'the tables placed together with a table (colocate), itself first; the table alone if it is in no group';

-- The checks of colocate, as its caller: two tables or more, each
-- partitioned by the extension alike (method, hash function, key type and
-- how it is hashed, bucket count, removed buckets: a key goes to the same
-- bucket in each), none in an operation of the engine.  Returns the group
-- they make: the lowest of the groups some of them are in already (the
-- others join it), else a new one.  Anyone may run it: it reads the
-- catalog and raises the refusals.
CREATE FUNCTION colocation_plan(tables regclass[]) RETURNS int
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    layouts jsonb[];
    first jsonb;
    bad text;
BEGIN
    IF array_ndims(tables) > 1 THEN
        RAISE EXCEPTION 'tables has % dimensions', array_ndims(tables)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Give the tables in an array of one dimension.';
    END IF;
    IF tables IS NULL OR array_position(tables, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'tables must not be null, nor any of them' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF (SELECT count(DISTINCT t) FROM unnest(tables) AS t) < 2 THEN
        RAISE EXCEPTION 'colocate needs two tables or more, not %', tables
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    layouts := ARRAY(SELECT jsonb_build_object('table', t::text, 'method', l->'method', 'hash_function', l->'hash_function',
                                               'key_type', l->'key_type', 'key_hash', l->'key_hash',
                                               'buckets', l->'buckets', 'removed', l->'removed')
                     FROM unnest(tables) WITH ORDINALITY AS u(t, n), @extschema@.routing_layout(t) AS l ORDER BY n);
    first := layouts[1];
    SELECT string_agg(format('%s (%s)', x->>'table', concat_ws(', ',
                          CASE WHEN x->'method' <> first->'method' THEN 'method ' || (x->>'method') END,
                          CASE WHEN x->'hash_function' <> first->'hash_function' THEN 'hash function ' || (x->>'hash_function') END,
                          CASE WHEN x->'key_type' <> first->'key_type' OR x->'key_hash' <> first->'key_hash'
                               THEN format('key of type %s, hashed as %s', x->>'key_type', x->>'key_hash') END,
                          CASE WHEN x->'buckets' <> first->'buckets' THEN (x->>'buckets') || ' buckets' END,
                          CASE WHEN x->'removed' <> first->'removed' THEN 'removed buckets ' || (x->>'removed') END)),
                      '; ')
    INTO bad
    FROM unnest(layouts[2:]) AS x
    WHERE (x - 'table') <> (first - 'table');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot colocate tables sharded otherwise than %: %', first->>'table', bad
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Co-located tables put a key in the same bucket: %s has method %s, hash function %s, a key of type %s hashed as %s, %s buckets, removed buckets %s.',
                                  first->>'table', first->>'method', first->>'hash_function', first->>'key_type',
                                  first->>'key_hash', first->>'buckets', first->'removed');
    END IF;
    SELECT string_agg(DISTINCT p."table", ', ') INTO bad FROM @extschema@.reshard_progress p
    WHERE p.relid = ANY (tables::oid[]) AND p.phase NOT IN ('done', 'aborted');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot colocate %: an operation is in progress on %', tables, bad
            USING ERRCODE = 'object_in_use',
                  HINT = 'See reshard_progress; finish it (call it again) or reshard_abort it first.';
    END IF;
    RETURN coalesce((SELECT min(c.colocation_group) FROM @extschema@.colocated_tables c WHERE c.parent = ANY (tables::oid[])),
                    (SELECT max(c.colocation_group) + 1 FROM @extschema@.colocated_tables c), 1);
END
$function$;

COMMENT ON FUNCTION colocation_plan(regclass[]) IS
'the checks of colocate, and the group it makes (internal)';

CREATE FUNCTION colocate(tables regclass[]) RETURNS int
LANGUAGE C AS 'MODULE_PATHNAME', 'colocate';

COMMENT ON FUNCTION colocate(regclass[]) IS
'declares tables sharded alike (method, hash function, key type, buckets, removed buckets) co-located: placement_plan, rebalance and partition_move move the partitions of a bucket of every table of the group to the same server, one after the other; tables already in groups bring their groups; returns the group (see docs/scaling-out.md)';

CREATE FUNCTION uncolocate(parent regclass) RETURNS void
LANGUAGE C AS 'MODULE_PATHNAME', 'uncolocate';

COMMENT ON FUNCTION uncolocate(regclass) IS
'takes a table out of its group of co-located tables (colocate); a group of one table is none';

-- A table dropped takes its records with it (an OID used again must not
-- find them).  As these tables' owner: the role that drops a table may
-- not write them.
CREATE FUNCTION placement_records_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    dropped oid[] := ARRAY(SELECT objid FROM pg_event_trigger_dropped_objects()
                           WHERE classid = 'pg_class'::regclass AND objsubid = 0 AND object_type = 'table');
BEGIN
    IF cardinality(dropped) > 0 THEN
        DELETE FROM @extschema@.partition_unique_constraints WHERE parent = ANY (dropped);
        DELETE FROM @extschema@.partition_foreign_keys WHERE parent = ANY (dropped) OR referenced = ANY (dropped);
        DELETE FROM @extschema@.colocated_tables WHERE parent = ANY (dropped);
        -- (a group of one table is none)
        DELETE FROM @extschema@.colocated_tables c
        WHERE (SELECT count(*) FROM @extschema@.colocated_tables g WHERE g.colocation_group = c.colocation_group) = 1;
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION placement_records_drop() FROM PUBLIC;

COMMENT ON FUNCTION placement_records_drop() IS
'deletes the records of partition_unique_constraints, partition_foreign_keys and colocated_tables of the tables dropped (internal)';

CREATE EVENT TRIGGER placement_records_drop ON sql_drop
EXECUTE FUNCTION placement_records_drop();
