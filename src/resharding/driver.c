/*
 * src/resharding/driver.c
 *		The driver of the resharding engine (docs/resharding-engine.md;
 *		driver.h): a call from its plan to the end, one step at a time, by
 *		the phase table, for every operation of the operation table.
 *
 * A call is a row of reshard_state and a sequence of phases, each run by
 * steps, in transactions of their own that commit their work together with
 * the state row it leads to; so a call cut short anywhere is continued by
 * the next step from the state row.  The phase table (phases.h) says, for
 * each phase, its step, the isolation of its transactions, how it waits for
 * locks, its SQL routine and the phase after it: step() below runs a call
 * by it, and only this file writes a phase.  The steps run the SQL routines
 * as the table's owner in a security-restricted operation (table_owner.h).
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "resharding/capture.h"
#include "resharding/claims.h"
#include "resharding/cutover.h"
#include "resharding/driver.h"
#include "resharding/shards.h"
#include "resharding/state.h"
#include "resharding/steps.h"
#include "resharding/tables.h"
#include "resharding/xact.h"
#include "table_owner.h"

/* The step of each phase (the phase table's column step). */
static const engine_unit steps[PHASE_COUNT] = {
#define PHASE(symbol, name, step, isolation, locks, routine, next) [symbol] = step,
#include "resharding/phases.h"
#undef PHASE
};

/* The state row enters phase (in memory; saved with the work that leads to it). */
static void
set_phase(engine *e, reshard_phase phase)
{
	set_state_text(e, STATE_PHASE, phase_name(phase));
	e->phase = phase;
}

/*
 * The step said its phase is complete: the next phase written into the
 * state row, saved and committed with the step's work.  The cutover's
 * commit is the one that changes the layout: the new parent, whose OID the
 * state row has from then on, is claimed before it and followed after it;
 * a failure in it may leave the work done on some shards, which the undo
 * must know (cutover_committing).
 */
static void
enter_next_phase(engine *e)
{
	bool		cutover = e->phase == PHASE_CUTOVER;
	ListCell   *cell;

	set_phase(e, next_phase(e->phase));
	if (!cutover)
	{
		commit_state(e);
		return;
	}
	/* (the moves it cut over with its own: theirs too, in the same transaction) */
	foreach(cell, e->cut_with)
	{
		engine	   *waiting = lfirst(cell);

		set_phase(waiting, next_phase(waiting->phase));
		save_state(waiting);
	}
	save_state(e);
	claim_new_parent(e);
	e->cutover_committing = true;
	next_transaction(false);
	e->cutover_committing = false;
	follow_new_parent(e);
}

/*
 * Runs the next step of the call, in transactions of its own, as the phase
 * table says; false when there is none.
 */
static bool
step(engine *e)
{
	const phase_row *phase = phase_of(e->phase);
	engine_unit unit = steps[e->phase];
	bool		complete = false;

	if (phase_ended(e->phase) || e->phase == e->stop_before)
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
		(void) run_unit(e, unit_check_catalog);
		commit_state(e);
	}
	next_transaction(phase->isolation == REPEATABLE_READ);
	switch (phase->locks)
	{
		case LOCKS_NONE:
			complete = run_unit(e, unit);
			break;
		case LOCKS_RETRIED:
			complete = with_lock_retries(e, unit, psprintf("run its phase %s", phase->name));
			break;
		case LOCKS_CUTOVER:
		case LOCKS_OWN:
			/* transactions of its own; the last is left open */
			complete = unit(e);
			break;
	}
	if (complete)
		enter_next_phase(e);
	else
		commit_state(e);
	return true;
}

