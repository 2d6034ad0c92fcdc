-- sql/src/resharding/reshard_prepare.sql
--	reshard_prepare: the checks and the plan of a resharding (internal)

-- Checks everything and returns the plan the phases follow (internal).
CREATE PROCEDURE reshard_prepare(parent regclass, operation text, partition regclass, INOUT plan jsonb DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    ext name;
    p pg_catalog.pg_class;
    lay record;
    n int;
    new_n int;
    method text;
    hf text;
    key_sql text;
    opclass text;
    new_opclass text;
    old_removed int[] := '{}';
    new_removed int[] := '{}';
    old_parts regclass[];
    new_parts_arr regclass[];
    new_bucket int;
    b int;
    partition_by text;
    bound_sql text;
    parts regclass[];
    bad text;
    r record;
    rels regclass[];
    removed_part regclass;
    resuming boolean := false;
    cols text;
    row_sql text;
    old_expr text;
    new_expr text;
    sources jsonb := '[]';
    targets jsonb := '[]';
    new_parts jsonb := '[]';
    not_empty boolean;
    i int;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    SELECT e.extnamespace::regnamespace::name INTO STRICT ext FROM pg_extension e WHERE e.extname = 'subsetting';
    IF parent IS NULL THEN
        RAISE EXCEPTION 'parent must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF now() < statement_timestamp() THEN   -- the transaction began before this statement
        RAISE EXCEPTION 'cannot reshard % inside a transaction block', parent
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'Resharding commits several transactions of its own.',
                  HINT = 'Call it on its own, outside BEGIN ... COMMIT.';
    END IF;
    SELECT * INTO p FROM pg_class WHERE oid = parent;
    IF NOT pg_has_role(current_user, p.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table % to reshard it', parent
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    -- The layout: one partition for each bucket.
    EXECUTE format('SELECT l.method, l.hash_function, l.key, l.buckets, l.operator_class, l.removed FROM %I.sharding_layout($1) AS l LIMIT 1', ext)
    INTO lay USING parent;
    IF lay.method IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s, not LIST (jumpbackhash(key, n)), LIST (jumphash(key, n)) or HASH (key jumpbackhash<n>_<type>_ops).',
                                  coalesce(pg_get_partkeydef(parent), 'none'));
    END IF;
    method := lay.method;
    opclass := lay.operator_class;
    old_removed := lay.removed;
    hf := lay.hash_function;
    key_sql := lay.key;
    n := lay.buckets;
    parts := array_fill(NULL::regclass, ARRAY[n]);
    FOR r IN EXECUTE format('SELECT * FROM %I.sharding_layout($1) AS l WHERE l.partition IS NOT NULL', ext) USING parent LOOP
        IF r.bucket IS NULL OR parts[r.bucket + 1] IS NOT NULL THEN
            RAISE EXCEPTION 'partition % of % is not the only one for one bucket in [0, %)', r.partition, parent, n
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Its bound is %s.', r.partition_bound),
                      HINT = CASE WHEN method = 'hash_operator_class'
                                  THEN format('Each partition must be FOR VALUES WITH (MODULUS %s, REMAINDER b), one for each bucket b.', n)
                                  ELSE 'Each partition must be FOR VALUES IN (b), one for each bucket b.' END;
        END IF;
        parts[r.bucket + 1] := r.partition;
    END LOOP;
    FOR i IN 1 .. n LOOP
        IF parts[i] IS NULL AND NOT (i - 1) = ANY (old_removed) THEN
            RAISE EXCEPTION 'table % has no partition for bucket %', parent, i - 1
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;

    IF method = 'jumpbackanchorhash' THEN
        -- Any bucket can go (pushed on the removed stack), and adding takes
        -- back the most recently removed one (hash4j's rules, in the
        -- extension's functions).
        old_parts := parts;
        new_parts_arr := parts;
        IF operation = 'add' THEN
            IF partition IS NULL THEN
                RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
            END IF;
            IF partition = ANY (parts) THEN
                resuming := true;   -- called again after a failure past the swap
                new_bucket := array_position(parts, partition) - 1;
                new_n := n;
                new_removed := old_removed;
                old_parts[new_bucket + 1] := NULL;
            ELSE
                IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                    RAISE EXCEPTION 'table % is already a partition', partition USING ERRCODE = 'invalid_parameter_value';
                END IF;
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_add_bucket($1, $2)', ext)
                INTO new_n, new_removed, new_bucket USING n, old_removed;
                new_parts_arr[new_bucket + 1] := partition;
            END IF;
        ELSIF operation = 'remove' THEN
            IF partition IS NULL THEN
                RAISE EXCEPTION 'the partition of % to remove must be named', parent
                    USING ERRCODE = 'null_value_not_allowed',
                          HINT = 'jumpbackanchorhash can remove any bucket: CALL reshard_remove_partition(parent, partition).';
            END IF;
            IF partition = ANY (parts) THEN
                IF cardinality(array_remove(parts, NULL)) = 1 THEN
                    RAISE EXCEPTION 'cannot remove the only partition of %', parent USING ERRCODE = 'invalid_parameter_value';
                END IF;
                b := array_position(parts, partition) - 1;
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_remove_bucket($1, $2, $3)', ext)
                INTO new_n, new_removed USING n, old_removed, b;
                new_parts_arr[b + 1] := NULL;
            ELSE
                -- Removed by a call that failed after the swap: it held the
                -- most recently removed bucket.
                IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) OR cardinality(old_removed) = 0 THEN
                    RAISE EXCEPTION 'table % is not a partition of %', partition, parent USING ERRCODE = 'invalid_parameter_value';
                END IF;
                resuming := true;
                new_n := n;
                new_removed := old_removed;
                b := old_removed[cardinality(old_removed)];
                old_removed := old_removed[1 : cardinality(old_removed) - 1];
                old_parts[b + 1] := partition;
            END IF;
            removed_part := partition;
        ELSE
            RAISE EXCEPTION 'unknown resharding operation %', operation;
        END IF;
    ELSIF operation = 'add' THEN
        IF partition IS NULL THEN
            RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF parts[n] = partition AND n > 1 THEN
            -- Called again after a failure past the swap: finish the clean-up.
            resuming := true;
            new_n := n;
            n := n - 1;
        ELSE
            IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                RAISE EXCEPTION 'table % is already a partition', partition
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            new_n := n + 1;
            parts := parts || partition;
        END IF;
    ELSIF operation = 'remove' THEN
        IF partition IS NOT NULL AND NOT partition = ANY (parts) THEN
            -- A partition removed by a call that failed after the swap:
            -- finish moving its rows.
            IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                RAISE EXCEPTION 'table % is a partition of another table', partition
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            resuming := true;
            new_n := n;
            n := n + 1;
            parts := parts || partition;
        ELSE
            IF n = 1 THEN
                RAISE EXCEPTION 'cannot remove the only partition of %', parent
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF partition IS NOT NULL AND partition <> parts[n] THEN
                RAISE EXCEPTION 'partition % is not the last bucket''s partition of %', partition, parent
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = format('%s removes only the last bucket, %s, held by %s.', method, n - 1, parts[n]);
            END IF;
            new_n := n - 1;
        END IF;
    ELSE
        RAISE EXCEPTION 'unknown resharding operation %', operation;
    END IF;
    IF method <> 'jumpbackanchorhash' THEN
        removed_part := CASE WHEN operation = 'remove' THEN parts[n] END;
        old_parts := parts[1 : n];
        new_parts_arr := parts[1 : new_n];
        new_bucket := new_n - 1;
    END IF;

    -- The parent: nothing that cannot be carried over to the new parent.
    IF p.relispartition THEN
        RAISE EXCEPTION 'cannot reshard %, it is a partition itself', parent USING ERRCODE = 'feature_not_supported';
    END IF;
    -- A NOT NULL constraint NOT VALID (PostgreSQL 18): rows may hold NULLs,
    -- which the new partition, created LIKE the parent, would refuse.
    SELECT string_agg(quote_ident(c.conname), ', ') INTO bad
    FROM pg_constraint c WHERE c.conrelid = parent AND c.contype = 'n' AND NOT c.convalidated;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, its NOT NULL constraint % is not valid', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows may hold NULLs that the partitions of the resharded table would refuse.',
                  HINT = format('Validate it first: ALTER TABLE %s VALIDATE CONSTRAINT %s.', parent, bad);
    END IF;
    IF EXISTS (SELECT FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
               WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                 AND d.refobjid = parent AND d.deptype IN ('a', 'i')) THEN
        RAISE EXCEPTION 'cannot reshard %, it owns a sequence (serial or identity column)', parent
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Detach the sequence with ALTER SEQUENCE ... OWNED BY NONE, or drop the identity.';
    END IF;
    SELECT string_agg(x, ', ') INTO bad FROM (
        SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = parent AND NOT tgisinternal
        UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = parent
        UNION ALL SELECT 'row level security' WHERE p.relrowsecurity
        UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = parent
        UNION ALL SELECT format('security label of %s', provider) FROM pg_seclabel
                  WHERE classoid = 'pg_class'::regclass AND objoid = parent) AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, it has %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The parent is created again; these cannot be carried over.',
                  HINT = 'Drop them before resharding and create them again after.';
    END IF;
    -- Objects that depend on the parent or its row type and would be dropped
    -- with it: views, rules and policies of other tables, functions with a
    -- SQL-standard body, columns of its row type...
    SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), ', ') INTO bad
    FROM pg_depend d
    WHERE d.deptype = 'n'
      AND ((d.refclassid = 'pg_class'::regclass AND d.refobjid = parent)
           OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = p.reltype))
      AND NOT (d.classid = 'pg_constraint'::regclass)                     -- own constraints, foreign keys: carried over
      AND NOT (d.classid = 'pg_attrdef'::regclass)
      AND NOT (d.classid = 'pg_statistic_ext'::regclass)
      AND NOT (d.classid = 'pg_publication_rel'::regclass)
      AND NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = parent))
      AND NOT (d.classid = 'pg_type'::regclass AND d.objid IN (SELECT typarray FROM pg_type WHERE oid = p.reltype));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, other objects depend on it: %', parent, bad
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = 'The parent is created again, with a new OID; they would have to be dropped with the old one.',
                  HINT = 'Drop them before resharding and create them again after.';
    END IF;
    -- Functions in the partition key other than built-in ones or the
    -- extension's would run during the move.
    SELECT string_agg(DISTINCT d.refobjid::regprocedure::text, ', ') INTO bad
    FROM pg_depend d JOIN pg_proc f ON f.oid = d.refobjid
    WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_proc'::regclass
      AND f.pronamespace <> 'pg_catalog'::regnamespace
      AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                      WHERE e.classid = 'pg_proc'::regclass AND e.objid = f.oid AND e.deptype = 'e');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, its partition key calls %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Only built-in functions and the extension''s own may appear in the key.';
    END IF;
    -- Foreign keys of other tables to the parent are dropped and created
    -- again; publications are altered: the caller must be allowed to.
    SELECT string_agg(DISTINCT c.conrelid::regclass::text, ', ') INTO bad
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
      AND NOT pg_has_role(current_user, t.relowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys of tables you do not own refer to it: %', parent, bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The owner of those tables, or a superuser, can reshard it.';
    END IF;
    SELECT string_agg(pb.pubname::text, ', ') INTO bad
    FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    WHERE pr.prrelid = parent AND NOT pg_has_role(current_user, pb.pubowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, it is in publications you do not own: %', parent, bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The owner of the publications, or a superuser, can reshard it.';
    END IF;
    IF NOT pg_has_role(current_user, p.relowner, 'MEMBER')
       OR NOT has_schema_privilege(p.relowner, p.relnamespace, 'CREATE') THEN
        RAISE EXCEPTION 'cannot reshard %, its owner % cannot create tables in schema %',
                        parent, p.relowner::regrole, p.relnamespace::regnamespace
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The new parent is created by the table''s owner, in the same schema.';
    END IF;

    -- Rows referenced by a foreign key cannot move out of their partition.
    SELECT string_agg(format('%s of %s', quote_ident(c.conname), c.conrelid::regclass), ', ') INTO bad
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (parts);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys refer to its partitions: %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows that move would leave the partition the foreign key refers to.',
                  HINT = 'Drop those foreign keys before resharding.';
    END IF;

    -- The partitions, old and new: same owner as the parent, the parent's
    -- columns, and no code of their own (they are written to as their owner).
    rels := ARRAY(SELECT DISTINCT x FROM unnest(old_parts || new_parts_arr) AS x WHERE x IS NOT NULL);
    FOR i IN 1 .. array_length(rels, 1) LOOP
        SELECT * INTO r FROM pg_class WHERE oid = rels[i];
        IF r.relkind NOT IN ('r', 'f') THEN
            RAISE EXCEPTION 'cannot reshard %, % is not a table or foreign table', parent, rels[i]
                USING ERRCODE = 'feature_not_supported';
        END IF;
        IF r.relowner <> p.relowner THEN
            RAISE EXCEPTION 'table % is owned by %, not by %, the owner of %', rels[i], r.relowner::regrole,
                            p.relowner::regrole, parent
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Resharding writes to every partition and must not run code of another role.',
                      HINT = format('ALTER TABLE %s OWNER TO %s, if that is right.', rels[i], p.relowner::regrole);
        END IF;
        SELECT string_agg(DISTINCT quote_ident(coalesce(a.attname, pa.attname)), ', ') INTO bad
        FROM (SELECT * FROM pg_attribute WHERE attrelid = rels[i] AND attnum > 0 AND NOT attisdropped) a
        FULL JOIN (SELECT * FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped) pa
             ON pa.attname = a.attname
        WHERE a.attname IS NULL OR pa.attname IS NULL OR a.atttypid <> pa.atttypid OR a.atttypmod <> pa.atttypmod
           OR a.attcollation <> pa.attcollation OR a.attgenerated <> pa.attgenerated
           OR (pa.attnotnull AND NOT a.attnotnull);
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'table % does not have the columns of %: %', rels[i], parent, bad
                USING ERRCODE = 'datatype_mismatch',
                      DETAIL = 'A partition has the parent''s columns, with the same names, types, collations and NOT NULL.',
                      HINT = 'Create it with CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
        -- PostgreSQL attaches a partition only if it has every CHECK
        -- constraint of the parent.
        SELECT string_agg(quote_ident(pc.conname), ', ') INTO bad
        FROM pg_constraint pc
        WHERE pc.conrelid = parent AND pc.contype = 'c'
          AND pg_get_constraintdef(pc.oid) NOT IN
              (SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.conrelid = rels[i] AND c.contype = 'c');
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'table % lacks the check constraint % of %', rels[i], bad, parent
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
        SELECT string_agg(x, ', ') INTO bad FROM (
            SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = rels[i] AND NOT tgisinternal
            UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = rels[i]
            UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = rels[i]
            UNION ALL SELECT 'row level security' FROM pg_class WHERE oid = rels[i] AND relrowsecurity
            UNION ALL
            SELECT format('check constraint %I', c.conname) FROM pg_constraint c
            WHERE c.conrelid = rels[i] AND c.contype = 'c'
              AND pg_get_constraintdef(c.oid) NOT IN
                  (SELECT pg_get_constraintdef(pc.oid) FROM pg_constraint pc WHERE pc.conrelid = parent AND pc.contype = 'c')
            UNION ALL
            SELECT format('index %s with an expression or predicate', x.indexrelid::regclass) FROM pg_index x
            WHERE x.indrelid = rels[i] AND (x.indexprs IS NOT NULL OR x.indpred IS NOT NULL)
              AND (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                   FROM generate_series(1, x.indnatts) AS k) || ' WHERE ' || coalesce(pg_get_expr(x.indpred, x.indrelid, true), '')
                  NOT IN (SELECT (SELECT string_agg(pg_get_indexdef(px.indexrelid, k, true), ', ' ORDER BY k)
                                  FROM generate_series(1, px.indnatts) AS k)
                                 || ' WHERE ' || coalesce(pg_get_expr(px.indpred, px.indrelid, true), '')
                          FROM pg_index px WHERE px.indrelid = parent)
            UNION ALL
            SELECT format('%s of column %I', CASE WHEN a.attgenerated <> '' THEN 'generation expression' ELSE 'default' END,
                          a.attname)
            FROM pg_attribute a JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
            WHERE a.attrelid = rels[i]
              AND NOT EXISTS (SELECT FROM pg_attribute pa JOIN pg_attrdef pd ON pd.adrelid = pa.attrelid AND pd.adnum = pa.attnum
                              WHERE pa.attrelid = parent AND pa.attname = a.attname AND pa.attgenerated = a.attgenerated
                                AND pg_get_expr(pd.adbin, pd.adrelid) = pg_get_expr(ad.adbin, ad.adrelid))
) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard % with %, it has % that % does not have', parent, rels[i], bad, parent
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Rows are written to and deleted from the partitions; code there would run during the move.',
                      HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
    END LOOP;

    IF operation = 'add' AND NOT resuming THEN
        EXECUTE format('SELECT EXISTS (SELECT FROM %s)', partition) INTO STRICT not_empty;
        IF not_empty THEN
            RAISE EXCEPTION 'table % is not empty', partition
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The new partition must be empty; rows left there by a failed call that did not swap the parent can be deleted.';
        END IF;
    END IF;

    -- The new parent's partition key and its partitions' bounds.
    IF method = 'hash_operator_class' THEN
        new_opclass := regexp_replace(opclass, '^jumpbackhash[0-9]+_', 'jumpbackhash' || new_n || '_');
        IF NOT EXISTS (SELECT FROM pg_opclass WHERE opcname = new_opclass AND opcnamespace = (SELECT oid FROM pg_namespace WHERE nspname = ext)) THEN
            RAISE EXCEPTION 'operator class %.% does not exist', quote_ident(ext), new_opclass
                USING ERRCODE = 'undefined_object',
                      DETAIL = format('Resharding %s to %s buckets partitions it by HASH (%s %s).', parent, new_n, key_sql, new_opclass),
                      HINT = format('A superuser can create it: SELECT %I.jumpbackhash_create_operator_classes(%s).', ext, new_n);
        END IF;
        SELECT format('HASH (%s%s %I.%I)', key_sql,
                      CASE WHEN pt.partcollation[0] <> 0 THEN ' COLLATE ' || pt.partcollation[0]::regcollation::text ELSE '' END,
                      ext, new_opclass)
        INTO partition_by FROM pg_partitioned_table pt WHERE pt.partrelid = parent;
        bound_sql := format('FOR VALUES WITH (MODULUS %s, REMAINDER %%s)', new_n);
    END IF;

    -- The plan.
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum),
           'ROW(' || string_agg('x.' || quote_ident(attname), ', ' ORDER BY attnum) || ')::text'
    INTO cols, row_sql
    FROM pg_attribute
    WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
    EXECUTE format('SELECT %I.reshard_bucket_sql($1, $2, $3, $4)', ext) INTO old_expr USING hf, key_sql, n, old_removed;
    EXECUTE format('SELECT %I.reshard_bucket_sql($1, $2, $3, $4)', ext) INTO new_expr USING hf, key_sql, new_n, new_removed;
    IF partition_by IS NULL THEN
        partition_by := format('LIST (%s)', new_expr);
        bound_sql := 'FOR VALUES IN (%s)';
    END IF;
    -- Sources: the partitions of the old layout, with the condition of their
    -- rows that move.  Targets: the partitions of the new layout that
    -- receive rows, with the condition of the copies they hold (rows that are
    -- not of their old bucket).
    FOR i IN 1 .. coalesce(array_length(old_parts, 1), 0) LOOP
        CONTINUE WHEN old_parts[i] IS NULL;
        -- Removing a bucket moves only its rows (these hashes move a key
        -- only from the bucket that goes).
        CONTINUE WHEN operation = 'remove' AND old_parts[i] <> removed_part;
        -- Adding, the new partition (called again) is no source.
        CONTINUE WHEN operation = 'add' AND old_parts[i] = partition;
        sources := sources || jsonb_build_object(
            'rel', old_parts[i]::text, 'local', (SELECT relkind <> 'f' FROM pg_class WHERE oid = old_parts[i]),
            'bucket', i - 1,
            'moving', CASE WHEN old_parts[i] = removed_part THEN 'true' ELSE format('%s <> %s', new_expr, i - 1) END);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(new_parts_arr, 1), 0) LOOP
        CONTINUE WHEN new_parts_arr[i] IS NULL;
        new_parts := new_parts || jsonb_build_object('rel', new_parts_arr[i]::text, 'bucket', i - 1);
        IF (operation = 'add' AND i - 1 = new_bucket) OR operation = 'remove' THEN
            targets := targets || jsonb_build_object(
                'rel', new_parts_arr[i]::text, 'local', (SELECT relkind <> 'f' FROM pg_class WHERE oid = new_parts_arr[i]),
                'bucket', i - 1,
                'copies', CASE WHEN operation = 'add' THEN 'true' ELSE format('%s <> %s', old_expr, i - 1) END);
        END IF;
    END LOOP;
    plan := jsonb_build_object(
        'ext', ext, 'operation', operation, 'resuming', resuming,
        'parent', parent::text, 'schema', p.relnamespace::regnamespace::text, 'name', p.relname,
        'owner', p.relowner::regrole::text, 'caller', quote_ident(current_user),
        'method', method, 'hash_function', hf, 'key', key_sql, 'old_n', n, 'new_n', new_n,
        'old_expr', old_expr, 'new_expr', new_expr, 'cols', cols, 'row', row_sql,
        'partition_by', partition_by, 'bound', bound_sql,
        'sources', sources, 'targets', targets, 'partitions', new_parts,
        'removed', removed_part::text, 'validate', '[]'::jsonb);
END
$function$;

COMMENT ON PROCEDURE reshard_prepare(regclass, text, regclass, jsonb) IS
'checks that a table can be resharded (operation add or remove) and returns the plan the phases follow (internal)';
