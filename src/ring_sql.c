/*
 * src/ring_sql.c
 *		SQL functions of the partition ring: the partition_ring type (JSON
 *		text form, binary form), ring_build, ring_rebalance, lookups (through
 *		the backend-wide cache of decoded rings in src/ring_cache.c), and
 *		inspection.
 *
 * The work is done by the pure core in src/core/ring*.c; this file reads
 * arguments, checks them, calls the core and builds results.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
#include "core/ring.h"
#include "ring_cache.h"
#include "ring_errors.h"

static Datum
ring_to_datum(ring *r)
{
	size_t		size = ring_encoded_size(r->part_power, r->replicas, r->node_count);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	struct varlena *v;

	if (size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("partition ring of %zu bytes is too large", size)));
	v = (struct varlena *) palloc(VARHDRSZ + size);
	SET_VARSIZE(v, VARHDRSZ + size);
	if (ring_encode(&env, r, (uint8 *) VARDATA(v), &err) != RING_OK)
		ring_report_error(&err, ERRCODE_INVALID_PARAMETER_VALUE);
	return PointerGetDatum(v);
}

/* ---- the type ---- */

PG_FUNCTION_INFO_V1(partition_ring_in);
Datum
partition_ring_in(PG_FUNCTION_ARGS)
{
	char	   *text = PG_GETARG_CSTRING(0);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	ring		r;
	Datum		result;

	if (ring_from_json(&env, text, strlen(text), &r, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_INVALID_TEXT_REPRESENTATION);
	result = ring_to_datum(&r);
	ring_free(&env, &r);
	PG_RETURN_DATUM(result);
}

/*
 * The text form, from the cached decoded ring: the memory it takes is the
 * text and the ring.  Its length is counted first, so that a text beyond
 * PostgreSQL's 1 GB limit is refused before anything is allocated.
 */
PG_FUNCTION_INFO_V1(partition_ring_out);
Datum
partition_ring_out(PG_FUNCTION_ARGS)
{
	const decoded_ring *c = ring_decoded_arg(fcinfo, 0);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	size_t		len,
				written;
	char	   *s;

	if (ring_to_json(&env, &c->r, NULL, 0, &len, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
	if (len > MaxAllocSize - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text form of the partition ring would take %zu bytes, more than the limit of %zu",
						len, (size_t) MaxAllocSize - 1),
				 errhint("Read the ring with the binary format, or with ring_assignments().")));
	s = palloc(len + 1);
	if (ring_to_json(&env, &c->r, s, len, &written, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
	if (written != len)
		elog(ERROR, "text form of the partition ring changed length: %zu, then %zu",
			 len, written);
	s[len] = '\0';
	PG_RETURN_CSTRING(s);
}

/*
 * Binary input: the value is decoded and checked (the digest of a format 2
 * value, everything else of either format); a format 1 value (from 1.0) is
 * stored in format 2.
 */
PG_FUNCTION_INFO_V1(partition_ring_recv);
Datum
partition_ring_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	ring		r;
	struct varlena *v;

	if (ring_decode(&env, (const uint8 *) data, (size_t) len, &r, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_INVALID_BINARY_REPRESENTATION);
	if (r.format_version != RING_FORMAT_VERSION)
	{
		Datum		result = ring_to_datum(&r);

		ring_free(&env, &r);
		PG_RETURN_DATUM(result);
	}
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
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
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
	ring_env	env = ring_server_env(CurrentMemoryContext);
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
		ring_report_error(&err, ERRCODE_INVALID_PARAMETER_VALUE);
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
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	const decoded_ring *old;
	ring		r;

	if (any_null(fcinfo, 0, 5, 4))
		PG_RETURN_NULL();
	seed = PG_GETARG_INT64(5);
	nodes = read_node_table(fcinfo, 1, &n);
	old = ring_decoded_arg(fcinfo, 0);
	if (ring_core_rebalance(&env, &old->r, nodes, n, seed, &r, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_INVALID_PARAMETER_VALUE);
	PG_RETURN_DATUM(ring_to_datum(&r));
}

/* ---- lookups ---- */

PG_FUNCTION_INFO_V1(ring_partition);
Datum
ring_partition(PG_FUNCTION_ARGS)
{
	const decoded_ring *c = ring_decoded_arg(fcinfo, 0);
	uint64		key = (uint64) PG_GETARG_INT64(1);

	PG_RETURN_INT32((int32) ring_partition_of(&c->r, key));
}

PG_FUNCTION_INFO_V1(ring_nodes);
Datum
ring_nodes(PG_FUNCTION_ARGS)
{
	const decoded_ring *c = ring_decoded_arg(fcinfo, 0);
	uint64		key = (uint64) PG_GETARG_INT64(1);

	PG_RETURN_ARRAYTYPE_P(ring_decoded_replicas(c, ring_partition_of(&c->r, key)));
}

PG_FUNCTION_INFO_V1(ring_partition_nodes);
Datum
ring_partition_nodes(PG_FUNCTION_ARGS)
{
	const decoded_ring *c = ring_decoded_arg(fcinfo, 0);

	PG_RETURN_ARRAYTYPE_P(ring_decoded_replicas(c, ring_decoded_partition_arg(c, PG_GETARG_INT32(1))));
}

/* ---- inspection ---- */

/* state of the set-returning functions */
typedef struct ring_srf
{
	const ring *r;				/* of the cache, pinned for the scan */
	const ring *other;			/* ring_moves: the new ring */
	const ring_node_stat *stats;	/* ring_node_stats */
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
		st->r = &ring_decoded_arg_held(fcinfo, 0, funcctx->multi_call_memory_ctx)->r;
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->max_calls = (uint64) st->r->replicas << st->r->part_power;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		uint32		partition = (uint32) (funcctx->call_cntr / st->r->replicas);
		uint32		rep = (uint32) (funcctx->call_cntr % st->r->replicas);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum((int32) partition);
		values[1] = Int32GetDatum((int32) rep);
		values[2] = Int32GetDatum(st->r->nodes[ring_slot(st->r, rep, partition)].id);
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
		const decoded_ring *c;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(ring_srf));
		c = ring_decoded_arg_held(fcinfo, 0, funcctx->multi_call_memory_ctx);
		st->r = &c->r;
		st->stats = ring_decoded_node_stats(c);
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->max_calls = st->r->node_count;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		uint32		i = (uint32) funcctx->call_cntr;
		const ring_node *nd = &st->r->nodes[i];
		const ring_node_stat *s = &st->stats[i];
		Datum		values[9];
		bool		nulls[9] = {false};
		double		balance;

		values[0] = Int32GetDatum(nd->id);
		values[1] = Int32GetDatum(nd->zone);
		values[2] = Int32GetDatum(nd->region);
		values[3] = Float8GetDatum(nd->weight);
		values[4] = Int64GetDatum(s->held);
		values[5] = Int64GetDatum(s->primaries);
		values[6] = Float8GetDatum(s->wanted);
		values[7] = Int64GetDatum(s->quota);
		if (ring_node_balance(s, &balance))
			values[8] = Float8GetDatum(balance);
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
dispersion_of(const decoded_ring *c, ring_tier tier)
{
	return (double) ring_decoded_dispersion_count(c, tier) /
		(double) ((uint64) c->r.replicas << c->r.part_power);
}

/* ring_dispersion(ring, tier text) -> float8 */
PG_FUNCTION_INFO_V1(ring_dispersion);
Datum
ring_dispersion(PG_FUNCTION_ARGS)
{
	ring_tier	tier = parse_tier(PG_GETARG_TEXT_PP(1));

	PG_RETURN_FLOAT8(dispersion_of(ring_decoded_arg(fcinfo, 0), tier));
}

/* the digest in lowercase hex */
static char *
hex_digest(const uint8 *digest)
{
	char	   *s = palloc(2 * RING_DIGEST_SIZE + 1);

	for (int i = 0; i < RING_DIGEST_SIZE; i++)
		sprintf(s + 2 * i, "%02x", digest[i]);
	return s;
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
	const decoded_ring *c = ring_decoded_arg(fcinfo, 0);
	const ring *r = &c->r;
	const ring_node_stat *stats = ring_decoded_node_stats(c);
	ring_env	env = ring_server_env(CurrentMemoryContext);
	ring_error	err;
	Datum		values[12];
	bool		nulls[12] = {false};
	ring_domains d;

	if (ring_domains_build(&env, r, &d, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
	values[0] = Int32GetDatum((int32) r->part_power);
	values[1] = Int32GetDatum((int32) r->replicas);
	values[2] = Int32GetDatum((int32) (1u << r->part_power));
	values[3] = Int32GetDatum((int32) r->node_count);
	values[4] = Int32GetDatum((int32) d.zones);
	values[5] = Int32GetDatum((int32) d.regions);
	ring_domains_free(&env, &d);
	values[6] = Int64GetDatum(r->seed);
	values[7] = CStringGetTextDatum(hex_digest(ring_decoded_digest(c)));
	values[8] = Int64GetDatum((int64) ring_encoded_size(r->part_power, r->replicas, r->node_count));
	values[9] = Float8GetDatum(ring_max_balance(stats, r->node_count));
	values[10] = Float8GetDatum(dispersion_of(c, RING_TIER_ZONE));
	values[11] = Float8GetDatum(dispersion_of(c, RING_TIER_REGION));
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
		st->r = &ring_decoded_arg_held(fcinfo, 0, funcctx->multi_call_memory_ctx)->r;
		st->other = &ring_decoded_arg_held(fcinfo, 1, funcctx->multi_call_memory_ctx)->r;
		if (st->r->part_power != st->other->part_power)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rings have different part powers, %u and %u",
							st->r->part_power, st->other->part_power)));
		if (st->r->replicas != st->other->replicas)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rings have different numbers of replicas, %u and %u",
							st->r->replicas, st->other->replicas)));
		funcctx->tuple_desc = srf_tupdesc(fcinfo);
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	slots = (uint64) st->r->replicas << st->r->part_power;
	/* slots in (partition, replica) order */
	while (st->next < slots)
	{
		uint32		partition = (uint32) (st->next / st->r->replicas);
		uint32		rep = (uint32) (st->next % st->r->replicas);
		int32		from = st->r->nodes[ring_slot(st->r, rep, partition)].id;
		int32		to = st->other->nodes[ring_slot(st->other, rep, partition)].id;

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
