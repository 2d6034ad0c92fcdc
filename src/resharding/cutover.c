/*
 * src/resharding/cutover.c
 *		Phase cutover of the resharding engine (cutover.h): attempts, each
 *		within a budget, each after a catch-up; between two, the writers
 *		waiting for the lock go through.  An attempt is the unit that the
 *		operation table (operations.h) names for the call's operation.
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "atomic_commit.h"
#include "compat.h"
#include "resharding/acl.h"
#include "resharding/capture.h"
#include "resharding/claims.h"
#include "resharding/cleanup.h"
#include "resharding/cutover.h"
#include "resharding/shards.h"
#include "resharding/state.h"
#include "resharding/steps.h"
#include "resharding/tables.h"
#include "resharding/xact.h"
#include "table_owner.h"

/* Raised when a cutover attempt overruns its budget; retried, never shown. */
#define ERRCODE_RESHARD_OVER_BUDGET MAKE_SQLSTATE('S','R','0','0','1')
/* Raised when what the takeover statements were read from changed before the lock; retried, never shown. */
#define ERRCODE_RESHARD_TAKEOVER_STALE MAKE_SQLSTATE('S','R','0','0','2')

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

/*
 * The timer stopped at the end of an attempt's work, before its
 * subtransaction ends: postgres_fdw then ends it on each shard (RELEASE
 * SAVEPOINT), and a cancel in that wait would leave the connection unusable
 * until the transaction ends.  If the timer fired, the attempt overran.
 */
static void
stop_budget(void)
{
	if (disarm_budget())
		ereport(ERROR,
				(errcode(ERRCODE_RESHARD_OVER_BUDGET),
				 errmsg("the cutover overran its budget")));
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
 * What the cutover locks, in this order: the parent, its old partitions,
 * the tables filled, the new parent, the parent's other partitions (all
 * locked by writers after the parent); then, in *others, the tables whose
 * foreign keys refer to the parent and the tables its own foreign keys
 * refer to, each before its partitions (their triggers are dropped and
 * created).  Writers may lock those before the table (an insert into a
 * table that refers to it checks its key in the table; a delete that
 * cascades into the table), so the cutover does not wait in their queue:
 * see lock_others.
 */
static List *
cutover_relations(engine *e, List **others)
{
	List	   *relations = list_make1_oid(e->parent);
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(e->parent)};
	int			nest_level = safe_search_path_begin();
	Oid			new_parent = state_oid(e, STATE_NEW_PARENT);

	relations = list_concat(relations, state_oids(e, STATE_SOURCES));
	relations = list_concat(relations, state_oids(e, STATE_SHADOWS));
	if (OidIsValid(new_parent))
		relations = lappend_oid(relations, new_parent);
	*others = NIL;
	if (SPI_execute_with_args("SELECT kind > 1, r FROM (SELECT 1, 0, i.inhrelid FROM pg_catalog.pg_inherits i WHERE i.inhparent = $1"
							  " UNION ALL SELECT 2, coalesce(t.level, 0), coalesce(t.relid, f.r) FROM (SELECT DISTINCT c.conrelid FROM pg_catalog.pg_constraint c"
							  "   WHERE c.confrelid = $1 AND c.contype = 'f' AND c.conparentid = 0 AND c.conrelid <> $1) AS f(r)"
							  "   LEFT JOIN LATERAL pg_catalog.pg_partition_tree(f.r) AS t ON true"
							  " UNION ALL SELECT 3, coalesce(t.level, 0), coalesce(t.relid, f.r) FROM (SELECT DISTINCT c.confrelid FROM pg_catalog.pg_constraint c"
							  "   WHERE c.conrelid = $1 AND c.contype = 'f' AND c.conparentid = 0) AS f(r)"
							  "   LEFT JOIN LATERAL pg_catalog.pg_partition_tree(f.r) AS t ON true) AS u(kind, level, r)"
							  " ORDER BY kind, level, r",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the tables the cutover locks");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		bool		other = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		Oid			relation = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));

		if (list_member_oid(relations, relation) || list_member_oid(*others, relation))
			continue;
		if (other)
			*others = lappend_oid(*others, relation);
		else
			relations = lappend_oid(relations, relation);
	}
	safe_search_path_end(nest_level);
	return relations;
}

