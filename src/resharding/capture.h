/*
 * src/resharding/capture.h
 *		The change log of an online resharding: what the engine calls.
 */
#ifndef SUBSETTING_RESHARDING_CAPTURE_H
#define SUBSETTING_RESHARDING_CAPTURE_H

/* Oid and bool: postgres.h, which the .c file includes first. */

/*
 * Internal triggers on partition that append its writes to log (numbered
 * by sequence) with function (reshard_capture), and refuse TRUNCATE.
 */
extern void reshard_capture_start(Oid partition, Oid log, Oid sequence, Oid function);

/* Internal triggers on table that refuse every write but the engine's (function: reshard_guard). */
extern void reshard_guard_start(Oid table, Oid function, bool removed);

/*
 * Drops the triggers above from relation, those it has (functions:
 * reshard_capture and reshard_guard); returns how many.
 */
extern int	reshard_triggers_stop(Oid relation, const Oid *functions, int count);

/* True while this backend's engine writes to the tables it fills. */
extern bool reshard_engine_writing;

#endif							/* SUBSETTING_RESHARDING_CAPTURE_H */
