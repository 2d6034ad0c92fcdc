/*
 * src/reshard_engine.c
 *		The driver of 1.2's resharding engine (docs/resharding-engine.md).
 *
 * A resharding is a row of reshard_state and a sequence of steps, each of
 * which runs in transactions of its own and commits its work together with
 * the state row it leads to; so a resharding cut short anywhere is
 * continued by the next step from the state row.  The steps run the
 * phase functions (SQL functions of the extension, not executable by
 * anyone: called here through the function manager, which checks no
 * privilege) as the table's owner in a security-restricted operation
 * (table_owner.h), and write the state row as the owner of reshard_state.
 *
 * The backend running a resharding holds a session lock no SQL function can
 * take (advisory, objsubid RESHARD_LOCK_KIND): while it holds it, no other
 * backend runs a step of that resharding; when it is gone (killed, crashed),
 * the lock is gone with it and the next call continues.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "reshard_capture.h"
#include "table_owner.h"

/* The advisory lock's objsubid; SQL's advisory lock functions use 1 and 2. */
#define RESHARD_LOCK_KIND 3

/* A catch-up round applies at most this many changes ... */
#define CATCH_UP_ROUND 10000
/* ... and the catch-up ends when a round found fewer than this. */
#define CATCH_UP_ENOUGH 1000

/* Raised when a cutover attempt overruns its budget; retried, never shown. */
#define ERRCODE_RESHARD_OVER_BUDGET MAKE_SQLSTATE('S','R','0','0','1')

/* What the steps of one call share, kept across its transactions. */
typedef struct engine
{
	Oid			parent;
	char	   *schema;			/* the extension's, quoted */
	Oid			state_owner;	/* reshard_state's owner (the extension's script ran as it) */
	Oid			state_type;		/* reshard_state's row type */
	Datum		state;			/* the state row, in memory */
	MemoryContext memory;		/* survives the call's commits */
	int			budget_ms;		/* of a cutover attempt */
	int			attempts;		/* of the cutover and of each lock */
	bool		claimed;
} engine;

typedef void (*engine_unit) (engine *e);

static Oid	state_oid(engine *e, const char *column);

static LOCKTAG
claim_tag(Oid parent)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, parent, 0, RESHARD_LOCK_KIND);
	return tag;
}

/* This backend runs the resharding of e->parent, or an error says who does. */
static void
claim(engine *e)
{
	LOCKTAG		tag = claim_tag(e->parent);

	if (LockAcquire(&tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("table %s is being resharded by another backend", get_rel_name(e->parent)),
				 errhint("See reshard_progress.")));
	e->claimed = true;
}

static void
unclaim(engine *e)
{
	LOCKTAG		tag = claim_tag(e->parent);

	if (e->claimed)
		LockRelease(&tag, ExclusiveLock, true);
	e->claimed = false;
}

/*
 * Runs query as the owner of reshard_state with arguments $1 (the state row)
 * and $2 (text, or none); keeps the row it returns as the state, if any.
 */
