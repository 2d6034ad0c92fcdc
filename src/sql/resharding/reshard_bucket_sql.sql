-- src/sql/resharding/reshard_bucket_sql.sql
--	reshard_bucket_sql: the SQL expression of a key's bucket (internal)

-- Its text is run: by the engine as the partition key of the resharded
-- table, by reshard_check and reshard_dry_run in their counts.  So it
-- refuses what would not be the bucket of one key by one of the extension's
-- functions: another function, fewer than one bucket, and a key that is not
-- one expression (a top-level comma, a parenthesis closed that was not
-- opened or left open, a semicolon, a comment, a dollar quote), which would
-- change what the text runs.  The key is read as PostgreSQL reads it: string
-- literals ('...', E'...') and quoted names ("...") first.
CREATE FUNCTION reshard_bucket_sql(hash_function text, key text, buckets int, removed int[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    ident text[];
    rest text;
    depth int := 0;
    c text;
BEGIN
    IF hash_function IS NULL OR key IS NULL OR buckets IS NULL THEN
        RAISE EXCEPTION '% must not be null',
                        CASE WHEN hash_function IS NULL THEN 'hash_function' WHEN key IS NULL THEN 'key' ELSE 'buckets' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- hash_function: [schema.]name, the extension's jumpbackhash, jumphash
    -- or jumpbackanchorhash: qualified as sharding_layout writes it, or not
    -- (then the caller's search_path must find the extension's).
    IF hash_function ~ '^(?:(?:"(?:[^"]|"")+"|[^".(), ]+)\.)?(jumpbackhash|jumphash|jumpbackanchorhash)$' THEN
        ident := parse_ident(hash_function);
    END IF;
    IF ident IS NULL OR NOT EXISTS (
            SELECT FROM pg_proc p
            JOIN pg_namespace n ON n.oid = p.pronamespace
            JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
            JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'subsetting'
            WHERE p.proname = ident[cardinality(ident)]
              AND CASE WHEN cardinality(ident) = 2 THEN n.nspname = ident[1] ELSE n.oid = '@extschema@'::regnamespace END) THEN
        RAISE EXCEPTION 'hash function % is not the extension''s jumpbackhash, jumphash or jumpbackanchorhash', hash_function
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Name one qualified by the extension''s schema, as sharding_layout gives it: %s.jumpbackhash.',
                                '@extschema@');
    END IF;
    IF buckets < 1 THEN
        RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- key: one expression.  Its literals and quoted names go first.
    rest := regexp_replace(key, $re$[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"$re$, '0', 'g');
    IF btrim(rest) = '' OR rest ~ $re$[;$'"\\]|--|/\*$re$ THEN
        depth := -1;
    END IF;
    FOREACH c IN ARRAY regexp_split_to_array(rest, '') LOOP
        EXIT WHEN depth < 0;
        IF c IN ('(', '[') THEN
            depth := depth + 1;
        ELSIF c IN (')', ']') THEN
            depth := depth - 1;
        ELSIF c = ',' AND depth = 0 THEN
            depth := -1;
        END IF;
    END LOOP;
    IF depth <> 0 THEN
        RAISE EXCEPTION 'key % is not one expression', key
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The bucket is %s(key, %s): a key with a comma outside parentheses, a parenthesis or bracket that does not match, a semicolon, a comment or a dollar quote would change what it runs.',
                                  hash_function, buckets),
                  HINT = 'Give the key as sharding_layout gives it: a column name or an expression.';
    END IF;
    IF hash_function ~ 'jumpbackanchorhash"?$' AND cardinality(removed) > 0 THEN
        RETURN format('%s(%s, %s, %L::integer[])', hash_function, key, buckets, removed::text);
    END IF;
    RETURN format('%s(%s, %s)', hash_function, key, buckets);
END
$function$;

COMMENT ON FUNCTION reshard_bucket_sql(text, text, int, int[]) IS
'the SQL expression of a key''s bucket, as sharding_layout describes the partitioning, for a given bucket count: the partition key of a resharded table; refuses another function than the extension''s jumpbackhash, jumphash or jumpbackanchorhash, fewer than one bucket and a key that is not one expression (internal)';
