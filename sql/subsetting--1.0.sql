/* sql/subsetting--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION subsetting" to load this file. \quit

--
-- Key to bucket: consistent hashing
--

CREATE FUNCTION jumpbackhash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by JumpBackHash with SplitMix64 (Ertl 2024), as hash4j''s ConsistentHashing.jumpBackHash(splitMix64_V1())';

CREATE FUNCTION jumphash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by jump consistent hash (Lamping and Veach 2014), as the paper''s C++ code and ClickHouse''s jumpConsistentHash';

--
-- Keys of any type: a stable 64-bit key hash, and the buckets of text, bytea
-- and uuid keys
--

CREATE FUNCTION xxh3_64(key text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(text) IS
'XXH3-64 (seed 0) of the UTF-8 bytes of the text, whatever the database encoding, as a signed 64-bit integer';

CREATE FUNCTION xxh3_64(key bytea)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(bytea) IS
'XXH3-64 (seed 0) of the bytes, as a signed 64-bit integer';

CREATE FUNCTION xxh3_64(key uuid)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(uuid) IS
'XXH3-64 (seed 0) of the 16 bytes of the uuid in network byte order, as a signed 64-bit integer';

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

