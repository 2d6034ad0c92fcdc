/*
 * src/ring.c
 *		SQL functions of the partition ring: the partition_ring type (JSON
 *		text form, binary form), ring_build, ring_rebalance, lookups with a
 *		backend-wide cache of decoded rings, and inspection.
 *
 * The work is done by the pure core in src/core/ring*.c; this file reads
 * arguments, checks them, calls the core and builds results.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
#include "module.h"
#include "core/ring.h"

/* ---- the core's allocator and progress callback, on the server ---- */

static void *
ring_palloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size, MCXT_ALLOC_NO_OOM);
}

static void
ring_pfree(void *ctx, void *ptr)
{
	pfree(ptr);
}

static int
ring_interrupts(void *ctx)
{
	CHECK_FOR_INTERRUPTS();
	return 0;
}

static ring_env
server_env(MemoryContext cxt)
{
	ring_env	env;

	env.alloc = ring_palloc;
	env.free = ring_pfree;
	env.progress = ring_interrupts;
	env.ctx = cxt;
	return env;
}

/* Raise the error the core reported; format_code is used for RING_EFORMAT. */
static void
report_ring_error(const ring_error *err, int format_code)
{
	switch (err->code)
	{
		case RING_EINVAL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s", err->message)));
			break;
		case RING_ELIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s", err->message)));
			break;
		case RING_ENOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
			break;
		case RING_EFORMAT:
			ereport(ERROR,
					(errcode(format_code),
					 errmsg("%s", err->message)));
			break;
		default:
			elog(ERROR, "partition ring: unexpected status %d: %s",
				 (int) err->code, err->message);
	}
}

/* ---- reading ring values ---- */

