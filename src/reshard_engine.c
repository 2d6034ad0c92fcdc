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

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/partition.h"
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
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "reshard_capture.h"
#include "table_owner.h"

/* The advisory lock's objsubid; SQL's advisory lock functions use 1 and 2. */
#define RESHARD_LOCK_KIND 3

/*
 * A catch-up round applies at most this many changes ... and the catch-up
 * ends when a round found fewer than this, or when the changes waiting did
 * not shrink in a round (writers as fast as the catch-up: the verification
 * then applies what its snapshot sees, and the cutover what is left within
 * its budget, or it fails after its attempts).
 */
#define CATCH_UP_ROUND 10000
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
	bool		atomic;			/* called in a transaction block: no commits */
	int			triggers_swept; /* left by an undone resharding, dropped (unit_sweep) */
	bool		cutover_committing; /* the COMMIT of the cutover is under way (or failed) */
	List	   *locking;		/* what unit_lock locks, and how */
	LOCKMODE	lock_mode;
} engine;

typedef void (*engine_unit) (engine *e);

static Oid	state_oid(engine *e, const char *column);

/* A relation's name, schema-qualified and quoted as needed, for messages and queries. */
static char *
relation_name(Oid relation)
{
	char	   *name = get_rel_name(relation);

	if (name == NULL)
		return psprintf("relation %u", relation);	/* dropped meanwhile */
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relation)), name);
}

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
				 errmsg("table %s is being resharded by another backend", relation_name(e->parent)),
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
	int			nest_level = safe_search_path_begin();

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(e->state_owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	ret = SPI_execute_with_args(psprintf(query, e->schema), 2, types, args, nulls, false, 0);
	SetUserIdAndSecContext(saved_user, saved_context);
	safe_search_path_end(nest_level);
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
				" new_buckets, old_bucket_sql, new_bucket_sql, new_partition_by, new_bound, sources, shadows, new_parent, log,"
				" log_sequence, catalog, validate, foreign_keys, analyze_parent, shard_views, shard_options, hidden_keys, phase,"
				" rows_to_move, rows_copied, rows_verified, sources_copied, changes_applied, changes_waiting, cutover_attempts,"
				" last_progress, backend_pid, error)"
				" = (n.parent, n.operation, n.partition, n.bucket, n.method, n.key, n.old_buckets, n.new_buckets,"
				" n.old_bucket_sql, n.new_bucket_sql, n.new_partition_by, n.new_bound, n.sources, n.shadows, n.new_parent, n.log,"
				" n.log_sequence, n.catalog, n.validate, n.foreign_keys, n.analyze_parent, n.shard_views, n.shard_options,"
				" n.hidden_keys, n.phase, n.rows_to_move, n.rows_copied, n.rows_verified, n.sources_copied,"
				" n.changes_applied, n.changes_waiting, n.cutover_attempts, pg_catalog.clock_timestamp(),"
				" pg_catalog.pg_backend_pid(), n.error)"
				" FROM (SELECT ($1::%1$s.reshard_state).*) AS n WHERE t.parent = $2::pg_catalog.oid",
				psprintf("%u", e->parent));
}

/*
 * After the cutover committed, the state is the new parent's: so is the
 * claim.
 */
static void
follow_new_parent(engine *e)
{
	Oid			old = e->parent;

	if (state_oid(e, "parent") == old)
		return;
	e->parent = state_oid(e, "parent");
	claim(e);
	e->parent = old;
	unclaim(e);
	e->parent = state_oid(e, "parent");
	e->claimed = true;
}

static Datum
state_value(engine *e, const char *column, bool *isnull)
{
	return GetAttributeByName(DatumGetHeapTupleHeader(e->state), column, isnull);
}

static bool
state_is_null(engine *e, const char *column)
{
	bool		isnull;

	(void) state_value(e, column, &isnull);
	return isnull;
}

