/*
 * src/buckets.c
 *		SQL functions that map a key to one of n buckets: jumpbackhash and
 *		jumphash.
 */
#include "postgres.h"

#include "fmgr.h"

#include "compat.h"
#include "core/jump.h"

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