/* Decode (and validate) a stored ring into memory of cxt. */
static void
decode_datum(Datum d, MemoryContext cxt, ring *out)
{
	struct varlena *v = PG_DETOAST_DATUM(d);
	ring_env	env = server_env(cxt);
	ring_error	err;

	if (ring_decode(&env, (const uint8 *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
					out, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_DATA_CORRUPTED);
	if ((Pointer) v != DatumGetPointer(d))
		pfree(v);
}

/*
 * Decoded rings, kept for the life of the backend and found by the
 * fingerprint and size stored in a value's header, so that lookups decode a
 * ring once per backend, not once per row or per statement, and a different
 * ring never hits a stale entry.  The header is read with a slice fetch, so
 * finding the entry of a large toasted ring costs one toast chunk, not the
 * ring.  The assignment is kept partition-major (the R replicas of a
 * partition side by side), so that a lookup touches one cache line however
 * large the ring.
 *
 * A slice fetch is an index scan of the toast table, many times the cost of
 * the lookup, so each entry also remembers the toast pointer (toast table,
 * value OID and sizes) of the stored value it was last found by, in the
 * current transaction.  A toast value is never changed in place, and its OID
 * is not given to another value while the transaction lasts (that would need
 * the value deleted, removed by VACUUM, and the OID counter to wrap around),
 * so the same pointer in the same transaction is the same ring: the rows of a
 * query after the first find the ring without a fetch.
 */
#define RING_CACHE_ENTRIES 4

/*
 * subsetting.ring_cache_size: the most memory, in kB, the decoded rings kept
 * take together; a larger ring is kept alone.
 */
static int	ring_cache_size_kb = 128 * 1024;

typedef struct ring_cache
{
	MemoryContext context;		/* holds r and by_partition; NULL when unused */
	uint64		fingerprint;
	Size		size;
	uint64		last_used;
	ring		r;				/* r.assignment is NULL: see by_partition */
	uint16	   *by_partition;	/* [partition * replicas + replica] */
	LocalTransactionId found_in;	/* the transaction of found_by, or
									 * InvalidLocalTransactionId */
	struct varatt_external found_by;	/* the toast pointer it was found by */
} ring_cache;

static ring_cache ring_caches[RING_CACHE_ENTRIES];
static uint64 ring_cache_clock;
static MemoryContext ring_cache_context;	/* parent of the entries' contexts */

/*
 * The fingerprint in the header of a ring value of `size` bytes, read
 * without detoasting the rest; false if the header is not a ring's.
 */
static bool
read_fingerprint(Datum d, Size size, uint64 *fingerprint)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varlena *slice = NULL;
	const uint8 *header;
	ring_header h;
	bool		found;

	if (size < RING_HEADER_SIZE)
		return false;
	if (VARATT_IS_EXTERNAL(raw) || VARATT_IS_COMPRESSED(raw))
	{
		slice = PG_DETOAST_DATUM_SLICE(d, 0, RING_HEADER_SIZE);
		if (VARSIZE_ANY_EXHDR(slice) < RING_HEADER_SIZE)
		{
			pfree(slice);
			return false;
		}
		header = (const uint8 *) VARDATA_ANY(slice);
	}
	else
		header = (const uint8 *) VARDATA_ANY(raw);
	found = ring_read_header(header, RING_HEADER_SIZE, &h, NULL) == RING_OK;
	*fingerprint = h.fingerprint;
	if (slice != NULL)
		pfree(slice);
	return found;
}

/* Remember, for this transaction, that entry holds the ring of *pointer. */
static void
remember_toast_pointer(ring_cache *entry, const struct varatt_external *pointer)
{
	entry->found_in = CURRENT_LOCAL_TRANSACTION_ID();
	entry->found_by = *pointer;
}

/*
 * An unused entry for a ring of `size` bytes: drops the least recently used
 * rings until one entry is free and the rings kept and the new one fit in
 * subsetting.ring_cache_size (or no ring is left).
 */
static ring_cache *
free_cache_entry(Size size)
{
	for (;;)
	{
		ring_cache *unused = NULL;
		ring_cache *least_recent = NULL;
		Size		kept = size;

		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context == NULL)
				unused = c;
			else
			{
				kept += c->size;
				if (least_recent == NULL || c->last_used < least_recent->last_used)
					least_recent = c;
			}
		}
		if (unused != NULL && (least_recent == NULL || kept <= (Size) ring_cache_size_kb * 1024))
			return unused;
		MemoryContextDelete(least_recent->context);
		least_recent->context = NULL;
	}
}

/* The decoded ring of argument argno, from the cache or decoded into it. */
static const ring_cache *
cached_ring(FunctionCallInfo fcinfo, int argno)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast_pointer;
	const struct varatt_external *pointer = NULL;
	Size		size;
	uint64		fingerprint;
	ring_cache *entry;
	MemoryContext context;
	ring		decoded;
	uint16	   *by_partition;
	uint32		partitions;

	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		LocalTransactionId lxid = CURRENT_LOCAL_TRANSACTION_ID();

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, raw);
		pointer = &toast_pointer;
		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context != NULL && c->found_in == lxid && lxid != InvalidLocalTransactionId &&
				memcmp(&c->found_by, pointer, sizeof(toast_pointer)) == 0)
			{
				c->last_used = ++ring_cache_clock;
				return c;
			}
		}
	}

	size = toast_raw_datum_size(d) - VARHDRSZ;
	if (read_fingerprint(d, size, &fingerprint))
	{
		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context != NULL && c->fingerprint == fingerprint && c->size == size)
			{
				c->last_used = ++ring_cache_clock;
				if (pointer != NULL)
					remember_toast_pointer(c, pointer);
				return c;
			}
		}
	}

	/*
	 * Make room first, so that the rings kept and the new one never take
	 * more than the setting.  Decode in a context of the query's, so that an
	 * error frees it; only a ring that decoded is moved to the cache.
	 */
	entry = free_cache_entry(size);
	context = AllocSetContextCreate(CurrentMemoryContext, "decoded partition ring",
									ALLOCSET_DEFAULT_SIZES);
	decode_datum(d, context, &decoded);
	partitions = (uint32) 1 << decoded.part_power;
	by_partition = MemoryContextAlloc(context,
									  sizeof(uint16) * (Size) decoded.replicas * partitions);
	for (uint32 replica = 0; replica < decoded.replicas; replica++)
	{
		const uint16 *row = decoded.assignment + ((Size) replica << decoded.part_power);

		for (uint32 partition = 0; partition < partitions; partition++)
			by_partition[(Size) partition * decoded.replicas + replica] = row[partition];
	}
	pfree(decoded.assignment);
	decoded.assignment = NULL;

	if (ring_cache_context == NULL)
		ring_cache_context = AllocSetContextCreate(TopMemoryContext, "partition ring cache",
												   ALLOCSET_SMALL_SIZES);
	MemoryContextSetParent(context, ring_cache_context);
	entry->context = context;
	entry->fingerprint = decoded.fingerprint;
	entry->size = size;
	entry->last_used = ++ring_cache_clock;
	entry->r = decoded;
	entry->by_partition = by_partition;
	entry->found_in = InvalidLocalTransactionId;
	if (pointer != NULL)
		remember_toast_pointer(entry, pointer);
	return entry;
}

