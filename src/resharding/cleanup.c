/*
 * src/resharding/cleanup.c
 *		The cleaner of the resharding engine (cleanup.h).
 *
 * Every object a call makes, here or on a server, has a row in
 * reshard_state_cleanup (src/sql/resharding/reshard_cleanup.sql): written with the
 * state row in the transaction that makes it (state.c, record_made; the
 * engine's triggers on the user's tables by record_triggers, below), or for
 * an object on a server, which commits there on its own, by a step before
 * the one that makes it.  The cleaner walks them, newest first, for every
 * operation alike: the undo drops those of policy 'always' and
 * 'on_failure', the finish those of policy 'always' and 'on_success' (what
 * the call's success removes: the old parent a cutover renamed away, a
 * moved partition's table on the server it left), and each forgets the
 * others (the tables that took the old ones' places; what the failure
 * keeps).  Each drop (reshard_cleanup_drop, as the table's owner) is of an
 * object that is still the one recorded, and does nothing if it is gone;
 * its record is deleted in the transaction of the drop here.  A walk cut
 * short, done again, goes on where it stopped.
 *
 * The engine's triggers here are dropped by the engine (they are internal:
 * not dumped, no privilege needed), and only if their table can be locked
 * at once: a transaction that reads the table may hold it for long, and
 * neither the undo nor the finish waits for it.  A trigger left keeps its
 * record (its log is gone: it captures nothing) until reshard_abort drops
 * it (cleanup_sweep) or the next resharding of the table does.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "utils/datum.h"

#include "resharding/cleanup.h"
#include "resharding/state.h"
#include "resharding/xact.h"
#include "table_owner.h"

/*
 * Records the engine's triggers (their OIDs) just made on a table of the
 * user's (the tables the call makes go with their triggers), policy
 * 'always', in this transaction, after what the routines made before them.
 */
void
record_triggers(engine *e, List *triggers)
{
	ListCell   *cell;

	record_made(e);
	CommandCounterIncrement();
	foreach(cell, triggers)
		(void) state_table_query(e, "INSERT INTO %1$s.reshard_state_cleanup"
								 " (parent, ordinal, kind, object, relation, member, policy)"
								 " SELECT $2, coalesce((SELECT pg_catalog.max(c.ordinal) FROM %1$s.reshard_state_cleanup AS c"
								 "                      WHERE c.parent = $2), 0) + 1,"
								 "        'trigger', t.tgrelid::pg_catalog.regclass::pg_catalog.text, t.tgrelid, t.tgname, 'always'"
								 " FROM pg_catalog.pg_trigger AS t WHERE t.oid = $3::pg_catalog.oid",
								 Int32GetDatum((int32) lfirst_oid(cell)), false);
}

/*
 * Drops the engine's trigger of a record here, as the table's owner,
 * waiting for its table's lock or not (wait); how many it dropped (0: it
 * was gone), or -1 if the table could not be locked at once.
 */
static int
drop_trigger(engine *e, Oid relation, const char *name, bool wait)
{
	table_owner_context owner;
	int			dropped;

	table_owner_enter(e->parent, &owner);
	dropped = stop_trigger(e, relation, name, wait);
	table_owner_leave(&owner);
	return dropped;
}

/*
 * The cleaner: the records of the call (e->parent's state row) walked
 * newest first; failed (the undo): those of policy 'always' and
 * 'on_failure' dropped; else (the finish) those of policy 'always' and
 * 'on_success'; then the others forgotten.  A trigger here whose table
 * cannot be locked at once is left, with its record, and a WARNING.  In
 * the caller's transaction.
 */
void
cleanup_walk(engine *e, bool failed)
{
	int			count;
	Datum	   *records;
	Datum	   *ordinals;
	Oid		   *trigger_tables;		/* (of a trigger here; else InvalidOid) */
	char	  **trigger_names;
	MemoryContext old;

	/* ($3: 1 for the undo, 0 for the finish) */
	(void) state_table_query(e, "SELECT c, c.ordinal, c.relation, c.member::pg_catalog.text,"
							 "       c.kind = 'trigger' AND c.server IS NULL"
							 " FROM %1$s.reshard_state_cleanup AS c"
							 " WHERE c.parent = $2 AND c.policy <> CASE $3 WHEN 1 THEN 'on_success' ELSE 'on_failure' END"
							 " ORDER BY c.ordinal DESC",
							 Int32GetDatum(failed ? 1 : 0), false);
	count = (int) SPI_processed;
	old = MemoryContextSwitchTo(e->memory);
	records = palloc(sizeof(Datum) * (count + 1));
	ordinals = palloc(sizeof(Datum) * (count + 1));
	trigger_tables = palloc(sizeof(Oid) * (count + 1));
	trigger_names = palloc(sizeof(char *) * (count + 1));
	for (int i = 0; i < count; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		bool		here_trigger;

		records[i] = datumCopy(SPI_getbinval(tuple, desc, 1, &isnull), false, -1);
		ordinals[i] = SPI_getbinval(tuple, desc, 2, &isnull);
		here_trigger = DatumGetBool(SPI_getbinval(tuple, desc, 5, &isnull));
		trigger_tables[i] = here_trigger ? DatumGetObjectId(SPI_getbinval(tuple, desc, 3, &isnull)) : InvalidOid;
		trigger_names[i] = here_trigger ? SPI_getvalue(tuple, desc, 4) : NULL;
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < count; i++)
	{
		if (!OidIsValid(trigger_tables[i]))
			run_routine(e, ROUTINE_CLEANUP_DROP, 1, records[i], 0);
		else if (drop_trigger(e, trigger_tables[i], trigger_names[i], false) < 0)
		{
			ereport(WARNING,
					(errmsg("the resharding's trigger on %s is left, inactive: another transaction holds the table",
							relation_name(trigger_tables[i])),
					 errhint("The next resharding of %s drops it, or reshard_abort once that transaction ended.",
							 relation_name(e->parent))));
			continue;
		}
		(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS c WHERE c.parent = $2 AND c.ordinal = $3",
								 ordinals[i], false);
	}
	/* the others forgotten: the finish's took the old ones' places, the undo's stay */
	(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS c"
							 " WHERE c.parent = $2 AND c.policy = CASE $3 WHEN 1 THEN 'on_success' ELSE 'on_failure' END",
							 Int32GetDatum(failed ? 1 : 0), false);
}

/*
 * After an undo (reshard_abort): the triggers here it left, dropped by
 * their records, each table's lock waited for (lock_timeout); how many.
 */
int
cleanup_sweep(engine *e)
{
	int			count;
	int			swept = 0;
	Oid		   *tables;
	char	  **names;
	Datum	   *ordinals;
	MemoryContext old;

	(void) state_table_query(e, "SELECT c.relation, c.member::pg_catalog.text, c.ordinal"
							 " FROM %1$s.reshard_state_cleanup AS c"
							 " WHERE c.parent = $2 AND c.kind = 'trigger' AND c.server IS NULL ORDER BY c.ordinal DESC",
							 (Datum) 0, true);
	count = (int) SPI_processed;
	old = MemoryContextSwitchTo(e->memory);
	tables = palloc(sizeof(Oid) * (count + 1));
	names = palloc(sizeof(char *) * (count + 1));
	ordinals = palloc(sizeof(Datum) * (count + 1));
	for (int i = 0; i < count; i++)
	{
		bool		isnull;

		tables[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		names[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		ordinals[i] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull);
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < count; i++)
	{
		swept += drop_trigger(e, tables[i], names[i], true);
		(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS c WHERE c.parent = $2 AND c.ordinal = $3",
								 ordinals[i], false);
	}
	return swept;
}
