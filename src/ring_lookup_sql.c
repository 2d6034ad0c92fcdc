/*
 * src/ring_lookup_sql.c
 *		SQL functions of partition ring lookups as applications hold their
 *		keys: ring_partition and ring_nodes of text, bytea and uuid keys (of
 *		their xxh3_64), handoff nodes (ring_handoff_nodes,
 *		ring_partition_handoff_nodes) and batch lookups of a whole array of
 *		keys (ring_nodes(ring, keys[]), set-returning).
 *
 * The work is done by the pure core in src/core/ring_lookup.c; rings come
 * decoded from the backend's cache (src/ring_cache.h): ring_decoded_arg for
 * the scalar functions, ring_decoded_arg_held for the set-returning batch.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "utils/uuid.h"

#include "compat.h"
#include "int4_array.h"
#include "key_hash.h"
#include "ring_cache.h"
#include "ring_errors.h"
#include "core/ring_lookup.h"

/* the most keys one batch lookup takes */
#define RING_LOOKUP_MAX_KEYS (1 << 22)

/* the largest count of handoff nodes: a ring has at most that many nodes */
#define RING_HANDOFF_MAX_COUNT RING_MAX_NODES

/* ---- text, bytea and uuid keys: the lookups of their xxh3_64 ---- */

#define KEY_FUNCTIONS(suffix, hash_expr) \
PG_FUNCTION_INFO_V1(ring_partition_##suffix); \
Datum \
ring_partition_##suffix(PG_FUNCTION_ARGS) \
{ \
	const decoded_ring *dr = ring_decoded_arg(fcinfo, 0); \
	uint64		key = (hash_expr); \
\
	PG_RETURN_INT32((int32) ring_partition_of(&dr->r, key)); \
} \
\
PG_FUNCTION_INFO_V1(ring_nodes_##suffix); \
Datum \
ring_nodes_##suffix(PG_FUNCTION_ARGS) \
{ \
	const decoded_ring *dr = ring_decoded_arg(fcinfo, 0); \
	uint64		key = (hash_expr); \
\
	PG_RETURN_ARRAYTYPE_P(ring_decoded_replicas(dr, ring_partition_of(&dr->r, key))); \
}

KEY_FUNCTIONS(text, key_hash_text(PG_GETARG_TEXT_PP(1)))
KEY_FUNCTIONS(bytea, key_hash_bytea(PG_GETARG_BYTEA_PP(1)))
KEY_FUNCTIONS(uuid, key_hash_uuid(PG_GETARG_UUID_P(1)))

/* ---- handoff nodes ---- */

/*
 * The failure domains of the nodes of the rings used last, so that a handoff
 * lookup numbers them once per ring, not once per row.  An entry is used only
 * for a node table with the same (region, zone) of every node, which is all
 * the numbering depends on.
 */
#define DOMAINS_MEMO_ENTRIES 2

typedef struct domains_memo
{
	MemoryContext context;		/* NULL when unused */
	uint64		last_used;
	uint32		node_count;
	int32	   *regions_zones;	/* region and zone of each node */
	ring_domains d;
	void	   *workspace;		/* ring_handoff_workspace_size(&d) bytes */
} domains_memo;

static domains_memo memos[DOMAINS_MEMO_ENTRIES];
static uint64 memo_clock;

static bool
memo_matches(const domains_memo *m, const ring *r)
{
	uint32		i;

	if (m->context == NULL || m->node_count != r->node_count)
		return false;
	for (i = 0; i < r->node_count; i++)
		if (m->regions_zones[2 * i] != r->nodes[i].region ||
			m->regions_zones[2 * i + 1] != r->nodes[i].zone)
			return false;
	return true;
}

static domains_memo *
ring_domains_of(const ring *r)
{
	domains_memo *m = NULL;
	MemoryContext context;
	ring_env	env;
	ring_error	err;
	uint32		i;

	for (i = 0; i < DOMAINS_MEMO_ENTRIES; i++)
		if (memo_matches(&memos[i], r))
		{
			memos[i].last_used = ++memo_clock;
			return &memos[i];
		}

	/* numbered in a context of the query's, which an error frees */
	context = AllocSetContextCreate(CurrentMemoryContext, "partition ring failure domains",
									ALLOCSET_SMALL_SIZES);
	env = ring_server_env(context);
	for (i = 0; i < DOMAINS_MEMO_ENTRIES; i++)
		if (m == NULL || memos[i].context == NULL ||
			(m->context != NULL && memos[i].last_used < m->last_used))
			m = &memos[i];
	if (m->context != NULL)
	{
		MemoryContextDelete(m->context);
		m->context = NULL;
	}
	if (ring_domains_build(&env, r, &m->d, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
	m->regions_zones = MemoryContextAlloc(context, sizeof(int32) * 2 * (Size) r->node_count);
	for (i = 0; i < r->node_count; i++)
	{
		m->regions_zones[2 * i] = r->nodes[i].region;
		m->regions_zones[2 * i + 1] = r->nodes[i].zone;
	}
	m->workspace = MemoryContextAlloc(context, ring_handoff_workspace_size(&m->d));
	m->node_count = r->node_count;
	MemoryContextSetParent(context, TopMemoryContext);
	m->context = context;
	m->last_used = ++memo_clock;
	return m;
}

static uint32
handoff_count(int32 count)
{
	if (count < 0 || count > RING_HANDOFF_MAX_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("count must be between 0 and %d, got %d", RING_HANDOFF_MAX_COUNT, count),
				 errdetail("A ring has at most %d nodes.", RING_MAX_NODES)));
	return (uint32) count;
}

/* int4[] of up to count handoff node ids of a partition */
static ArrayType *
handoff_array(const decoded_ring *dr, uint32 partition, uint32 count)
{
	domains_memo *m = ring_domains_of(&dr->r);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	uint32		wanted = Min(count, dr->r.node_count);
	uint16	   *out = palloc(sizeof(uint16) * Max(wanted, 1));
	int32	   *ids = palloc(sizeof(int32) * Max(wanted, 1));
	uint32		found,
				i;

	if (ring_handoff(&dr->r, dr->by_partition, &m->d, partition, wanted, m->workspace,
					 out, &found, &env) != RING_OK)
		elog(ERROR, "partition ring: handoff lookup stopped");
	for (i = 0; i < found; i++)
		ids[i] = dr->r.nodes[out[i]].id;
	return int4_array(ids, (int) found);
}

#define HANDOFF_FUNCTION(name, hash_expr) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	const decoded_ring *dr = ring_decoded_arg(fcinfo, 0); \
	uint64		key = (hash_expr); \
	uint32		count = handoff_count(PG_GETARG_INT32(2)); \
\
	PG_RETURN_ARRAYTYPE_P(handoff_array(dr, ring_partition_of(&dr->r, key), count)); \
}

HANDOFF_FUNCTION(ring_handoff_nodes, (uint64) PG_GETARG_INT64(1))
HANDOFF_FUNCTION(ring_handoff_nodes_text, key_hash_text(PG_GETARG_TEXT_PP(1)))
HANDOFF_FUNCTION(ring_handoff_nodes_bytea, key_hash_bytea(PG_GETARG_BYTEA_PP(1)))
HANDOFF_FUNCTION(ring_handoff_nodes_uuid, key_hash_uuid(PG_GETARG_UUID_P(1)))

PG_FUNCTION_INFO_V1(ring_partition_handoff_nodes);
Datum
ring_partition_handoff_nodes(PG_FUNCTION_ARGS)
{
	const decoded_ring *dr = ring_decoded_arg(fcinfo, 0);
	uint32		count = handoff_count(PG_GETARG_INT32(2));
	uint32		partition = ring_decoded_partition_arg(dr, PG_GETARG_INT32(1));

	PG_RETURN_ARRAYTYPE_P(handoff_array(dr, partition, count));
}

/* ---- batches: ring_nodes(ring, keys[]) -> (key, partition, nodes) ---- */

typedef enum key_kind
{
	KEY_BIGINT,
	KEY_TEXT,
	KEY_BYTEA,
	KEY_UUID
} key_kind;

/* The tuplestore of a set-returning function in materialize mode. */
static Tuplestorestate *
materialize(FunctionCallInfo fcinfo, TupleDesc *tupdesc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	Tuplestorestate *store;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	if (get_call_result_type(fcinfo, NULL, tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	*tupdesc = CreateTupleDescCopy(*tupdesc);
	store = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
								  false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = *tupdesc;
	MemoryContextSwitchTo(old);
	return store;
}

/*
 * The elements of keys and their 64-bit hashes; *count receives the number.
 * Rejects NULL elements, more than one dimension and more than
 * RING_LOOKUP_MAX_KEYS keys.
 */
static uint64 *
read_keys(ArrayType *keys, key_kind kind, Datum **elements, int *count)
{
	int			n = ArrayGetNItems(ARR_NDIM(keys), ARR_DIMS(keys));
	bool	   *nulls;
	uint64	   *hashes;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			i;

	if (ARR_NDIM(keys) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be a one-dimensional array, got %d dimensions",
						ARR_NDIM(keys))));
	if (n > RING_LOOKUP_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("keys can have at most %d elements, got %d", RING_LOOKUP_MAX_KEYS, n),
				 errhint("Look the keys up in several calls.")));
	get_typlenbyvalalign(ARR_ELEMTYPE(keys), &typlen, &typbyval, &typalign);
	deconstruct_array(keys, ARR_ELEMTYPE(keys), typlen, typbyval, typalign,
					  elements, &nulls, count);
	hashes = palloc(sizeof(uint64) * Max(*count, 1));
	for (i = 0; i < *count; i++)
	{
		Datum		e = (*elements)[i];

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("keys cannot contain NULL, found one at position %d", i + 1)));
		switch (kind)
		{
			case KEY_BIGINT:
				hashes[i] = (uint64) DatumGetInt64(e);
				break;
			case KEY_TEXT:
				hashes[i] = key_hash_text(DatumGetTextPP(e));
				break;
			case KEY_BYTEA:
				hashes[i] = key_hash_bytea(DatumGetByteaPP(e));
				break;
			case KEY_UUID:
				hashes[i] = key_hash_uuid(DatumGetUUIDP(e));
				break;
		}
		if ((i & 65535) == 65535)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(nulls);
	return hashes;
}

