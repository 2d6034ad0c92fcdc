-- src/sql/resharding/reshard_plan_partitions.sql
--	reshard_plan_partitions: what a resharding refuses of the partitions, old and new (internal)

-- reshard_plan's checks of the partitions, resharding (adding or removing
-- a bucket), after reshard_plan_parent's: the new partition (s.partition,
-- adding) has no foreign key of its own; every partition, old (the
-- table's, by bucket) and new, is a table or a foreign table of the
-- table's owner with the table's columns and check constraints, and no
-- code of its own; each one here has the table's PRIMARY KEY and UNIQUE
-- constraints that its partitions keep; the new one is empty.  Not revoked from PUBLIC:
-- reshard_plan runs as the table's owner, any role, and calls it in SQL (a
-- privilege checked); it reads the catalog and the new partition (whether
-- it has a row, once every partition is known to be a table or a foreign
-- table of the table's owner) and raises errors, with its caller's rights.
CREATE FUNCTION reshard_plan_partitions(s reshard_state, operation text, partitions regclass[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    p pg_class;
    r record;
    rels regclass[];
    bad text;
    hint text;
    not_empty boolean;
    i int;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
    -- A table co-located with others keeps their bucket count.
    IF cardinality(@extschema@.colocated_with(parent)) > 1 THEN
        RAISE EXCEPTION 'cannot reshard %, it is co-located with %', parent,
                        array_to_string((@extschema@.colocated_with(parent))[2:], ', ')
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Co-located tables have the same buckets; a resharding changes one table''s.',
                  HINT = format('SELECT %s.uncolocate(%L) takes it out of its group first.',
                                (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                                 WHERE x.extname = 'subsetting'), parent::text);
    END IF;
    -- The new partition is given the table's foreign keys at the cutover;
    -- one of its own would act on the copies while they are made (a
    -- cascade from the table it refers to would delete a copy the change
    -- log then deletes again).
    IF operation = 'add' THEN
        SELECT string_agg(format('%I', conname), ', ') INTO bad
        FROM pg_constraint WHERE conrelid = partition AND contype = 'f' AND conparentid = 0;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard % with %, it has foreign keys: %', parent, partition, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('The resharding gives %s the foreign keys of %s when it attaches it.', partition, parent),
                      HINT = format('ALTER TABLE %s DROP CONSTRAINT %s.', partition, bad);
        END IF;
    END IF;

    -- The partitions, old and new: tables or foreign tables of the parent's
    -- owner with the parent's columns, and no code of their own.
    rels := ARRAY(SELECT DISTINCT x FROM unnest(partitions || partition) AS x WHERE x IS NOT NULL);
    FOR i IN 1 .. cardinality(rels) LOOP
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
        -- The table's PRIMARY KEY and UNIQUE constraints that its partitions
        -- keep (unique_constraints_to_partitions): each partition here has
        -- them (a table on a server has them from its move).
        SELECT string_agg(format('%I (%s)', u.name, u.definition), ', ' ORDER BY u.name),
               string_agg(format('ALTER TABLE %s ADD %s;', rels[i], u.definition), ' ' ORDER BY u.name)
        INTO bad, hint
        FROM @extschema@.partition_unique_constraints u
        WHERE u.parent = s.parent AND r.relkind = 'r'
          AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = rels[i] AND c.contype IN ('p', 'u')
                                                        AND pg_get_constraintdef(c.oid) = u.definition);
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'table % lacks the unique constraint % that the partitions of % keep', rels[i], bad, parent
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Each partition of the table enforces its PRIMARY KEY and UNIQUE constraints itself.',
                      HINT = hint;
        END IF;
        SELECT string_agg(x, ', ') INTO bad FROM (
            SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = rels[i] AND NOT tgisinternal
            UNION ALL SELECT format('foreign key %I', conname) FROM pg_constraint
                      WHERE conrelid = rels[i] AND contype = 'f' AND conparentid = 0 AND rels[i] <> s.partition
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
                                AND pg_get_expr(pd.adbin, pd.adrelid) = pg_get_expr(ad.adbin, ad.adrelid))) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard % with %, it has % that % does not have', parent, rels[i], bad, parent
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Rows are written to and deleted from the partitions; code there would run during the move.',
                      HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
    END LOOP;
    IF operation = 'add' THEN
        EXECUTE format('SELECT EXISTS (SELECT FROM %s)', partition) INTO STRICT not_empty;
        IF not_empty THEN
            RAISE EXCEPTION 'table % is not empty', partition
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'The new partition receives the rows that move to its bucket, and nothing else.';
        END IF;
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_plan_partitions(reshard_state, text, regclass[]) IS
'resharding: the plan''s checks of the partitions, old and new (internal)';
