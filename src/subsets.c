/*
 * src/subsets.c
 *		SQL functions for backend subsetting: which of the N backend tasks
 *		frontend task m connects to, by each of the Google article's
 *		algorithms, and the properties of an algorithm over a whole job.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "compat.h"
#include "int4_array.h"
#include "core/baselines.h"
#include "core/ringsteady.h"
#include "core/rocksteadier.h"
#include "core/subset_metrics.h"
#include "module.h"

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

/* The arguments every subset function starts with: 0 to 2. */
typedef struct subset_arguments
{
	int32		frontend;
	int32		backends;
	int32		subset_size;
} subset_arguments;

/* Arguments 0 to 2 of a subset function, checked in that order. */
static subset_arguments
get_subset_arguments(FunctionCallInfo fcinfo)
{
	subset_arguments a;

	a.frontend = PG_GETARG_INT32(0);
	a.backends = PG_GETARG_INT32(1);
	a.subset_size = PG_GETARG_INT32(2);
	check_frontend(a.frontend);
	check_backends(a.backends);
	check_subset_size(a.subset_size);
	return a;
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

PG_FUNCTION_INFO_V1(ringsteady_subset);
Datum
ringsteady_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	bool		backend_scaling = PG_GETARG_BOOL(3);
	int32		members;
	ArrayType  *subset;

	members = subset_members(a.backends, a.subset_size);
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	ringsteady_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) members,
							backend_scaling, (uint32 *) ARR_DATA_PTR(subset));
	PG_RETURN_ARRAYTYPE_P(subset);
}

/*
 * The most shuffle steps one rocksteadier_subset call may take (about a
 * second): the lots it visits, min(k + 1, ceil(N / L)), and the last one
 * again, times L (rocksteadier_shuffle_steps).
 */
#define MAX_ROCKSTEADIER_STEPS (UINT64_C(1) << 30)

/*
 * The most backends deterministic_subset and consistent_subset accept: they
 * shuffle, or place on the circle, every backend for each call.
 */
#define MAX_SCANNED_BACKENDS (1 << 24)

static inline void
check_lot_size(int32 lot_size)
{
	if (lot_size < 1 || lot_size > ROCKSTEADIER_MAX_LOT_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lot size must be between 1 and %d, got %d",
						ROCKSTEADIER_MAX_LOT_SIZE, lot_size)));
}

static inline void
check_scanned_backends(int32 backends, const char *algorithm)
{
	if (backends > MAX_SCANNED_BACKENDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s subsetting of %d backends is too large", algorithm, backends),
				 errdetail("It reads every backend for each subset, so it takes at most %d backends.",
						   MAX_SCANNED_BACKENDS)));
}

/* An algorithm's own, lower limit on the members of a subset. */
static inline void
check_algorithm_members(int32 members, uint32 limit, const char *algorithm)
{
	if ((uint32) members > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s subset of %d backends is too large", algorithm, members),
				 errdetail("A %s subset has at most %u members.", algorithm, limit)));
}

PG_FUNCTION_INFO_V1(rocksteadier_subset);
Datum
rocksteadier_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	int32		lot_size = PG_GETARG_INT32(3);
	int32		members;
	uint64		steps;
	ArrayType  *subset;
	uint32	   *workspace;

	check_lot_size(lot_size);
	members = subset_members(a.backends, a.subset_size);
	steps = rocksteadier_shuffle_steps((uint32) a.backends, (uint32) members, (uint32) lot_size);
	if (steps > MAX_ROCKSTEADIER_STEPS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rocksteadier subset of %d backends in lots of %d is too large", members, lot_size),
				 errdetail("It would shuffle " UINT64_FORMAT " tasks; the limit is " UINT64_FORMAT ".",
						   steps, MAX_ROCKSTEADIER_STEPS),
				 errhint("Use a smaller lot size or subset size.")));
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	workspace = palloc(sizeof(uint32) * ROCKSTEADIER_WORKSPACE(lot_size));
	rocksteadier_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) members,
							  (uint32) lot_size, (uint32 *) ARR_DATA_PTR(subset), workspace,
							  &server_interrupts);
	pfree(workspace);
	PG_RETURN_ARRAYTYPE_P(subset);
}

PG_FUNCTION_INFO_V1(random_subset);
Datum
random_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	int64		seed = PG_GETARG_INT64(3);
	int32		members;
	ArrayType  *subset;
	void	   *workspace;

	members = subset_members(a.backends, a.subset_size);
	check_algorithm_members(members, RANDOM_MAX_MEMBERS, "random");
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	workspace = palloc(random_subset_workspace_bytes((uint32) a.backends, (uint32) members));
	random_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) members,
						(uint64) seed, (uint32 *) ARR_DATA_PTR(subset), workspace,
						&server_interrupts);
	pfree(workspace);
	PG_RETURN_ARRAYTYPE_P(subset);
}

