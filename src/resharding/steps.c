/*
 * src/resharding/steps.c
 *		The steps of the resharding engine's phases, but the cutover's
 *		(cutover.c): the phase table's column step (phases.h; steps.h).
 *
 * A step returns true when its phase is complete; it leaves its last
 * transaction open, and the driver writes the next phase into the state
 * row in it, saves the row and commits.  Steps whose phase runs in
 * transactions of their own (lock policy LOCKS_OWN) commit the others
 * (commit_state).
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "resharding/acl.h"
#include "resharding/capture.h"
#include "resharding/cleanup.h"
#include "resharding/indexes.h"
#include "resharding/shards.h"
#include "resharding/state.h"
#include "resharding/steps.h"
#include "resharding/tables.h"
#include "resharding/xact.h"
#include "table_owner.h"

/*
 * A catch-up round applies at most this many changes ... and the phase
 * catch up ends when a round found fewer than this, or when the changes
 * waiting did not shrink in a round (writers as fast as the catch-up: the
 * verification then applies what its snapshot sees, and the cutover what
 * is left within its budget, or it fails after its attempts); the
 * catch-up before a cutover attempt also waits for a short round
 * (catch_up).
 */
#define CATCH_UP_ROUND 10000
#define CATCH_UP_ENOUGH 1000

/*
 * Phase setup: the shadows, the new parent, the change log (and with
 * shard_views the shards' objects); then the guards of the tables filled
 * and of the change log.  The capture writes the log without firing its
 * triggers and the engine empties it: no other role may write an entry
 * that the engine would apply as the table's owner, nor delete one (a
 * member of pg_write_all_data may write every table, privileges aside).
 */
bool
step_setup(engine *e)
{
	table_owner_context owner;
	Oid			guard = routine_oid(e, ROUTINE_GUARD_TRIGGER);
	reshard_grants *new_partition_grants;
	ListCell   *cell;

	run_routine(e, phase_routine(e->operation, PHASE_SETUP), 0, 0, 0);
	new_partition_grants = reshard_new_partition_grants(e);
	shard_views(e, "create");
	table_owner_enter(e->parent, &owner);
	foreach(cell, state_oids(e, STATE_SHADOWS))
	{
		List	   *triggers = reshard_guard_start(lfirst_oid(cell), guard, false);

		/* (an addition's new partition is the user's: the others go with their triggers) */
		if (lfirst_oid(cell) == state_oid(e, STATE_PARTITION))
			record_triggers(e, triggers);
	}
	(void) reshard_guard_start(state_oid(e, STATE_LOG), guard, false);
	table_owner_leave(&owner);
	/* the new partition: the partitions' grants before a row is copied into it (again at the cutover) */
	if (new_partition_grants != NULL)
		reshard_grants_give(new_partition_grants);
	return true;
}

/*
 * The foreign partitions of e's table but sources, if one of sources is a
 * foreign table (a move from a server; a resharding captures them all),
 * else none: while the capture is on those, these need a reshard_whole_row
 * trigger, or a DELETE through the table fails (capture.c).
 */
List *
whole_row_partitions(engine *e, List *sources)
{
	List	   *others = NIL;
	bool		foreign_source = false;
	ListCell   *cell;

	foreach(cell, sources)
		foreign_source |= get_rel_relkind(lfirst_oid(cell)) == RELKIND_FOREIGN_TABLE;
	if (!foreign_source)
		return NIL;
	foreach(cell, find_inheritance_children(e->parent, NoLock))
		if (get_rel_relkind(lfirst_oid(cell)) == RELKIND_FOREIGN_TABLE && !list_member_oid(sources, lfirst_oid(cell)))
			others = lappend_oid(others, lfirst_oid(cell));
	return others;
}

/*
 * Phase capture: the change-log triggers on the old partitions (SHARE ROW
 * EXCLUSIVE on the parent, then on each, as a writer through the parent
 * locks them: no deadlock with one; each waited for at most the budget),
 * and the whole-row triggers on the other foreign partitions if some old
 * ones are foreign (whole_row_partitions; the cutover drops them).
 * Triggers an undone resharding left are dropped first (ACCESS EXCLUSIVE).
 * With shard_views, the foreign partitions pointed at their shards' views,
 * under ACCESS EXCLUSIVE, and so the parent's lock is ACCESS EXCLUSIVE too
 * (shard_views_lock_parent).
 */
