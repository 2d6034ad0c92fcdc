/*
 * src/jumpbackanchor_sql.c
 *		SQL functions of JumpBackAnchorHash (JumpBackHash with removals of
 *		any bucket, as hash4j): jumpbackanchorhash of bigint, text, bytea and
 *		uuid keys, given a set of buckets in either of its two forms; the
 *		conversions between the forms (jumpbackanchorhash_state,
 *		_buckets, _removed); adding and removing buckets
 *		(jumpbackanchorhash_add_bucket, jumpbackanchorhash_remove_bucket).
 *
 * The work is done by the pure core (src/core/jumpbackanchor.c); a text,
 * bytea or uuid key is placed by its xxh3_64 (key_hash.h).
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/uuid.h"

#include "compat.h"
#include "core/jumpbackanchor.h"
#include "int4_array.h"
#include "key_hash.h"
#include "module.h"

/*
 * A set of buckets comes in two forms: (buckets, removed), hash4j's
 * historicMaxNumBuckets and its stack of removed buckets oldest first, or
 * state, the bytes of hash4j's getState().  Both are checked whole (range,
 * repeats, limit) before any use.  A lookup decodes its set once per call
 * site and keeps it in fn_extra with a copy of the argument's bytes; the
 * next call compares the bytes (or, where the argument is a constant of the
 * expression, trusts it) and decodes again only if they differ.
 */

/* Where the removed buckets of an error come from, for its messages. */
typedef enum anchor_form
{
	ANCHOR_LIST,				/* buckets int, removed int[] */
	ANCHOR_STATE				/* state bytea */
} anchor_form;

typedef struct anchor_cache
{
	bool		valid;
	bool		constant;		/* the set's arguments are constants */
	int32		buckets;		/* list form: the buckets argument */
	Size		len;			/* the bytes of the removed array or state */
	char	   *bytes;
	void	   *memory;
	jump_back_anchor h;
} anchor_cache;

static void
anchor_too_many(int64 count)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many removed buckets: %lld", (long long) count),
			 errdetail("At most %d buckets can be removed: the decoded set, about %d bytes a removed bucket, "
					   "is kept in memory for the whole query at every place the function is called.",
					   JUMP_BACK_ANCHOR_MAX_REMOVED, JUMP_BACK_ANCHOR_BYTES_PER_REMOVED)));
}

/* Raises the error of a status from decoding a set. */
static void
anchor_report(jump_back_anchor_status status, const jump_back_anchor_problem *problem,
			  int32 buckets, int64 count, anchor_form form)
{
	switch (status)
	{
		case JUMP_BACK_ANCHOR_OK:
			return;
		case JUMP_BACK_ANCHOR_EBUCKETS:
			if (form == ANCHOR_STATE)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid jumpbackanchorhash state: number of buckets is negative, got %d", buckets),
						 errdetail("A state's first 4 bytes are the number of buckets, a little-endian integer of at least 0.")));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("number of buckets must not be negative, got %d", buckets)));
			break;
		case JUMP_BACK_ANCHOR_EFORMAT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid jumpbackanchorhash state: length %lld is not a positive multiple of 4",
							(long long) count),
					 errdetail("A state is hash4j's getState(): the number of buckets, then each removed bucket "
							   "oldest first, as 4-byte little-endian integers.")));
			break;
		case JUMP_BACK_ANCHOR_ELIMIT:
			anchor_too_many(count);
			break;
		case JUMP_BACK_ANCHOR_ERANGE:
			if (buckets == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("removed bucket %d is out of range for 0 buckets", problem->bucket),
						 errdetail("With 0 buckets no bucket can be removed.")));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("removed bucket %d is out of range for %d buckets", problem->bucket, buckets),
					 form == ANCHOR_LIST ?
					 errdetail("Removed buckets must be between 0 and %d; element %d of the removed buckets is %d.",
							   buckets - 1, problem->position + 1, problem->bucket) :
					 errdetail("Removed buckets must be between 0 and %d; removed bucket %d of the state is %d.",
							   buckets - 1, problem->position + 1, problem->bucket)));
			break;
		case JUMP_BACK_ANCHOR_EDUPLICATE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("bucket %d is removed twice", problem->bucket),
					 form == ANCHOR_LIST ?
					 errdetail("Elements %d and %d of the removed buckets are both %d.",
							   problem->position + 1, problem->other_position + 1, problem->bucket) :
					 errdetail("Removed buckets %d and %d of the state are both %d.",
							   problem->position + 1, problem->other_position + 1, problem->bucket),
					 errhint("A bucket can be removed only once; remove it again only after adding it back.")));
			break;
		default:
			elog(ERROR, "jumpbackanchorhash: unexpected status %d while decoding a set", (int) status);
	}
}

