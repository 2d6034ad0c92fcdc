-- src/sql/resharding/reshard_plan_key.sql
--	reshard_plan_key: the new layout's partition key, bucket expressions and bounds (internal)

-- reshard_plan's last check, and the layouts of the state row: s holds the
-- table (parent), its method, key, and old and new buckets; hash_function,
-- operator_class and the removed buckets, old and new, are the rest of
-- the layouts (sharding_layout, reshard_plan_bucket).  Returns s with the
-- old and new layouts' bucket expressions (reshard_bucket_sql), the new
-- parent's PARTITION BY and a partition's bound; refused: the operator
-- class of the new bucket count, partitioning BY HASH, if it does not
-- exist.  Not revoked from PUBLIC: reshard_plan runs as the table's owner,
-- any role, and calls it in SQL (a privilege checked); it reads the
-- catalog and raises errors.
CREATE FUNCTION reshard_plan_key(s reshard_state, hash_function text, operator_class text, old_removed int[],
                                 new_removed int[]) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    new_opclass text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    s.old_bucket_sql := @extschema@.reshard_bucket_sql(hash_function, s.key, s.old_buckets, old_removed);
    s.new_bucket_sql := @extschema@.reshard_bucket_sql(hash_function, s.key, s.new_buckets, new_removed);
    IF s.method = 'hash_operator_class' THEN
        -- A NULL key goes to remainder 0.
        s.old_bucket_sql := format('COALESCE(%s, 0)', s.old_bucket_sql);
        s.new_bucket_sql := format('COALESCE(%s, 0)', s.new_bucket_sql);
        new_opclass := regexp_replace(operator_class, '^jumpbackhash[0-9]+_', 'jumpbackhash' || s.new_buckets || '_');
        IF NOT EXISTS (SELECT FROM pg_opclass WHERE opcname = new_opclass AND opcnamespace = '@extschema@'::regnamespace) THEN
            RAISE EXCEPTION 'operator class %.% does not exist', '@extschema@', new_opclass
                USING ERRCODE = 'undefined_object',
                      DETAIL = format('Resharding %s to %s buckets partitions it by HASH (%s %s).', parent, s.new_buckets, s.key, new_opclass),
                      HINT = format('A superuser can create it: SELECT %s.jumpbackhash_create_operator_classes(%s).', '@extschema@', s.new_buckets);
        END IF;
        SELECT format('HASH (%s%s %s.%I)', s.key,
                      CASE WHEN pt.partcollation[0] <> 0 THEN ' COLLATE ' || pt.partcollation[0]::regcollation::text ELSE '' END,
                      '@extschema@', new_opclass)
        INTO s.new_partition_by FROM pg_partitioned_table pt WHERE pt.partrelid = parent;
        s.new_bound := format('FOR VALUES WITH (MODULUS %s, REMAINDER %%s)', s.new_buckets);
    ELSE
        s.new_partition_by := format('LIST (%s)', s.new_bucket_sql);
        s.new_bound := 'FOR VALUES IN (%s)';
    END IF;
    RETURN s;
END
$function$;

COMMENT ON FUNCTION reshard_plan_key(reshard_state, text, text, int[], int[]) IS
'resharding: the new layout''s partition key, the bucket expressions and bounds of the state row (internal)';
