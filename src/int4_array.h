/*
 * src/int4_array.h
 *		The int4[] results of the SQL skin: node ids, subsets, removed
 *		buckets.
 */
#ifndef SUBSETTING_INT4_ARRAY_H
#define SUBSETTING_INT4_ARRAY_H

#include "catalog/pg_type.h"
#include "utils/array.h"

#include "compat.h"

/*
 * A one-dimensional int4[] of count elements (lower bound 1): a copy of
 * values, or zeros to fill in through ARR_DATA_PTR when values is NULL.
 * count 0 gives the empty array, which has no dimensions.
 */
static inline ArrayType *
int4_array(const int32 *values, int count)
{
	Size		bytes = ARR_OVERHEAD_NONULLS(1) + sizeof(int32) * (Size) count;
	ArrayType  *array;

	if (count == 0)
		return construct_empty_array(INT4OID);
	array = (ArrayType *) palloc0(bytes);
	SET_VARSIZE(array, bytes);
	array->ndim = 1;
	array->dataoffset = 0;
	array->elemtype = INT4OID;
	ARR_DIMS(array)[0] = count;
	ARR_LBOUND(array)[0] = 1;
	if (values != NULL)
		memcpy(ARR_DATA_PTR(array), values, sizeof(int32) * (Size) count);
	return array;
}

#endif							/* SUBSETTING_INT4_ARRAY_H */