/*
 * The removed buckets of an int[] argument: one dimension (or none), no
 * NULL, at most JUMP_BACK_ANCHOR_MAX_REMOVED.
 */
static int32 *
anchor_array_values(ArrayType *array, int32 *count)
{
	int			n;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("removed buckets must be a one-dimensional array, got %d dimensions", ARR_NDIM(array))));
	if (array_contains_nulls(array))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("removed buckets must not contain NULL")));
	n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	if (n > JUMP_BACK_ANCHOR_MAX_REMOVED)
		anchor_too_many(n);
	*count = n;
	return (int32 *) ARR_DATA_PTR(array);
}

/*
 * The (buckets, count) header and removed buckets (palloc'd, with room for
 * one more) of a state, checked for format only.
 */
static int32 *
anchor_state_values(bytea *state, int32 *buckets, int32 *count)
{
	const uint8 *bytes = (const uint8 *) VARDATA_ANY(state);
	Size		len = VARSIZE_ANY_EXHDR(state);
	jump_back_anchor_status status = jump_back_anchor_state_header(bytes, len, buckets, count);
	int32	   *removed;

	if (status == JUMP_BACK_ANCHOR_ELIMIT)
		anchor_too_many((int64) (len - 4) / 4);
	if (status != JUMP_BACK_ANCHOR_OK)
		anchor_report(status, NULL, *buckets, (int64) len, ANCHOR_STATE);
	removed = palloc(sizeof(int32) * ((Size) *count + 1));
	for (int32 i = 0; i < *count; i++)
		removed[i] = jump_back_anchor_state_get(bytes, i);
	return removed;
}

/* Decodes and checks a set into *h, with memory from the current context. */
static void
anchor_decode(jump_back_anchor *h, void **memory, int32 buckets, const int32 *removed,
			  int32 count, anchor_form form)
{
	jump_back_anchor_problem problem;
	jump_back_anchor_status status;

	if (count > JUMP_BACK_ANCHOR_MAX_REMOVED)
		anchor_too_many(count);
	*memory = count > 0 ? palloc(jump_back_anchor_memory_size(count)) : NULL;
	status = jump_back_anchor_init(h, buckets, removed, count, *memory,
								   &server_interrupts, &problem);
	anchor_report(status, &problem, buckets, count, form);
}

/* Whether argument argnum of this call is a constant of its expression. */
static bool
anchor_arg_is_const(FunctionCallInfo fcinfo, int argnum)
{
	Node	   *expr = fcinfo->flinfo ? fcinfo->flinfo->fn_expr : NULL;
	List	   *args;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	args = ((FuncExpr *) expr)->args;
	return argnum < list_length(args) && IsA(list_nth(args, argnum), Const);
}

/*
 * The bytes that identify a varlena argument for the cache, without reading
 * a toasted value: an on-disk toast pointer (its relation and value id: a
 * stored value is never changed, an update writes a new one) or the inline
 * bytes as they are, compressed or not, header included.  An indirect or
 * expanded value points into memory that may change: its flat form.  Equal
 * bytes mean an equal value; unequal bytes only mean decoding again.
 */
static struct varlena *
anchor_identity(Datum datum, Size *len)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(datum);

	if (VARATT_IS_EXTERNAL(v) && !VARATT_IS_EXTERNAL_ONDISK(v))
		v = PG_DETOAST_DATUM(datum);
	*len = VARATT_IS_EXTERNAL(v) ? VARSIZE_EXTERNAL(v) : VARSIZE_ANY(v);
	return v;
}

