-- src/sql/resharding/reshard_plan_table.sql
--	reshard_plan_table: the table a resharding or a move works on, and its layout (internal)

-- reshard_plan's first checks, of every operation, as the table's owner:
-- the table is not named as its own partition (s.partition); it is
-- partitioned by the extension, one partition for each bucket but those
-- removed; it is not a partition itself; its key uses nothing but what is
-- built in, the extension's or a superuser's; its owner may create in its
-- schema (the engine's tables go there); no foreign key refers to its
-- partitions.  Returns its layout (sharding_layout): the partitions by
-- bucket (indexed by bucket + 1, NULL for a bucket removed).  Not revoked
-- from PUBLIC: reshard_plan runs as the table's owner, any role, and calls
-- it in SQL (a privilege checked); it reads the catalog and raises errors,
-- with its caller's rights.
CREATE FUNCTION reshard_plan_table(s reshard_state, operation text,
                                   OUT method text, OUT hash_function text, OUT key text, OUT buckets int,
                                   OUT operator_class text, OUT removed int[], OUT partitions regclass[])
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    p pg_class;
    r record;
    bad text;
    i int;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
    -- The table named as its own partition (CALL reshard_add_partition('t', 't')).
    IF partition = parent THEN
        RAISE EXCEPTION 'table % is the table being resharded, not a partition of its own', partition
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = CASE WHEN operation = 'add'
                                THEN 'new_partition names the table that reshard_add_partition gives a new partition.'
                                ELSE 'partition names the table that reshard_remove_partition takes a partition from.' END,
                  HINT = CASE WHEN operation = 'add'
                              THEN format('Create an empty table like it and name that: CREATE TABLE %s (LIKE %s INCLUDING ALL).',
                                          quote_ident(p.relname || '_new'), parent)
                              ELSE format('Name one of its partitions, or NULL for the last bucket''s: CALL reshard_remove_partition(%L).',
                                          parent::text) END;
    END IF;

    -- The layout: one partition for each bucket.
    SELECT l.method, l.hash_function, l.key, l.buckets, l.operator_class, coalesce(l.removed, '{}')
    INTO method, hash_function, key, buckets, operator_class, removed
    FROM @extschema@.sharding_layout(parent, true) AS l LIMIT 1;
    IF method IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s, not LIST (jumpbackhash(key, n)), LIST (jumphash(key, n)), LIST (jumpbackanchorhash(key, n, removed)) or HASH (key jumpbackhash<n>_<type>_ops).',
                                  coalesce(pg_get_partkeydef(parent), 'none'));
    END IF;
    partitions := array_fill(NULL::regclass, ARRAY[buckets]);
    FOR r IN SELECT * FROM @extschema@.sharding_layout(parent, true) AS l WHERE l.partition IS NOT NULL LOOP
        IF r.bucket IS NULL OR partitions[r.bucket + 1] IS NOT NULL THEN
            RAISE EXCEPTION 'partition % of % is not the only one for one bucket in [0, %)', r.partition, parent, buckets
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Its bound is %s.', r.partition_bound),
                      HINT = CASE WHEN method = 'hash_operator_class'
                                  THEN format('Each partition must be FOR VALUES WITH (MODULUS %s, REMAINDER b), one for each bucket b.', buckets)
                                  ELSE 'Each partition must be FOR VALUES IN (b), one for each bucket b.' END;
        END IF;
        partitions[r.bucket + 1] := r.partition;
    END LOOP;
    FOR i IN 1 .. buckets LOOP
        IF partitions[i] IS NULL AND NOT (i - 1) = ANY (removed) THEN
            RAISE EXCEPTION 'table % has no partition for bucket %', parent, i - 1
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;

    -- Checks of resharding and moving alike.  The table is not a partition itself.
    IF p.relispartition THEN
        RAISE EXCEPTION 'cannot reshard %, it is a partition itself', parent USING ERRCODE = 'feature_not_supported';
    END IF;
    -- The partition key is evaluated for every row: its functions,
    -- operators (and their functions) and operator classes must be built
    -- in, the extension's, or a superuser's.
    WITH used AS (
        SELECT d.refclassid AS class, d.refobjid AS object FROM pg_depend d
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent
          AND d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass, 'pg_opclass'::regclass)
        UNION
        SELECT 'pg_proc'::regclass, o.oprcode FROM pg_depend d JOIN pg_operator o ON o.oid = d.refobjid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_operator'::regclass)
    SELECT string_agg(DISTINCT pg_describe_object(u.class, u.object, 0), ', ') INTO bad
    FROM used u
    WHERE u.object >= 16384   -- not built in
      AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                      WHERE e.classid = u.class AND e.objid = u.object AND e.deptype = 'e')
      AND NOT EXISTS (SELECT FROM pg_roles o
                      WHERE o.rolsuper
                        AND o.oid = CASE u.class WHEN 'pg_proc'::regclass THEN (SELECT proowner FROM pg_proc WHERE oid = u.object)
                                                 WHEN 'pg_operator'::regclass THEN (SELECT oprowner FROM pg_operator WHERE oid = u.object)
                                                 ELSE (SELECT opcowner FROM pg_opclass WHERE oid = u.object) END);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, its partition key uses %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The key is evaluated for every row, as the table''s owner: only functions, operators and operator classes that are built in, the extension''s or a superuser''s may appear in it.';
    END IF;
    -- The engine's tables (the change log, the shadows) are made in the table's schema, by its owner.
    IF NOT has_schema_privilege(p.relowner, p.relnamespace, 'CREATE') THEN
        RAISE EXCEPTION 'cannot reshard %, its owner % cannot create tables in schema %',
                        parent, p.relowner::regrole, p.relnamespace::regnamespace
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The engine''s tables are created by the table''s owner, in the same schema.';
    END IF;
    -- Rows referenced by a foreign key cannot move out of their partition.
    SELECT string_agg(format('%s of %s', quote_ident(c.conname), c.conrelid::regclass), ', '
                      ORDER BY c.conrelid::regclass::text, c.conname) INTO bad
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (partitions || partition)
      -- (a move takes a co-located table's with it: partition_foreign_keys.sql)
      AND NOT (operation = 'move' AND @extschema@.partition_foreign_key_kept(c.oid));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys refer to its partitions: %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows that move would leave the partition the foreign key refers to.',
                  HINT = CASE WHEN EXISTS (SELECT FROM @extschema@.partition_foreign_keys k WHERE k.referenced = s.parent)
                              THEN 'These are foreign keys between co-located tables that their partitions keep (foreign_keys_to_partitions), which a resharding would break; foreign_keys_to_parent gives them back to their tables.'
                              ELSE 'Drop those foreign keys before resharding.' END;
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_plan_table(reshard_state, text) IS
'resharding: the plan''s checks of the table, and its layout (internal)';