static void
state_query(engine *e, const char *query, const char *text_arg)
{
	Oid			saved_user;
	int			saved_context;
	Datum		args[2] = {e->state, text_arg ? CStringGetTextDatum(text_arg) : (Datum) 0};
	Oid			types[2] = {e->state_type, TEXTOID};
	char		nulls[2] = {e->state ? ' ' : 'n', text_arg ? ' ' : 'n'};
	int			ret;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(e->state_owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	ret = SPI_execute_with_args(psprintf(query, e->schema), 2, types, args, nulls, false, 0);
	SetUserIdAndSecContext(saved_user, saved_context);
	if (ret < 0)
		elog(ERROR, "could not run \"%s\": %s", query, SPI_result_code_string(ret));
	if (ret != SPI_OK_UPDATE && ret != SPI_OK_DELETE && SPI_processed == 1 && SPI_tuptable->tupdesc->natts == 1)
	{
		bool		isnull;
		Datum		row = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext old = MemoryContextSwitchTo(e->memory);

		e->state = isnull ? (Datum) 0 : datumCopy(row, false, -1);
		MemoryContextSwitchTo(old);
	}
}

/* Reads the state row of e->parent; false if there is none. */
static bool
load_state(engine *e)
{
	e->state = (Datum) 0;
	state_query(e, "SELECT s FROM %1$s.reshard_state AS s WHERE s.parent = $2::pg_catalog.oid",
				psprintf("%u", e->parent));
	return e->state != (Datum) 0;
}

/* Writes the state row (with the time of this progress, this backend, the log's size). */
static void
save_state(engine *e)
{
	state_query(e,
				"UPDATE %1$s.reshard_state AS t SET (parent, operation, partition, bucket, method, key, old_buckets,"
				" new_buckets, new_bucket_sql, new_partition_by, new_bound, sources, shadows, new_parent, log,"
				" log_sequence, catalog, validate, phase, rows_to_move, rows_copied, rows_verified,"
				" sources_copied, changes_applied, cutover_attempts, last_progress, backend_pid, error)"
				" = (n.parent, n.operation, n.partition, n.bucket, n.method, n.key, n.old_buckets, n.new_buckets,"
				" n.new_bucket_sql, n.new_partition_by, n.new_bound, n.sources, n.shadows, n.new_parent, n.log,"
				" n.log_sequence, n.catalog, n.validate, n.phase, n.rows_to_move, n.rows_copied, n.rows_verified,"
				" n.sources_copied, n.changes_applied, n.cutover_attempts, pg_catalog.clock_timestamp(),"
				" pg_catalog.pg_backend_pid(), n.error)"
				" FROM (SELECT ($1::%1$s.reshard_state).*) AS n WHERE t.parent = $2::pg_catalog.oid",
				psprintf("%u", e->parent));
	/* After the cutover, the state is the new parent's. */
	if (state_oid(e, "parent") != e->parent)
	{
		Oid			old = e->parent;

		e->parent = state_oid(e, "parent");
		claim(e);
		e->parent = old;
		unclaim(e);
		e->parent = state_oid(e, "parent");
		e->claimed = true;
	}
}

static Datum
state_value(engine *e, const char *column, bool *isnull)
{
	return GetAttributeByName(DatumGetHeapTupleHeader(e->state), column, isnull);
}

static char *
state_phase(engine *e)
{
	bool		isnull;

	return TextDatumGetCString(state_value(e, "phase", &isnull));
}

static int64
state_int64(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = state_value(e, column, &isnull);

	return isnull ? 0 : DatumGetInt64(value);
}

/* Sets column of the state row (in memory) to value, a text. */
static void
set_state(engine *e, const char *column, const char *value)
{
	state_query(e, psprintf("SELECT pg_catalog.jsonb_populate_record($1::%%1$s.reshard_state,"
							" pg_catalog.jsonb_build_object('%s', $2))", column), value);
}

/* The OID of the extension's routine of that signature (a first argument reshard_state is the extension's). */
static Oid
routine(engine *e, const char *signature)
{
	char	   *qualified = psprintf("%s.%s", e->schema, signature);
	char	   *state_type = strstr(qualified, "(reshard_state");

	/* the state row's type, qualified too */
	if (state_type != NULL)
		qualified = psprintf("%.*s(%s.%s", (int) (state_type - qualified), qualified, e->schema, state_type + 1);
	return DatumGetObjectId(DirectFunctionCall1(regprocedurein, CStringGetDatum(qualified)));
}

/*
 * Calls a phase function as the table's owner with the state row and
 * nargs (0 to 2) more arguments; the state row becomes what it returns.
 */
static void
run_phase(engine *e, const char *signature, int nargs, Datum arg1, Datum arg2)
{
	table_owner_context owner;
	Oid			function = routine(e, signature);
	Datum		result;
	MemoryContext old;

	table_owner_enter(e->parent, &owner);
	reshard_engine_writing = true;
	if (nargs == 2)
		result = OidFunctionCall3(function, e->state, arg1, arg2);
	else if (nargs == 1)
		result = OidFunctionCall2(function, e->state, arg1);
	else
		result = OidFunctionCall1(function, e->state);
	reshard_engine_writing = false;
	table_owner_leave(&owner);
	old = MemoryContextSwitchTo(e->memory);
	e->state = datumCopy(result, false, -1);
	MemoryContextSwitchTo(old);
}

/* Applies the log, at most max_changes entries; past deadline, an error (SR001). */
static void
apply_log(engine *e, int64 max_changes, TimestampTz deadline)
{
	run_phase(e, "reshard_phase_apply(reshard_state,bigint,timestamp with time zone)", 2,
			  Int64GetDatum(max_changes), TimestampTzGetDatum(deadline));
}

/* Commits; the next transaction runs at that isolation level. */
static void
next_transaction(bool repeatable_read)
{
	SPI_commit();
	(void) set_config_option("transaction_isolation", repeatable_read ? "repeatable read" : "read committed",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
}

/* lock_timeout for the rest of the transaction, in milliseconds (0: none). */
static void
set_lock_timeout(int ms)
{
	(void) set_config_option("lock_timeout", psprintf("%d", Max(ms, 0)),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * Runs unit in a subtransaction.  Returns NULL when it succeeded; else the
 * subtransaction is rolled back (with what unit did and the state row it
 * changed) and the error is returned, copied into the call's memory.
 */
static ErrorData *
try_unit(engine *e, engine_unit unit)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Datum		state = e->state;
	ErrorData  *error = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		unit(e);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		reshard_engine_writing = false;
		MemoryContextSwitchTo(e->memory);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		e->state = state;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return error;
}

/* Waits about ms milliseconds (more or less, at random), or until cancelled. */
static void
back_off(int ms)
{
	long		wait = ms / 2 + (long) (pg_prng_double(&pg_global_prng_state) * ms);

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, Max(wait, 1), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Runs unit (which takes locks waiting at most the cutover budget) up to
 * e->attempts times while it fails to get a lock, committing after it.
 */
static void
with_lock_retries(engine *e, engine_unit unit)
{
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error = try_unit(e, unit);

		if (error == NULL)
			break;
		if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE || attempt >= e->attempts)
			ReThrowError(error);
		back_off(e->budget_ms);
	}
	save_state(e);
	SPI_commit();
}

/* LOCK TABLE of the relations of an oid[] expression on the state row s (as the current user). */
static void
lock_tables(engine *e, const char *relations, const char *mode)
{
	Datum		arg = e->state;
	Oid			type = e->state_type;
	int			ret;
	bool		isnull;
	Datum		statement;

	ret = SPI_execute_with_args(psprintf("SELECT pg_catalog.format('LOCK TABLE %%s IN %s MODE',"
										 " pg_catalog.string_agg(r::pg_catalog.regclass::text, ', ' ORDER BY o))"
										 " FROM (SELECT ($1::%s.reshard_state).*) AS s,"
										 " LATERAL pg_catalog.unnest(%s) WITH ORDINALITY AS u(r, o) WHERE r IS NOT NULL",
										 mode, e->schema, relations),
								1, &type, &arg, NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not list the tables to lock");
	statement = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull && SPI_execute(TextDatumGetCString(statement), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock the tables");
}

/* The OIDs of an oid[] column of the state row, NULLs left out. */
static List *
state_oids(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = state_value(e, column, &isnull);
	Datum	   *oids;
	bool	   *nulls;
	int			count;
	List	   *result = NIL;

	if (isnull)
		return NIL;
	deconstruct_array(DatumGetArrayTypeP(value), OIDOID, sizeof(Oid), true, TYPALIGN_INT, &oids, &nulls, &count);
	for (int i = 0; i < count; i++)
		if (!nulls[i])
			result = lappend_oid(result, DatumGetObjectId(oids[i]));
	return result;
}

static Oid
state_oid(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = state_value(e, column, &isnull);

	return isnull ? InvalidOid : DatumGetObjectId(value);
}

/* Drops the engine's triggers from relation (if it still exists). */
static void
stop_triggers(engine *e, Oid relation)
{
	Oid			functions[2] = {routine(e, "reshard_capture()"), routine(e, "reshard_guard()")};

	if (get_rel_relkind(relation) != '\0')
		reshard_triggers_stop(relation, functions, lengthof(functions));
}

/* Step "setup": the shadows, the new parent, the change log. */
static void
unit_setup(engine *e)
{
	table_owner_context owner;
	Oid			guard = routine(e, "reshard_guard()");
	ListCell   *cell;

	run_phase(e, "reshard_phase_setup(reshard_state)", 0, 0, 0);
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "shadows"))
		reshard_guard_start(lfirst_oid(cell), guard);
	table_owner_leave(&owner);
	set_state(e, "phase", "capture");
}

/*
 * Step "capture": the change-log triggers on the old local partitions
 * (SHARE ROW EXCLUSIVE on each, waited for at most the budget).
 */
static void
unit_capture(engine *e)
{
	table_owner_context owner;
	Oid			log = state_oid(e, "log");
	Oid			sequence = state_oid(e, "log_sequence");
	Oid			capture = routine(e, "reshard_capture()");
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	lock_tables(e, "s.sources", "SHARE ROW EXCLUSIVE");
	foreach(cell, state_oids(e, "sources"))
		reshard_capture_start(lfirst_oid(cell), log, sequence, capture);
	table_owner_leave(&owner);
	set_state(e, "phase", "copy");
}

static void
unit_copy(engine *e)
{
	run_phase(e, "reshard_phase_copy(reshard_state)", 0, 0, 0);
}

/* One round of the catch-up: at most CATCH_UP_ROUND changes of the log applied. */
static void
unit_apply_round(engine *e)
{
	apply_log(e, CATCH_UP_ROUND, DT_NOEND);
}

static void
unit_catch_up(engine *e)
{
	int64		before = state_int64(e, "changes_applied");

	unit_apply_round(e);
	if (state_int64(e, "changes_applied") - before < CATCH_UP_ENOUGH)
		set_state(e, "phase", "verify");
}

static void
unit_verify(engine *e)
{
	apply_log(e, PG_INT64_MAX, DT_NOEND);
	run_phase(e, "reshard_phase_verify(reshard_state)", 0, 0, 0);
}

static void
check_budget(TimestampTz deadline)
{
	if (GetCurrentTimestamp() > deadline)
		ereport(ERROR,
				(errcode(ERRCODE_RESHARD_OVER_BUDGET),
				 errmsg("the cutover overran its budget")));
}

/*
 * What makes each table filled take the place of the one it replaces
 * (reshard_takeover_sql): the new parent the old parent's, each shadow its
 * old partition's.  Read before the old ones are dropped.
 */
static Datum
takeover_statements(engine *e)
{
	Oid			takeover = routine(e, "reshard_takeover_sql(regclass,regclass)");
	List	   *old = lcons_oid(e->parent, NIL);
	List	   *filled = lcons_oid(state_oid(e, "new_parent"), NIL);
	Oid			partition = state_oid(e, "partition");
	bool		isnull;
	Datum	   *sources;
	Datum	   *shadows;
	bool	   *source_nulls;
	bool	   *shadow_nulls;
	int			source_count;
	int			shadow_count;
	List	   *statements = NIL;
	Datum	   *items;
	int			i;
	ListCell   *o;
	ListCell   *f;

	deconstruct_array(DatumGetArrayTypeP(state_value(e, "sources", &isnull)), OIDOID, sizeof(Oid), true,
					  TYPALIGN_INT, &sources, &source_nulls, &source_count);
	deconstruct_array(DatumGetArrayTypeP(state_value(e, "shadows", &isnull)), OIDOID, sizeof(Oid), true,
					  TYPALIGN_INT, &shadows, &shadow_nulls, &shadow_count);
	for (i = 0; i < Min(source_count, shadow_count); i++)
		if (!source_nulls[i] && !shadow_nulls[i] && DatumGetObjectId(shadows[i]) != partition)
		{
			old = lappend_oid(old, DatumGetObjectId(sources[i]));
			filled = lappend_oid(filled, DatumGetObjectId(shadows[i]));
		}
	forboth(o, old, f, filled)
	{
		Datum		array = OidFunctionCall2(takeover, ObjectIdGetDatum(lfirst_oid(o)), ObjectIdGetDatum(lfirst_oid(f)));
		Datum	   *texts;
		bool	   *nulls;
		int			count;

		deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT, &texts, &nulls, &count);
		for (i = 0; i < count; i++)
			statements = lappend(statements, DatumGetPointer(texts[i]));
	}
	items = palloc(sizeof(Datum) * Max(list_length(statements), 1));
	i = 0;
	foreach(o, statements)
		items[i++] = PointerGetDatum(lfirst(o));
	return PointerGetDatum(construct_array(items, i, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * One attempt at the cutover, within the budget: ACCESS EXCLUSIVE on the
 * parent, its partitions, the tables filled and the tables whose foreign
 * keys refer to the parent; the last changes; the checks again; the
 * catalog work.
 */
static void
unit_cutover(engine *e)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), e->budget_ms);
	table_owner_context owner;
	Datum		statements;
	MemoryContext old;
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	lock_tables(e, "ARRAY[s.parent] || s.sources || s.shadows || s.new_parent ||"
				" ARRAY(SELECT DISTINCT c.conrelid FROM pg_catalog.pg_constraint c WHERE c.confrelid = s.parent"
				"       AND c.contype = 'f' AND c.conparentid = 0 AND c.conrelid <> s.parent ORDER BY 1)::pg_catalog.oid[]"
				" || ARRAY(SELECT i.inhrelid FROM pg_catalog.pg_inherits i WHERE i.inhparent = s.parent"
				"          AND i.inhrelid <> ALL (s.sources) ORDER BY 1)::pg_catalog.oid[]",
				"ACCESS EXCLUSIVE");
	table_owner_leave(&owner);
	check_budget(deadline);
	apply_log(e, PG_INT64_MAX, deadline);
	check_budget(deadline);
	run_phase(e, "reshard_phase_check(reshard_state)", 0, 0, 0);
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "shadows"))
		stop_triggers(e, lfirst_oid(cell));
	stop_triggers(e, state_oid(e, "partition"));
	statements = takeover_statements(e);
	old = MemoryContextSwitchTo(e->memory);
	statements = datumCopy(statements, false, -1);
	MemoryContextSwitchTo(old);
	table_owner_leave(&owner);
	check_budget(deadline);
	run_phase(e, "reshard_phase_cutover(reshard_state,text[])", 1, statements, 0);
	check_budget(deadline);
}