/*
 * Locks the tables of others, in their order, without waiting in their
 * queue: each is tried, then tried again every few milliseconds until the
 * budget is spent.  The cutover holds the table by then; a writer that
 * locked one of them first and waits for the table (its insert checks a key
 * in the table, its delete cascades into it) thus never waits for a
 * cutover that waits for it, a deadlock PostgreSQL would end by cancelling
 * one of the two, maybe the writer: the attempt fails instead, lets it
 * through, and is tried again.
 */
static void
lock_others(List *others, TimestampTz deadline)
{
	ListCell   *cell;

	foreach(cell, others)
	{
		while (!ConditionalLockRelationOid(lfirst_oid(cell), AccessExclusiveLock))
		{
			if (GetCurrentTimestamp() > deadline)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on relation \"%s\"", get_rel_name(lfirst_oid(cell)))));
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 5, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
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
	Oid			takeover = routine_oid(e, ROUTINE_TAKEOVER_SQL);
	List	   *filled;
	List	   *old = replaced_sources(e, &filled);
	List	   *statements = NIL;
	Datum	   *items;
	int			i;
	ListCell   *o;
	ListCell   *f;

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
 * What the takeover statements were read from, as the versions (xmin) of
 * the catalog rows that reshard_takeover_sql reads of the tables replaced
 * (the old parent, the old partitions; the tables that replace them are the
 * engine's, which no other role can change): the tables, their TOAST
 * tables, indexes, columns, constraints, statistics objects, comments,
 * publications and schemas, counted and summed as 64-bit hashes.  A change
 * of any of them (a GRANT or a schema's new name, which lock no table, as
 * well as DDL) gives another value.
 */
static char *
takeover_fingerprint(engine *e)
{
	Oid			argtypes[2] = {OIDOID, OIDARRAYOID};
	Datum		args[2] = {ObjectIdGetDatum(e->parent), e->values[STATE_SOURCES]};
	int			nest_level = safe_search_path_begin();
	char	   *fingerprint;

	if (SPI_execute_with_args("WITH r AS (SELECT pg_catalog.array_agg(DISTINCT u.r) AS r FROM pg_catalog.unnest($1 || $2) AS u(r)"
							  "  WHERE u.r IS NOT NULL),"
							  " c AS (SELECT r.r || ARRAY(SELECT c.reltoastrelid FROM pg_catalog.pg_class c WHERE c.oid = ANY (r.r) AND c.reltoastrelid <> 0)"
							  "  || ARRAY(SELECT x.indexrelid FROM pg_catalog.pg_index x WHERE x.indrelid = ANY (r.r)) AS c, r.r FROM r),"
							  " o AS (SELECT c.c || ARRAY(SELECT n.oid FROM pg_catalog.pg_constraint n WHERE n.conrelid = ANY (c.r))"
							  "  || ARRAY(SELECT x.oid FROM pg_catalog.pg_statistic_ext x WHERE x.stxrelid = ANY (c.r)) AS o FROM c)"
							  " SELECT pg_catalog.count(*) || ':' || pg_catalog.sum(pg_catalog.hashtextextended(v, 0)) FROM c, o, LATERAL ("
							  "  SELECT 'c' || k.oid || ':' || k.xmin || ':' || n.xmin"
							  "  FROM pg_catalog.pg_class k JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace WHERE k.oid = ANY (c.c)"
							  "  UNION ALL SELECT 'i' || x.indexrelid || ':' || x.xmin FROM pg_catalog.pg_index x WHERE x.indexrelid = ANY (c.c)"
							  "  UNION ALL SELECT 'a' || t.attrelid || '.' || t.attnum || ':' || t.xmin FROM pg_catalog.pg_attribute t"
							  "   WHERE t.attrelid = ANY (c.c)"
							  "  UNION ALL SELECT 'n' || n.oid || ':' || n.xmin FROM pg_catalog.pg_constraint n WHERE n.conrelid = ANY (c.r)"
							  "  UNION ALL SELECT 's' || x.oid || ':' || x.xmin || ':' || n.xmin FROM pg_catalog.pg_statistic_ext x"
							  "   JOIN pg_catalog.pg_namespace n ON n.oid = x.stxnamespace WHERE x.stxrelid = ANY (c.r)"
							  "  UNION ALL SELECT 'd' || d.classoid || '.' || d.objoid || '.' || d.objsubid || ':' || d.xmin"
							  "   FROM pg_catalog.pg_description d WHERE d.objoid = ANY (o.o)"
							  "  UNION ALL SELECT 'p' || p.oid || ':' || p.xmin FROM pg_catalog.pg_publication_rel p WHERE p.prrelid = ANY (c.r)) AS f(v)",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read what the takeover statements depend on");
	fingerprint = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	safe_search_path_end(nest_level);
	return fingerprint;
}

/*
 * The takeover statements of the next attempt, read before it locks
 * anything (reshard_takeover_sql takes a few milliseconds a table: at 256
 * partitions, longer than the default budget), with the fingerprint of
 * what they were read from; under the lock the attempt compares it again.
 * Read before the catch-up that precedes the attempt (the changes written
 * meanwhile are applied by it, not under the lock), kept in the call's
 * memory across its commits.
 */
static Datum prepared_statements;
static char *prepared_fingerprint;

static bool
unit_prepare_takeover(engine *e)
{
	table_owner_context owner;
	char	   *fingerprint;
	Datum		statements;
	MemoryContext old;

	table_owner_enter(e->parent, &owner);
	/* (both from one snapshot, taken now) */
	PushActiveSnapshot(GetTransactionSnapshot());
	fingerprint = takeover_fingerprint(e);
	statements = takeover_statements(e);
	PopActiveSnapshot();
	table_owner_leave(&owner);
	/* (freed with the call's memory: a few per call) */
	old = MemoryContextSwitchTo(e->memory);
	prepared_fingerprint = pstrdup(fingerprint);
	prepared_statements = datumCopy(statements, false, -1);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * The takeover statements read, in a subtransaction: an error that
 * reshard_takeover_sql raises (what it cannot carry over) ends the call
 * as any other, with the routines it was in ended.
 */
static void
prepare_takeover(engine *e)
{
	ErrorData  *error = try_unit(e, unit_prepare_takeover, NULL);

	if (error != NULL)
		ReThrowError(error);
}

/*
 * One attempt at the cutover, within the budget: ACCESS EXCLUSIVE on the
 * relations of cutover_relations; the last changes; the checks again; the
 * catalog work (reshard_phase_cutover).
 */
static bool
unit_cutover(engine *e)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), e->budget_ms);
	table_owner_context owner;
	List	   *grants;
	List	   *replaced;
	List	   *renamed;
	char	   *fingerprint;
	ListCell   *cell;
	List	   *others;
	Oid			whole_row = routine_oid(e, ROUTINE_WHOLE_ROW_TRIGGER);

	set_lock_timeout(e->budget_ms);
	table_owner_enter(e->parent, &owner);
	lock_relations(cutover_relations(e, &others), AccessExclusiveLock);
	lock_others(others, deadline);
	table_owner_leave(&owner);
	check_budget(deadline);
	apply_log(e, PG_INT64_MAX, deadline);
	check_budget(deadline);
	run_routine(e, ROUTINE_CHECK_CATALOG, 0, 0, 0);
	table_owner_enter(e->parent, &owner);
	/*
	 * What the takeover statements were read from changed since (read with
	 * a snapshot taken now, under the lock): the next attempt reads them
	 * again.
	 */
	PushActiveSnapshot(GetTransactionSnapshot());
	fingerprint = takeover_fingerprint(e);
	PopActiveSnapshot();
	if (strcmp(fingerprint, prepared_fingerprint) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_RESHARD_TAKEOVER_STALE),
				 errmsg("%s or a table of the resharding changed just before the cutover attempt",
						relation_name(e->parent))));
	/* (the old local partitions that are replaced keep theirs until the finish drops them: the log is gone) */
	replaced = list_delete_first(replaced_sources(e, NULL));
	foreach(cell, list_concat(state_oids(e, STATE_SHADOWS), state_oids(e, STATE_SOURCES)))
		if (!list_member_oid(replaced, lfirst_oid(cell)))
			stop_triggers(e, lfirst_oid(cell));
	stop_triggers(e, state_oid(e, STATE_PARTITION));
	/* (the old foreign partitions are replaced: no foreign partition needs a whole-row trigger) */
	foreach(cell, whole_row_partitions(e, state_oids(e, STATE_SOURCES)))
		(void) reshard_triggers_stop(lfirst_oid(cell), NULL, &whole_row, 1, true);
	/* a partition removed: detached now, emptied by the finish; nothing else writes to it meanwhile */
	if (operation_of(e->operation)->partition == PARTITION_LEAVES &&
		get_rel_relkind(state_oid(e, STATE_PARTITION)) == RELKIND_RELATION)
		record_triggers(e, reshard_guard_start(state_oid(e, STATE_PARTITION), routine_oid(e, ROUTINE_GUARD_TRIGGER), true));
	grants = reshard_cutover_grants(e);
	renamed = replaced_sources(e, NULL);
	table_owner_leave(&owner);
	check_budget(deadline);
	run_routine(e, phase_routine(e->operation, PHASE_CUTOVER), 1, prepared_statements, 0);
	/* the grants exactly, grantors included (acl.c) */
	reshard_grants_give_all(grants);
	/* and none left on the tables renamed away, which the finish drops */
	reshard_grants_revoke_all(renamed);
	stop_budget();
	check_budget(deadline);
	return true;
}