static bool
state_bool(engine *e, const char *column)
{
	bool		isnull;
	Datum		value = state_value(e, column, &isnull);

	return !isnull && DatumGetBool(value);
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

/*
 * lock_timeout for the rest of the transaction, in milliseconds; and
 * deadlock_timeout half of it: PostgreSQL cancels an autovacuum that holds
 * a lock one waits for only when that wait reaches deadlock_timeout (1 s by
 * default: longer than the default budget, and autovacuum is likely on
 * tables a resharding has just rewritten).
 */
static void
set_lock_timeout(int ms)
{
	(void) set_config_option("lock_timeout", psprintf("%d", Max(ms, 1)),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
	(void) set_config_option("deadlock_timeout", psprintf("%d", Max(ms / 2, 1)),
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
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
 * what says what the locks are for, in the error.
 */
static void
with_lock_retries(engine *e, engine_unit unit, const char *what)
{
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error = try_unit(e, unit);

		if (error == NULL)
			break;
		if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(error);
		if (attempt >= e->attempts)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not lock the partitions of %s to %s within %d ms in %d attempts",
							relation_name(e->parent), what, e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("Another transaction holds them; see pg_locks.")));
		back_off(e->budget_ms);
	}
	save_state(e);
	SPI_commit();
}

/* Runs unit as try_unit does, its error raised again; then saves the state and commits. */
static void
run_unit(engine *e, engine_unit unit)
{
	ErrorData  *error = try_unit(e, unit);

	if (error != NULL)
		ReThrowError(error);
	save_state(e);
	next_transaction(false);
}

/*
 * Locks the relations of an oid[] expression on the state row s, in the
 * order given, each waiting at most lock_timeout (LOCK TABLE cannot lock a
 * foreign table on PostgreSQL 15).
 */
static void
lock_tables(engine *e, const char *relations, LOCKMODE mode)
{
	Datum		arg = e->state;
	Oid			type = e->state_type;
	List	   *oids = NIL;
	ListCell   *cell;
	int			nest_level = safe_search_path_begin();

	if (SPI_execute_with_args(psprintf("SELECT r FROM (SELECT ($1::%s.reshard_state).*) AS s,"
									   " LATERAL pg_catalog.unnest(%s) WITH ORDINALITY AS u(r, o)"
									   " WHERE r IS NOT NULL ORDER BY o",
									   e->schema, relations),
							  1, &type, &arg, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the tables to lock");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		oids = lappend_oid(oids, DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)));
	}
	safe_search_path_end(nest_level);
	foreach(cell, oids)
		LockRelationOid(lfirst_oid(cell), mode);
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

/* Drops the engine's triggers from relation (if it still exists); returns how many. */
static int
stop_triggers(engine *e, Oid relation)
{
	Oid			functions[2] = {routine(e, "reshard_capture()"), routine(e, "reshard_guard()")};

	if (get_rel_relkind(relation) == '\0')
		return 0;
	return reshard_triggers_stop(relation, functions, lengthof(functions));
}

/*
 * With shard_views, an action of reshard_phase_shard_views on the shards
 * whose leaving rows are hidden (their statements wait at most the budget
 * for a lock).
 */
static void
shard_views(engine *e, const char *action)
{
	if (state_bool(e, "shard_views"))
		run_phase(e, "reshard_phase_shard_views(reshard_state,text,integer)", 2, CStringGetTextDatum(action),
				  Int32GetDatum(e->budget_ms));
}

/* Those shards' foreign partitions, for lock_tables. */
#define SHARD_VIEW_SOURCES \
	"ARRAY(SELECT v.r FROM unnest(s.sources, s.shard_options) AS v(r, o) WHERE v.o IS NOT NULL)"

/*
 * Step "setup": the shadows, the new parent, the change log (and with
 * shard_views the shards' objects); then the guards of the tables filled.
 */
static void
unit_setup(engine *e)
{
	table_owner_context owner;
	Oid			guard = routine(e, "reshard_guard()");
	ListCell   *cell;

	run_phase(e, "reshard_phase_setup(reshard_state)", 0, 0, 0);
	shard_views(e, "create");
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "shadows"))
		reshard_guard_start(lfirst_oid(cell), guard);
	table_owner_leave(&owner);
	set_state(e, "phase", "capture");
}

/*
 * Step "capture": the change-log triggers on the old partitions (SHARE ROW
 * EXCLUSIVE on the parent, then on each, as a writer through the parent
 * locks them: no deadlock with one; each waited for at most the budget).
 * Triggers an undone resharding left are dropped first (ACCESS EXCLUSIVE).
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
	lock_tables(e, "ARRAY[s.parent] || s.sources", ShareRowExclusiveLock);
	foreach(cell, state_oids(e, "sources"))
	{
		(void) stop_triggers(e, lfirst_oid(cell));
		reshard_capture_start(lfirst_oid(cell), log, sequence, capture);
	}
	if (state_bool(e, "shard_views"))
		lock_tables(e, SHARD_VIEW_SOURCES, AccessExclusiveLock);
	table_owner_leave(&owner);
	shard_views(e, "point");
	set_state(e, "phase", "copy");
}

/*
 * Locks e->locking in the order given, in e->lock_mode, each wait at most
 * the budget (deadlock_timeout half of it: a deadlock with a writer ends
 * this wait, not the writer); the settings are back as they were after.
 */
static void
unit_lock(engine *e)
{
	int			nest_level = NewGUCNestLevel();
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	foreach(cell, e->locking)
		LockRelationOid(lfirst_oid(cell), e->lock_mode);
	AtEOXact_GUC(false, nest_level);
}

/*
 * Takes this transaction's snapshots (the local one and, through the foreign
 * data wrapper, each foreign partition's server's) at a moment when no
 * write to those partitions is under way: a write through this server
 * commits on the shard first and here second, so a snapshot taken here
 * between the two would see the shard's change without its log entry.
 * SHARE on the parent (writers through it lock it first, so they are not
 * deadlocked), then on each foreign partition (direct writers): each waits
 * for the writes under way and makes the next ones wait behind it, at most
 * the budget, until every snapshot is taken; a wait that times out or ends
 * in a deadlock is one failed attempt of at most e->attempts.  Then
 * reshard_phase_copy and reshard_phase_verify see each write both in the
 * partition and in the log, or in neither.  No query runs before the locks
 * are held: the first one takes the local snapshot.
 */
static void
snapshot_foreign_partitions(engine *e, List *partitions)
{
	table_owner_context owner;
	ListCell   *cell;

	if (partitions == NIL)
		return;
	e->locking = list_concat(list_make1_oid(e->parent), partitions);
	e->lock_mode = ShareLock;
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error = try_unit(e, unit_lock);

		if (error == NULL)
			break;
		if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE && error->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED)
			ReThrowError(error);
		if (attempt >= e->attempts)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not lock the foreign partitions of %s to take their snapshots within %d ms in %d attempts",
							relation_name(e->parent), e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("Another transaction holds them; see pg_locks.")));
		back_off(e->budget_ms);
	}
	table_owner_enter(e->parent, &owner);
	foreach(cell, partitions)
		if (SPI_execute(psprintf("SELECT FROM ONLY %s LIMIT 1",
								 relation_name(lfirst_oid(cell))),
						false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read a foreign partition");
	table_owner_leave(&owner);
	foreach(cell, e->locking)
		UnlockRelationOid(lfirst_oid(cell), ShareLock);
	e->locking = NIL;
}

/* The foreign tables among the OIDs. */
static List *
foreign_tables(List *relations)
{
	List	   *result = NIL;
	ListCell   *cell;

	foreach(cell, relations)
		if (get_rel_relkind(lfirst_oid(cell)) == RELKIND_FOREIGN_TABLE)
			result = lappend_oid(result, lfirst_oid(cell));
	return result;
}

/* With shard_views: the shards' triggers that refuse direct writes. */
static void
unit_arm_shards(engine *e)
{
	shard_views(e, "arm");
}

/* Step "copy": the next old partition copied (reshard_phase_copy). */
static void
unit_copy(engine *e)
{
	int			copied = (int) state_int64(e, "sources_copied");
	List	   *sources = NIL;
	bool		isnull;
	Datum	   *oids;
	bool	   *nulls;
	int			count;

	deconstruct_array(DatumGetArrayTypeP(state_value(e, "sources", &isnull)), OIDOID, sizeof(Oid), true,
					  TYPALIGN_INT, &oids, &nulls, &count);
	/* the next one, as reshard_phase_copy finds it */
	for (int i = copied; i < count; i++)
		if (!nulls[i])
		{
			sources = list_make1_oid(DatumGetObjectId(oids[i]));
			break;
		}
	snapshot_foreign_partitions(e, foreign_tables(sources));
	run_phase(e, "reshard_phase_copy(reshard_state)", 0, 0, 0);
}

/* One round of the catch-up: at most CATCH_UP_ROUND changes of the log applied. */
static void
unit_apply_round(engine *e)
{
	apply_log(e, CATCH_UP_ROUND, DT_NOEND);
}

/*
 * After a round: whether the catch-up is done, given the changes applied
 * and waiting before it (waiting_before < 0: not counted).
 */
static bool
caught_up(engine *e, int64 applied_before, int64 waiting_before)
{
	return state_int64(e, "changes_applied") - applied_before < CATCH_UP_ENOUGH ||
		(waiting_before >= 0 && state_int64(e, "changes_waiting") >= waiting_before);
}

/* One round per step; the changes waiting after the last round are in the state. */
static void
unit_catch_up(engine *e)
{
	int64		applied = state_int64(e, "changes_applied");
	int64		waiting = state_is_null(e, "changes_waiting") ? -1 : state_int64(e, "changes_waiting");

	unit_apply_round(e);
	if (caught_up(e, applied, waiting))
		set_state(e, "phase", "verify");
}

static void
unit_verify(engine *e)
{
	snapshot_foreign_partitions(e, foreign_tables(state_oids(e, "sources")));
	apply_log(e, PG_INT64_MAX, DT_NOEND);
	run_phase(e, "reshard_phase_verify(reshard_state)", 0, 0, 0);
}

/*
 * The cutover's budget as a timer, for the statements that take long
 * without checking the clock (a shard deleting the rows that move out):
 * when it fires it cancels what runs, as statement_timeout does, and the
 * attempt fails as over budget.
 */
static TimeoutId budget_timeout = MAX_TIMEOUTS;
static volatile sig_atomic_t budget_spent = false;

static void
budget_spent_handler(void)
{
	budget_spent = true;
	kill(MyProcPid, SIGINT);
}

static void
arm_budget(int ms)
{
	if (budget_timeout == MAX_TIMEOUTS)
		budget_timeout = RegisterTimeout(USER_TIMEOUT, budget_spent_handler);
	budget_spent = false;
	enable_timeout_after(budget_timeout, ms);
}

/*
 * Stops the timer; true if it fired.  A cancel it caused that is still
 * pending (it fired after the attempt's last statement) is withdrawn.
 */
static bool
disarm_budget(void)
{
	disable_timeout(budget_timeout, false);
	if (!budget_spent)
		return false;
	QueryCancelPending = false;
	return true;
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
 * old local partition's (a foreign partition keeps its place).  Read before
 * the old ones are dropped.
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
		if (!source_nulls[i] && !shadow_nulls[i] && DatumGetObjectId(shadows[i]) != partition &&
			get_rel_relkind(DatumGetObjectId(sources[i])) != RELKIND_FOREIGN_TABLE)
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
 * parent, its partitions, the tables filled, the tables whose foreign keys
 * refer to the parent and those its own refer to (their triggers are
 * dropped and created); the last changes; the checks again; the catalog
 * work.
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
				"          AND i.inhrelid <> ALL (s.sources) ORDER BY 1)::pg_catalog.oid[]"
				" || ARRAY(SELECT DISTINCT c.confrelid FROM pg_catalog.pg_constraint c WHERE c.conrelid = s.parent"
				"          AND c.contype = 'f' ORDER BY 1)::pg_catalog.oid[]",
				AccessExclusiveLock);
	table_owner_leave(&owner);
	check_budget(deadline);
	apply_log(e, PG_INT64_MAX, deadline);
	check_budget(deadline);
	run_phase(e, "reshard_phase_check(reshard_state)", 0, 0, 0);
	table_owner_enter(e->parent, &owner);
	foreach(cell, list_concat(state_oids(e, "shadows"), state_oids(e, "sources")))
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
 * Catch-up rounds, each in a transaction of its own, until caught_up():
 * before a cutover attempt, so that the changes written while the
 * verification read the table (a time that grows with it) are not left
 * for the attempt to apply under its lock.
 */
static void
catch_up(engine *e)
{
	for (int64 waiting = -1;; waiting = state_int64(e, "changes_waiting"))
	{
		int64		applied = state_int64(e, "changes_applied");

		run_unit(e, unit_apply_round);
		if (caught_up(e, applied, waiting))
			break;
	}
}

/*
 * Step "cutover": attempts at most e->attempts times, each after a
 * catch-up; between two, the writers waiting for the lock go through.
 */
static void
step_cutover(engine *e)
{
	catch_up(e);
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error;

		/* counted before it begins: after a crash, no attempt means no COMMIT begun */
		set_state(e, "cutover_attempts", psprintf("%d", (int) state_int64(e, "cutover_attempts") + 1));
		save_state(e);
		next_transaction(false);
		arm_budget(e->budget_ms);
		error = try_unit(e, unit_cutover);
		if (disarm_budget() && error != NULL && error->sqlerrcode == ERRCODE_QUERY_CANCELED)
		{
			error->sqlerrcode = ERRCODE_RESHARD_OVER_BUDGET;
			error->message = pstrdup("the cutover overran its budget");
		}
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
							relation_name(e->parent), e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("Call it again when fewer or shorter transactions write to the table, or with a larger cutover_budget or more cutover_attempts.")));
		back_off(e->budget_ms);
		catch_up(e);
	}
	save_state(e);
	/* a failure now may leave the work done on some shards: the undo sees this flag */
	e->cutover_committing = true;
	next_transaction(false);
	e->cutover_committing = false;
	follow_new_parent(e);
}

