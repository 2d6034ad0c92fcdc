/*
 * src/reshard_engine.c
 *		The procedures of 1.2's resharding engine and its driver
 *		(docs/resharding-engine.md; what the engine's files share:
 *		reshard_engine.h).
 *
 * A resharding is a row of reshard_state and a sequence of phases, each
 * run by steps, in transactions of their own that commit their work
 * together with the state row it leads to; so a resharding cut short
 * anywhere is continued by the next step from the state row.  The phase
 * table (reshard_phases.h) says, for each phase, its step, the isolation
 * of its transactions, how it waits for locks, its SQL routine and the
 * phase after it: step() below runs a resharding by it, and only the
 * engine's C code moves a resharding from one phase to the next.  The
 * steps run the SQL routines as the table's owner in a security-restricted
 * operation (table_owner.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/partition.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "reshard_capture.h"
#include "reshard_engine.h"
#include "table_owner.h"

/* The step of each phase (the phase table's column step). */
static const engine_unit steps[PHASE_COUNT] = {
#define PHASE(symbol, name, step, isolation, locks, routine, next) [symbol] = step,
#include "reshard_phases.h"
#undef PHASE
};

/*
 * Runs the next step of the resharding, in transactions of its own, as the
 * phase table says; false when there is none.
 */
static bool
step(engine *e)
{
	const phase_row *phase = phase_of(e->phase);
	engine_unit unit = steps[e->phase];

	if (phase_ended(e->phase))
		return false;
	/*
	 * Before the cutover, a change of the table's definition is caught as
	 * soon as the next step begins; in the copy, before the first partition
	 * (step_copy names one that fails a partition's copy: a check before
	 * each, at hundreds of partitions, took longer than the copy).
	 */
	if (e->phase != PHASE_SETUP && e->phase < PHASE_CUTOVER &&
		!(e->phase == PHASE_COPY && state_int64(e, STATE_SOURCES_COPIED) > 0))
	{
		next_transaction(false);
		run_unit(e, unit_check_catalog, false);
	}
	next_transaction(phase->isolation == REPEATABLE_READ);
	switch (phase->locks)
	{
		case LOCKS_NONE:
			run_unit(e, unit, true);
			break;
		case LOCKS_RETRIED:
			with_lock_retries(e, unit, true, psprintf("run its phase %s", phase->name));
			break;
		case LOCKS_CUTOVER:
		case LOCKS_OWN:
			/* its own transactions; the last moves it on */
			(void) unit(e);
			break;
	}
	return true;
}