bool
step_capture(engine *e)
{
	table_owner_context owner;
	Oid			log = state_oid(e, STATE_LOG);
	Oid			sequence = state_oid(e, STATE_LOG_SEQUENCE);
	Oid			capture = routine_oid(e, ROUTINE_CAPTURE_TRIGGER);
	List	   *sources = state_oids(e, STATE_SOURCES);
	List	   *whole_row = whole_row_partitions(e, sources);
	ListCell   *cell;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	shard_views_lock_parent(e);
	lock_relations(lcons_oid(e->parent, list_concat(list_copy(sources), whole_row)), ShareRowExclusiveLock);
	foreach(cell, sources)
	{
		(void) stop_triggers(e, lfirst_oid(cell));
		record_triggers(e, reshard_capture_start(lfirst_oid(cell), log, sequence, capture));
	}
	foreach(cell, whole_row)
		record_triggers(e, list_make1_oid(reshard_whole_row_start(lfirst_oid(cell),
																  routine_oid(e, ROUTINE_WHOLE_ROW_TRIGGER))));
	lock_relations(shard_view_sources(e), AccessExclusiveLock);
	table_owner_leave(&owner);
	shard_views(e, "point");
	return true;
}

/*
 * The next old partition copied (reshard_phase_copy), in a REPEATABLE READ
 * transaction whose snapshots, where the partition is foreign, are taken
 * while no write to it is under way.  The phase is complete when the
 * routine finds no partition left to copy.
 */
static bool
unit_copy(engine *e)
{
	int			copied = (int) state_int64(e, STATE_SOURCES_COPIED);
	List	   *sources = NIL;
	Datum	   *oids;
	bool	   *nulls;
	int			count;

	deconstruct_array(DatumGetArrayTypeP(e->values[STATE_SOURCES]), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
					  &oids, &nulls, &count);
	/* the next one, as reshard_phase_copy finds it */
	for (int i = copied; i < count; i++)
		if (!nulls[i])
		{
			sources = list_make1_oid(DatumGetObjectId(oids[i]));
			break;
		}
	snapshot_foreign_partitions(e, foreign_tables(sources));
	/* (the copy reads and writes the shards for long: without their timeouts) */
	shard_views(e, "untime");
	/* none left: the shadows are full, their indexes built */
	if (sources == NIL)
		index_shadows(e);
	run_routine(e, phase_routine(e->operation, PHASE_COPY), 0, 0, 0);
	return state_int64(e, STATE_SOURCES_COPIED) > count;
}

/* The table's definition compared with what the plan saw (reshard_catalog_check). */
bool
unit_check_catalog(engine *e)
{
	run_routine(e, ROUTINE_CHECK_CATALOG, 0, 0, 0);
	return true;
}

/*
 * A partition's copy; if it fails, the table's definition is checked (it
 * is checked before the first partition only: at hundreds of partitions a
 * check before each took longer than the copy), so that a change made
 * since is named rather than what it broke (a column the shadows lack).
 */
static bool
unit_copy_checked(engine *e)
{
	bool		complete = false;
	ErrorData  *error = try_unit(e, unit_copy, &complete);

	if (error != NULL)
	{
		(void) unit_check_catalog(e);
		ReThrowError(error);
	}
	return complete;
}

/*
 * Phase copy, one old partition a step; before the first, with
 * shard_views, the shards start refusing direct writes (a transaction of
 * its own, before the copy's).
 */
bool
step_copy(engine *e)
{
	if (state_int64(e, STATE_SOURCES_COPIED) == 0 && state_bool(e, STATE_SHARD_VIEWS))
	{
		arm_shards(e);
		next_transaction(true);
	}
	return run_unit(e, unit_copy_checked);
}

/* One round of the catch-up: at most CATCH_UP_ROUND changes of the log applied. */
static bool
unit_apply_round(engine *e)
{
	/* (with shard_views it writes to the shards: without their timeouts) */
	shard_views(e, "untime");
	apply_log(e, CATCH_UP_ROUND, DT_NOEND);
	return true;
}

/*
 * After a round: whether the catch-up is done, given the changes applied
 * and waiting before it (waiting_before < 0: not counted).
 */
static bool
caught_up(engine *e, int64 applied_before, int64 waiting_before)
{
	return state_int64(e, STATE_CHANGES_APPLIED) - applied_before < CATCH_UP_ENOUGH ||
		(waiting_before >= 0 && state_int64(e, STATE_CHANGES_WAITING) >= waiting_before);
}

