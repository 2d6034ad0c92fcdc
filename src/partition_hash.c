/*
 * src/partition_hash.c
 *		Sharded tables: the support functions of the hash operator classes
 *		jumpbackhash<N>_<type>_ops, which make PARTITION BY HASH place a row
 *		in the partition with REMAINDER jumpbackhash(key, N).
 *
 * How PostgreSQL places a row of a hash-partitioned table (PostgreSQL 15,
 * src/backend/partitioning/partbounds.c, compute_partition_hash_value and
 * satisfies_hash_partition; partprune.c, get_matching_hash_bounds): for each
 * key column that is not NULL it calls support function 2 of the column's
 * operator class, the extended hash, with the seed HASH_PARTITION_SEED
 * (catalog/partition.h), and folds the results into a row hash starting
 * from 0 with hash_combine64 (common/hashfn.h); the row goes to the
 * partition whose REMAINDER is the row hash modulo the greatest MODULUS.
 * For one key column the row hash is hash_combine64(0, h), which is
 * h + 0x49a0f4dd15e5a8e3 (mod 2^64).  So support function 2 returns
 * jumpbackhash(key, N) - 0x49a0f4dd15e5a8e3 for that seed, and the row hash
 * is the bucket itself: with MODULUS N the row lands in REMAINDER bucket.
 * Planning (pruning at plan time and when a generic plan starts), routing
 * of inserted rows, and the partition constraint all compute the same.
 * The arithmetic is checked here once per backend against the
 * hash_combine64 of the headers the module is built with, and
 * sql/partition_hash.sql checks satisfies_hash_partition and the placement
 * of known keys, so that a release that changes any of it fails loudly.
 *
 * For every other seed the function is PostgreSQL's own extended hash of
 * the type (the built-in function, called with the same arguments), and
 * support function 1 of every class is the type's built-in hash: hash
 * joins and hash aggregates may take their hash functions from any hash
 * family that holds the type's = operator, so those must stay the same.
 *
 * A hash support function has a fixed signature (key, seed), so there is
 * one SQL function per number of buckets N and type, all of them on the C
 * functions below, one per type.  The C function learns N from its own
 * name, jumpbackhash<N>_<type>_partition_hash, read from pg_proc once per
 * FmgrInfo and kept in fn_extra: the partition key's FmgrInfo lives in the
 * relation cache, so routing an inserted row costs no catalog lookup.
 */
#include "postgres.h"

#include <limits.h>

#include "access/htup_details.h"
#include "catalog/partition.h"
#include "catalog/pg_proc.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/uuid.h"

#include "compat.h"
#include "core/jump.h"
#include "key_hash.h"

/*
 * hash_combine64(0, h) = h + PARTITION_HASH_OFFSET (mod 2^64) in
 * PostgreSQL 13 to 17 (common/hashfn.h); checked by check_combine().
 */
#define PARTITION_HASH_OFFSET UINT64CONST(0x49a0f4dd15e5a8e3)

#define FUNCTION_PREFIX "jumpbackhash"
#define FUNCTION_SUFFIX "_partition_hash"

/* What a support function keeps in its fn_extra. */
typedef struct PartitionHashState
{
	int32		buckets;		/* N, from the function's name */
	Oid			collation;		/* last collation found deterministic (text) */
} PartitionHashState;

/*
 * The row hash of a one-column key is hash_combine64(0, h).  If the
 * PostgreSQL the module is built for combines otherwise, no row could be
 * placed right: refuse to place any.
 */
static void
check_combine(void)
{
	static bool checked = false;
	uint64		buckets[] = {0, 1, 255, UINT64CONST(2147483646)};
	int			i;

	if (likely(checked))
		return;
	for (i = 0; i < lengthof(buckets); i++)
		if (hash_combine64(0, buckets[i] - PARTITION_HASH_OFFSET) != buckets[i])
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("this PostgreSQL release combines partition hashes in a way that the jumpbackhash operator classes do not know"),
					 errdetail("hash_combine64(0, h) is not h + 0x49a0f4dd15e5a8e3, so a row could not be placed in the partition of its bucket.")));
	checked = true;
}

/*
 * N, read from the name of the function being called, which must be
 * jumpbackhash<N>_<type>_partition_hash with N in 1 .. 2^31-1 written
 * without leading zeros.
 */
static int32
buckets_from_name(Oid fn_oid, const char *type)
{
	HeapTuple	tuple;
	char		name[NAMEDATALEN];
	const char *digits;
	const char *p;
	int64		buckets = 0;

	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn_oid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for function %u", fn_oid);
	strlcpy(name, NameStr(((Form_pg_proc) GETSTRUCT(tuple))->proname), NAMEDATALEN);
	ReleaseSysCache(tuple);

	digits = name + strlen(FUNCTION_PREFIX);
	p = digits;
	if (strncmp(name, FUNCTION_PREFIX, strlen(FUNCTION_PREFIX)) == 0 && *p != '0')
		for (; *p >= '0' && *p <= '9' && buckets <= INT_MAX; p++)
			buckets = buckets * 10 + (*p - '0');
	if (p == digits || buckets > INT_MAX || *p != '_' ||
		strncmp(p + 1, type, strlen(type)) != 0 ||
		strcmp(p + 1 + strlen(type), FUNCTION_SUFFIX) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
				 errmsg("function \"%s\" is not named jumpbackhash<N>_%s" FUNCTION_SUFFIX,
						name, type),
				 errdetail("A partition hash function of the jumpbackhash operator classes reads its number of buckets N from its name."),
				 errhint("Create the operator classes with jumpbackhash_create_operator_classes(buckets), and do not rename their functions.")));
	return (int32) buckets;
}

