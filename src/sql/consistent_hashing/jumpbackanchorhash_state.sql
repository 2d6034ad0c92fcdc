-- src/sql/consistent_hashing/jumpbackanchorhash_state.sql
--	JumpBackAnchorHash's bucket sets: hash4j's state bytes, addBucket and removeBucket

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