void
ring_define_settings(void)
{
	DefineCustomIntVariable("subsetting.ring_cache_size",
							"Sets the most memory the partition rings a session keeps decoded for lookups may take.",
							"The least recently used rings are dropped to stay within it; a larger ring is kept alone.",
							&ring_cache_size_kb,
							128 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

static Datum
ring_to_datum(ring *r)
{
	size_t		size = ring_encoded_size(r->part_power, r->replicas, r->node_count);
	struct varlena *v;

	if (size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("partition ring of %zu bytes is too large", size)));
	v = (struct varlena *) palloc(VARHDRSZ + size);
	SET_VARSIZE(v, VARHDRSZ + size);
	ring_encode(r, (uint8 *) VARDATA(v));
	return PointerGetDatum(v);
}

/* ---- the type ---- */

PG_FUNCTION_INFO_V1(partition_ring_in);
Datum
partition_ring_in(PG_FUNCTION_ARGS)
{
	char	   *text = PG_GETARG_CSTRING(0);
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	ring		r;

	if (ring_from_json(&env, text, strlen(text), &r, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_INVALID_TEXT_REPRESENTATION);
	PG_RETURN_DATUM(ring_to_datum(&r));
}

PG_FUNCTION_INFO_V1(partition_ring_out);
Datum
partition_ring_out(PG_FUNCTION_ARGS)
{
	ring		r;
	size_t		len;
	char	   *s;

	decode_datum(PG_GETARG_DATUM(0), CurrentMemoryContext, &r);
	len = ring_to_json(&r, NULL, 0);
	if (len >= MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text form of the partition ring would take %zu bytes, more than the limit of %zu",
						len, (size_t) MaxAllocSize - 1)));
	s = palloc(len + 1);
	ring_to_json(&r, s, len);
	s[len] = '\0';
	PG_RETURN_CSTRING(s);
}

PG_FUNCTION_INFO_V1(partition_ring_recv);
Datum
partition_ring_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	ring		r;
	struct varlena *v;

	if (ring_decode(&env, (const uint8 *) data, (size_t) len, &r, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_INVALID_BINARY_REPRESENTATION);
	ring_free(&env, &r);
	v = (struct varlena *) palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	memcpy(VARDATA(v), data, len);
	PG_RETURN_POINTER(v);
}

PG_FUNCTION_INFO_V1(partition_ring_send);
Datum
partition_ring_send(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---- building ---- */

/* Elements of a one-dimensional array without NULLs; *count receives the length. */
static Datum *
array_elements(ArrayType *a, Oid type, const char *name, int *count)
{
	Datum	   *values;
	bool	   *nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			i;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array, got %d dimensions",
						name, ARR_NDIM(a))));
	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	deconstruct_array(a, type, typlen, typbyval, typalign, &values, &nulls, count);
	for (i = 0; i < *count; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s cannot contain NULL, found one at position %d",
							name, i + 1)));
	return values;
}

