-- src/sql/resharding/reshard_bucket_sql.sql
--	reshard_bucket_sql: the SQL expression of a key's bucket (internal)

CREATE FUNCTION reshard_bucket_sql(hash_function text, key text, buckets int, removed int[] DEFAULT '{}')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN hash_function ~ 'jumpbackanchorhash"?$' AND cardinality(removed) > 0
            THEN pg_catalog.format('%s(%s, %s, %L::integer[])', hash_function, key, buckets, removed::text)
            ELSE pg_catalog.format('%s(%s, %s)', hash_function, key, buckets) END
$$;

COMMENT ON FUNCTION reshard_bucket_sql(text, text, int, int[]) IS
'the SQL expression of a key''s bucket, as sharding_layout describes the partitioning, for a given bucket count: the partition key of a resharded table (internal)';