/* Connects to SPI for a procedure that commits; fills e. */
static void
engine_open(engine *e, FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts)
{
	e->atomic = fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic;
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
	e->claims = NIL;
	e->triggers_swept = 0;
	e->cutover_committing = false;
	e->keep_work = false;
	e->has_state = false;
	e->locking = NIL;
	if (get_rel_relkind(parent) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", parent)));
	if (!RELATION_OWNERCHECK(parent, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to reshard it", relation_name(parent))));
	SPI_connect_ext(e->atomic ? 0 : SPI_OPT_NONATOMIC);
	e->memory = CurrentMemoryContext;
	/* (first: the caller's lock_timeout no longer applies to what follows) */
	settle_session_settings(e);
	state_open(e);
}

/* The table relation is a partition of, or InvalidOid. */
static Oid
partition_parent(Oid relation)
{
	return get_rel_relispartition(relation) ? get_partition_parent(relation, false) : InvalidOid;
}

/* A call that must commit, made in a transaction block, is refused. */
static void
refuse_atomic(engine *e)
{
	if (e->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("cannot reshard %s inside a transaction block", relation_name(e->parent)),
				 errdetail("Resharding commits several transactions of its own."),
				 errhint("Call it on its own, outside BEGIN ... COMMIT.")));
}

/*
 * Whether an interrupted resharding was cut short in a cutover attempt (its
 * COMMIT may have been done on some shards): attempts counted, and no error
 * recorded (a call that ran out of attempts records its error and keeps its
 * work; one cut short in the COMMIT records none).
 */
static bool
cut_short_in_cutover(engine *e)
{
	return e->phase == PHASE_CUTOVER && state_int64(e, STATE_CUTOVER_ATTEMPTS) > 0 && state_is_null(e, STATE_ERROR);
}

static bool undo(engine *e);

/*
 * Whether the rows that leave or enter postgres_fdw shards are hidden on
 * their servers (reshard_shard_views): as the call says, or where the
 * shards allow it (the plan decides: shard_views NULL).
 */
typedef enum shard_views_choice
{
	SHARD_VIEWS_NO,
	SHARD_VIEWS_YES,
	SHARD_VIEWS_WHERE_SHARDS_ALLOW,
} shard_views_choice;

/*
 * Whether a resharding that has not cut over has copied rows from or into
 * an unlogged table: a crash since then may have emptied it (crash recovery
 * resets unlogged tables), and nothing but the verification would see it;
 * so it is not continued but undone and done again.  (A move of an unlogged
 * partition to a server would otherwise bring back, on the server, the rows
 * the crash emptied here.)
 */
static bool
copies_unlogged(engine *e)
{
	ListCell   *cell;

	if (e->phase == PHASE_SETUP || e->phase == PHASE_CAPTURE || e->phase == PHASE_FINISH || phase_ended(e->phase) ||
		e->phase == PHASE_UNDO || (e->phase == PHASE_COPY && state_int64(e, STATE_SOURCES_COPIED) == 0))
		return false;
	foreach(cell, list_concat(state_oids(e, STATE_SHADOWS), state_oids(e, STATE_SOURCES)))
		if (get_rel_persistence(lfirst_oid(cell)) == RELPERSISTENCE_UNLOGGED)
			return true;
	return false;
}

/*
 * The state row of a new resharding (after the checks), or the one of an
 * interrupted resharding of the same table with the same arguments.  One
 * that was interrupted while undoing itself is undone to the end and then
 * begun anew (the caller asked for the resharding, not for its undo:
 * reshard_abort is that), and so is one that copied from or into unlogged
 * tables.  In a transaction block, only the checks run (their errors say
 * more than the block's), and then the call is refused.
 */
static bool
begin(engine *e, const char *operation, Oid partition, const char *server, shard_views_choice shard_views)
{
	claim(e);
	if (load_state(e))
	{
		bool		same = strcmp(state_text(e, STATE_OPERATION), operation) == 0 &&
			(!OidIsValid(partition) || state_oid(e, STATE_PARTITION) == partition ||
			 (moving(e) && partition == moved_to(e))) &&
			(server == NULL ? state_is_null(e, STATE_SERVER) :
			 !state_is_null(e, STATE_SERVER) && strcmp(state_text(e, STATE_SERVER), server) == 0);

		if (!phase_ended(e->phase))
		{
			if (!same)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_IN_USE),
						 errmsg("an interrupted resharding of %s is in phase %s", relation_name(e->parent),
								phase_name(e->phase)),
						 errhint("Call it again with the same arguments to finish it, or undo it with reshard_abort.")));
			refuse_atomic(e);
			e->cutover_committing = cut_short_in_cutover(e);
			if (e->phase == PHASE_UNDO)
				ereport(NOTICE,
						(errmsg("the interrupted resharding of %s was undoing itself: it is undone and done again",
								relation_name(e->parent))));
			else if (copies_unlogged(e))
				ereport(NOTICE,
						(errmsg("the interrupted resharding of %s copies from or into unlogged tables, which a crash empties: "
								"it is undone and done again", relation_name(e->parent))));
			else
			{
				/* the error that stopped it is not this call's */
				set_state_text(e, STATE_ERROR, NULL);
				save_state(e);
				return true;
			}
			(void) undo(e);
		}
		/* Called again after it ended: the same resharding is done already. */
		if (e->phase == PHASE_DONE && OidIsValid(partition) && same && strcmp(operation, "move") != 0 &&
			partition_parent(partition) == (strcmp(operation, "add") == 0 ? e->parent : InvalidOid))
		{
			ereport(NOTICE,
					(errmsg("%s was resharded by this %s already; nothing to do", relation_name(e->parent),
							operation)));
			return false;
		}
		delete_states(e, true, false);
	}

	/* The states of dropped tables go. */
	delete_states(e, false, true);

	/* The plan (as the owner: it checks the table), then the checks, then the state row written. */
	refuse_linked_reshardings(e);
	new_state(e);
	set_state_oid(e, STATE_PARTITION, partition);
	set_state_text(e, STATE_SERVER, server);
	if (shard_views == SHARD_VIEWS_WHERE_SHARDS_ALLOW)
		set_state_null(e, STATE_SHARD_VIEWS);
	else
		set_state_bool(e, STATE_SHARD_VIEWS, shard_views == SHARD_VIEWS_YES);
	run_routine(e, ROUTINE_PLAN, 1, CStringGetTextDatum(operation), 0);
	refuse_atomic(e);
	insert_state(e);
	run_routine(e, ROUTINE_CHECK_CATALOG, 0, 0, 0);
	save_state(e);
	next_transaction(false);
	return true;
}