PG_FUNCTION_INFO_V1(round_robin_subset);
Datum
round_robin_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	int32		members;
	ArrayType  *subset;

	members = subset_members(a.backends, a.subset_size);
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	/* the start is frontend * subset_size mod N, with the k asked for */
	round_robin_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) a.subset_size,
							 (uint32 *) ARR_DATA_PTR(subset));
	PG_RETURN_ARRAYTYPE_P(subset);
}

PG_FUNCTION_INFO_V1(deterministic_subset);
Datum
deterministic_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	int64		seed = PG_GETARG_INT64(3);
	int32		members;
	ArrayType  *subset;
	void	   *workspace;

	check_scanned_backends(a.backends, "deterministic");
	members = subset_members(a.backends, a.subset_size);
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	workspace = palloc(deterministic_subset_workspace_bytes((uint32) a.backends));
	deterministic_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) members,
							   (uint64) seed, (uint32 *) ARR_DATA_PTR(subset), workspace,
							   &server_interrupts);
	pfree(workspace);
	PG_RETURN_ARRAYTYPE_P(subset);
}

PG_FUNCTION_INFO_V1(consistent_subset);
Datum
consistent_subset(PG_FUNCTION_ARGS)
{
	subset_arguments a = get_subset_arguments(fcinfo);
	int64		seed = PG_GETARG_INT64(3);
	int32		members;
	ArrayType  *subset;
	void	   *workspace;

	check_scanned_backends(a.backends, "consistent");
	members = subset_members(a.backends, a.subset_size);
	check_algorithm_members(members, CONSISTENT_MAX_MEMBERS, "consistent");
	if (members == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));

	subset = int4_array(NULL, members);
	workspace = palloc(consistent_subset_workspace_bytes((uint32) a.backends, (uint32) members));
	consistent_write_subset((uint32) a.frontend, (uint32) a.backends, (uint32) members,
							(uint64) seed, (uint32 *) ARR_DATA_PTR(subset), workspace,
							&server_interrupts);
	pfree(workspace);
	PG_RETURN_ARRAYTYPE_P(subset);
}

/*
 * The measuring functions: subset_balance, subset_diversity, subset_churn and
 * subset_spread.  Their memory is palloc'd (the core stays within the limits
 * of subset_metrics.h, far below MaxAllocSize) and the core checks for
 * interrupts between frontends and while it sorts.
 */
static void *
metrics_allocate(void *arg, size_t bytes)
{
	return palloc(bytes);
}

static void
metrics_release(void *arg, void *pointer)
{
	pfree(pointer);
}

static const subset_env metrics_env = {
	metrics_allocate, metrics_release, &server_interrupts, NULL
};

/*
 * The job of a measuring function's arguments, checked.  `which` is "" or, for
 * the resized job of subset_churn, "new ": its arguments are new_frontends,
 * new_backends and new_subset_size, and its errors say so.
 */
static subset_job
job_of_arguments(text *algorithm_name, int32 frontends, int32 backends, int32 subset_size,
				 int64 seed, int32 lot_size, const char *which)
{
	char	   *name = text_to_cstring(algorithm_name);
	subset_job	job;

	if (subset_algorithm_by_name(name, &job.algorithm.id) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("subsetting algorithm \"%s\" does not exist", name),
				 errhint("The algorithms are random, round_robin, deterministic, consistent, ringsteady, ringsteady_unscaled and rocksteadier.")));
	if (frontends < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%snumber of frontends must be at least 1, got %d", which, frontends)));
	if (backends < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%snumber of backends must be at least 1, got %d", which, backends)));
	if (subset_size < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%ssubset size must be at least 1, got %d", which, subset_size)));
	check_lot_size(lot_size);
	job.algorithm.seed = (uint64) seed;
	job.algorithm.lot_size = (uint32) lot_size;
	job.frontends = (uint32) frontends;
	job.backends = (uint32) backends;
	job.subset_size = (uint32) subset_size;
	if (subset_job_check(&job) == SUBSET_METRICS_TOO_LARGE &&
		job.algorithm.id == SUBSET_CONSISTENT && Min(subset_size, backends) > CONSISTENT_MAX_MEMBERS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%sjob of %d frontends, %d backends and subsets of %d is too large to measure",
						which, frontends, backends, subset_size),
				 errdetail("A consistent subset has at most %u members.", CONSISTENT_MAX_MEMBERS)));
	if (subset_job_check(&job) == SUBSET_METRICS_TOO_LARGE)
	{
		uint64		work = subset_job_work(&job);	/* PG_UINT64_MAX: 2^64 or more */
		char		steps[32];

		if (work == PG_UINT64_MAX)
			strlcpy(steps, "2^64 or more", sizeof(steps));
		else
			snprintf(steps, sizeof(steps), UINT64_FORMAT, work);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%sjob of %d frontends, %d backends and subsets of %d is too large to measure",
						which, frontends, backends, subset_size),
				 errdetail("A job measured has at most %u frontends and %u backends, and generating its subsets by %s subsetting may take at most " UINT64_FORMAT " steps; this one takes %s.",
						   SUBSET_METRICS_MAX_FRONTENDS, SUBSET_METRICS_MAX_BACKENDS, name,
						   SUBSET_METRICS_MAX_WORK, steps)));
	}
	return job;
}