/*
 * Step "cutover": attempts at most e->attempts times; between two, the
 * writers waiting for the lock go through and the log is caught up.
 */
static void
step_cutover(engine *e)
{
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error;

		set_state(e, "cutover_attempts", psprintf("%d", (int) state_int64(e, "cutover_attempts") + 1));
		error = try_unit(e, unit_cutover);
		if (error == NULL)
			break;
		if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE && error->sqlerrcode != ERRCODE_RESHARD_OVER_BUDGET)
			ReThrowError(error);
		save_state(e);
		next_transaction(false);
		if (attempt >= e->attempts)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not cut %s over within %d ms in %d attempts",
							get_rel_name(e->parent), e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("Call it again when fewer or shorter transactions write to the table, or with a larger cutover_budget or more cutover_attempts.")));
		back_off(e->budget_ms);
		for (;;)
		{
			int64		before = state_int64(e, "changes_applied");

			if ((error = try_unit(e, unit_apply_round)) != NULL)
				ReThrowError(error);
			save_state(e);
			next_transaction(false);
			if (state_int64(e, "changes_applied") - before < CATCH_UP_ENOUGH)
				break;
		}
	}
	save_state(e);
	next_transaction(false);
}

static void
unit_finish(engine *e)
{
	run_phase(e, "reshard_phase_finish(reshard_state)", 0, 0, 0);
}

