-- src/sql/consistent_hashing/jumphash.sql
--	jumphash(key, buckets): Lamping-Veach jump consistent hash of bigint, text, bytea and uuid keys

CREATE FUNCTION jumphash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by jump consistent hash (Lamping and Veach 2014), as the paper''s C++ code and ClickHouse''s jumpConsistentHash';

CREATE FUNCTION jumphash(key text, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(text, int) IS
'bucket in [0, buckets) of a text key: jumphash(xxh3_64(key), buckets)';

CREATE FUNCTION jumphash(key bytea, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bytea, int) IS
'bucket in [0, buckets) of a bytea key: jumphash(xxh3_64(key), buckets)';

CREATE FUNCTION jumphash(key uuid, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(uuid, int) IS
'bucket in [0, buckets) of a uuid key: jumphash(xxh3_64(key), buckets)';