static void
unit_finish(engine *e)
{
	bool		last = state_is_null(e, "validate");

	if (last)
		set_lock_timeout(e->budget_ms);
	run_phase(e, "reshard_phase_finish(reshard_state)", 0, 0, 0);
	if (last && !state_is_null(e, "shard_options"))
		shard_views(e, "drop");
}

/* With shard_views, after the cutover: the rows hidden on the shards deleted there, online. */
static void
unit_clean_shards(engine *e)
{
	shard_views(e, "clean");
}

/*
 * Then the shards' triggers dropped, and the foreign partitions (ACCESS
 * EXCLUSIVE, after SHARE ROW EXCLUSIVE on the table: writers lock it
 * first; each waited for at most the budget) pointed back at their tables.
 */
static void
unit_restore_shards(engine *e)
{
	table_owner_context owner;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	lock_tables(e, "ARRAY[s.parent]", ShareRowExclusiveLock);
	lock_tables(e, SHARD_VIEW_SOURCES, AccessExclusiveLock);
	table_owner_leave(&owner);
	shard_views(e, "restore");
}

/*
 * Step "finish", in two transactions: the validations (no lock that stops
 * writers; not done again after an interruption), then the rest (the
 * table's own foreign keys added to the new parent: a short SHARE ROW
 * EXCLUSIVE, waited for at most the budget).
 */