static void
check_same_length(const char *name, int count, int nodes)
{
	if (count != nodes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("%s has %d element, but nodes has %d",
								"%s has %d elements, but nodes has %d",
								count, name, count, nodes),
				 errhint("Give one id, weight, zone (and region) per node.")));
}

/*
 * The node table from the arrays nodes, weights, zones and regions (regions
 * may be NULL: every node in region 0) starting at argument argno.
 */
static ring_node *
read_node_table(FunctionCallInfo fcinfo, int argno, uint32 *n)
{
	int			count,
				c,
				i;
	Datum	   *ids,
			   *weights,
			   *zones,
			   *regions = NULL;
	ring_node  *nodes;

	ids = array_elements(PG_GETARG_ARRAYTYPE_P(argno), INT4OID, "nodes", &count);
	weights = array_elements(PG_GETARG_ARRAYTYPE_P(argno + 1), FLOAT8OID, "weights", &c);
	check_same_length("weights", c, count);
	zones = array_elements(PG_GETARG_ARRAYTYPE_P(argno + 2), INT4OID, "zones", &c);
	check_same_length("zones", c, count);
	if (!PG_ARGISNULL(argno + 3))
	{
		regions = array_elements(PG_GETARG_ARRAYTYPE_P(argno + 3), INT4OID, "regions", &c);
		check_same_length("regions", c, count);
	}
	if (count > RING_MAX_NODES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a ring can have at most %d nodes, got %d", RING_MAX_NODES, count)));
	nodes = palloc0(sizeof(ring_node) * Max(count, 1));
	for (i = 0; i < count; i++)
	{
		nodes[i].id = DatumGetInt32(ids[i]);
		nodes[i].weight = DatumGetFloat8(weights[i]);
		nodes[i].zone = DatumGetInt32(zones[i]);
		nodes[i].region = regions != NULL ? DatumGetInt32(regions[i]) : 0;
	}
	*n = (uint32) count;
	return nodes;
}

static bool
any_null(FunctionCallInfo fcinfo, int from, int to, int except)
{
	int			i;

	for (i = from; i <= to; i++)
		if (i != except && PG_ARGISNULL(i))
			return true;
	return false;
}

/*
 * ring_build(nodes int[], weights float8[], zones int[], regions int[],
 *			  part_power int, replicas int, seed bigint)
 */
PG_FUNCTION_INFO_V1(ring_build);
Datum
ring_build(PG_FUNCTION_ARGS)
{
	int32		part_power;
	int32		replicas;
	int64		seed;
	ring_node  *nodes;
	uint32		n;
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	ring		r;

	/* strict, except that regions may be NULL */
	if (any_null(fcinfo, 0, 6, 3))
		PG_RETURN_NULL();
	part_power = PG_GETARG_INT32(4);
	replicas = PG_GETARG_INT32(5);
	seed = PG_GETARG_INT64(6);
	if (part_power < RING_MIN_PART_POWER || part_power > RING_MAX_PART_POWER)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part power must be between %d and %d, got %d",
						RING_MIN_PART_POWER, RING_MAX_PART_POWER, part_power)));
	if (replicas < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("replicas must be at least 1, got %d", replicas)));
	nodes = read_node_table(fcinfo, 0, &n);
	if (ring_core_build(&env, nodes, n, (uint32) part_power, (uint32) replicas,
						seed, &r, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_INVALID_PARAMETER_VALUE);
	PG_RETURN_DATUM(ring_to_datum(&r));
}

/*
 * ring_rebalance(ring partition_ring, nodes int[], weights float8[],
 *				  zones int[], regions int[], seed bigint)
 */
