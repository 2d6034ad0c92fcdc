-- src/sql/consistent_hashing/jumpbackhash.sql
--	jumpbackhash(key, buckets): JumpBackHash of bigint, text, bytea and uuid keys, as hash4j

CREATE FUNCTION jumpbackhash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by JumpBackHash with SplitMix64 (Ertl 2024), as hash4j''s ConsistentHashing.jumpBackHash(splitMix64_V1())';

CREATE FUNCTION jumpbackhash(key text, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(text, int) IS
'bucket in [0, buckets) of a text key: jumpbackhash(xxh3_64(key), buckets)';

CREATE FUNCTION jumpbackhash(key bytea, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bytea, int) IS
'bucket in [0, buckets) of a bytea key: jumpbackhash(xxh3_64(key), buckets)';

CREATE FUNCTION jumpbackhash(key uuid, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(uuid, int) IS
'bucket in [0, buckets) of a uuid key: jumpbackhash(xxh3_64(key), buckets)';
