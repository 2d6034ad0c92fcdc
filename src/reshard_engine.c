/*
 * src/reshard_engine.c
 *		The driver of 1.2's resharding engine (docs/resharding-engine.md):
 *		runs the phases, one transaction each, as the table's owner in a
 *		security-restricted operation, and keeps the state row of the
 *		resharding (reshard_state) as the extension's owner.
 *
 * The phases are SQL functions of the extension that take the state row and
 * return it changed; they are not executable by anyone (their EXECUTE is
 * revoked from PUBLIC) and are called here through the function manager,
 * which checks no privilege.  Work in progress: the cutover is not written
 * yet, so reshard_engine_prepare stops after the verification.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "reshard_capture.h"
#include "table_owner.h"

/* What every phase needs, kept across the engine's transactions. */
typedef struct engine
{
	Oid			parent;
	char	   *schema;			/* the extension's, quoted */
	Oid			extension_owner;
	Datum		state;			/* the reshard_state row, in the procedure's memory */
	MemoryContext memory;
} engine;

/* The extension's schema (quoted) and owner. */
static void
read_extension(engine *e)
{
	bool		isnull;

	if (SPI_execute("SELECT pg_catalog.quote_ident(extnamespace::pg_catalog.regnamespace::text), extowner"
					" FROM pg_catalog.pg_extension WHERE extname = 'subsetting'", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "extension subsetting is not installed");
	e->schema = MemoryContextStrdup(e->memory, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	e->extension_owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
}

/* Runs query on the state table as the extension's owner; $1 is the state row or the parent. */
static void
run_as_extension_owner(engine *e, const char *query, Datum arg, Oid argtype, bool want_row)
{
	Oid			saved_user;
	int			saved_context;
	int			ret;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(e->extension_owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	ret = SPI_execute_with_args(psprintf(query, e->schema), 1, &argtype, &arg, NULL, false, 0);
	SetUserIdAndSecContext(saved_user, saved_context);
	if (ret < 0)
		elog(ERROR, "could not run \"%s\": %s", query, SPI_result_code_string(ret));
	if (want_row)
	{
		bool		isnull;
		Datum		row;
		MemoryContext old;

		if (SPI_processed != 1)
			elog(ERROR, "no resharding state for table %u", e->parent);
		row = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		old = MemoryContextSwitchTo(e->memory);
		e->state = datumCopy(row, false, -1);
		MemoryContextSwitchTo(old);
	}
}

static void
save_state(engine *e)
{
	run_as_extension_owner(e,
						   "UPDATE %1$s.reshard_state AS t SET (parent, parent_name, operation, partition, bucket, method, key,"
						   " old_buckets, new_buckets, new_bucket_sql, new_partition_by, new_bound, sources, shadows, new_parent,"
						   " log, log_sequence, phase, rows_total, rows_to_move, rows_copied, rows_verified, sources_copied,"
						   " changes_applied, cutover_attempts, started, last_progress, backend_pid, backend_start, error)"
						   " = (SELECT n.parent, n.parent_name, n.operation, n.partition, n.bucket, n.method, n.key,"
						   " n.old_buckets, n.new_buckets, n.new_bucket_sql, n.new_partition_by, n.new_bound, n.sources, n.shadows,"
						   " n.new_parent, n.log, n.log_sequence, n.phase, n.rows_total, n.rows_to_move, n.rows_copied,"
						   " n.rows_verified, n.sources_copied, n.changes_applied, n.cutover_attempts, n.started,"
						   " pg_catalog.clock_timestamp(), n.backend_pid, n.backend_start, n.error"
						   " FROM (SELECT ($1::%1$s.reshard_state).*) AS n)"
						   " WHERE t.parent = ($1::%1$s.reshard_state).parent RETURNING t",
						   e->state, HeapTupleHeaderGetTypeId(DatumGetHeapTupleHeader(e->state)), true);
}

static char *
state_text(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = GetAttributeByName(DatumGetHeapTupleHeader(e->state), column, &isnull);

	return isnull ? NULL : TextDatumGetCString(value);
}

static Oid
phase_function(engine *e, const char *signature)
{
	Datum		oid = DirectFunctionCall1(regprocedurein,
										  CStringGetDatum(psprintf("%s.%s", e->schema, signature)));

	return DatumGetObjectId(oid);
}

/* Calls a phase function as the table's owner; the state row is replaced by what it returns. */
static void
run_phase(engine *e, const char *signature, bool with_limit, int64 limit)
{
	table_owner_context owner;
	Oid			function = phase_function(e, signature);
	Datum		result;
	MemoryContext old;

	table_owner_enter(e->parent, &owner);
	if (with_limit)
		result = OidFunctionCall2(function, e->state, Int64GetDatum(limit));
	else
		result = OidFunctionCall1(function, e->state);
	table_owner_leave(&owner);
	old = MemoryContextSwitchTo(e->memory);
	e->state = datumCopy(result, false, -1);
	MemoryContextSwitchTo(old);
	save_state(e);
}

static void
next_transaction(bool repeatable_read)
{
	SPI_commit();
	if (repeatable_read)
		(void) set_config_option("transaction_isolation", "repeatable read",
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
	else
		(void) set_config_option("transaction_isolation", "read committed",
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
}

static int64
state_int64(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = GetAttributeByName(DatumGetHeapTupleHeader(e->state), column, &isnull);

	return isnull ? 0 : DatumGetInt64(value);
}

/* The capture triggers on every old partition (C: they are internal triggers). */
static void
start_capture(engine *e)
{
	table_owner_context owner;
	bool		isnull;
	HeapTupleHeader row = DatumGetHeapTupleHeader(e->state);
	Oid			log = DatumGetObjectId(GetAttributeByName(row, "log", &isnull));
	Oid			sequence = DatumGetObjectId(GetAttributeByName(row, "log_sequence", &isnull));
	ArrayType  *sources = DatumGetArrayTypeP(GetAttributeByName(row, "sources", &isnull));
	Datum	   *oids;
	bool	   *nulls;
	int			count;
	Oid			function = phase_function(e, "reshard_capture()");

	deconstruct_array(sources, OIDOID, sizeof(Oid), true, TYPALIGN_INT, &oids, &nulls, &count);
	table_owner_enter(e->parent, &owner);
	for (int i = 0; i < count; i++)
		if (!nulls[i])
			reshard_capture_start(DatumGetObjectId(oids[i]), log, sequence, function);
	table_owner_leave(&owner);
}

/*
 * ACCESS EXCLUSIVE on the parent, the old partitions, the tables filled and
 * the new parent, as the owner, parent first.  Work in progress: one
 * attempt, no time budget yet.
 */
static void
lock_for_cutover(engine *e)
{
	table_owner_context owner;
	Datum		arg = e->state;
	Oid			argtype = HeapTupleHeaderGetTypeId(DatumGetHeapTupleHeader(e->state));

	table_owner_enter(e->parent, &owner);
	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.format('LOCK TABLE %%s IN ACCESS EXCLUSIVE MODE',"
									   " pg_catalog.string_agg(r::pg_catalog.regclass::text, ', ' ORDER BY o))"
									   " FROM (SELECT ($1::%s.reshard_state).*) AS s,"
									   " LATERAL unnest(ARRAY[s.parent] || s.sources || s.shadows || s.new_parent)"
									   "   WITH ORDINALITY AS u(r, o) WHERE r IS NOT NULL", e->schema),
							  1, &argtype, &arg, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1 ||
		SPI_execute(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock the table for the cutover");
	table_owner_leave(&owner);
}

PG_FUNCTION_INFO_V1(reshard_engine_prepare);

/*
 * CALL reshard_engine_prepare(parent, operation, partition): the phases of
 * 1.2's engine up to the cutover (work in progress; internal).
 */
Datum
reshard_engine_prepare(PG_FUNCTION_ARGS)
{
	engine		e;
	Oid			parent = PG_GETARG_OID(0);
	text	   *operation = PG_GETARG_TEXT_PP(1);
	Oid			partition = PG_GETARG_OID(2);
	Datum		args[3];
	Oid			types[3] = {REGCLASSOID, TEXTOID, REGCLASSOID};
	int			ret;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("cannot reshard inside a transaction block"),
				 errhint("Call it on its own, outside BEGIN ... COMMIT.")));
	SPI_connect_ext(SPI_OPT_NONATOMIC);
	e.memory = CurrentMemoryContext;
	e.parent = parent;
	read_extension(&e);

	/* The checks of 1.1 and its plan, made into the state row. */
	args[0] = ObjectIdGetDatum(parent);
	args[1] = PointerGetDatum(operation);
	args[2] = ObjectIdGetDatum(partition);
	ret = SPI_execute_with_args(psprintf("CALL %s.reshard_prepare($1, $2, $3, NULL)", e.schema),
								3, types, args, NULL, false, 0);
	if (ret != SPI_OK_UTILITY || SPI_processed != 1)
		elog(ERROR, "reshard_prepare returned no plan");
	{
		bool		isnull;
		Datum		plan = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		run_as_extension_owner(&e,
							   "INSERT INTO %1$s.reshard_state (parent, parent_name, operation, partition, bucket, method, key,"
							   " old_buckets, new_buckets, new_bucket_sql, new_partition_by, new_bound, sources, shadows, phase,"
							   " backend_start)"
							   " SELECT (p->>'parent')::pg_catalog.regclass, p->>'parent', p->>'operation',"
							   "  COALESCE((p->'partitions'->-1->>'rel')::pg_catalog.regclass, (p->>'removed')::pg_catalog.regclass),"
							   "  (p->>'new_n')::int - 1, p->>'method', p->>'key', (p->>'old_n')::int, (p->>'new_n')::int,"
							   "  CASE WHEN p->>'method' = 'hash_operator_class' THEN pg_catalog.format('COALESCE(%%s, 0)', p->>'new_expr')"
							   "       ELSE p->>'new_expr' END,"
							   "  p->>'partition_by', p->>'bound',"
							   "  ARRAY(SELECT (s->>'rel')::pg_catalog.regclass::oid FROM pg_catalog.jsonb_array_elements(p->'sources') AS s"
							   "        ORDER BY (s->>'bucket')::int),"
							   "  '{}', 'capture', (SELECT a.backend_start FROM pg_catalog.pg_stat_activity a WHERE a.pid = pg_catalog.pg_backend_pid())"
							   " FROM (SELECT $1::jsonb AS p) AS x RETURNING reshard_state",
							   plan, JSONBOID, true);
	}
	next_transaction(false);

	run_phase(&e, "reshard_phase_setup(reshard_state)", false, 0);
	start_capture(&e);
	next_transaction(true);

	for (;;)
	{
		char	   *phase;

		run_phase(&e, "reshard_phase_copy(reshard_state)", false, 0);
		phase = state_text(&e, "phase");
		next_transaction(true);
		if (strcmp(phase, "copy") != 0)
			break;
	}
	next_transaction(false);
	for (;;)
	{
		int64		before = state_int64(&e, "changes_applied");

		run_phase(&e, "reshard_phase_apply(reshard_state,bigint)", true, 10000);
		next_transaction(false);
		if (state_int64(&e, "changes_applied") - before < 1000)
			break;
	}
	next_transaction(true);
	run_phase(&e, "reshard_phase_apply(reshard_state,bigint)", true, PG_INT64_MAX);
	run_phase(&e, "reshard_phase_verify(reshard_state)", false, 0);
	next_transaction(false);
	lock_for_cutover(&e);
	run_phase(&e, "reshard_phase_apply(reshard_state,bigint)", true, PG_INT64_MAX);
	run_phase(&e, "reshard_phase_cutover(reshard_state)", false, 0);
	SPI_commit();
	SPI_finish();
	PG_RETURN_VOID();
}