/* Connects to SPI for a procedure that commits; fills e. */
static void
engine_open(engine *e, FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts)
{
	e->atomic = fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic;
	if (budget != NULL)
		e->budget_ms = cutover_budget_ms(budget);
	e->attempts = checked_cutover_attempts(attempts);
	e->parent = parent;
	e->claims = NIL;
	e->triggers_swept = 0;
	e->cutover_committing = false;
	e->keep_work = false;
	e->has_state = false;
	e->locking = NIL;
	e->stop_before = PHASE_COUNT;
	e->waiting_moves = NIL;
	e->cut_with = NIL;
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

/* The end of a call that succeeded: the caller's settings back, SPI left. */
static void
engine_close(engine *e)
{
	restore_session_settings(e);
	SPI_finish();
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
 * A call that ended (done) with the same arguments: whether partition is
 * where the operation leaves the one it names (a move was found where it
 * goes before the call, by partition_move).
 */
static bool
done_already(engine *e, Oid partition)
{
	switch (operation_of(e->operation)->partition)
	{
		case PARTITION_JOINS:
			return partition_parent(partition) == e->parent;
		case PARTITION_LEAVES:
			return !OidIsValid(partition_parent(partition));
		case PARTITION_MOVES:
			break;
	}
	return false;
}

/*
 * A move that has not cut over whose partition was dropped, or detached
 * from the table, while it waited (between two steps, or after a call cut
 * short): what happened to it, for a message ("partition with OID N of T
 * was dropped"); else NULL.  Such a move cannot go on: it is undone (begin,
 * abort_call).  (Once it has cut over, the partition it left is detached:
 * the finish drops it.)
 */
static char *
move_partition_gone(engine *e)
{
	Oid			partition;

	if (!moving(e) || phase_ended(e->phase) || e->phase == PHASE_FINISH || e->phase == PHASE_UNDO)
		return NULL;
	partition = state_oid(e, STATE_PARTITION);
	if (get_rel_relkind(partition) == '\0')
		return pstrdup("the partition it moved was dropped");
	if (partition_parent(partition) != e->parent)
		return psprintf("its partition %s was detached from %s", relation_name(partition), relation_name(e->parent));
	return NULL;
}

/*
 * Whether the resharding of e is the call of operation on partition (any,
 * if invalid; after a move's cutover, also the partition it became) to
 * server (NULL: here).
 */
static bool
same_call(engine *e, reshard_operation operation, Oid partition, const char *server)
{
	return e->operation == operation &&
		(!OidIsValid(partition) || state_oid(e, STATE_PARTITION) == partition ||
		 (moving(e) && partition == moved_to(e))) &&
		(server == NULL ? state_is_null(e, STATE_SERVER) :
		 !state_is_null(e, STATE_SERVER) && strcmp(state_text(e, STATE_SERVER), server) == 0);
}

/* Refuses a call that is not the interrupted resharding of e (same_call). */
static void
refuse_other_call(engine *e)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("an interrupted resharding of %s is in phase %s", relation_name(e->parent), phase_name(e->phase)),
			 errhint("Call it again with the same arguments to finish it, or undo it with reshard_abort.")));
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
begin(engine *e, reshard_operation operation, Oid partition, const char *server, shard_views_choice views)
{
	claim(e);
	if (load_state(e))
	{
		char	   *gone = move_partition_gone(e);
		bool		same = same_call(e, operation, partition, server);

		if (gone != NULL)
		{
			/* (whatever this call's arguments: that move cannot go on) */
			refuse_atomic(e);
			ereport(NOTICE,
					(errmsg("the interrupted move of a partition of %s is undone: %s", relation_name(e->parent), gone)));
			(void) undo(e);
		}
		else if (!phase_ended(e->phase))
		{
			if (!same)
				refuse_other_call(e);
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
		if (e->phase == PHASE_DONE && OidIsValid(partition) && same && done_already(e, partition))
		{
			ereport(NOTICE,
					(errmsg("%s was resharded by this %s already; nothing to do", relation_name(e->parent),
							operation_of(operation)->name)));
			return false;
		}
		delete_states(e, true, false);
	}

	/* The states of dropped tables go. */
	delete_states(e, false, true);

	/* The plan (as the owner: it checks the table), then the checks, then the state row written. */
	refuse_linked_reshardings(e, operation);
	new_state(e, operation);
	set_phase(e, PHASE_SETUP);
	set_state_oid(e, STATE_PARTITION, partition);
	set_state_text(e, STATE_SERVER, server);
	if (views == SHARD_VIEWS_WHERE_SHARDS_ALLOW)
		set_state_null(e, STATE_SHARD_VIEWS);
	else
		set_state_bool(e, STATE_SHARD_VIEWS, views == SHARD_VIEWS_YES);
	run_routine(e, operation_of(operation)->plan, 1, CStringGetTextDatum(operation_of(operation)->name), 0);
	/* (what shard_views will make on the shards, recorded with the state row) */
	shard_views(e, "record");
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
	commit_state(e);
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
 * A call from the checks to the end, or the continuation
 * of an interrupted one; returns the rows it moved.  An error before the
 * cutover undoes what the call made (the table is as it was); after it,
 * calling again finishes.
 */
static int64
run(FunctionCallInfo fcinfo, Oid parent, reshard_operation operation, Oid partition, const char *server,
	Interval *budget, int attempts, shard_views_choice shard_views, reshard_phase stop_before, List *waiting_moves)
{
	engine		e;
	int64		moved_rows = 0;

	engine_open(&e, fcinfo, parent, budget, attempts);
	e.stop_before = stop_before;
	e.waiting_moves = waiting_moves;
	PG_TRY();
	{
		ErrorData  *error;

		if (!begin(&e, operation, partition, server, shard_views))
			error = NULL;
		else if ((error = run_steps(&e)) == NULL)
			moved_rows = phase_ended(e.phase) ? state_int64(&e, STATE_ROWS_TO_MOVE) : 0;
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
	engine_close(&e);
	return moved_rows;
}

int64
run_call(FunctionCallInfo fcinfo, Oid parent, reshard_operation operation, Oid partition, const char *server,
		 Interval *budget, int attempts, shard_views_choice shard_views)
{
	return run(fcinfo, parent, operation, partition, server, budget, attempts, shard_views, PHASE_COUNT, NIL);
}

/*
 * A move of partition of parent to server (NULL: here), as run_call; with
 * stop_before_cutover, it stops when it reaches its cutover (in phase
 * cutover: it waits there, its writes captured); with waiting_moves (the
 * tables whose moves wait so), its cutover cuts them over with its own, in
 * one transaction (step_cutover), and leaves them to finish.  Returns the
 * rows moved by a move that ended, 0 by one that waits.
 */
int64
run_move(FunctionCallInfo fcinfo, Oid parent, Oid partition, const char *server, Interval *budget, int attempts,
		 bool stop_before_cutover, List *waiting_moves)
{
	return run(fcinfo, parent, OPERATION_MOVE, partition, server, budget, attempts,
			   SHARD_VIEWS_NO, stop_before_cutover ? PHASE_CUTOVER : PHASE_COUNT, waiting_moves);
}

/*
 * The move of parent that was interrupted (its partition and server, in
 * the caller's memory), if there is one: rebalance finishes it first.
 */
bool
interrupted_move(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts, Oid *partition, char **server)
{
	engine		e;
	bool		found;
	MemoryContext caller = CurrentMemoryContext;

	engine_open(&e, fcinfo, parent, budget, attempts);
	found = load_state(&e) && !phase_ended(e.phase) && moving(&e);
	if (found)
	{
		MemoryContext old = MemoryContextSwitchTo(caller);

		*partition = state_oid(&e, STATE_PARTITION);
		*server = state_is_null(&e, STATE_SERVER) ? NULL : pstrdup(state_text(&e, STATE_SERVER));
		MemoryContextSwitchTo(old);
	}
	engine_close(&e);
	return found;
}

/*
 * Whether a move of parent has cut over and not finished (in phase finish),
 * and to which server (*server, in the caller's memory; NULL: here): the
 * moves of a bucket of co-located tables finish in an order
 * (move_together).  With partition valid, it must be the move of partition
 * to to_server: another is refused, as a call of it would be.
 */
bool
move_cut_over(FunctionCallInfo fcinfo, Oid parent, Oid partition, const char *to_server, char **server)
{
	engine		e;
	bool		found;
	MemoryContext caller = CurrentMemoryContext;

	engine_open(&e, fcinfo, parent, NULL, 1);
	found = load_state(&e) && moving(&e) && e.phase == PHASE_FINISH;
	if (found && OidIsValid(partition) && !same_call(&e, OPERATION_MOVE, partition, to_server))
		refuse_other_call(&e);
	if (found)
	{
		MemoryContext old = MemoryContextSwitchTo(caller);

		*server = state_is_null(&e, STATE_SERVER) ? NULL : pstrdup(state_text(&e, STATE_SERVER));
		MemoryContextSwitchTo(old);
	}
	engine_close(&e);
	return found;
}

/*
 * The checks and the state row of a call, nothing else: reshard_begin,
 * after which reshard_step runs one step at a time (tests).
 */
void
begin_call(FunctionCallInfo fcinfo, Oid parent, reshard_operation operation, Oid partition, const char *server)
{
	engine		e;

	engine_open(&e, fcinfo, parent, NULL, 1);
	e.budget_ms = 500;
	PG_TRY();
	{
		(void) begin(&e, operation, partition, server, SHARD_VIEWS_NO);
	}
	PG_FINALLY();
	{
		unclaim(&e);
	}
	PG_END_TRY();
	engine_close(&e);
}

/* The next step of the call of parent (reshard_step: each phase on its own, for the tests). */
void
step_call(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts)
{
	engine		e;

	engine_open(&e, fcinfo, parent, budget, attempts);
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
	engine_close(&e);
}

/*
 * Undoes the interrupted call of parent, which has not cut over; one that
 * has is finished instead (it cannot be undone).  After an undo, the
 * triggers it left (reshard_abort).
 */
void
abort_call(FunctionCallInfo fcinfo, Oid parent)
{
	engine		e;
	char	   *gone;

	engine_open(&e, fcinfo, parent, NULL, 10);
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
			(void) with_lock_retries(&e, step_sweep, "drop the triggers an undone resharding left");
			commit_state(&e);
			if (e.triggers_swept == 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("table %s has no interrupted resharding", relation_name(e.parent))));
			ereport(NOTICE,
					(errmsg("dropped %d triggers an undone resharding of %s left", e.triggers_swept,
							relation_name(e.parent))));
		}
		else if ((gone = move_partition_gone(&e)) != NULL)
		{
			(void) undo(&e);
			ereport(NOTICE,
					(errmsg("the move of a partition of %s is undone: %s", relation_name(e.parent), gone)));
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
	engine_close(&e);
}