/*
 * Step "undo", before the cutover: the engine's triggers dropped (ACCESS
 * EXCLUSIVE on each table, waited for at most the budget), then its tables.
 */
static void
unit_undo(engine *e)
{
	table_owner_context owner;
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "sources"))
		stop_triggers(e, lfirst_oid(cell));
	stop_triggers(e, state_oid(e, "partition"));
	table_owner_leave(&owner);
	run_phase(e, "reshard_phase_undo(reshard_state)", 0, 0, 0);
}

/*
 * Runs the next step of the resharding, in transactions of its own (copy
 * and verification in REPEATABLE READ ones); false when there is none.
 */
static bool
step(engine *e)
{
	char	   *phase = state_phase(e);
	engine_unit unit;
	ErrorData  *error;

	if (strcmp(phase, "done") == 0 || strcmp(phase, "aborted") == 0)
		return false;
	next_transaction(strcmp(phase, "copy") == 0 || strcmp(phase, "verify") == 0);
	if (strcmp(phase, "capture") == 0)
		with_lock_retries(e, unit_capture);
	else if (strcmp(phase, "undo") == 0)
		with_lock_retries(e, unit_undo);
	else if (strcmp(phase, "cutover") == 0)
		step_cutover(e);
	else
	{
		if (strcmp(phase, "setup") == 0)
			unit = unit_setup;
		else if (strcmp(phase, "copy") == 0)
			unit = unit_copy;
		else if (strcmp(phase, "catch up") == 0)
			unit = unit_catch_up;
		else if (strcmp(phase, "verify") == 0)
			unit = unit_verify;
		else if (strcmp(phase, "finish") == 0)
			unit = unit_finish;
		else
			elog(ERROR, "unknown resharding phase \"%s\"", phase);
		if ((error = try_unit(e, unit)) != NULL)
			ReThrowError(error);
		save_state(e);
		SPI_commit();
	}
	return true;
}

