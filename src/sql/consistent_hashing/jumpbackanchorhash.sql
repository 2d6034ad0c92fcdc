-- src/sql/consistent_hashing/jumpbackanchorhash.sql
--	jumpbackanchorhash(key, buckets, removed) and jumpbackanchorhash(key, state): JumpBackAnchorHash, as hash4j

-- hash4j's ConsistentJumpBackAnchorBucketSetHasher (SplitMix64): JumpBackHash
-- with the removal of any bucket.  A set of buckets is (buckets, removed):
-- hash4j's historicMaxNumBuckets and its stack of removed buckets, oldest
-- first; or state: the bytes of hash4j's getState().
CREATE FUNCTION jumpbackanchorhash(key bigint, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bigint, int, int[]) IS
'bucket of a key among buckets 0 .. buckets - 1 less the removed ones (oldest first), exactly as hash4j''s jumpBackAnchorHash(splitMix64_V1()); with nothing removed, jumpbackhash(key, buckets)';

CREATE FUNCTION jumpbackanchorhash(key text, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(text, int, int[]) IS
'bucket of a text key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key bytea, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bytea, int, int[]) IS
'bucket of a bytea key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key uuid, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(uuid, int, int[]) IS
'bucket of a uuid key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key bigint, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bigint_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bigint, bytea) IS
'bucket of a key in the set of buckets whose state is hash4j''s getState() bytes, exactly as hash4j''s setState(state).getBucket(key)';

CREATE FUNCTION jumpbackanchorhash(key text, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_text_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(text, bytea) IS
'bucket of a text key: jumpbackanchorhash(xxh3_64(key), state)';

CREATE FUNCTION jumpbackanchorhash(key bytea, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bytea_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bytea, bytea) IS
'bucket of a bytea key: jumpbackanchorhash(xxh3_64(key), state)';

CREATE FUNCTION jumpbackanchorhash(key uuid, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_uuid_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(uuid, bytea) IS
'bucket of a uuid key: jumpbackanchorhash(xxh3_64(key), state)';
