-- src/sql/partition_hash/jumpbackhash_partitioning_problems.sql
--	jumpbackhash_partitioning_problems: what keeps a table from placing rows by JumpBackHash

CREATE FUNCTION jumpbackhash_partitioning_problems(parent regclass)
RETURNS SETOF text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    key_columns int;
    class text;
    key_collation oid;
    buckets int;
    part record;
    remainders int[] := '{}';
    moduli_ok boolean := true;
BEGIN
    -- Not STRICT: no rows for a NULL would read as "no problems".
    IF parent IS NULL THEN
        RAISE EXCEPTION 'parent must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT p.partnatts,
           (SELECT opcname FROM pg_opclass WHERE oid = p.partclass[0]),
           p.partcollation[0]
    INTO key_columns, class, key_collation
    FROM pg_partitioned_table p
    WHERE p.partrelid = parent AND p.partstrat = 'h';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by hash', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF class !~ '^jumpbackhash[1-9][0-9]*_(int2|int4|int8|text|bytea|uuid)_ops$' THEN
        IF EXISTS (SELECT FROM pg_partitioned_table p, unnest(p.partclass::oid[]) AS c(oid), pg_opclass o
                   WHERE p.partrelid = parent AND o.oid = c.oid AND o.opcname ~ '^jumpbackhash[0-9]+_') THEN
            RETURN NEXT format('the first key column of %s does not use a jumpbackhash operator class, a later one does: '
                               'rows are not placed by jumpbackhash', parent);
        ELSE
            RETURN NEXT format('the partition key of %s uses no jumpbackhash operator class', parent);
        END IF;
        RETURN;
    END IF;
    buckets := substring(class FROM '^jumpbackhash([0-9]+)_')::int;
    IF key_columns > 1 THEN
        RETURN NEXT format('the partition key of %s has %s columns: with more than one, rows are not placed by '
                           'jumpbackhash(key, %s) but by a hash of all columns', parent, key_columns, buckets);
    END IF;
    IF key_collation <> 0 AND NOT (SELECT collisdeterministic FROM pg_collation WHERE oid = key_collation) THEN
        RETURN NEXT format('the partition key of %s has the nondeterministic collation %s: no row can be placed',
                           parent, key_collation::regcollation);
    END IF;
    FOR part IN
        SELECT c.oid::regclass AS partition,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'modulus (\d+)')::int AS modulus,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'remainder (\d+)')::int AS remainder
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = parent
        ORDER BY remainder, modulus
    LOOP
        IF part.modulus <> buckets THEN
            moduli_ok := false;
            RETURN NEXT format('partition %s has MODULUS %s, not %s: it holds the rows with '
                               'jumpbackhash(key, %s) %% %s = %s', part.partition, part.modulus, buckets,
                               buckets, part.modulus, part.remainder);
        END IF;
        remainders := remainders || part.remainder;
    END LOOP;
    IF moduli_ok THEN
        RETURN QUERY
        SELECT format('no partition of %s for bucket %s: inserting a row of that bucket fails', parent, b)
        FROM generate_series(0, buckets - 1) AS b
        WHERE b <> ALL (remainders)
        ORDER BY b
        LIMIT 10;
    END IF;
END
$function$;

COMMENT ON FUNCTION jumpbackhash_partitioning_problems(regclass) IS
'what keeps a table partitioned by hash with a jumpbackhash<N>_<type>_ops class from holding exactly the rows with jumpbackhash(key, N) = b in its partition of REMAINDER b: a partition of another MODULUS than N, more than one key column, a nondeterministic collation, missing buckets; no row if none; a NULL table is an error';