/* Undoes what a resharding that has not cut over made; false if it has cut over. */
static bool
undo(engine *e)
{
	if (e->phase == PHASE_FINISH || phase_ended(e->phase))
		return false;
	set_phase(e, PHASE_UNDO);
	save_state(e);
	next_transaction(false);
	while (step(e))
		;
	return true;
}

/*
 * Undoes what a call that failed before its cutover made.  If the undo
 * fails too, that is a WARNING: the call's own error is the one to see.
 */
static void
undo_after_error(engine *e)
{
	MemoryContext context = CurrentMemoryContext;

	PG_TRY();
	{
		(void) undo(e);
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(e->memory);
		error = CopyErrorData();
		FlushErrorState();
		MemoryContextSwitchTo(context);
		SPI_rollback();
		ereport(WARNING,
				(errcode(error->sqlerrcode),
				 errmsg("could not undo the resharding of %s: %s", relation_name(e->parent), error->message),
				 errhint("reshard_abort(%s) undoes it; reshard_progress shows how far it got.", relation_name(e->parent))));
	}
	PG_END_TRY();
}

/* Records error in the state row; after an error, in a transaction of its own. */
static void
record_error(engine *e, ErrorData *error)
{
	set_state_text(e, STATE_ERROR, error->message);
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

/*
 * A resharding (or a move) from the checks to the end, or the continuation
 * of an interrupted one; returns the rows it moved.  An error before the
 * cutover undoes what the call made (the table is as it was); after it,
 * calling again finishes.
 */
static int64
run(FunctionCallInfo fcinfo, Oid parent, const char *operation, Oid partition, const char *server,
	Interval *budget, int attempts, shard_views_choice shard_views)
{
	engine		e;
	int64		moved_rows = 0;

	engine_open(&e, fcinfo, parent, budget, attempts);
	PG_TRY();
	{
		ErrorData  *error;

		if (!begin(&e, operation, partition, server, shard_views))
			error = NULL;
		else if ((error = run_steps(&e)) == NULL)
			moved_rows = state_int64(&e, STATE_ROWS_TO_MOVE);
		else
		{
			/* step() leaves no subtransaction open; the transaction may be failed */
			SPI_rollback();
			if (load_state(&e))
			{
				record_error(&e, error);
				if (!e.keep_work)
					undo_after_error(&e);
			}
			ReThrowError(error);
		}
	}
	PG_FINALLY();
	{
		reshard_engine_writing = false;
		unclaim(&e);
	}
	PG_END_TRY();
	restore_session_settings(&e);
	SPI_finish();
	return moved_rows;
}

/*
 * A resharding procedure's call (arguments parent, partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views; operation by name for
 * reshard_engine_run, whose arguments follow it).
 */
static int64
run_resharding(FunctionCallInfo fcinfo, const char *operation, int partition_arg, int budget_arg, int attempts_arg,
			   int shard_views_arg)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(budget_arg) || PG_ARGISNULL(attempts_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	return run(fcinfo, PG_GETARG_OID(0), operation, PG_ARGISNULL(partition_arg) ? InvalidOid : PG_GETARG_OID(partition_arg),
			   NULL, PG_GETARG_INTERVAL_P(budget_arg), PG_GETARG_INT32(attempts_arg),
			   PG_ARGISNULL(shard_views_arg) ? SHARD_VIEWS_WHERE_SHARDS_ALLOW :
			   PG_GETARG_BOOL(shard_views_arg) ? SHARD_VIEWS_YES : SHARD_VIEWS_NO);
}

/* The procedure's INOUT moved_rows, as its result row. */
static Datum
moved_rows_result(FunctionCallInfo fcinfo, int64 moved_rows)
{
	TupleDesc	tupdesc;
	Datum		values[1] = {Int64GetDatum(moved_rows)};
	bool		nulls[1] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

PG_FUNCTION_INFO_V1(reshard_add_partition);

/*
 * CALL reshard_add_partition(parent, new_partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views)
 */
Datum
reshard_add_partition(PG_FUNCTION_ARGS)
{
	return moved_rows_result(fcinfo, run_resharding(fcinfo, "add", 1, 3, 4, 5));
}

PG_FUNCTION_INFO_V1(reshard_remove_partition);

/*
 * CALL reshard_remove_partition(parent, partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views)
 */
Datum
reshard_remove_partition(PG_FUNCTION_ARGS)
{
	return moved_rows_result(fcinfo, run_resharding(fcinfo, "remove", 1, 3, 4, 5));
}

static bool interrupted_move(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts, Oid *partition,
							 char **server);

/* A server as messages name it: server "a", or this server (NULL). */
static const char *
server_name(const char *server)
{
	return server != NULL ? psprintf("server \"%s\"", server) : "this server";
}

PG_FUNCTION_INFO_V1(partition_move);

/*
 * CALL partition_move(partition, server, moved_rows, cutover_budget,
 * cutover_attempts): the partition, whole, to the foreign server or here
 * (server NULL), online (docs/scaling-out.md).  One already there is left
 * as it is.
 */
Datum
partition_move(PG_FUNCTION_ARGS)
{
	Oid			partition;
	Oid			parent;
	char	   *server = PG_ARGISNULL(1) ? NULL : NameStr(*PG_GETARG_NAME(1));
	char	   *current = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("partition, cutover_budget and cutover_attempts must not be null")));
	partition = PG_GETARG_OID(0);
	if (get_rel_relkind(partition) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", partition)));
	parent = partition_parent(partition);
	if (!OidIsValid(parent))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table %s is not a partition", relation_name(partition)),
				 errhint("partition_move moves a partition of a table partitioned by the extension.")));
	if (get_rel_relkind(partition) == RELKIND_FOREIGN_TABLE)
		current = GetForeignServer(GetForeignTable(partition)->serverid)->servername;
	/* where it is already: nothing to do, unless a move of the table was cut short (it goes on, or is refused) */
	if ((server == NULL) == (current == NULL) && (server == NULL || strcmp(server, current) == 0))
	{
		Oid			interrupted;
		char	   *interrupted_server;

		if (!interrupted_move(fcinfo, parent, PG_GETARG_INTERVAL_P(3), PG_GETARG_INT32(4), &interrupted,
							  &interrupted_server))
		{
			ereport(NOTICE,
					(errmsg("partition %s is on %s already; nothing to do", relation_name(partition),
							server_name(server))));
			return moved_rows_result(fcinfo, 0);
		}
	}
	return moved_rows_result(fcinfo, run(fcinfo, parent, "move", partition, server, PG_GETARG_INTERVAL_P(3),
										 PG_GETARG_INT32(4), SHARD_VIEWS_NO));
}

