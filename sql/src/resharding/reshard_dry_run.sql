-- sql/src/resharding/reshard_dry_run.sql
--	reshard_dry_run: what a resharding would move

CREATE FUNCTION reshard_dry_run(parent regclass, buckets int DEFAULT NULL)
RETURNS TABLE (partition regclass, bucket int, rows bigint, rows_to_move bigint)
LANGUAGE plpgsql STABLE
AS $function$
DECLARE
    ext text;
    lay record;
    new_expr text;
BEGIN
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_catalog.pg_extension WHERE extname = 'subsetting';
    FOR lay IN EXECUTE format('SELECT * FROM %s.sharding_layout($1)', ext) USING parent LOOP
        IF lay.partition IS NULL OR lay.bucket IS NULL THEN
            RAISE EXCEPTION 'table % is not partitioned by the extension one bucket a partition', parent
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF buckets IS NOT NULL AND buckets < 1 THEN
            RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets USING ERRCODE = 'invalid_parameter_value';
        END IF;
        EXECUTE format('SELECT %s.reshard_bucket_sql($1, $2, $3)', ext) INTO new_expr
            USING lay.hash_function, lay.key, coalesce(buckets, lay.buckets + 1);
        partition := lay.partition;
        bucket := lay.bucket;
        EXECUTE format('SELECT count(*), count(*) FILTER (WHERE %s <> %s) FROM %s', new_expr, lay.bucket, lay.partition)
            INTO rows, rows_to_move;
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_dry_run(regclass, int) IS
'what resharding to buckets (default: one more) would move, changing nothing: per partition, its rows and how many of them would leave it';