/* Raises the error of a return code of the core that the checks missed. */
static void
check_metrics_status(int status)
{
	if (status != SUBSET_METRICS_OK)
		elog(ERROR, "subset metrics failed with status %d", status);
}

static Datum
build_record(FunctionCallInfo fcinfo, Datum *values)
{
	TupleDesc	tupdesc;
	bool		nulls[8] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	Assert(tupdesc->natts <= 8);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

PG_FUNCTION_INFO_V1(subset_balance);
Datum
subset_balance(PG_FUNCTION_ARGS)
{
	subset_job	job = job_of_arguments(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
									   PG_GETARG_INT32(3), PG_GETARG_INT64(4), PG_GETARG_INT32(5), "");
	subset_balance_result r;
	Datum		values[6];

	check_metrics_status(subset_measure_balance(&job, &metrics_env, &r));
	values[0] = Int64GetDatum((int64) r.connections);
	values[1] = Int32GetDatum((int32) r.min_connections);
	values[2] = Int32GetDatum((int32) r.max_connections);
	values[3] = Float8GetDatum(r.mean_connections);
	values[4] = Float8GetDatum(r.utilization);
	values[5] = Float8GetDatum(r.achievable_utilization);
	PG_RETURN_DATUM(build_record(fcinfo, values));
}

PG_FUNCTION_INFO_V1(subset_diversity);
Datum
subset_diversity(PG_FUNCTION_ARGS)
{
	subset_job	job = job_of_arguments(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
									   PG_GETARG_INT32(3), PG_GETARG_INT64(4), PG_GETARG_INT32(5), "");
	subset_diversity_result r;
	Datum		values[2];

	check_metrics_status(subset_measure_diversity(&job, &metrics_env, &r));
	values[0] = Int32GetDatum((int32) r.distinct_subsets);
	values[1] = Int32GetDatum((int32) r.largest_group);
	PG_RETURN_DATUM(build_record(fcinfo, values));
}

PG_FUNCTION_INFO_V1(subset_churn);
Datum
subset_churn(PG_FUNCTION_ARGS)
{
	text	   *algorithm = PG_GETARG_TEXT_PP(0);
	int64		seed = PG_GETARG_INT64(7);
	int32		lot_size = PG_GETARG_INT32(8);
	subset_job	before = job_of_arguments(algorithm, PG_GETARG_INT32(1), PG_GETARG_INT32(2),
										  PG_GETARG_INT32(3), seed, lot_size, "");
	subset_job	after = job_of_arguments(algorithm, PG_GETARG_INT32(4), PG_GETARG_INT32(5),
										 PG_GETARG_INT32(6), seed, lot_size, "new ");
	subset_churn_result r;
	Datum		values[6];

	check_metrics_status(subset_measure_churn(&before, &after, &metrics_env, &r));
	values[0] = Int32GetDatum((int32) r.frontends_compared);
	values[1] = Int64GetDatum((int64) r.dropped);
	values[2] = Float8GetDatum(r.mean_dropped);
	values[3] = Int32GetDatum((int32) r.max_dropped);
	values[4] = Int32GetDatum((int32) r.frontends_losing_all);
	values[5] = Float8GetDatum(r.share_losing_all);
	PG_RETURN_DATUM(build_record(fcinfo, values));
}

PG_FUNCTION_INFO_V1(subset_spread);
Datum
subset_spread(PG_FUNCTION_ARGS)
{
	int32		restart_width = PG_GETARG_INT32(4);
	subset_job	job = job_of_arguments(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
									   PG_GETARG_INT32(3), PG_GETARG_INT64(5), PG_GETARG_INT32(6), "");
	subset_spread_result r;
	Datum		values[3];

	if (restart_width < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("restart width must be at least 1, got %d", restart_width)));
	check_metrics_status(subset_measure_spread(&job, (uint32) restart_width, &metrics_env, &r));
	values[0] = Int32GetDatum((int32) r.max_down);
	values[1] = Float8GetDatum(r.max_down_share);
	values[2] = Float8GetDatum(r.mean_max_down_share);
	PG_RETURN_DATUM(build_record(fcinfo, values));
}
