/*
 * src/jump_sql.c
 *		SQL functions that map a key to one of n buckets by JumpBackHash
 *		(jumpbackhash) or JumpHash (jumphash), of bigint, text, bytea and
 *		uuid keys, and xxh3_64, the stable 64-bit hash by which a text, bytea
 *		or uuid key is placed: jumpbackhash(x, n) of such a key x is
 *		jumpbackhash(xxh3_64(x), n), and likewise jumphash.  xxh3_64 of a
 *		bigint hashes its 8 little-endian bytes.
 *
 * The work is done by the pure core (src/core/jump.c) and by key_hash.c.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "compat.h"
#include "core/jump.h"
#include "key_hash.h"

static inline void
check_buckets(int32 buckets)
{
	if (buckets < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of buckets must be at least 1, got %d", buckets)));
}

/*
 * jumpbackhash(key, buckets) and jumphash(key, buckets), C functions
 * back_name and jump_name, of the key that key_expr reads from argument 0.
 * The number of buckets is checked before the key is read (and hashed).
 */
#define JUMP_FUNCTIONS(back_name, jump_name, key_expr) \
PG_FUNCTION_INFO_V1(back_name); \
Datum \
back_name(PG_FUNCTION_ARGS) \
{ \
	int32		buckets = PG_GETARG_INT32(1); \
\
	check_buckets(buckets); \
	PG_RETURN_INT32(jump_back_hash((key_expr), buckets)); \
} \
\
PG_FUNCTION_INFO_V1(jump_name); \
Datum \
jump_name(PG_FUNCTION_ARGS) \
{ \
	int32		buckets = PG_GETARG_INT32(1); \
\
	check_buckets(buckets); \
	PG_RETURN_INT32(jump_consistent_hash((key_expr), buckets)); \
}

/*
 * For a text, bytea or uuid key: xxh3_64(key), C function xxh3_64_<type>,
 * and the jumpbackhash and jumphash of it, jumpbackhash_<type> and
 * jumphash_<type>.  hash_expr hashes argument 0.
 */
#define KEY_FUNCTIONS(type, hash_expr) \
PG_FUNCTION_INFO_V1(xxh3_64_##type); \
Datum \
xxh3_64_##type(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_INT64((int64) (hash_expr)); \
} \
\
JUMP_FUNCTIONS(jumpbackhash_##type, jumphash_##type, hash_expr)

JUMP_FUNCTIONS(jumpbackhash, jumphash, (uint64) PG_GETARG_INT64(0))
KEY_FUNCTIONS(text, key_hash_text(PG_GETARG_TEXT_PP(0)))
KEY_FUNCTIONS(bytea, key_hash_bytea(PG_GETARG_BYTEA_PP(0)))
KEY_FUNCTIONS(uuid, key_hash_uuid(PG_GETARG_UUID_P(0)))

/*
 * xxh3_64(bigint): XXH3-64 of the key's 8 little-endian bytes, for the
 * functions that take a bigint key as already hashed (the ring's lookups).
 * jumpbackhash and jumphash of a bigint mix the key themselves, so there is
 * no jumpbackhash of it.
 */
PG_FUNCTION_INFO_V1(xxh3_64_int8);
Datum
xxh3_64_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) key_hash_int8(PG_GETARG_INT64(0)));
}