/*
 * The move of parent that was interrupted (its partition and server), if
 * there is one: rebalance finishes it first.
 */
static bool
interrupted_move(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts, Oid *partition, char **server)
{
	engine		e;
	bool		found;

	engine_open(&e, fcinfo, parent, budget, attempts);
	found = load_state(&e) && !phase_ended(e.phase) && moving(&e);
	if (found)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		*partition = state_oid(&e, STATE_PARTITION);
		*server = state_is_null(&e, STATE_SERVER) ? NULL : pstrdup(state_text(&e, STATE_SERVER));
		MemoryContextSwitchTo(old);
	}
	restore_session_settings(&e);
	SPI_finish();
	return found;
}

/* A move of rebalance's plan. */
typedef struct planned_move
{
	Oid			partition;
	int			bucket;
	char	   *server;
} planned_move;

/* The moves that placement_plan gives for parent and servers (read as the caller). */
static List *
rebalance_plan(Oid parent, Datum servers)
{
	Oid			argtypes[2] = {REGCLASSOID, NAMEARRAYOID};
	Datum		args[2] = {ObjectIdGetDatum(parent), servers};
	List	   *moves = NIL;
	MemoryContext caller = CurrentMemoryContext;
	int			nest_level;
	char	   *schema;

	SPI_connect();
	nest_level = safe_search_path_begin();
	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension x"
					" JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'subsetting'",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "extension subsetting is not installed");
	schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (SPI_execute_with_args(psprintf("SELECT p.partition::pg_catalog.oid, p.bucket, p.from_server, p.to_server"
									   " FROM %s.placement_plan($1, $2) AS p", schema),
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not plan the moves of %s", relation_name(parent));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		char	   *to = SPI_getvalue(row, desc, 4);
		Oid			partition = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
		MemoryContext old;
		planned_move *move;

		old = MemoryContextSwitchTo(caller);
		move = palloc(sizeof(planned_move));
		move->partition = partition;
		move->bucket = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));
		move->server = to != NULL ? pstrdup(to) : NULL;
		moves = lappend(moves, move);
		MemoryContextSwitchTo(old);
	}
	safe_search_path_end(nest_level);
	SPI_finish();
	return moves;
}