static void
step_finish(engine *e)
{
	if (!state_is_null(e, "hidden_keys"))
	{
		run_unit(e, unit_clean_shards);
		with_lock_retries(e, unit_restore_shards, "point its foreign partitions back at their tables");
	}
	if (!state_is_null(e, "validate"))
		run_unit(e, unit_finish);
	with_lock_retries(e, unit_finish, "finish the resharding");
}

/*
 * Step "undo", before the cutover: the guard of the new partition dropped,
 * then the engine's tables (reshard_phase_undo; the log first: the capture
 * triggers whose log is gone capture nothing), each waited for at most the
 * budget.  Then the capture triggers on the old partitions, of those that
 * can be locked at once: a transaction that reads the table may hold one for
 * long, and the undo waits for nobody; what is left is dropped by the next
 * resharding of the table or by reshard_abort.  With shard_views, the
 * foreign partitions are pointed back first and the shards' objects
 * dropped last.
 */
static void
unit_undo(engine *e)
{
	table_owner_context owner;
	Oid			partition = state_oid(e, "partition");
	ListCell   *cell;

	bool		isnull;
	int			sources = ArrayGetNItems(1, ARR_DIMS(DatumGetArrayTypeP(state_value(e, "sources", &isnull))));
	bool		views = !state_is_null(e, "shard_options");

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	if (!list_member_oid(state_oids(e, "sources"), partition))
		(void) stop_triggers(e, partition);
	/*
	 * After a cutover attempt the undo may add rows back to shards from
	 * their copies: it locks out the writers through the table first (the
	 * table before its partitions, as they lock them), then brings the
	 * copies up to date, so that no delete committed in between is undone.
	 * With shard_views, the foreign partitions pointed at the shards' views
	 * are pointed back (ACCESS EXCLUSIVE).
	 */
	if (e->cutover_committing || views)
		lock_tables(e, "ARRAY[s.parent] || s.sources", ShareRowExclusiveLock);
	if (views)
		lock_tables(e, SHARD_VIEW_SOURCES, AccessExclusiveLock);
	table_owner_leave(&owner);
	if (views)
	{
		/* the rows poured into shards deleted while they are still hidden */
		shard_views(e, "unpour");
		shard_views(e, "restore");
	}
	if (e->cutover_committing && state_int64(e, "sources_copied") > sources)
		apply_log(e, PG_INT64_MAX, DT_NOEND);
	run_phase(e, "reshard_phase_undo(reshard_state,boolean)", 1, BoolGetDatum(e->cutover_committing), 0);
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "sources"))
	{
		if (ConditionalLockRelationOid(lfirst_oid(cell), AccessExclusiveLock))
			(void) stop_triggers(e, lfirst_oid(cell));
		else
			ereport(WARNING,
					(errmsg("the resharding's trigger on %s is left, inactive: another transaction holds the table",
							relation_name(lfirst_oid(cell))),
					 errhint("The next resharding of %s drops it, or reshard_abort once that transaction ended.",
							 relation_name(e->parent))));
	}
	table_owner_leave(&owner);
	/* last: the foreign partitions no longer use them */
	if (views)
		shard_views(e, "drop");
}

