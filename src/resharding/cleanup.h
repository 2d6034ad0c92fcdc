/*
 * src/resharding/cleanup.h
 *		The cleaner of the resharding engine: what a call made, dropped by
 *		its records (cleanup.c).
 */
#ifndef SUBSETTING_RESHARDING_CLEANUP_H
#define SUBSETTING_RESHARDING_CLEANUP_H

#include "resharding/engine.h"

extern void record_triggers(engine *e, List *triggers);
extern void cleanup_walk(engine *e, bool failed);
extern int	cleanup_sweep(engine *e);

#endif							/* SUBSETTING_RESHARDING_CLEANUP_H */
