/* sql/subsetting--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION subsetting UPDATE TO '1.1'" to load this file. \quit

--
-- Key to bucket: JumpBackAnchorHash
--
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

CREATE FUNCTION jumpbackanchorhash_state(buckets int, removed int[] DEFAULT '{}')
RETURNS bytea
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_state(int, int[]) IS
'the state (hash4j''s getState() bytes: buckets, then each removed bucket oldest first, as 4-byte little-endian integers) of buckets with the removed ones';

CREATE FUNCTION jumpbackanchorhash_buckets(state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_buckets'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_buckets(bytea) IS
'the buckets of a state: the number of buckets ever in use (hash4j''s historicMaxNumBuckets), removed ones included';

CREATE FUNCTION jumpbackanchorhash_removed(state bytea)
RETURNS int[]
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_removed'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_removed(bytea) IS
'the removed buckets of a state, oldest first';

CREATE FUNCTION jumpbackanchorhash_add_bucket(INOUT buckets int, INOUT removed int[] DEFAULT '{}',
                                              OUT bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_add_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_add_bucket(int, int[]) IS
'hash4j''s addBucket(): the set with one bucket more, and that bucket: the most recently removed one, or, with none removed, the new bucket number buckets';

CREATE FUNCTION jumpbackanchorhash_add_bucket(INOUT state bytea, OUT bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_add_bucket_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_add_bucket(bytea) IS
'hash4j''s addBucket() on a state: the new state and the bucket added (the most recently removed one, or a new last one)';

CREATE FUNCTION jumpbackanchorhash_remove_bucket(INOUT buckets int, INOUT removed int[], bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_remove_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_remove_bucket(int, int[], int) IS
'hash4j''s removeBucket(bucket): the set without that bucket; only its keys move. The last bucket with none removed shrinks buckets; the only bucket left empties the set (0 buckets)';

CREATE FUNCTION jumpbackanchorhash_remove_bucket(state bytea, bucket int)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_remove_bucket_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_remove_bucket(bytea, int) IS
'hash4j''s removeBucket(bucket) on a state: the new state, without that bucket';


--
-- Hash operator classes: PARTITION BY HASH placed by JumpBackHash
--


--
-- Resharding
--


--
-- Partition ring
--

