-- sql/src/resharding/reshard_check.sql
--	reshard_check: the rows in the wrong partition

CREATE FUNCTION reshard_check(parent regclass)
RETURNS TABLE (partition regclass, bucket int, rows bigint, misplaced_rows bigint)
LANGUAGE plpgsql STABLE STRICT
AS $function$
DECLARE
    ext text;
    lay record;
    expr text;
BEGIN
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_catalog.pg_extension WHERE extname = 'subsetting';
    FOR lay IN EXECUTE format('SELECT * FROM %s.sharding_layout($1)', ext) USING parent LOOP
        CONTINUE WHEN lay.partition IS NULL;
        EXECUTE format('SELECT %s.reshard_bucket_sql($1, $2, $3)', ext) INTO expr USING lay.hash_function, lay.key, lay.buckets;
        partition := lay.partition;
        bucket := lay.bucket;
        EXECUTE format('SELECT count(*), count(*) FILTER (WHERE %s IS DISTINCT FROM %s) FROM %s', expr,
                       coalesce(lay.bucket::text, 'NULL'), lay.partition)
            INTO rows, misplaced_rows;
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_check(regclass) IS
'rows in the wrong partition of a table partitioned by the extension (a shard written to directly can drift): per partition, its rows and how many do not belong to its bucket';