PG_FUNCTION_INFO_V1(ring_rebalance);
Datum
ring_rebalance(PG_FUNCTION_ARGS)
{
	int64		seed;
	ring_node  *nodes;
	uint32		n;
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	ring		old,
				r;

	if (any_null(fcinfo, 0, 5, 4))
		PG_RETURN_NULL();
	seed = PG_GETARG_INT64(5);
	nodes = read_node_table(fcinfo, 1, &n);
	decode_datum(PG_GETARG_DATUM(0), CurrentMemoryContext, &old);
	if (ring_core_rebalance(&env, &old, nodes, n, seed, &r, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_INVALID_PARAMETER_VALUE);
	PG_RETURN_DATUM(ring_to_datum(&r));
}

/* ---- lookups ---- */

/* int4[] of the node ids of a partition's replicas, primary first */
static ArrayType *
replica_array(const ring_cache *c, uint32 partition)
{
	uint32		R = c->r.replicas;
	Size		bytes = ARR_OVERHEAD_NONULLS(1) + sizeof(int32) * (Size) R;
	ArrayType  *a = (ArrayType *) palloc0(bytes);
	const uint16 *slots = c->by_partition + (Size) partition * R;
	int32	   *ids;
	uint32		rep;

	SET_VARSIZE(a, bytes);
	a->ndim = 1;
	a->dataoffset = 0;
	a->elemtype = INT4OID;
	ARR_DIMS(a)[0] = (int) R;
	ARR_LBOUND(a)[0] = 1;
	ids = (int32 *) ARR_DATA_PTR(a);
	for (rep = 0; rep < R; rep++)
		ids[rep] = c->r.nodes[slots[rep]].id;
	return a;
}

PG_FUNCTION_INFO_V1(ring_partition);
Datum
ring_partition(PG_FUNCTION_ARGS)
{
	const ring_cache *c = cached_ring(fcinfo, 0);
	uint64		key = (uint64) PG_GETARG_INT64(1);

	PG_RETURN_INT32((int32) ring_partition_of(&c->r, key));
}

PG_FUNCTION_INFO_V1(ring_nodes);
Datum
ring_nodes(PG_FUNCTION_ARGS)
{
	const ring_cache *c = cached_ring(fcinfo, 0);
	uint64		key = (uint64) PG_GETARG_INT64(1);

	PG_RETURN_ARRAYTYPE_P(replica_array(c, ring_partition_of(&c->r, key)));
}

PG_FUNCTION_INFO_V1(ring_partition_nodes);
Datum
ring_partition_nodes(PG_FUNCTION_ARGS)
{
	const ring_cache *c = cached_ring(fcinfo, 0);
	int32		partition = PG_GETARG_INT32(1);
	int64		parts = (int64) 1 << c->r.part_power;

	if (partition < 0 || partition >= parts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition must be between 0 and %lld, got %d",
						(long long) (parts - 1), partition)));
	PG_RETURN_ARRAYTYPE_P(replica_array(c, (uint32) partition));
}

/* ---- inspection ---- */

/* state of the set-returning functions */
typedef struct ring_srf
{
	ring		r;
	ring		other;			/* ring_moves: the new ring */
	ring_node_stat *stats;		/* ring_node_stats */
	uint64		next;			/* ring_moves: next slot to look at */
} ring_srf;

static TupleDesc
srf_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record")));
	return BlessTupleDesc(tupdesc);
}