/*
 * The engines of the moves that wait in phase cutover for this call's
 * (e->waiting_moves): each table's state row, a move to the same place,
 * claimed by this call (its claims released with the call's), in its
 * memory; into e->cut_with.
 */
static void
open_waiting_moves(engine *e)
{
	ListCell   *cell;

	foreach(cell, e->waiting_moves)
	{
		MemoryContext old = MemoryContextSwitchTo(e->memory);
		engine	   *waiting = palloc(sizeof(engine));

		*waiting = *e;
		waiting->parent = lfirst_oid(cell);
		waiting->claims = NIL;
		waiting->has_state = false;
		waiting->waiting_moves = NIL;
		waiting->cut_with = NIL;
		waiting->locking = NIL;
		MemoryContextSwitchTo(old);
		claim(waiting);
		old = MemoryContextSwitchTo(e->memory);
		e->claims = list_concat(e->claims, waiting->claims);
		waiting->claims = NIL;
		MemoryContextSwitchTo(old);
		if (!load_state(waiting) || !moving(waiting) || waiting->phase != PHASE_CUTOVER ||
			state_is_null(waiting, STATE_SERVER) != state_is_null(e, STATE_SERVER) ||
			(!state_is_null(e, STATE_SERVER) &&
			 strcmp(state_text(waiting, STATE_SERVER), state_text(e, STATE_SERVER)) != 0))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no move of a partition of %s waits for the cutover of %s's",
							relation_name(waiting->parent), relation_name(e->parent))));
		old = MemoryContextSwitchTo(e->memory);
		e->cut_with = lappend(e->cut_with, waiting);
		MemoryContextSwitchTo(old);
	}
}

