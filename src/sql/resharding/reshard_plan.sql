-- src/sql/resharding/reshard_plan.sql
--	reshard_plan: the checks of a resharding, and its state row (internal)

-- As the table's owner, in a security-restricted operation (the engine,
-- src/resharding/driver.c, checked that the caller owns the table or is a
-- superuser).  Checks everything that can be checked before anything is
-- made, and returns the state row of a new resharding (not yet written):
-- the old layout's partitions by bucket, the new layout's bucket
-- expression, partition key and bounds.  Nothing of the table's is run: no
-- function or operator in the key that is neither built in nor the
-- extension's, no code of its own on a partition.  s holds the table
-- (parent), the partition named (partition), shard_views (NULL: decided
-- here, where the shards allow it), nothing else.  The checks are routines
-- of their own, called in this order, each of what it is named for
-- (reshard_plan_*.sql): the table and its layout, the bucket that comes or
-- goes, the parent, the partitions old and new, and shard_views; then the
-- new layout's key.  (A move has a plan of its own: move_plan.)
CREATE FUNCTION reshard_plan(s reshard_state, operation text) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    p pg_class;
    lay record;           -- the table's layout (reshard_plan_table)
    n int;
    new_n int;
    old_removed int[];
    new_removed int[];
    parts regclass[];
    b int;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
    IF operation IS NULL OR operation NOT IN ('add', 'remove') THEN
        RAISE EXCEPTION 'unknown resharding operation %', coalesce(operation, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The table, and its layout: one partition for each bucket (the
    -- check a move's plan makes too, move_plan).
    SELECT * INTO lay FROM @extschema@.reshard_plan_table(s, operation);
    n := lay.buckets;
    old_removed := lay.removed;
    parts := lay.partitions;

    -- The bucket that comes or goes (removing, NULL: the last one's).
    SELECT c.partition, c.bucket, c.new_buckets, c.new_removed INTO partition, b, new_n, new_removed
    FROM @extschema@.reshard_plan_bucket(s, operation, lay.method, n, old_removed, parts) AS c;
    s.partition := partition;
    -- The parent: nothing that cannot be carried over to the new parent.
    PERFORM @extschema@.reshard_plan_parent(s, operation);
    -- The partitions, old and new: tables or foreign tables of the
    -- parent's owner with the parent's columns, and no code of their own.
    PERFORM @extschema@.reshard_plan_partitions(s, operation, parts);
    -- shard_views: decided where the shards allow it, or checked.
    s := @extschema@.reshard_plan_shard_views(s, parts, lay.key);

    -- The state row: the layouts.
    s.parent := parent;
    s.parent_name := parent::text;
    s.operation := operation;
    s.partition := partition;
    s.bucket := b;
    s.method := lay.method;
    s.key := lay.key;
    s.old_buckets := n;
    s.new_buckets := new_n;
    s := @extschema@.reshard_plan_key(s, lay.hash_function, lay.operator_class, old_removed, new_removed);
    s.sources := parts::oid[];
    s.shadows := '{}';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_plan(reshard_state, text) FROM PUBLIC;

COMMENT ON FUNCTION reshard_plan(reshard_state, text) IS
'resharding: the checks before anything is made, and the state row of a new resharding (internal)';
