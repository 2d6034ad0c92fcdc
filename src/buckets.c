/*
 * src/buckets.c
 *		SQL functions that map a key to one of n buckets: jumpbackhash and
 *		jumphash of a bigint key, the stable 64-bit key hash xxh3_64 of text,
 *		bytea and uuid keys, and the jumpbackhash and jumphash overloads that
 *		take those keys.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/uuid.h"

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

PG_FUNCTION_INFO_V1(jumpbackhash);
Datum
jumpbackhash(PG_FUNCTION_ARGS)
{
	uint64		key = (uint64) PG_GETARG_INT64(0);
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(key, buckets));
}

PG_FUNCTION_INFO_V1(jumphash);
Datum
jumphash(PG_FUNCTION_ARGS)
{
	uint64		key = (uint64) PG_GETARG_INT64(0);
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(key, buckets));
}

/*
 * xxh3_64(text), xxh3_64(bytea) and xxh3_64(uuid): one SQL name, three C
 * functions named after the SQL name and the argument type.
 */
PG_FUNCTION_INFO_V1(xxh3_64_text);
Datum
xxh3_64_text(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) key_hash_text(PG_GETARG_TEXT_PP(0)));
}

PG_FUNCTION_INFO_V1(xxh3_64_bytea);
Datum
xxh3_64_bytea(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) key_hash_bytea(PG_GETARG_BYTEA_PP(0)));
}

PG_FUNCTION_INFO_V1(xxh3_64_uuid);
Datum
xxh3_64_uuid(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) key_hash_uuid(PG_GETARG_UUID_P(0)));
}

/*
 * jumpbackhash(x, buckets) and jumphash(x, buckets) of a text, bytea or uuid
 * key x: the same as of the bigint xxh3_64(x).  The number of buckets is
 * checked before the key is hashed.
 */
PG_FUNCTION_INFO_V1(jumpbackhash_text);
Datum
jumpbackhash_text(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(key_hash_text(PG_GETARG_TEXT_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumpbackhash_bytea);
Datum
jumpbackhash_bytea(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(key_hash_bytea(PG_GETARG_BYTEA_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumpbackhash_uuid);
Datum
jumpbackhash_uuid(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(key_hash_uuid(PG_GETARG_UUID_P(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_text);
Datum
jumphash_text(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(key_hash_text(PG_GETARG_TEXT_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_bytea);
Datum
jumphash_bytea(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(key_hash_bytea(PG_GETARG_BYTEA_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_uuid);
Datum
jumphash_uuid(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(key_hash_uuid(PG_GETARG_UUID_P(0)), buckets));
}
