-- src/sql/resharding/reshard_plan_bucket.sql
--	reshard_plan_bucket: the bucket that a resharding adds or removes, and the new layout's buckets (internal)

-- reshard_plan's checks of the partition that comes or goes, resharding
-- (adding or removing a bucket), after reshard_plan_table's, with the
-- table's layout (its method, buckets, removed buckets and partitions by
-- bucket): s.partition, the partition named, is given (removing a bucket
-- of a jump hash, NULL is the last one's); a new one is not a partition
-- yet, one removed is one of the table's, not its only one; a jump hash
-- adds and removes only its last bucket.  Returns the partition, its
-- bucket, and the new layout's buckets and removed buckets.  Not revoked
-- from PUBLIC: reshard_plan runs as the table's owner, any role, and calls
-- it in SQL (a privilege checked); it reads the catalog and raises errors.
CREATE FUNCTION reshard_plan_bucket(s reshard_state, operation text, method text, buckets int, removed int[],
                                    partitions regclass[], OUT partition regclass, OUT bucket int,
                                    OUT new_buckets int, OUT new_removed int[])
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    partition := s.partition;
    -- The bucket that comes or goes.  jumpbackanchorhash removes any bucket
    -- (pushed on its removed stack) and adds back the most recently removed
    -- one (hash4j's rules, in the extension's functions); the jump hashes
    -- add and remove only the last one.
    IF partition IS NULL AND operation = 'remove' AND method <> 'jumpbackanchorhash' THEN
        partition := partitions[buckets];   -- the jump hashes remove the last bucket
    END IF;
    IF partition IS NULL AND operation = 'add' THEN
        RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
    ELSIF partition IS NULL THEN
        RAISE EXCEPTION 'the partition of % to remove must be named', parent
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'jumpbackanchorhash can remove any bucket: CALL reshard_remove_partition(parent, partition).';
    END IF;
    IF operation = 'add' THEN
        IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
            RAISE EXCEPTION 'table % is already a partition', partition USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF method = 'jumpbackanchorhash' THEN
            SELECT * INTO new_buckets, new_removed, bucket FROM @extschema@.jumpbackanchorhash_add_bucket(buckets, removed);
        ELSE
            new_buckets := buckets + 1;
            new_removed := '{}';
            bucket := buckets;
        END IF;
    ELSE
        bucket := array_position(partitions, partition) - 1;
        IF bucket IS NULL THEN
            RAISE EXCEPTION 'table % is not a partition of %', partition, parent USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF cardinality(array_remove(partitions, NULL)) = 1 THEN
            RAISE EXCEPTION 'cannot remove the only partition of %', parent USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF method = 'jumpbackanchorhash' THEN
            SELECT * INTO new_buckets, new_removed FROM @extschema@.jumpbackanchorhash_remove_bucket(buckets, removed, bucket);
        ELSIF bucket <> buckets - 1 THEN
            RAISE EXCEPTION 'partition % is not the last bucket''s partition of %', partition, parent
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('%s removes only the last bucket, %s, held by %s.', method, buckets - 1, partitions[buckets]);
        ELSE
            new_buckets := buckets - 1;
            new_removed := '{}';
        END IF;
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_plan_bucket(reshard_state, text, text, int, int[], regclass[]) IS
'resharding: the plan''s checks of the partition that comes or goes, its bucket and the new layout''s buckets (internal)';