/* Connects to SPI for a procedure that commits; fills e. */
static void
engine_open(engine *e, FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts)
{
	bool		isnull;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("cannot reshard inside a transaction block"),
				 errdetail("Resharding commits several transactions of its own."),
				 errhint("Call it on its own, outside BEGIN ... COMMIT.")));
	if (budget != NULL)
	{
		int64		ms = (budget->month * (int64) DAYS_PER_MONTH + budget->day) * SECS_PER_DAY * 1000 + budget->time / 1000;

		if (ms < 1 || ms > 3600 * 1000)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cutover_budget must be between 1 ms and 1 hour, not %s",
							DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(budget))))));
		e->budget_ms = (int) ms;
	}
	if (attempts < 1 || attempts > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cutover_attempts must be between 1 and 1000, not %d", attempts)));
	e->attempts = attempts;
	e->parent = parent;
	e->claimed = false;
	e->state = (Datum) 0;
	if (get_rel_relkind(parent) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", parent)));
	if (!RELATION_OWNERCHECK(parent, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to reshard it", get_rel_name(parent))));
	SPI_connect_ext(SPI_OPT_NONATOMIC);
	e->memory = CurrentMemoryContext;
	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname), c.relowner, c.reltype"
					" FROM pg_catalog.pg_extension x JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace"
					" JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = 'reshard_state'"
					" WHERE x.extname = 'subsetting'", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "extension subsetting is not installed");
	e->schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	e->state_owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	e->state_type = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
}

/*
 * The state row of a new resharding (after the checks), or the one of an
 * interrupted resharding of the same table with the same arguments.
 */
static void
begin(engine *e, const char *operation, Oid partition)
{
	Datum		args[3] = {ObjectIdGetDatum(e->parent), CStringGetTextDatum(operation), ObjectIdGetDatum(partition)};
	Oid			types[3] = {REGCLASSOID, TEXTOID, REGCLASSOID};
	char		nulls[3] = {' ', ' ', OidIsValid(partition) ? ' ' : 'n'};
	table_owner_context owner;
	bool		isnull;
	char	   *plan;

	claim(e);
	if (load_state(e))
	{
		char	   *phase = state_phase(e);

		if (strcmp(phase, "done") != 0 && strcmp(phase, "aborted") != 0)
		{
			char	   *previous = TextDatumGetCString(state_value(e, "operation", &isnull));

			if (strcmp(previous, operation) != 0 ||
				(OidIsValid(partition) && state_oid(e, "partition") != partition))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_IN_USE),
						 errmsg("an interrupted resharding of %s is in phase %s", get_rel_name(e->parent), phase),
						 errhint("Call it again with the same arguments to finish it, or undo it with reshard_abort.")));
			return;
		}
		state_query(e, "DELETE FROM %1$s.reshard_state WHERE parent = ($1::%1$s.reshard_state).parent", NULL);
	}

	/* The checks of 1.1 (as the owner), and the plan made into a state row. */
	table_owner_enter(e->parent, &owner);
	if (SPI_execute_with_args(psprintf("CALL %s.reshard_prepare($1, $2, $3, NULL)", e->schema),
							  3, types, args, nulls, false, 0) != SPI_OK_UTILITY || SPI_processed != 1)
		elog(ERROR, "reshard_prepare returned no plan");
	plan = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	table_owner_leave(&owner);
	e->state = (Datum) 0;
	state_query(e, "INSERT INTO %1$s.reshard_state (parent, parent_name, operation, partition,"
				 " bucket, method, key, old_buckets, new_buckets, new_bucket_sql,"
				 " new_partition_by, new_bound, sources, shadows, phase)"
				 " SELECT (p->>'parent')::pg_catalog.regclass, p->>'parent', p->>'operation',"
				 "  COALESCE((p->>'removed')::pg_catalog.regclass, (p->'partitions'->-1->>'rel')::pg_catalog.regclass),"
				 "  CASE p->>'operation' WHEN 'add' THEN (p->>'new_n')::int - 1 ELSE (p->>'old_n')::int - 1 END,"
				 "  p->>'method', p->>'key', (p->>'old_n')::int, (p->>'new_n')::int,"
				 "  CASE WHEN p->>'method' = 'hash_operator_class'"
				 "       THEN pg_catalog.format('COALESCE(%%s, 0)', p->>'new_expr') ELSE p->>'new_expr' END,"
				 "  p->>'partition_by', p->>'bound',"
				 "  ARRAY(SELECT u.rel FROM (SELECT (q->>'rel')::pg_catalog.regclass::oid AS rel, (q->>'bucket')::int AS b"
				 "                           FROM pg_catalog.jsonb_array_elements(p->'partitions') AS q"
				 "                           WHERE p->>'operation' = 'remove' OR (q->>'bucket')::int < (p->>'old_n')::int"
				 "                           UNION ALL SELECT (p->>'removed')::pg_catalog.regclass::oid, (p->>'old_n')::int - 1"
				 "                           WHERE p->>'operation' = 'remove') AS u ORDER BY u.b),"
				 "  '{}', 'setup'"
				 " FROM (SELECT $2::jsonb AS p) AS x RETURNING reshard_state",
				plan);
	if (e->state == (Datum) 0)
		elog(ERROR, "could not record the resharding of %s", get_rel_name(e->parent));
	run_phase(e, "reshard_phase_check(reshard_state)", 0, 0, 0);
	save_state(e);
	next_transaction(false);
}