static Datum
ring_nodes_batch_of(FunctionCallInfo fcinfo, key_kind kind)
{
	/* a set-returning function holds its ring in a context of its own */
	MemoryContext holder = AllocSetContextCreate(CurrentMemoryContext, "partition ring batch lookup",
												 ALLOCSET_SMALL_SIZES);
	const decoded_ring *dr = ring_decoded_arg_held(fcinfo, 0, holder);
	ArrayType  *keys = PG_GETARG_ARRAYTYPE_P(1);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	TupleDesc	tupdesc;
	Tuplestorestate *store;
	Datum	   *elements;
	uint64	   *hashes;
	int			count;
	uint32		R = dr->r.replicas;
	int			chunk = Max(1, 65536 / (int) R);
	int32	   *partitions = palloc(sizeof(int32) * chunk);
	int32	   *ids = palloc(sizeof(int32) * (Size) chunk * R);
	int			from;

	store = materialize(fcinfo, &tupdesc);
	hashes = read_keys(keys, kind, &elements, &count);
	for (from = 0; from < count; from += chunk)
	{
		int			n = Min(chunk, count - from);
		int			i;

		if (ring_lookup_keys(&dr->r, dr->by_partition, hashes + from, (size_t) n,
							 partitions, ids, &env) != RING_OK)
			elog(ERROR, "partition ring: batch lookup stopped");
		for (i = 0; i < n; i++)
		{
			Datum		values[3];
			bool		nulls[3] = {false, false, false};
			ArrayType  *nodes = int4_array(ids + (Size) i * R, (int) R);

			values[0] = elements[from + i];
			values[1] = Int32GetDatum(partitions[i]);
			values[2] = PointerGetDatum(nodes);
			tuplestore_putvalues(store, tupdesc, values, nulls);
			pfree(nodes);
		}
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextDelete(holder);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(ring_nodes_batch);
Datum
ring_nodes_batch(PG_FUNCTION_ARGS)
{
	return ring_nodes_batch_of(fcinfo, KEY_BIGINT);
}

PG_FUNCTION_INFO_V1(ring_nodes_batch_text);
Datum
ring_nodes_batch_text(PG_FUNCTION_ARGS)
{
	return ring_nodes_batch_of(fcinfo, KEY_TEXT);
}

PG_FUNCTION_INFO_V1(ring_nodes_batch_bytea);
Datum
ring_nodes_batch_bytea(PG_FUNCTION_ARGS)
{
	return ring_nodes_batch_of(fcinfo, KEY_BYTEA);
}

PG_FUNCTION_INFO_V1(ring_nodes_batch_uuid);
Datum
ring_nodes_batch_uuid(PG_FUNCTION_ARGS)
{
	return ring_nodes_batch_of(fcinfo, KEY_UUID);
}