/*
 * The decoded set of this call: (buckets, removed) at arguments 1 and 2, or
 * the state at argument 1, from fn_extra if the same bytes were decoded last.
 */
static const jump_back_anchor *
anchor_of_call(FunctionCallInfo fcinfo, anchor_form form)
{
	anchor_cache *cache;
	MemoryContext cxt;
	int32		buckets = 0;
	int			argnum = form == ANCHOR_LIST ? 2 : 1;
	struct varlena *identity;
	Size		len;
	MemoryContext old;

	if (fcinfo->flinfo == NULL)
	{
		/* a direct call: no call site to cache in */
		cxt = CurrentMemoryContext;
		cache = palloc0(sizeof(anchor_cache));
	}
	else
	{
		cxt = fcinfo->flinfo->fn_mcxt;
		cache = (anchor_cache *) fcinfo->flinfo->fn_extra;
		if (cache == NULL)
		{
			cache = MemoryContextAllocZero(cxt, sizeof(anchor_cache));
			fcinfo->flinfo->fn_extra = cache;
			cache->constant = anchor_arg_is_const(fcinfo, 1) &&
				(form == ANCHOR_STATE || anchor_arg_is_const(fcinfo, 2));
		}
	}
	if (cache->valid && cache->constant)
		return &cache->h;

	if (form == ANCHOR_LIST)
		buckets = PG_GETARG_INT32(1);
	identity = anchor_identity(PG_GETARG_DATUM(argnum), &len);
	if (cache->valid && cache->buckets == buckets && cache->len == len &&
		memcmp(cache->bytes, identity, len) == 0)
		return &cache->h;

	/* decode into the cache's context; forget the old set first */
	cache->valid = false;
	if (cache->bytes)
		pfree(cache->bytes);
	if (cache->memory)
		pfree(cache->memory);
	cache->bytes = NULL;
	cache->memory = NULL;
	old = MemoryContextSwitchTo(cxt);
	cache->bytes = palloc(len);
	memcpy(cache->bytes, identity, len);
	MemoryContextSwitchTo(old);
	if (form == ANCHOR_LIST)
	{
		int32		count;
		const int32 *removed = anchor_array_values(PG_GETARG_ARRAYTYPE_P(2), &count);

		old = MemoryContextSwitchTo(cxt);
		anchor_decode(&cache->h, &cache->memory, buckets, removed, count, ANCHOR_LIST);
		MemoryContextSwitchTo(old);
	}
	else
	{
		int32		count;
		int32	   *removed = anchor_state_values(PG_GETARG_BYTEA_PP(1), &buckets, &count);

		old = MemoryContextSwitchTo(cxt);
		anchor_decode(&cache->h, &cache->memory, buckets, removed, count, ANCHOR_STATE);
		MemoryContextSwitchTo(old);
		pfree(removed);
		buckets = 0;
	}
	cache->buckets = buckets;
	cache->len = len;
	cache->valid = true;
	return &cache->h;
}

/* The bucket of key in the set of this call; errors if there is none. */
static int32
anchor_bucket(FunctionCallInfo fcinfo, anchor_form form, uint64 key)
{
	const jump_back_anchor *h = anchor_of_call(fcinfo, form);
	int32		bucket = jump_back_anchor_bucket(h, key);

	if (bucket >= 0)
		return bucket;
	if (bucket == -1 && h->buckets == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of buckets must be at least 1, got 0")));
	if (bucket == -1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("all %d buckets are removed", h->buckets),
				 errdetail("A key needs at least one bucket that is not removed."),
				 errhint("Add a bucket back with jumpbackanchorhash_add_bucket.")));
	elog(ERROR, "jumpbackanchorhash: a chain of replacements is longer than the %d removals",
		 h->removed_count);
	return -1;
}

/*
 * jumpbackanchorhash(key, buckets, removed) and jumpbackanchorhash(key,
 * state), C functions list_name and state_name, of the key that key_expr
 * reads from argument 0.
 */