/* ring_assignments(ring) -> (partition int, replica int, node int) */
PG_FUNCTION_INFO_V1(ring_assignments);
Datum
ring_assignments(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	ring_srf   *st;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(ring_srf));
		decode_datum(PG_GETARG_DATUM(0), funcctx->multi_call_memory_ctx, &st->r);
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->max_calls = (uint64) st->r.replicas << st->r.part_power;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		uint32		partition = (uint32) (funcctx->call_cntr / st->r.replicas);
		uint32		rep = (uint32) (funcctx->call_cntr % st->r.replicas);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum((int32) partition);
		values[1] = Int32GetDatum((int32) rep);
		values[2] = Int32GetDatum(st->r.nodes[ring_slot(&st->r, rep, partition)].id);
		SRF_RETURN_NEXT(funcctx,
						HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * ring_node_stats(ring) -> (node int, zone int, region int, weight float8,
 *		partitions bigint, primaries bigint, wanted float8, quota bigint,
 *		balance float8)
 */
PG_FUNCTION_INFO_V1(ring_node_stats);
Datum
ring_node_stats(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	ring_srf   *st;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;
		ring_env	env;
		ring_error	err;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(ring_srf));
		decode_datum(PG_GETARG_DATUM(0), funcctx->multi_call_memory_ctx, &st->r);
		st->stats = palloc(sizeof(ring_node_stat) * st->r.node_count);
		env = server_env(funcctx->multi_call_memory_ctx);
		if (ring_core_node_stats(&env, &st->r, st->stats, &err) != RING_OK)
			report_ring_error(&err, ERRCODE_DATA_CORRUPTED);
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->max_calls = st->r.node_count;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		uint32		i = (uint32) funcctx->call_cntr;
		const ring_node *nd = &st->r.nodes[i];
		const ring_node_stat *s = &st->stats[i];
		Datum		values[9];
		bool		nulls[9] = {false};

		values[0] = Int32GetDatum(nd->id);
		values[1] = Int32GetDatum(nd->zone);
		values[2] = Int32GetDatum(nd->region);
		values[3] = Float8GetDatum(nd->weight);
		values[4] = Int64GetDatum(s->held);
		values[5] = Int64GetDatum(s->primaries);
		values[6] = Float8GetDatum(s->wanted);
		values[7] = Int64GetDatum(s->quota);
		if (s->wanted > 0)
			values[8] = Float8GetDatum(100.0 * ((double) s->held - s->wanted) / s->wanted);
		else
			nulls[8] = true;
		SRF_RETURN_NEXT(funcctx,
						HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
	}
	SRF_RETURN_DONE(funcctx);
}

static ring_tier
parse_tier(text *t)
{
	char	   *s = text_to_cstring(t);

	if (strcmp(s, "region") == 0)
		return RING_TIER_REGION;
	if (strcmp(s, "zone") == 0)
		return RING_TIER_ZONE;
	if (strcmp(s, "node") == 0)
		return RING_TIER_NODE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("tier must be \"region\", \"zone\" or \"node\", got \"%s\"", s)));
	return RING_TIER_ZONE;		/* not reached */
}