/* The engine's triggers that an undone resharding left on the old partitions, dropped. */
static void
unit_sweep(engine *e)
{
	table_owner_context owner;
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, "sources"))
		e->triggers_swept += stop_triggers(e, lfirst_oid(cell));
	table_owner_leave(&owner);
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

	if (strcmp(phase, "done") == 0 || strcmp(phase, "aborted") == 0)
		return false;
	/*
	 * From the first copy on, the shards whose leaving rows are hidden
	 * refuse direct writes: before the copy's transaction, whose snapshots
	 * snapshot_foreign_partitions takes.
	 */
	if (strcmp(phase, "copy") == 0 && state_int64(e, "sources_copied") == 0 && state_bool(e, "shard_views"))
	{
		next_transaction(false);
		run_unit(e, unit_arm_shards);
	}
	next_transaction(strcmp(phase, "copy") == 0 || strcmp(phase, "verify") == 0);
	if (strcmp(phase, "capture") == 0)
		with_lock_retries(e, unit_capture, "start capturing its writes");
	else if (strcmp(phase, "undo") == 0)
		with_lock_retries(e, unit_undo, "undo the resharding");
	else if (strcmp(phase, "cutover") == 0)
		step_cutover(e);
	else if (strcmp(phase, "finish") == 0)
		step_finish(e);
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
		else
			elog(ERROR, "unknown resharding phase \"%s\"", phase);
		run_unit(e, unit);
	}
	return true;
}

