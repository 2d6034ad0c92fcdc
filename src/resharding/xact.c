/*
 * src/resharding/xact.c
 *		The resharding engine's transactions, subtransactions and lock waits
 *		(xact.h).
 *
 * Every step runs in transactions of its own and commits its work together
 * with the state row it leads to (commit_state), so that a call cut short
 * anywhere is continued by the next step from the state row.  A unit of work runs in
 * a subtransaction, so that a failed one is rolled back with the state row
 * it changed, and tried again where its failure was a lock it could not get
 * within the budget.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/timeout.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "resharding/capture.h"
#include "resharding/state.h"
#include "resharding/tables.h"
#include "resharding/xact.h"
#include "table_owner.h"

#if PG_VERSION_NUM >= 170000
/* transaction_timeout, set for the role, the database or the server, does not apply to the call's transactions. */
static bool ignore_transaction_timeout = false;
#endif

/*
 * The call's own settings, in each of its transactions.  The caller's
 * lock_timeout does not apply to them: the waits for the table's locks are
 * the call's own (at most the budget each, retried: set_lock_timeout), and
 * any other is brief (a catalog that autovacuum truncates, a relation the
 * engine just made), where a short lock_timeout of the caller's would fail
 * a call late for nothing.
 */
static int	call_settings_nest_level = 0;