/* Undoes what a resharding that has not cut over made; false if it has cut over. */
static bool
undo(engine *e)
{
	char	   *phase = state_phase(e);

	if (strcmp(phase, "finish") == 0 || strcmp(phase, "done") == 0 || strcmp(phase, "aborted") == 0)
		return false;
	set_state(e, "phase", "undo");
	save_state(e);
	next_transaction(false);
	while (step(e))
		;
	return true;
}

/* Records error in the state row; after an error, in a transaction of its own. */
static void
record_error(engine *e, ErrorData *error)
{
	set_state(e, "error", error->message);
	save_state(e);
	next_transaction(false);
}

/* Runs the steps to the end; the error that stopped them, if one did (copied into the call's memory). */
static ErrorData *
run_steps(engine *e)
{
	MemoryContext context = CurrentMemoryContext;
	ErrorData  *error = NULL;

	PG_TRY();
	{
		while (step(e))
			;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(e->memory);
		error = CopyErrorData();
		FlushErrorState();
		MemoryContextSwitchTo(context);
	}
	PG_END_TRY();
	return error;
}

PG_FUNCTION_INFO_V1(reshard_run);

/*
 * CALL reshard_engine_run(parent, operation, partition, cutover_budget,
 * cutover_attempts): a resharding from the checks to the end, or the
 * continuation of an interrupted one.  An error before the cutover undoes
 * what the call made (the table is as it was); after it, calling again
 * finishes.
 */