/* Connects to SPI for a procedure that commits; fills e. */
static void
engine_open(engine *e, FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts)
{
	bool		isnull;
	int			nest_level;

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
	e->claimed = false;
	e->triggers_swept = 0;
	e->cutover_committing = false;
	e->state = (Datum) 0;
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
	nest_level = safe_search_path_begin();
	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname), c.relowner, c.reltype"
					" FROM pg_catalog.pg_extension x JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace"
					" JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = 'reshard_state'"
					" WHERE x.extname = 'subsetting'", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "extension subsetting is not installed");
	e->schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	e->state_owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	e->state_type = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	safe_search_path_end(nest_level);
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
 * The state row of a new resharding (after the checks), or the one of an
 * interrupted resharding of the same table with the same arguments.  In a
 * transaction block, only the checks run (their errors say more than the
 * block's), and then the call is refused.
 */
static bool
begin(engine *e, const char *operation, Oid partition, bool hide_on_shards)
{
	bool		isnull;

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
						 errmsg("an interrupted resharding of %s is in phase %s", relation_name(e->parent), phase),
						 errhint("Call it again with the same arguments to finish it, or undo it with reshard_abort.")));
			refuse_atomic(e);
			/* cut short in a cutover attempt: its COMMIT may have been done on some shards */
			e->cutover_committing = strcmp(phase, "cutover") == 0 && state_int64(e, "cutover_attempts") > 0;
			/* the error that stopped it is not this call's */
			set_state(e, "error", NULL);
			save_state(e);
			return true;
		}
		/* Called again after it ended: the same resharding is done already. */
		if (strcmp(phase, "done") == 0 && OidIsValid(partition) && state_oid(e, "partition") == partition &&
			strcmp(TextDatumGetCString(state_value(e, "operation", &isnull)), operation) == 0 &&
			partition_parent(partition) == (strcmp(operation, "add") == 0 ? e->parent : InvalidOid))
		{
			ereport(NOTICE,
					(errmsg("%s was resharded by this %s already; nothing to do", relation_name(e->parent),
							operation)));
			return false;
		}
		state_query(e, "DELETE FROM %1$s.reshard_state WHERE parent = ($1::%1$s.reshard_state).parent", NULL);
	}

	/* The states of dropped tables go. */
	state_query(e, "DELETE FROM %1$s.reshard_state AS s"
				" WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = s.parent)", NULL);

	/* The checks (as the owner), then the state row written. */
	e->state = (Datum) 0;
	state_query(e, "SELECT pg_catalog.jsonb_populate_record(NULL::%1$s.reshard_state, $2::pg_catalog.jsonb)",
				psprintf("{\"parent\": %u, \"partition\": %s, \"shard_views\": %s}", e->parent,
						 OidIsValid(partition) ? psprintf("%u", partition) : "null", hide_on_shards ? "true" : "false"));
	run_phase(e, "reshard_phase_plan(reshard_state,text)", 1, CStringGetTextDatum(operation), 0);
	refuse_atomic(e);
	state_query(e, "INSERT INTO %1$s.reshard_state (parent, parent_name, operation, partition, bucket, method, key,"
				" old_buckets, new_buckets, old_bucket_sql, new_bucket_sql, new_partition_by, new_bound, sources,"
				" shadows, shard_views, shard_options, phase)"
				" SELECT n.parent, n.parent_name, n.operation, n.partition, n.bucket, n.method, n.key, n.old_buckets,"
				" n.new_buckets, n.old_bucket_sql, n.new_bucket_sql, n.new_partition_by, n.new_bound, n.sources,"
				" n.shadows, n.shard_views, n.shard_options, n.phase FROM (SELECT ($1::%1$s.reshard_state).*) AS n RETURNING reshard_state", NULL);
	run_phase(e, "reshard_phase_check(reshard_state)", 0, 0, 0);
	save_state(e);
	next_transaction(false);
	return true;
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