/* Phase catch up: one round per step, complete when caught_up(). */
bool
step_catch_up(engine *e)
{
	int64		applied = state_int64(e, STATE_CHANGES_APPLIED);
	int64		waiting = state_is_null(e, STATE_CHANGES_WAITING) ? -1 : state_int64(e, STATE_CHANGES_WAITING);

	(void) unit_apply_round(e);
	return caught_up(e, applied, waiting);
}

/*
 * Catch-up rounds, each in a transaction of its own, before a cutover
 * attempt, so that the changes written while the verification read the
 * table (a time that grows with it), or during the rounds themselves, are
 * not left for the attempt to apply under its lock.  A round begins with a
 * backlog (the changes it applied, and those its snapshot saw still
 * waiting); the rounds end when one began with fewer than CATCH_UP_ENOUGH
 * and took less than a quarter of the budget (the attempt applies what was
 * written meanwhile, at the same pace: a change to a foreign table costs a
 * round trip or more to its server, and writers at a steady pace leave a
 * thousand of those for a round of seconds), or when a round's backlog did
 * not shrink (writers as fast as the catch-up: the attempt applies what is
 * left within its budget, or fails).
 */
void
catch_up(engine *e)
{
	int64		previous = -1;

	for (;;)
	{
		int64		applied = state_int64(e, STATE_CHANGES_APPLIED);
		TimestampTz start = GetCurrentTimestamp();
		int64		backlog;

		(void) run_unit(e, unit_apply_round);
		commit_state(e);
		backlog = state_int64(e, STATE_CHANGES_APPLIED) - applied + state_int64(e, STATE_CHANGES_WAITING);
		if (backlog < CATCH_UP_ENOUGH && !TimestampDifferenceExceeds(start, GetCurrentTimestamp(), e->budget_ms / 4))
			break;
		if (previous >= 0 && backlog >= previous)
			break;
		previous = backlog;
	}
}

/*
 * Phase verify, in a REPEATABLE READ transaction: the log applied as its
 * snapshot sees it, then the tables filled compared with the old
 * partitions (reshard_phase_verify).
 */
bool
step_verify(engine *e)
{
	snapshot_foreign_partitions(e, foreign_tables(state_oids(e, STATE_SOURCES)));
	shard_views(e, "untime");
	apply_log(e, PG_INT64_MAX, DT_NOEND);
	run_routine(e, phase_routine(e->operation, PHASE_VERIFY), 0, 0, 0);
	return true;
}

/*
 * What the foreign keys added at the end of phase finish lock (SHARE ROW
 * EXCLUSIVE), in the order writers that cascade lock them: the tables the
 * table's own foreign keys refer to (those of its partitions now), the
 * table, the partitioned tables whose partitions refer to it; each before
 * its partitions.  Taken first, each wait at most the budget, so that
 * PostgreSQL takes them in no other order.
 */
static List *
finish_relations(engine *e)
{
	List	   *relations = NIL;
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(e->parent)};
	int			nest_level = safe_search_path_begin();

	if (SPI_execute_with_args("SELECT coalesce(t.relid, f.r) FROM"
							  " (SELECT DISTINCT 1, c.confrelid FROM pg_catalog.pg_constraint c"
							  "   JOIN pg_catalog.pg_inherits i ON i.inhrelid = c.conrelid AND i.inhparent = $1"
							  "   WHERE c.contype = 'f' AND c.conparentid = 0"
							  "  UNION SELECT 2, $1"
							  "  UNION SELECT 3, pg_catalog.pg_partition_root(c.conrelid) FROM pg_catalog.pg_constraint c"
							  "   JOIN pg_catalog.pg_class k ON k.oid = c.conrelid AND k.relispartition"
							  "   WHERE c.confrelid = $1 AND c.contype = 'f' AND c.conparentid = 0) AS f(kind, r)"
							  " LEFT JOIN LATERAL pg_catalog.pg_partition_tree(f.r) AS t ON true"
							  " ORDER BY f.kind, coalesce(t.level, 0), 1",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the tables the end of the resharding locks");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			relation = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));

		if (!isnull && !list_member_oid(relations, relation))
			relations = lappend_oid(relations, relation);
	}
	safe_search_path_end(nest_level);
	return relations;
}

/*
 * reshard_phase_finish: the first call validates (no lock that stops
 * writers), the last does the rest (the foreign keys added to the new
 * parent and to partitioned tables that refer to it: a short SHARE ROW
 * EXCLUSIVE, taken first in the writers' order, each wait at most the
 * budget); complete after the last.
 */
