-- src/sql/consistent_hashing/xxh3_64.sql
--	xxh3_64(key): the stable 64-bit hash of text, bytea and uuid keys

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
