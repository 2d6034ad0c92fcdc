/*
 * src/subsets.c
 *		SQL functions for backend subsetting: which of the N backend tasks
 *		frontend task m connects to.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "compat.h"
#include "core/ringsteady.h"

/*
 * The most members a subset may have: 2^24 (a 64 MiB array).  Larger
 * requests are refused before anything is allocated.
 */
#define MAX_SUBSET_MEMBERS (1 << 24)

static inline void
check_frontend(int32 frontend)
{
	if (frontend < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("frontend must be at least 0, got %d", frontend)));
}

static inline void
check_backends(int32 backends)
{
	if (backends < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of backends must be at least 1, got %d", backends)));
}

static inline void
check_subset_size(int32 subset_size)
{
	if (subset_size < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("subset size must be at least 0, got %d", subset_size)));
}

/*
 * The number of members of a subset of subset_size out of backends (all
 * backends when subset_size is larger), refused if it is too many.
 */
static int32
subset_members(int32 backends, int32 subset_size)
{
	int32		members = Min(subset_size, backends);

	if (members > MAX_SUBSET_MEMBERS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("subset of %d backends is too large", members),
				 errdetail("A subset has at most %d members.", MAX_SUBSET_MEMBERS)));
	return members;
}

/*
 * A one-dimensional int4 array of `members` (> 0) elements, to be filled in.
 * (An empty array is construct_empty_array's, with no dimensions.)
 */
static ArrayType *
new_int4_array(int32 members)
{
	Size		bytes = ARR_OVERHEAD_NONULLS(1) + sizeof(int32) * (Size) members;
	ArrayType  *array = (ArrayType *) palloc0(bytes);

	SET_VARSIZE(array, bytes);
	array->ndim = 1;
	array->dataoffset = 0;
	array->elemtype = INT4OID;
	ARR_DIMS(array)[0] = members;
	ARR_LBOUND(array)[0] = 1;
	return array;
}

PG_FUNCTION_INFO_V1(ringsteady_subset);
Datum
ringsteady_subset(PG_FUNCTION_ARGS)
{
	int32		frontend = PG_GETARG_INT32(0);
	int32		backends = PG_GETARG_INT32(1);
	int32		subset_size = PG_GETARG_INT32(2);
	bool		backend_scaling = PG_GETARG_BOOL(3);
	int32		members;
	ArrayType  *subset;

	check_frontend(frontend);
	check_backends(backends);
	check_subset_size(subset_size);
	members = subset_members(backends, subset_size);
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = new_int4_array(members);
	ringsteady_write_subset((uint32) frontend, (uint32) backends, (uint32) members,
							backend_scaling, (uint32 *) ARR_DATA_PTR(subset));
	PG_RETURN_ARRAYTYPE_P(subset);
}