static bool
unit_finish(engine *e)
{
	bool		last = state_is_null(e, STATE_VALIDATE);

	if (last)
		set_lock_timeout(e->budget_ms);
	if (last && !state_is_null(e, STATE_FOREIGN_KEYS) && state_array_length(e, STATE_FOREIGN_KEYS) > 0)
		lock_relations(finish_relations(e), ShareRowExclusiveLock);
	/* a partition removed: its guard dropped in the transaction that empties it */
	if (last && operation_of(e->operation)->partition == PARTITION_LEAVES)
	{
		table_owner_context owner;

		table_owner_enter(e->parent, &owner);
		(void) stop_triggers(e, state_oid(e, STATE_PARTITION));
		table_owner_leave(&owner);
	}
	/*
	 * What the call made and no longer needs dropped (with shard_views, the
	 * shards' objects: restored before), the old parent a resharding renamed
	 * away, and a moved partition's table on the server it left; the rest
	 * forgotten.  Before the routine: what it reads on the shards through
	 * postgres_fdw (after an addition) would otherwise keep a transaction
	 * open there while the drops go through dblink, which a server's
	 * idle_in_transaction_session_timeout ends.
	 */
	if (last)
		cleanup_walk(e, false);
	run_routine(e, phase_routine(e->operation, PHASE_FINISH), 0, 0, 0);
	return last;
}

/*
 * Phase finish, in transactions of its own: with shard_views, the shards
 * cleaned and restored; the validations (not done again after an
 * interruption); then the rest.
 */
bool
step_finish(engine *e)
{
	finish_shards(e);
	/* (a deadlock there is one failed attempt too) */
	if (!state_is_null(e, STATE_VALIDATE))
	{
		(void) with_lock_retries(e, unit_finish, "validate the foreign keys of the resharding");
		commit_state(e);
	}
	return with_lock_retries(e, unit_finish, "finish the resharding");
}

/*
 * Phase undo, before the cutover: the guard of the new partition dropped
 * (waited for at most the budget: reshard_phase_undo empties it), then the
 * rows repaired (reshard_phase_undo), then what the call made, by its
 * records: the engine's tables, each waited for at most the budget, and
 * the capture triggers on the old partitions, of those that can be locked
 * at once (cleanup_walk).  With shard_views, the foreign partitions are
 * pointed back first; the shards' objects go by their records, with the
 * engine's tables.
 */
bool
step_undo(engine *e)
{
	table_owner_context owner;
	Oid			partition = state_oid(e, STATE_PARTITION);
	List	   *sources = state_oids(e, STATE_SOURCES);
	bool		views = !state_is_null(e, STATE_SHARD_OPTIONS);

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	if (!list_member_oid(sources, partition))
		(void) stop_triggers(e, partition);

	/*
	 * After a cutover attempt the undo may add rows back to shards from
	 * their copies: it locks out the writers through the table first (the
	 * table before its partitions, as they lock them), then brings the
	 * copies up to date, so that no delete committed in between is undone.
	 * With shard_views, the foreign partitions pointed at the shards' views
	 * are pointed back (ACCESS EXCLUSIVE).
	 */
	if (views)
		shard_views_lock_parent(e);
	if (e->cutover_committing || views)
		lock_relations(lcons_oid(e->parent, list_copy(sources)), ShareRowExclusiveLock);
	if (views)
		lock_relations(shard_view_sources(e), AccessExclusiveLock);
	table_owner_leave(&owner);
	if (views)
	{
		/* the rows poured into shards deleted while they are still hidden */
		shard_views(e, "unpour");
		shard_views(e, "restore");
	}
	/*
	 * (not for a move: its copy is dropped; and a write through postgres_fdw
	 * to the table it made on a server would hold a lock there that the
	 * undo's drop, through dblink, would wait for forever)
	 */
	if (e->cutover_committing && !moving(e) &&
		state_int64(e, STATE_SOURCES_COPIED) > state_array_length(e, STATE_SOURCES))
		apply_log(e, PG_INT64_MAX, DT_NOEND);
	run_routine(e, phase_routine(e->operation, PHASE_UNDO), 1, BoolGetDatum(e->cutover_committing), 0);
	/*
	 * what the call made, here and on servers, newest first (the log before
	 * the tables it logs; the shards' objects after restore)
	 */
	cleanup_walk(e, true);
	return true;
}

/* After an undo (reshard_abort): the engine's triggers it left on the old partitions, dropped. */
bool
step_sweep(engine *e)
{
	set_lock_timeout(e->budget_ms);
	e->triggers_swept += cleanup_sweep(e);
	return true;
}