Datum
reshard_run(PG_FUNCTION_ARGS)
{
	engine		e;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	engine_open(&e, fcinfo, PG_GETARG_OID(0), PG_GETARG_INTERVAL_P(3), PG_GETARG_INT32(4));
	PG_TRY();
	{
		ErrorData  *error;

		begin(&e, text_to_cstring(PG_GETARG_TEXT_PP(1)), PG_ARGISNULL(2) ? InvalidOid : PG_GETARG_OID(2));
		error = run_steps(&e);
		if (error != NULL)
		{
			/* step() leaves no subtransaction open; the transaction may be failed */
			SPI_rollback();
			(void) load_state(&e);
			record_error(&e, error);
			(void) undo(&e);
			ReThrowError(error);
		}
	}
	PG_FINALLY();
	{
		reshard_engine_writing = false;
		unclaim(&e);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_begin);

/* CALL reshard_begin(parent, operation, partition): the checks and the state row, nothing else (tests). */
Datum
reshard_begin(PG_FUNCTION_ARGS)
{
	engine		e;

	engine_open(&e, fcinfo, PG_GETARG_OID(0), NULL, 1);
	e.budget_ms = 500;
	PG_TRY();
	{
		begin(&e, text_to_cstring(PG_GETARG_TEXT_PP(1)), PG_ARGISNULL(2) ? InvalidOid : PG_GETARG_OID(2));
	}
	PG_FINALLY();
	{
		unclaim(&e);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_step);

/*
 * CALL reshard_step(parent, cutover_budget, cutover_attempts): the next
 * step of a resharding (tests: each phase on its own).
 */
Datum
reshard_step(PG_FUNCTION_ARGS)
{
	engine		e;

	engine_open(&e, fcinfo, PG_GETARG_OID(0), PG_GETARG_INTERVAL_P(1), PG_GETARG_INT32(2));
	PG_TRY();
	{
		claim(&e);
		if (!load_state(&e))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table %s is not being resharded", get_rel_name(e.parent))));
		(void) step(&e);
	}
	PG_FINALLY();
	{
		reshard_engine_writing = false;
		unclaim(&e);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_abort);

/*
 * CALL reshard_abort(parent): undoes an interrupted resharding that has
 * not cut over; one that has is finished instead (it cannot be undone).
 */
Datum
reshard_abort(PG_FUNCTION_ARGS)
{
	engine		e;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent must not be null")));
	engine_open(&e, fcinfo, PG_GETARG_OID(0), NULL, 10);
	e.budget_ms = 500;
	PG_TRY();
	{
		claim(&e);
		if (!load_state(&e) ||
			strcmp(state_phase(&e), "done") == 0 || strcmp(state_phase(&e), "aborted") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table %s has no interrupted resharding", get_rel_name(e.parent))));
		if (!undo(&e))
		{
			ereport(NOTICE,
					(errmsg("the resharding of %s had cut over already; finishing it", get_rel_name(e.parent))));
			while (step(&e))
				;
		}
	}
	PG_FINALLY();
	{
		reshard_engine_writing = false;
		unclaim(&e);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_VOID();
}
