/*
 * src/resharding/capture.h
 *		The change log of an online resharding: what the engine calls.
 */
#ifndef SUBSETTING_RESHARDING_CAPTURE_H
#define SUBSETTING_RESHARDING_CAPTURE_H

/* Oid, bool and List: postgres.h and nodes/pg_list.h, which the .c file includes first. */

/*
 * Internal triggers on partition that append its writes to log (numbered
 * by sequence) with function (reshard_capture), and refuse TRUNCATE; their
 * OIDs.
 */
extern List *reshard_capture_start(Oid partition, Oid log, Oid sequence, Oid function);

/* Internal triggers on table that refuse every write but the engine's (function: reshard_guard); their OIDs. */
extern List *reshard_guard_start(Oid table, Oid function, bool removed);

/*
 * An internal trigger on a foreign partition that lets every delete through
 * (function: reshard_whole_row), so that a DELETE through its table reads
 * its whole rows, as it does those of a foreign partition captured; its OID.
 */
extern Oid	reshard_whole_row_start(Oid partition, Oid function);

/*
 * Drops the triggers above from relation, those it has, of that name
 * unless name is NULL (functions: reshard_capture, reshard_guard,
 * reshard_whole_row);
 * waits for relation's lock unless wait is false.  Returns how many, or -1
 * if relation could not be locked at once.
 */
extern int	reshard_triggers_stop(Oid relation, const char *name, const Oid *functions, int count, bool wait);

/* True while this backend's engine writes to the tables it fills. */
extern bool reshard_engine_writing;

#endif							/* SUBSETTING_RESHARDING_CAPTURE_H */