#define ANCHOR_KEY_FUNCTIONS(list_name, state_name, key_expr) \
PG_FUNCTION_INFO_V1(list_name); \
Datum \
list_name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_INT32(anchor_bucket(fcinfo, ANCHOR_LIST, (key_expr))); \
} \
\
PG_FUNCTION_INFO_V1(state_name); \
Datum \
state_name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_INT32(anchor_bucket(fcinfo, ANCHOR_STATE, (key_expr))); \
}

ANCHOR_KEY_FUNCTIONS(jumpbackanchorhash, jumpbackanchorhash_bigint_state, (uint64) PG_GETARG_INT64(0))
ANCHOR_KEY_FUNCTIONS(jumpbackanchorhash_text, jumpbackanchorhash_text_state,
					 key_hash_text(PG_GETARG_TEXT_PP(0)))
ANCHOR_KEY_FUNCTIONS(jumpbackanchorhash_bytea, jumpbackanchorhash_bytea_state,
					 key_hash_bytea(PG_GETARG_BYTEA_PP(0)))
ANCHOR_KEY_FUNCTIONS(jumpbackanchorhash_uuid, jumpbackanchorhash_uuid_state,
					 key_hash_uuid(PG_GETARG_UUID_P(0)))

/*
 * A set read from the arguments for a conversion or a change: its buckets,
 * its removed buckets (palloc'd, with room for one more) and the decoded set
 * (which checks it whole).
 */
typedef struct anchor_set
{
	int32		buckets;
	int32		count;
	int32	   *removed;
	void	   *memory;
	jump_back_anchor h;
} anchor_set;

static void
anchor_set_of_list(anchor_set *set, int32 buckets, ArrayType *array)
{
	const int32 *values = anchor_array_values(array, &set->count);

	set->buckets = buckets;
	set->removed = palloc(sizeof(int32) * ((Size) set->count + 1));
	memcpy(set->removed, values, sizeof(int32) * (Size) set->count);
	anchor_decode(&set->h, &set->memory, buckets, set->removed, set->count, ANCHOR_LIST);
}

static void
anchor_set_of_state(anchor_set *set, bytea *state)
{
	set->removed = anchor_state_values(state, &set->buckets, &set->count);
	anchor_decode(&set->h, &set->memory, set->buckets, set->removed, set->count, ANCHOR_STATE);
}

static bytea *
anchor_state_of(int32 buckets, const int32 *removed, int32 count)
{
	Size		len = 4 + 4 * (Size) count;
	bytea	   *state = palloc(VARHDRSZ + len);

	SET_VARSIZE(state, VARHDRSZ + len);
	jump_back_anchor_state_put((uint8 *) VARDATA(state), buckets, removed, count);
	return state;
}

/* Builds the record result of this call from values (none NULL). */
static Datum
anchor_record(FunctionCallInfo fcinfo, Datum *values)
{
	TupleDesc	tupdesc;
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "jumpbackanchorhash: return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/* The add: hash4j's addBucket(), or an error if buckets cannot grow. */
static int32
anchor_add(anchor_set *set)
{
	int32		added;

	if (jump_back_anchor_add(&set->buckets, set->removed, &set->count, &added) != JUMP_BACK_ANCHOR_OK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot add a bucket to %d buckets with none removed", set->buckets),
				 errdetail("Bucket numbers are int4 values, so there are at most 2147483647 buckets.")));
	return added;
}

/* The removal: hash4j's removeBucket(bucket), or an error if it is not in the set. */
static void
anchor_remove(anchor_set *set, int32 bucket)
{
	jump_back_anchor_status status = jump_back_anchor_remove(&set->h, bucket, &set->buckets,
															 set->removed, &set->count);

	if (status == JUMP_BACK_ANCHOR_ENOTIN && bucket >= 0 && bucket < set->buckets)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bucket %d is already removed", bucket),
				 errdetail("Only a bucket of the set can be removed.")));
	if (status == JUMP_BACK_ANCHOR_ENOTIN && set->buckets == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bucket %d is out of range for 0 buckets", bucket),
				 errdetail("The set is empty.")));
	if (status == JUMP_BACK_ANCHOR_ENOTIN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bucket %d is out of range for %d buckets", bucket, set->buckets),
				 errdetail("The buckets of the set are between 0 and %d.", set->buckets - 1)));
	if (status == JUMP_BACK_ANCHOR_ELIMIT)
		anchor_too_many((int64) set->count + 1);
	if (status != JUMP_BACK_ANCHOR_OK)
		elog(ERROR, "jumpbackanchorhash: unexpected status %d while removing a bucket", (int) status);
}

