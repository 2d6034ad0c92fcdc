-- src/sql/resharding/sharding_layout.sql
--	sharding_layout: how a table is partitioned by the extension

CREATE FUNCTION sharding_layout(parent regclass, missing_ok boolean DEFAULT false)
RETURNS TABLE (method text, hash_function text, key text, buckets int, removed int[], operator_class text,
               bucket int, partition regclass, partition_bound text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    key_def text;
    parts text[];
    strategy "char";
    key_attnum int2;
    class_oid oid;
BEGIN
    -- The block ends by EXIT layout where the table turns out not to be
    -- partitioned by the extension, and by RETURN where it is.
    <<layout>>
    BEGIN
        SELECT pt.partstrat, pg_get_expr(pt.partexprs, pt.partrelid), pt.partattrs[0], pt.partclass[0]
        INTO strategy, key_def, key_attnum, class_oid
        FROM pg_catalog.pg_partitioned_table pt
        WHERE pt.partrelid = parent AND pt.partnatts = 1;
        removed := '{}';
        IF strategy = 'l' AND key_attnum = 0 THEN
            -- LIST (F(key, n)), F one of the extension's functions: printed
            -- schema-qualified (the search_path is pg_catalog's, not the
            -- caller's, whose operators and functions could be anyone's).
            parts := pg_catalog.regexp_match(key_def,
                '^((?:(?:"(?:[^"]|"")+"|[^".(), ]+)\.)?(jumpbackhash|jumphash|jumpbackanchorhash))\((.*), (\d+)(?:, ''(\{[0-9,]*\})''::integer\[\])?\)$');
            IF parts[5] IS NOT NULL AND parts[2] <> 'jumpbackanchorhash' THEN
                EXIT layout;
            END IF;
            IF parts IS NULL OR NOT EXISTS (
                    SELECT FROM pg_catalog.pg_depend d
                    JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid AND p.proname = parts[2]
                    JOIN pg_catalog.pg_depend e ON e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                         AND e.objid = p.oid AND e.deptype = 'e'
                    JOIN pg_catalog.pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                    WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = parent
                      AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass) THEN
                EXIT layout;
            END IF;
            method := parts[2];
            hash_function := parts[1];
            key := parts[3];
            buckets := parts[4]::int;
            removed := coalesce(parts[5], '{}')::int[];
        ELSIF strategy = 'h' THEN
            -- HASH (key jumpbackhash<N>_<type>_ops), a class of the extension's
            -- schema: REMAINDER b holds the rows with jumpbackhash(key, N) = b.
            SELECT o.opcname,
                   substring(o.opcname FROM '^jumpbackhash([1-9][0-9]{0,8})_(?:int2|int4|int8|text|bytea|uuid)_ops$')::int
            INTO operator_class, buckets
            FROM pg_catalog.pg_opclass o WHERE o.oid = class_oid AND o.opcnamespace = '@extschema@'::pg_catalog.regnamespace;
            IF buckets IS NULL THEN
                EXIT layout;
            END IF;
            method := 'hash_operator_class';
            hash_function := '@extschema@.jumpbackhash';
            key := CASE WHEN key_attnum = 0 THEN '(' || key_def || ')'
                        ELSE (SELECT pg_catalog.quote_ident(a.attname) FROM pg_catalog.pg_attribute a
                              WHERE a.attrelid = parent AND a.attnum = key_attnum) END;
        ELSE
            EXIT layout;
        END IF;
        FOR bucket, partition, partition_bound IN
            SELECT CASE WHEN b.v ~ '^\d{1,9}$' AND b.v::int < buckets AND (b.m IS NULL OR b.m = buckets::text)
                             AND NOT b.v::int = ANY (removed)
                        THEN b.v::int END,
                   c.oid::regclass, b.bound
            FROM pg_catalog.pg_inherits i
            JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
            CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) AS b0
            CROSS JOIN LATERAL (
                SELECT b0.bound,
                       CASE WHEN strategy = 'l' THEN substring(b0.bound FROM '^FOR VALUES IN \((\d+)\)$')
                            ELSE substring(b0.bound FROM '^FOR VALUES WITH \(modulus \d+, remainder (\d+)\)$') END AS v,
                       substring(b0.bound FROM '^FOR VALUES WITH \(modulus (\d+), remainder \d+\)$') AS m) AS b
            WHERE i.inhparent = parent
            ORDER BY 1, 2
        LOOP
            RETURN NEXT;
        END LOOP;
        IF NOT FOUND THEN
            bucket := NULL;
            partition := NULL;
            partition_bound := NULL;
            RETURN NEXT;
        END IF;
        RETURN;
    END layout;
    IF NOT missing_ok THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s, not LIST (jumpbackhash(key, n)), LIST (jumphash(key, n)), LIST (jumpbackanchorhash(key, n, removed)) or HASH (key jumpbackhash<n>_<type>_ops).',
                                  coalesce(pg_get_partkeydef(parent), 'none')),
                  HINT = 'sharding_layout(table, missing_ok => true) returns no row for such a table instead.';
    END IF;
END
$function$;

COMMENT ON FUNCTION sharding_layout(regclass, boolean) IS
'how a table is partitioned by the extension: one row per partition with the method (jumpbackhash or jumphash for BY LIST (F(key, n)), hash_operator_class for BY HASH (key jumpbackhash<n>_<type>_ops)), the hash function that places a key (schema-qualified), the key expression, the bucket count, the removed buckets (none for these methods), the operator class, the partition''s bucket (NULL if its bound is not one bucket in range) and its bound; a table not partitioned by the extension is an error (22023), or no row with missing_ok';