/* The tables of moves, as a regclass[]. */
static Datum
moving_tables(List *moves)
{
	Datum	   *tables = palloc(sizeof(Datum) * list_length(moves));
	ListCell   *cell;

	foreach(cell, moves)
		tables[foreach_current_index(cell)] = ObjectIdGetDatum(((engine *) lfirst(cell))->parent);
	return PointerGetDatum(construct_array(tables, list_length(moves), REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT));
}

/*
 * One attempt at a move's cutover (partition_move), within the budget, and
 * at the cutovers of the moves that wait for it (the partitions of a bucket
 * of co-located tables, cut over in one transaction): ACCESS EXCLUSIVE on
 * each parent (a detachment needs it), moved partition and table that
 * takes its place, before anything else; each log's last changes; the
 * checks again; the engine's triggers dropped; each partition detached and
 * its table attached in its place, with its name, comments and grants
 * (move_phase_cutover); the table a partition left on a server renamed
 * away there (reshard_shard_views, leave); the foreign keys the partitions
 * keep made between the tables that took their places (move_foreign_keys,
 * which refuses a move without the others that they link).  The work is the same whatever
 * the partitions' sizes and the tables' numbers of partitions.
 */
static bool
unit_move_cutover(engine *e)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), e->budget_ms);
	table_owner_context owner;
	List	   *moves = lappend(list_copy(e->cut_with), e);	/* in the group's order */
	List	   *grants = NIL;
	Oid			whole_row = routine_oid(e, ROUTINE_WHOLE_ROW_TRIGGER);
	ListCell   *cell;
	ListCell   *other;

	set_lock_timeout(e->budget_ms);
	foreach(cell, moves)
	{
		engine	   *move = lfirst(cell);

		table_owner_enter(move->parent, &owner);
		lock_relations(list_concat(list_make3_oid(move->parent, state_oid(move, STATE_PARTITION), moved_to(move)),
								   whole_row_partitions(move, state_oids(move, STATE_SOURCES))),
					   AccessExclusiveLock);
		table_owner_leave(&owner);
	}
	check_budget(deadline);
	foreach(cell, moves)
	{
		apply_log(lfirst(cell), PG_INT64_MAX, deadline);
		check_budget(deadline);
	}
	foreach(cell, moves)
		run_routine(lfirst(cell), ROUTINE_CHECK_CATALOG, 0, 0, 0);
	foreach(cell, moves)
	{
		engine	   *move = lfirst(cell);
		Oid			partition = state_oid(move, STATE_PARTITION);
		Oid			target = moved_to(move);

		table_owner_enter(move->parent, &owner);
		stop_triggers(move, partition);
		stop_triggers(move, target);
		/* (the partition moved from a server is replaced: no foreign partition needs a whole-row trigger) */
		foreach(other, whole_row_partitions(move, state_oids(move, STATE_SOURCES)))
			(void) reshard_triggers_stop(lfirst_oid(other), NULL, &whole_row, 1, true);
		grants = lappend(grants, reshard_grants_of(partition, target));
		table_owner_leave(&owner);
	}
	check_budget(deadline);
	foreach(cell, moves)
		run_routine(lfirst(cell), phase_routine(e->operation, PHASE_CUTOVER), 0, 0, 0);
	/*
	 * (a table a partition left on a server renamed away there, in this
	 * transaction's remote one, which commits with this one on a server set up
	 * for atomic commit)
	 */
	foreach(cell, moves)
	{
		engine	   *move = lfirst(cell);
		Oid			partition = state_oid(move, STATE_PARTITION);

		shard_views(move, "leave");
		if (state_bool(move, STATE_SHARD_VIEWS) && get_rel_relkind(partition) == RELKIND_FOREIGN_TABLE)
			atomic_commit_include(GetForeignServerIdByRelId(partition), relation_owner(move->parent));
	}
	/* (the foreign keys the partitions keep, made where they went: all of them are there now) */
	foreach(cell, moves)
		run_routine(lfirst(cell), ROUTINE_MOVE_FOREIGN_KEYS, 2, CStringGetTextDatum("cutover"), moving_tables(moves));
	foreach(cell, grants)
		reshard_grants_give(lfirst(cell));
	stop_budget();
	check_budget(deadline);
	return true;
}