PG_FUNCTION_INFO_V1(jumpbackanchorhash_state);
Datum
jumpbackanchorhash_state(PG_FUNCTION_ARGS)
{
	anchor_set	set;

	anchor_set_of_list(&set, PG_GETARG_INT32(0), PG_GETARG_ARRAYTYPE_P(1));
	PG_RETURN_BYTEA_P(anchor_state_of(set.buckets, set.removed, set.count));
}

PG_FUNCTION_INFO_V1(jumpbackanchorhash_buckets);
Datum
jumpbackanchorhash_buckets(PG_FUNCTION_ARGS)
{
	anchor_set	set;

	anchor_set_of_state(&set, PG_GETARG_BYTEA_PP(0));
	PG_RETURN_INT32(set.buckets);
}

PG_FUNCTION_INFO_V1(jumpbackanchorhash_removed);
Datum
jumpbackanchorhash_removed(PG_FUNCTION_ARGS)
{
	anchor_set	set;

	anchor_set_of_state(&set, PG_GETARG_BYTEA_PP(0));
	PG_RETURN_ARRAYTYPE_P(int4_array(set.removed, set.count));
}

/* jumpbackanchorhash_add_bucket(INOUT buckets, INOUT removed, OUT bucket) */
PG_FUNCTION_INFO_V1(jumpbackanchorhash_add_bucket);
Datum
jumpbackanchorhash_add_bucket(PG_FUNCTION_ARGS)
{
	anchor_set	set;
	Datum		values[3];

	anchor_set_of_list(&set, PG_GETARG_INT32(0), PG_GETARG_ARRAYTYPE_P(1));
	values[2] = Int32GetDatum(anchor_add(&set));
	values[0] = Int32GetDatum(set.buckets);
	values[1] = PointerGetDatum(int4_array(set.removed, set.count));
	PG_RETURN_DATUM(anchor_record(fcinfo, values));
}

/* jumpbackanchorhash_add_bucket(INOUT state, OUT bucket) */
PG_FUNCTION_INFO_V1(jumpbackanchorhash_add_bucket_state);
Datum
jumpbackanchorhash_add_bucket_state(PG_FUNCTION_ARGS)
{
	anchor_set	set;
	Datum		values[2];

	anchor_set_of_state(&set, PG_GETARG_BYTEA_PP(0));
	values[1] = Int32GetDatum(anchor_add(&set));
	values[0] = PointerGetDatum(anchor_state_of(set.buckets, set.removed, set.count));
	PG_RETURN_DATUM(anchor_record(fcinfo, values));
}

/* jumpbackanchorhash_remove_bucket(INOUT buckets, INOUT removed, bucket) */
PG_FUNCTION_INFO_V1(jumpbackanchorhash_remove_bucket);
Datum
jumpbackanchorhash_remove_bucket(PG_FUNCTION_ARGS)
{
	anchor_set	set;
	Datum		values[2];

	anchor_set_of_list(&set, PG_GETARG_INT32(0), PG_GETARG_ARRAYTYPE_P(1));
	anchor_remove(&set, PG_GETARG_INT32(2));
	values[0] = Int32GetDatum(set.buckets);
	values[1] = PointerGetDatum(int4_array(set.removed, set.count));
	PG_RETURN_DATUM(anchor_record(fcinfo, values));
}

/* jumpbackanchorhash_remove_bucket(state, bucket) returns the new state */
PG_FUNCTION_INFO_V1(jumpbackanchorhash_remove_bucket_state);
Datum
jumpbackanchorhash_remove_bucket_state(PG_FUNCTION_ARGS)
{
	anchor_set	set;

	anchor_set_of_state(&set, PG_GETARG_BYTEA_PP(0));
	anchor_remove(&set, PG_GETARG_INT32(1));
	PG_RETURN_BYTEA_P(anchor_state_of(set.buckets, set.removed, set.count));
}
