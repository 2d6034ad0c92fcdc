/*
 * src/resharding/cleanup.c
 *		The cleaner of the resharding engine (cleanup.h).
 *
 * Every object a call makes, here or on a server, has a row in
 * reshard_state_cleanup (src/sql/resharding/reshard_cleanup.sql): written with the
 * state row in the transaction that makes it (state.c, record_made), or for
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
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/datum.h"

#include "resharding/cleanup.h"
#include "resharding/state.h"

/*
 * The cleaner: the records of the call (e->parent's state row) walked
 * newest first; failed (the undo): those of policy 'always' and
 * 'on_failure' dropped; else (the finish) those of policy 'always' and
 * 'on_success'; then every record forgotten.  In the caller's transaction.
 */
void
cleanup_walk(engine *e, bool failed)
{
	int			count;
	Datum	   *records;
	Datum	   *ordinals;
	MemoryContext old;

	/* ($3: 1 for the undo, 0 for the finish) */
	(void) state_table_query(e, "SELECT c, c.ordinal FROM %1$s.reshard_state_cleanup AS c"
							 " WHERE c.parent = $2 AND c.policy <> CASE $3 WHEN 1 THEN 'on_success' ELSE 'on_failure' END"
							 " ORDER BY c.ordinal DESC",
							 Int32GetDatum(failed ? 1 : 0), false);
	count = (int) SPI_processed;
	old = MemoryContextSwitchTo(e->memory);
	records = palloc(sizeof(Datum) * (count + 1));
	ordinals = palloc(sizeof(Datum) * (count + 1));
	for (int i = 0; i < count; i++)
	{
		bool		isnull;

		records[i] = datumCopy(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull), false, -1);
		ordinals[i] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < count; i++)
	{
		run_routine(e, ROUTINE_CLEANUP_DROP, 1, records[i], 0);
		(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS c WHERE c.parent = $2 AND c.ordinal = $3",
								 ordinals[i], false);
	}
	/* the rest forgotten: the finish's took the old ones' places, the undo's stay */
	(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS c WHERE c.parent = $2",
							 (Datum) 0, true);
}
