/*
 * src/resharding/steps.h
 *		The steps of the resharding engine's phases (the phase table's column
 *		step, phases.h): steps.c has every one but the cutover's (cutover.h).
 */
#ifndef SUBSETTING_RESHARDING_STEPS_H
#define SUBSETTING_RESHARDING_STEPS_H

#include "resharding/engine.h"

extern bool step_setup(engine *e);
extern bool step_capture(engine *e);
extern bool step_copy(engine *e);
extern bool step_catch_up(engine *e);
extern bool step_verify(engine *e);
extern bool step_finish(engine *e);
extern bool step_undo(engine *e);

/* after an undo: the triggers it could not drop at once (reshard_abort) */
extern bool step_sweep(engine *e);

/* what more than one step does */
extern List *whole_row_partitions(engine *e, List *sources);
extern bool unit_check_catalog(engine *e);
extern void catch_up(engine *e);

#endif							/* SUBSETTING_RESHARDING_STEPS_H */