static void
apply_call_settings(void)
{
	call_settings_nest_level = NewGUCNestLevel();
	(void) set_config_option("lock_timeout", "0", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/*
	 * (and the partitions the call makes and attaches are not checked by the
	 * event trigger jumpbackhash_partition_bounds: their bounds are the
	 * engine's, of the layout it checked, and at 256 partitions the checks of
	 * the cutover's statements took part of its budget)
	 */
	(void) set_config_option("subsetting_reshard.engine_ddl", "on", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
}

/*
 * At the end of a call that succeeded: the caller's lock_timeout again,
 * for the rest of the transaction the call ended in (a DO block, or a
 * procedure, that called it goes on in it).
 */
void
restore_session_settings(engine *e)
{
	if (!e->atomic && call_settings_nest_level > 0)
		AtEOXact_GUC(true, call_settings_nest_level);
	call_settings_nest_level = 0;
}

/* What the call ignores of the caller's settings, again in the transaction that just started. */
static void
transaction_started(void)
{
	apply_call_settings();
#if PG_VERSION_NUM >= 170000
	if (ignore_transaction_timeout && get_timeout_active(TRANSACTION_TIMEOUT))
		disable_timeout(TRANSACTION_TIMEOUT, false);
#endif
}

/* Commits; the next transaction starts. */
static void
commit_transaction(void)
{
	SPI_commit();
	transaction_started();
}

/*
 * Whether the session set setting itself (SET, or the client's options at
 * connection).  (Read with the engine's search_path: the caller's may find
 * another role's = first.)
 */
static bool
set_by_session(const char *setting)
{
	Oid			type = TEXTOID;
	Datum		arg = CStringGetTextDatum(setting);
	bool		isnull;
	bool		by_session = true;
	int			nest_level = safe_search_path_begin();

	if (SPI_execute_with_args("SELECT source IN ('session', 'client') FROM pg_catalog.pg_settings WHERE name = $1",
							  1, &type, &arg, NULL, true, 1) == SPI_OK_SELECT && SPI_processed == 1)
		by_session = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	safe_search_path_end(nest_level);
	return by_session;
}

/*
 * The caller's settings that would fail a call late, dealt with before it
 * starts.  A session whose transactions are read-only is refused at once.
 * A statement_timeout (and on PostgreSQL 17 on, a transaction_timeout) set
 * for the role, the database or the server does not apply to the call, as
 * it does not to the maintenance commands a DBA runs by hand once he set it
 * to 0: the call's own waits are bounded by its budget, and it stops on a
 * cancel; one the session set itself is the caller's limit, and is kept.
 */
void
settle_session_settings(engine *e)
{
	if (XactReadOnly || DefaultXactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot reshard %s in a read-only transaction", relation_name(e->parent)),
				 errdetail(DefaultXactReadOnly
						   ? "default_transaction_read_only is on (for the session, the role or the database)."
						   : "The transaction that calls it is read-only."),
				 errhint("SET default_transaction_read_only = off, then call it again.")));
	/* (a call made in a transaction block leaves the block's settings alone) */
	call_settings_nest_level = 0;
	if (!e->atomic)
		apply_call_settings();
	if (StatementTimeout > 0 && !set_by_session("statement_timeout") && get_timeout_active(STATEMENT_TIMEOUT))
		disable_timeout(STATEMENT_TIMEOUT, false);
#if PG_VERSION_NUM >= 170000
	ignore_transaction_timeout = TransactionTimeout > 0 && !set_by_session("transaction_timeout");
	if (ignore_transaction_timeout && get_timeout_active(TRANSACTION_TIMEOUT))
		disable_timeout(TRANSACTION_TIMEOUT, false);
#endif
}

/* Commits; the next transaction runs at that isolation level. */
void
next_transaction(bool repeatable_read)
{
	commit_transaction();
	(void) set_config_option("transaction_isolation", repeatable_read ? "repeatable read" : "read committed",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
}

/*
 * Rolls back a transaction that did nothing to keep (its work failed in a
 * subtransaction, already rolled back); the next transaction starts, read
 * committed.  Unlike a commit, this ends whatever postgres_fdw could not
 * clean up after the failure: a connection it could not bring back to a
 * known state (a cancel that came while it ended the subtransaction on a
 * shard) is closed, where a commit would fail on it.
 */
void
rollback_transaction(void)
{
	SPI_rollback();
	transaction_started();
	(void) set_config_option("transaction_isolation", "read committed",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET, true, 0, false);
}

/*
 * lock_timeout for the rest of the transaction, in milliseconds; and
 * deadlock_timeout half of it: PostgreSQL cancels an autovacuum that holds
 * a lock one waits for only when that wait reaches deadlock_timeout (1 s by
 * default: longer than the default budget, and autovacuum is likely on
 * tables a resharding has just rewritten).
 */
void
set_lock_timeout(int ms)
{
	(void) set_config_option("lock_timeout", psprintf("%d", Max(ms, 1)),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
	(void) set_config_option("deadlock_timeout", psprintf("%d", Max(ms / 2, 1)),
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

/* A call's cutover_budget in milliseconds, or an error if it is not between 1 ms and 1 hour. */
int
cutover_budget_ms(Interval *budget)
{
	int64		ms = (budget->month * (int64) DAYS_PER_MONTH + budget->day) * SECS_PER_DAY * 1000 + budget->time / 1000;

	if (ms < 1 || ms > 3600 * 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cutover_budget must be between 1 ms and 1 hour, not %s",
						DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(budget))))));
	return (int) ms;
}

/* A call's cutover_attempts, or an error if it is not between 1 and 1000. */
int
checked_cutover_attempts(int attempts)
{
	if (attempts < 1 || attempts > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cutover_attempts must be between 1 and 1000, not %d", attempts)));
	return attempts;
}

/*
 * Runs unit in a subtransaction.  Returns NULL when it succeeded (and
 * *complete, what it returned); else the subtransaction is rolled back
 * (with what unit did and the state row it changed) and the error is
 * returned, copied into the call's memory.
 */
ErrorData *
try_unit(engine *e, engine_unit unit, bool *complete)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bool		has_state = e->has_state;
	reshard_phase phase = e->phase;
	Datum		values[STATE_COLUMNS];
	bool		nulls[STATE_COLUMNS];
	ErrorData  *error = NULL;

	memcpy(values, e->values, sizeof(values));
	memcpy(nulls, e->nulls, sizeof(nulls));
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		bool		done = unit(e);

		if (complete != NULL)
			*complete = done;
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		reshard_engine_writing = false;
		MemoryContextSwitchTo(e->memory);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		memcpy(e->values, values, sizeof(values));
		memcpy(e->nulls, nulls, sizeof(nulls));
		e->has_state = has_state;
		e->phase = phase;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return error;
}

/* Waits about ms milliseconds (more or less, at random), or until cancelled. */
void
back_off(int ms)
{
	long		wait = ms / 2 + (long) (pg_prng_double(&pg_global_prng_state) * ms);

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, Max(wait, 1), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * A step ran out of attempts: before the cutover commits, the call keeps
 * what it did (its copies, its log: run() does not undo it), so that
 * calling again continues from there; returns the hint of the error,
 * after why.
 */
char *
out_of_attempts(engine *e, const char *why)
{
	if (e->phase == PHASE_UNDO)
		return pstrdup(why);
	e->keep_work = true;
	return psprintf("%s Calling it again continues where it stopped (what it copied is kept, and its writes are "
					"still captured); reshard_abort undoes it.", why);
}

/* Whether error is a lock not had within the budget (or a deadlock, which ends a wait the same way). */
static bool
is_lock_failure(ErrorData *error)
{
	return error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE || error->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED;
}

/*
 * Runs unit (which takes locks, each wait at most the budget) in a
 * subtransaction, up to e->attempts times while it fails to get a lock (or
 * deadlocks), a pause between two; returns what unit returned.  what says
 * what the locks are for, in the error.
 */
static bool
retry_while_locked_out(engine *e, engine_unit unit, const char *what)
{
	bool		complete = false;

	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error = try_unit(e, unit, &complete);

		if (error == NULL)
			return complete;
		if (!is_lock_failure(error))
			ReThrowError(error);
		if (attempt >= e->attempts)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not lock the %s within %d ms in %d attempts", what, e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("%s", out_of_attempts(e, "Another transaction holds them; see pg_locks."))));
		back_off(e->budget_ms);
	}
}

/*
 * Runs work(arg) in a subtransaction whose settings end with it (set_lock_timeout),
 * tried again, a pause between two, while it fails to get a lock within
 * budget_ms (or deadlocks), at most attempts times; then that error is
 * raised, with a hint naming relation.  The procedures that hand a table's
 * constraints over run their one transaction so (no state row: nothing to
 * keep between attempts).
 */
void
run_with_lock_attempts(Oid relation, int budget_ms, int attempts, void (*work) (void *), void *arg)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner resowner = CurrentResourceOwner;

	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error = NULL;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(context);
		PG_TRY();
		{
			int			guc_level = NewGUCNestLevel();

			work(arg);
			AtEOXact_GUC(false, guc_level);
			ReleaseCurrentSubTransaction();
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(context);
			error = CopyErrorData();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
		}
		PG_END_TRY();
		MemoryContextSwitchTo(context);
		CurrentResourceOwner = resowner;
		if (error == NULL)
			return;
		if (!is_lock_failure(error) || attempt >= attempts)
		{
			if (is_lock_failure(error))
				error->hint = psprintf("Writers held %s longer than cutover_budget (%d ms) %d times: call it again, "
									   "or with a larger cutover_budget or more cutover_attempts.",
									   relation_name(relation), budget_ms, attempts);
			ReThrowError(error);
		}
		back_off(budget_ms);
	}
}