PG_FUNCTION_INFO_V1(rebalance);

/*
 * CALL rebalance(parent, servers, moves, cutover_budget, cutover_attempts):
 * the moves of placement_plan(parent, servers), one after the other, each
 * a partition_move; an interrupted move of the table finished first, so
 * that calling it again after an interruption goes on.  Returns the moves
 * made.
 */
Datum
rebalance(PG_FUNCTION_ARGS)
{
	Oid			parent;
	Interval   *budget;
	int			attempts;
	Oid			partition;
	char	   *server;
	List	   *moves;
	ListCell   *cell;
	int			made = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, servers, cutover_budget and cutover_attempts must not be null")));
	parent = PG_GETARG_OID(0);
	budget = PG_GETARG_INTERVAL_P(3);
	attempts = PG_GETARG_INT32(4);
	if (interrupted_move(fcinfo, parent, budget, attempts, &partition, &server))
	{
		ereport(NOTICE,
				(errmsg("rebalance of %s: finishing the interrupted move of %s", relation_name(parent),
						relation_name(partition))));
		(void) run(fcinfo, parent, "move", partition, server, budget, attempts, SHARD_VIEWS_NO);
		made++;
	}
	moves = rebalance_plan(parent, PG_GETARG_DATUM(1));
	foreach(cell, moves)
	{
		planned_move *move = lfirst(cell);

		ereport(NOTICE,
				(errmsg("rebalance of %s: moving %s (bucket %d) to %s, %d of %d", relation_name(parent),
						relation_name(move->partition), move->bucket, server_name(move->server),
						foreach_current_index(cell) + 1, list_length(moves))));
		(void) run(fcinfo, parent, "move", move->partition, move->server, budget, attempts, SHARD_VIEWS_NO);
		made++;
	}
	{
		TupleDesc	tupdesc;
		Datum		values[1] = {Int32GetDatum(made)};
		bool		nulls[1] = {false};

		if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
	}
}