/*
 * A resharding from the checks to the end, or the continuation of an
 * interrupted one; returns the rows it moved.  An error before the cutover
 * undoes what the call made (the table is as it was); after it, calling
 * again finishes.
 */
static int64
run(FunctionCallInfo fcinfo, const char *operation, int partition_arg, int budget_arg, int attempts_arg,
	int shard_views_arg)
{
	engine		e;
	int64		moved_rows = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(budget_arg) || PG_ARGISNULL(attempts_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	if (PG_ARGISNULL(shard_views_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard_views must not be null")));
	engine_open(&e, fcinfo, PG_GETARG_OID(0), PG_GETARG_INTERVAL_P(budget_arg), PG_GETARG_INT32(attempts_arg));
	PG_TRY();
	{
		ErrorData  *error;

		if (!begin(&e, operation, PG_ARGISNULL(partition_arg) ? InvalidOid : PG_GETARG_OID(partition_arg),
				   PG_GETARG_BOOL(shard_views_arg)))
			error = NULL;
		else if ((error = run_steps(&e)) == NULL)
			moved_rows = state_int64(&e, "rows_to_move");
		else
		{
			/* step() leaves no subtransaction open; the transaction may be failed */
			SPI_rollback();
			if (load_state(&e))
			{
				record_error(&e, error);
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
	SPI_finish();
	return moved_rows;
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
	return moved_rows_result(fcinfo, run(fcinfo, "add", 1, 3, 4, 5));
}

PG_FUNCTION_INFO_V1(reshard_remove_partition);

/*
 * CALL reshard_remove_partition(parent, partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views)
 */
Datum
reshard_remove_partition(PG_FUNCTION_ARGS)
{
	return moved_rows_result(fcinfo, run(fcinfo, "remove", 1, 3, 4, 5));
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
	(void) run(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(1)), 2, 3, 4, 5);
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
		(void) begin(&e, text_to_cstring(PG_GETARG_TEXT_PP(1)), PG_ARGISNULL(2) ? InvalidOid : PG_GETARG_OID(2), false);
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
		e.cutover_committing = strcmp(state_phase(&e), "cutover") == 0 && state_int64(&e, "cutover_attempts") > 0;
		if (strcmp(state_phase(&e), "done") == 0 || strcmp(state_phase(&e), "aborted") == 0)
		{
			/* what an undo could not drop at once */
			next_transaction(false);
			with_lock_retries(&e, unit_sweep, "drop the triggers an undone resharding left");
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
	SPI_finish();
	PG_RETURN_VOID();
}