/* N of the called function, from fn_extra or, the first time, its name. */
static inline PartitionHashState *
state_of(FunctionCallInfo fcinfo, const char *type)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	PartitionHashState *state;

	if (likely(flinfo != NULL && flinfo->fn_extra != NULL))
		return (PartitionHashState *) flinfo->fn_extra;
	if (flinfo == NULL || !OidIsValid(flinfo->fn_oid))
		elog(ERROR, "jumpbackhash partition hash of %s called without its function's identity", type);
	check_combine();
	state = MemoryContextAlloc(flinfo->fn_mcxt, sizeof(PartitionHashState));
	state->buckets = buckets_from_name(flinfo->fn_oid, type);
	state->collation = InvalidOid;
	flinfo->fn_extra = state;
	return state;
}

/* The extended hash that makes the row hash of a key equal to its bucket. */
static inline Datum
placed(uint64 key, int32 buckets)
{
	return UInt64GetDatum((uint64) jump_back_hash(key, buckets) - PARTITION_HASH_OFFSET);
}

static inline bool
placing(FunctionCallInfo fcinfo)
{
	return (uint64) PG_GETARG_INT64(1) == HASH_PARTITION_SEED;
}

/*
 * int2, int4 and int8 keys: placed by jumpbackhash(key::bigint, N), the
 * smaller types sign-extended, so that the three agree on every value they
 * share (the family's cross-type = operators let an int4 literal prune a
 * bigint key).
 */
PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_int2);
Datum
jumpbackhash_partition_hash_int2(PG_FUNCTION_ARGS)
{
	if (!placing(fcinfo))
		return hashint2extended(fcinfo);
	return placed((uint64) (int64) PG_GETARG_INT16(0), state_of(fcinfo, "int2")->buckets);
}

PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_int4);
Datum
jumpbackhash_partition_hash_int4(PG_FUNCTION_ARGS)
{
	if (!placing(fcinfo))
		return hashint4extended(fcinfo);
	return placed((uint64) (int64) PG_GETARG_INT32(0), state_of(fcinfo, "int4")->buckets);
}

PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_int8);
Datum
jumpbackhash_partition_hash_int8(PG_FUNCTION_ARGS)
{
	if (!placing(fcinfo))
		return hashint8extended(fcinfo);
	return placed((uint64) PG_GETARG_INT64(0), state_of(fcinfo, "int8")->buckets);
}

/*
 * text keys: placed as jumpbackhash(text, N) places them, by the XXH3-64 of
 * their UTF-8 bytes.  That is right only where equal strings have equal
 * bytes: a nondeterministic collation is refused.
 */
PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_text);
Datum
jumpbackhash_partition_hash_text(PG_FUNCTION_ARGS)
{
	PartitionHashState *state;
	Oid			collation = PG_GET_COLLATION();

	if (!placing(fcinfo))
		return hashtextextended(fcinfo);
	state = state_of(fcinfo, "text");
	if (unlikely(collation != state->collation))
	{
		if (!OidIsValid(collation))
			ereport(ERROR,
					(errcode(ERRCODE_INDETERMINATE_COLLATION),
					 errmsg("could not determine which collation to use for string hashing"),
					 errhint("Use the COLLATE clause to set the collation explicitly.")));
		if (!get_collation_isdeterministic(collation))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("jumpbackhash%d_text_ops cannot place keys of the nondeterministic collation \"%s\"",
							state->buckets, get_collation_name(collation)),
					 errdetail("The operator class places a text key by its bytes, and a nondeterministic collation holds strings with different bytes equal."),
					 errhint("Partition by the key with a deterministic collation, such as \"C\" or the database's default.")));
		state->collation = collation;
	}
	return placed(key_hash_text(PG_GETARG_TEXT_PP(0)), state->buckets);
}

PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_bytea);
Datum
jumpbackhash_partition_hash_bytea(PG_FUNCTION_ARGS)
{
	if (!placing(fcinfo))
		return hashvarlenaextended(fcinfo);
	return placed(key_hash_bytea(PG_GETARG_BYTEA_PP(0)), state_of(fcinfo, "bytea")->buckets);
}

PG_FUNCTION_INFO_V1(jumpbackhash_partition_hash_uuid);
Datum
jumpbackhash_partition_hash_uuid(PG_FUNCTION_ARGS)
{
	if (!placing(fcinfo))
		return uuid_hash_extended(fcinfo);
	return placed(key_hash_uuid(PG_GETARG_UUID_P(0)), state_of(fcinfo, "uuid")->buckets);
}