PG_FUNCTION_INFO_V1(reshard_run);

/*
 * CALL reshard_engine_run(parent, operation, partition, cutover_budget,
 * cutover_attempts, shard_views): either, by name (tests).
 */
Datum
reshard_run(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation must not be null")));
	(void) run_resharding(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(1)), 2, 3, 4, 5);
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
		(void) begin(&e, text_to_cstring(PG_GETARG_TEXT_PP(1)), PG_ARGISNULL(2) ? InvalidOid : PG_GETARG_OID(2), NULL,
					 SHARD_VIEWS_NO);
	}
	PG_FINALLY();
	{
		unclaim(&e);
	}
	PG_END_TRY();
	restore_session_settings(&e);
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
		refuse_atomic(&e);
		claim(&e);
		if (!load_state(&e))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table %s is not being resharded", relation_name(e.parent))));
		(void) step(&e);
	}
	PG_FINALLY();
	{
		reshard_engine_writing = false;
		unclaim(&e);
	}
	PG_END_TRY();
	restore_session_settings(&e);
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
		refuse_atomic(&e);
		claim(&e);
		if (!load_state(&e))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table %s has no interrupted resharding", relation_name(e.parent))));
		/* cut short in a cutover attempt: its COMMIT may have been done on some shards */
		e.cutover_committing = cut_short_in_cutover(&e);
		if (phase_ended(e.phase))
		{
			/* what an undo could not drop at once */
			next_transaction(false);
			with_lock_retries(&e, step_sweep, false, "drop the triggers an undone resharding left");
			if (e.triggers_swept == 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("table %s has no interrupted resharding", relation_name(e.parent))));
			ereport(NOTICE,
					(errmsg("dropped %d triggers an undone resharding of %s left", e.triggers_swept,
							relation_name(e.parent))));
		}
		else if (!undo(&e))
		{
			ereport(NOTICE,
					(errmsg("the resharding of %s had cut over already; finishing it", relation_name(e.parent))));
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
	restore_session_settings(&e);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_phases);

/*
 * reshard_phases(): the phase table, a row per phase in its order (tests
 * compare it with reshard_state's CHECK; docs/resharding-engine.md shows
 * it).
 */
Datum
reshard_phases(PG_FUNCTION_ARGS)
{
	static const char *const isolations[] = {[READ_COMMITTED] = "read committed", [REPEATABLE_READ] = "repeatable read"};
	static const char *const policies[] = {
		[LOCKS_NONE] = "none", [LOCKS_RETRIED] = "retried", [LOCKS_CUTOVER] = "cutover", [LOCKS_OWN] = "own"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	engine		e;

	InitMaterializedSRF(fcinfo, 0);
	memset(&e, 0, sizeof(e));
	SPI_connect();
	e.memory = CurrentMemoryContext;
	state_open(&e);
	for (int phase = 0; phase < PHASE_COUNT; phase++)
	{
		const phase_row *row = phase_of(phase);
		Datum		values[7];
		bool		nulls[7] = {false};

		values[0] = Int32GetDatum(phase + 1);
		values[1] = CStringGetTextDatum(row->name);
		nulls[2] = phase_ended(phase);
		values[2] = nulls[2] ? (Datum) 0 : CStringGetTextDatum(row->step_name);
		values[3] = CStringGetTextDatum(isolations[row->isolation]);
		values[4] = CStringGetTextDatum(policies[row->locks]);
		nulls[5] = row->routine == ROUTINE_NONE;
		values[5] = nulls[5] ? (Datum) 0 : ObjectIdGetDatum(routine_oid(&e, row->routine));
		values[6] = CStringGetTextDatum(phase_name(row->next));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}