/*
 * An attempt, as try_unit: the state rows of the moves cut over with e's
 * are restored too if it fails.
 */
static ErrorData *
try_attempt(engine *e, engine_unit unit)
{
	int			count = Max(list_length(e->cut_with), 1);
	Datum	   *values = palloc(sizeof(Datum) * STATE_COLUMNS * count);
	bool	   *nulls = palloc(sizeof(bool) * STATE_COLUMNS * count);
	ErrorData  *error;
	ListCell   *cell;

	foreach(cell, e->cut_with)
	{
		engine	   *move = lfirst(cell);
		int			i = foreach_current_index(cell);

		memcpy(values + i * STATE_COLUMNS, move->values, sizeof(Datum) * STATE_COLUMNS);
		memcpy(nulls + i * STATE_COLUMNS, move->nulls, sizeof(bool) * STATE_COLUMNS);
	}
	error = try_unit(e, unit, NULL);
	if (error != NULL)
		foreach(cell, e->cut_with)
		{
			engine	   *move = lfirst(cell);
			int			i = foreach_current_index(cell);

			memcpy(move->values, values + i * STATE_COLUMNS, sizeof(Datum) * STATE_COLUMNS);
			memcpy(move->nulls, nulls + i * STATE_COLUMNS, sizeof(bool) * STATE_COLUMNS);
		}
	return error;
}

