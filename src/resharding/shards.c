/*
 * src/resharding/shards.c
 *		The resharding engine and postgres_fdw partitions (shards.h):
 *		their snapshots, and with shard_views the objects on their servers
 *		that hide the rows leaving or entering them (docs/resharding.md,
 *		"Shards: hiding the rows that leave or enter").
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "resharding/shards.h"
#include "resharding/state.h"
#include "resharding/xact.h"
#include "table_owner.h"

/* The foreign tables among the OIDs. */
List *
foreign_tables(List *relations)
{
	List	   *result = NIL;
	ListCell   *cell;

	foreach(cell, relations)
		if (get_rel_relkind(lfirst_oid(cell)) == RELKIND_FOREIGN_TABLE)
			result = lappend_oid(result, lfirst_oid(cell));
	return result;
}

/* With shard_views, the foreign partitions of the old layout pointed at views on their shards. */
List *
shard_view_sources(engine *e)
{
	Datum	   *sources;
	Datum	   *options;
	bool	   *source_nulls;
	bool	   *option_nulls;
	int			source_count;
	int			option_count;
	List	   *result = NIL;

	if (state_is_null(e, STATE_SHARD_OPTIONS) || state_is_null(e, STATE_SOURCES))
		return NIL;
	deconstruct_array(DatumGetArrayTypeP(e->values[STATE_SOURCES]), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
					  &sources, &source_nulls, &source_count);
	deconstruct_array(DatumGetArrayTypeP(e->values[STATE_SHARD_OPTIONS]), TEXTOID, -1, false, TYPALIGN_INT,
					  &options, &option_nulls, &option_count);
	for (int i = 0; i < Min(source_count, option_count); i++)
		if (!source_nulls[i] && !option_nulls[i])
			result = lappend_oid(result, DatumGetObjectId(sources[i]));
	return result;
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
 * in a deadlock is one failed attempt of at most e->attempts.  Then the
 * copy and the verification see each write both in the partition and in
 * the log, or in neither.  No query runs before the locks are held: the
 * first one takes the local snapshot.
 */
void
snapshot_foreign_partitions(engine *e, List *partitions)
{
	table_owner_context owner;
	List	   *locked;
	ListCell   *cell;

	if (partitions == NIL)
		return;
	locked = list_concat(list_make1_oid(e->parent), partitions);
	lock_with_retries(e, locked, ShareLock,
					  psprintf("foreign partitions of %s to take their snapshots", relation_name(e->parent)));
	table_owner_enter(e->parent, &owner);
	foreach(cell, partitions)
		if (SPI_execute(psprintf("SELECT FROM ONLY %s LIMIT 1", relation_name(lfirst_oid(cell))),
						false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read a foreign partition");
	table_owner_leave(&owner);
	foreach(cell, locked)
		UnlockRelationOid(lfirst_oid(cell), ShareLock);
}

/*
 * With shard_views, an action of the shard views routine on the shards
 * whose rows leave or enter (their statements wait at most the budget for
 * a lock).
 */
void
shard_views(engine *e, const char *action)
{
	if (state_bool(e, STATE_SHARD_VIEWS))
		run_routine(e, ROUTINE_SHARD_VIEWS, 2, CStringGetTextDatum(action), Int32GetDatum(e->budget_ms));
}

static bool
unit_arm_shards(engine *e)
{
	shard_views(e, "arm");
	return true;
}

/*
 * With shard_views, before the first copy: the shards' triggers that refuse
 * direct writes, in a transaction of its own (the copy's takes its
 * snapshots after).
 */
void
arm_shards(engine *e)
{
	if (!state_bool(e, STATE_SHARD_VIEWS))
		return;
	next_transaction(false);
	(void) run_unit(e, unit_arm_shards);
	commit_state(e);
}

/* With shard_views, after the cutover: the rows hidden on the shards deleted there, online. */
static bool
unit_clean_shards(engine *e)
{
	shard_views(e, "clean");
	return true;
}

/*
 * With shard_views, before the foreign partitions are locked ACCESS
 * EXCLUSIVE (their options changed): ACCESS EXCLUSIVE on the parent, each
 * wait at most lock_timeout.  A writer through the parent may have read a
 * foreign partition (ACCESS SHARE on the parent, then on it) and write
 * next (ROW EXCLUSIVE on the parent): a SHARE ROW EXCLUSIVE on the parent
 * would let it read and then keep it from writing while this waits for its
 * read's lock on the partition, a deadlock (one failed attempt each time,
 * so that steady readers and writers used up every attempt).  ACCESS
 * EXCLUSIVE waits for it instead, and its write goes ahead of the wait
 * (the lock manager lets a holder's request pass a waiter it conflicts
 * with).  Reads of the table wait as long (milliseconds).
 */
void
shard_views_lock_parent(engine *e)
{
	if (shard_view_sources(e) != NIL)
		LockRelationOid(e->parent, AccessExclusiveLock);
}

/*
 * Then the shards' triggers dropped, and the foreign partitions (ACCESS
 * EXCLUSIVE, after ACCESS EXCLUSIVE on the table: writers lock it
 * first; each waited for at most the budget) pointed back at their tables.
 */
static bool
unit_restore_shards(engine *e)
{
	table_owner_context owner;

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	shard_views_lock_parent(e);
	lock_relations(list_make1_oid(e->parent), ShareRowExclusiveLock);
	lock_relations(shard_view_sources(e), AccessExclusiveLock);
	table_owner_leave(&owner);
	shard_views(e, "restore");
	return true;
}

/* With shard_views, after the cutover: the shards as they were, but for the rows that moved. */
void
finish_shards(engine *e)
{
	if (state_is_null(e, STATE_HIDDEN_KEYS))
		return;
	(void) run_unit(e, unit_clean_shards);
	commit_state(e);
	(void) with_lock_retries(e, unit_restore_shards, "point its foreign partitions back at their tables");
	commit_state(e);
}