/*
 * Runs unit as retry_while_locked_out does; returns what unit returned,
 * its work in the transaction, not committed.  what says what the locks of
 * the table's partitions are for, in the error.
 */
bool
with_lock_retries(engine *e, engine_unit unit, const char *what)
{
	return retry_while_locked_out(e, unit, psprintf("partitions of %s to %s", relation_name(e->parent), what));
}

/*
 * Runs unit as try_unit does, its error raised again; returns what unit
 * returned, its work in the transaction, not committed.
 */
bool
run_unit(engine *e, engine_unit unit)
{
	bool		complete = false;
	ErrorData  *error = try_unit(e, unit, &complete);

	if (error != NULL)
		ReThrowError(error);
	return complete;
}

/* Saves the state row and commits it with the work before it; the next transaction starts, read committed. */
void
commit_state(engine *e)
{
	save_state(e);
	next_transaction(false);
}

/*
 * Locks relations in the order given, each wait at most lock_timeout (LOCK
 * TABLE cannot lock a foreign table on PostgreSQL 15).
 */
void
lock_relations(List *relations, LOCKMODE mode)
{
	ListCell   *cell;

	foreach(cell, relations)
		LockRelationOid(lfirst_oid(cell), mode);
}

/*
 * Locks e->locking in e->lock_mode, each wait at most the budget
 * (deadlock_timeout half of it: a deadlock with a writer ends this wait,
 * not the writer's); the settings are back as they were after.
 */
static bool
unit_lock(engine *e)
{
	int			nest_level = NewGUCNestLevel();

	set_lock_timeout(e->budget_ms);
	lock_relations(e->locking, e->lock_mode);
	AtEOXact_GUC(false, nest_level);
	return true;
}

/*
 * Locks relations in the order given, in a transaction that has taken no
 * snapshot yet and must not take one before: a wait that times out or ends
 * in a deadlock releases what was taken and is one failed attempt of at
 * most e->attempts, after a pause.  what says what the locks are for.
 */
void
lock_with_retries(engine *e, List *relations, LOCKMODE mode, const char *what)
{
	e->locking = relations;
	e->lock_mode = mode;
	(void) retry_while_locked_out(e, unit_lock, what);
	e->locking = NIL;
}

/* Drops the engine's triggers from relation (if it still exists); returns how many. */
int
stop_triggers(engine *e, Oid relation)
{
	return stop_trigger(e, relation, NULL, true);
}

/*
 * Drops the engine's trigger name (NULL: every one) from relation, if
 * both still exist, waiting for the table's lock unless wait is false;
 * returns how many, or -1 if it could not lock the table at once.
 */
int
stop_trigger(engine *e, Oid relation, const char *name, bool wait)
{
	Oid			functions[3] = {routine_oid(e, ROUTINE_CAPTURE_TRIGGER), routine_oid(e, ROUTINE_GUARD_TRIGGER),
	routine_oid(e, ROUTINE_WHOLE_ROW_TRIGGER)};

	if (get_rel_relkind(relation) == '\0')
		return 0;
	return reshard_triggers_stop(relation, name, functions, lengthof(functions), wait);
}