static double
dispersion_of(const ring *r, ring_tier tier)
{
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	uint64		count;

	if (ring_dispersion_count(&env, r, tier, &count, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_DATA_CORRUPTED);
	return (double) count / (double) ((uint64) r->replicas << r->part_power);
}

/* ring_dispersion(ring, tier text) -> float8 */
PG_FUNCTION_INFO_V1(ring_dispersion);
Datum
ring_dispersion(PG_FUNCTION_ARGS)
{
	ring_tier	tier = parse_tier(PG_GETARG_TEXT_PP(1));
	ring		r;

	decode_datum(PG_GETARG_DATUM(0), CurrentMemoryContext, &r);
	PG_RETURN_FLOAT8(dispersion_of(&r, tier));
}

static int
compare_uint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/*
 * ring_info(ring) -> (part_power int, replicas int, partitions int,
 *		nodes int, zones int, regions int, seed bigint, fingerprint text,
 *		bytes bigint, max_balance float8, zone_dispersion float8,
 *		region_dispersion float8)
 */
PG_FUNCTION_INFO_V1(ring_info);
Datum
ring_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = srf_tupdesc(fcinfo);
	ring		r;
	ring_env	env = server_env(CurrentMemoryContext);
	ring_error	err;
	ring_node_stat *stats;
	Datum		values[12];
	bool		nulls[12] = {false};
	double		worst = 0;
	uint64	   *keys;
	uint32		zones = 0,
				regions = 0,
				i;

	decode_datum(PG_GETARG_DATUM(0), CurrentMemoryContext, &r);
	stats = palloc(sizeof(ring_node_stat) * r.node_count);
	if (ring_core_node_stats(&env, &r, stats, &err) != RING_OK)
		report_ring_error(&err, ERRCODE_DATA_CORRUPTED);
	keys = palloc(sizeof(uint64) * r.node_count);
	for (i = 0; i < r.node_count; i++)
	{
		if (stats[i].wanted > 0)
			worst = Max(worst, fabs(100.0 * ((double) stats[i].held - stats[i].wanted) / stats[i].wanted));
		keys[i] = ((uint64) ((uint32) r.nodes[i].region ^ 0x80000000u) << 32) |
			((uint32) r.nodes[i].zone ^ 0x80000000u);
	}
	/* distinct (region, zone) pairs, and distinct regions */
	qsort(keys, r.node_count, sizeof(uint64), compare_uint64);
	for (i = 0; i < r.node_count; i++)
	{
		if (i == 0 || keys[i] != keys[i - 1])
			zones++;
		if (i == 0 || (keys[i] >> 32) != (keys[i - 1] >> 32))
			regions++;
	}
	values[0] = Int32GetDatum((int32) r.part_power);
	values[1] = Int32GetDatum((int32) r.replicas);
	values[2] = Int32GetDatum((int32) (1u << r.part_power));
	values[3] = Int32GetDatum((int32) r.node_count);
	values[4] = Int32GetDatum((int32) zones);
	values[5] = Int32GetDatum((int32) regions);
	values[6] = Int64GetDatum(r.seed);
	values[7] = CStringGetTextDatum(psprintf("%016llx", (unsigned long long) r.fingerprint));
	values[8] = Int64GetDatum((int64) ring_encoded_size(r.part_power, r.replicas, r.node_count));
	values[9] = Float8GetDatum(worst);
	values[10] = Float8GetDatum(dispersion_of(&r, RING_TIER_ZONE));
	values[11] = Float8GetDatum(dispersion_of(&r, RING_TIER_REGION));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ring_moves(old, new) -> (partition int, replica int, from_node int, to_node int) */
PG_FUNCTION_INFO_V1(ring_moves);
Datum
ring_moves(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	ring_srf   *st;
	uint64		slots;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(ring_srf));
		decode_datum(PG_GETARG_DATUM(0), funcctx->multi_call_memory_ctx, &st->r);
		decode_datum(PG_GETARG_DATUM(1), funcctx->multi_call_memory_ctx, &st->other);
		if (st->r.part_power != st->other.part_power)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rings have different part powers, %u and %u",
							st->r.part_power, st->other.part_power)));
		if (st->r.replicas != st->other.replicas)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rings have different numbers of replicas, %u and %u",
							st->r.replicas, st->other.replicas)));
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	slots = (uint64) st->r.replicas << st->r.part_power;
	/* slots in (partition, replica) order */
	while (st->next < slots)
	{
		uint32		partition = (uint32) (st->next / st->r.replicas);
		uint32		rep = (uint32) (st->next % st->r.replicas);
		int32		from = st->r.nodes[ring_slot(&st->r, rep, partition)].id;
		int32		to = st->other.nodes[ring_slot(&st->other, rep, partition)].id;

		st->next++;
		if ((st->next & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (from != to)
		{
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};

			values[0] = Int32GetDatum((int32) partition);
			values[1] = Int32GetDatum((int32) rep);
			values[2] = Int32GetDatum(from);
			values[3] = Int32GetDatum(to);
			SRF_RETURN_NEXT(funcctx,
							HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
		}
	}
	SRF_RETURN_DONE(funcctx);
}