/* One attempt of each operation (the operation table's column cutover). */
static const engine_unit cutover_attempts[OPERATION_COUNT] = {
#define OPERATION(symbol, name, partition, rebuilds, plan, routines, cutover) [symbol] = cutover,
#include "resharding/operations.h"
#undef OPERATION
};

/*
 * Phase cutover: at most e->attempts attempts, each after a catch-up;
 * between two, the writers waiting for the lock go through.  The attempt
 * that succeeds is left for the driver to commit, with the state row in
 * phase finish, and those of the moves that waited for it (e->cut_with:
 * each attempt cuts them over too, each after its catch-up).  A call that
 * rebuilds the table reads the takeover statements before each attempt.
 */
bool
step_cutover(engine *e)
{
	bool		rebuilds = operation_of(e->operation)->rebuilds;
	engine_unit attempt_unit = cutover_attempts[e->operation];
	ListCell   *cell;

	if (e->waiting_moves != NIL && e->cut_with == NIL)
		open_waiting_moves(e);
	if (rebuilds)
		prepare_takeover(e);
	/* (in the group's order, as the attempt applies the last changes: the waiting ones first) */
	foreach(cell, e->cut_with)
		catch_up(lfirst(cell));
	catch_up(e);
	for (int attempt = 1;; attempt++)
	{
		ErrorData  *error;

		/* counted before it begins: after a crash, no attempt means no COMMIT begun */
		foreach(cell, e->cut_with)
		{
			engine	   *move = lfirst(cell);

			set_state_int64(move, STATE_CUTOVER_ATTEMPTS, state_int64(move, STATE_CUTOVER_ATTEMPTS) + 1);
			save_state(move);
		}
		set_state_int64(e, STATE_CUTOVER_ATTEMPTS, state_int64(e, STATE_CUTOVER_ATTEMPTS) + 1);
		commit_state(e);
		arm_budget(e->budget_ms);
		error = try_attempt(e, attempt_unit);
		if (disarm_budget() && error != NULL && error->sqlerrcode == ERRCODE_QUERY_CANCELED)
		{
			error->sqlerrcode = ERRCODE_RESHARD_OVER_BUDGET;
			error->message = pstrdup("the cutover overran its budget");
		}
		if (error == NULL)
			break;
		/* a lock not had in time, a deadlock with a writer, the budget spent, the takeover statements stale: one failed attempt */
		if (error->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE && error->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED &&
			error->sqlerrcode != ERRCODE_RESHARD_OVER_BUDGET && error->sqlerrcode != ERRCODE_RESHARD_TAKEOVER_STALE)
			ReThrowError(error);
		/* (nothing to keep: the state row was saved before the attempt) */
		rollback_transaction();
		if (attempt >= e->attempts)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not cut %s over within %d ms in %d attempts",
							relation_name(e->parent), e->budget_ms, e->attempts),
					 errdetail("The last attempt: %s.", error->message),
					 errhint("%s", out_of_attempts(e, e->operation == OPERATION_MOVE && state_bool(e, STATE_SHARD_VIEWS)
												   ? "Fewer or shorter transactions writing to the table, or using the table the partition leaves on its server (renamed at the cutover), a larger cutover_budget or more cutover_attempts let it through."
												   : "Fewer or shorter transactions writing to the table, a larger cutover_budget or more cutover_attempts let it through."))));
		back_off(e->budget_ms);
		if (rebuilds)
			prepare_takeover(e);
		foreach(cell, e->cut_with)
			catch_up(lfirst(cell));
		catch_up(e);
	}
	return true;
}
