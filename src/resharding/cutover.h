/*
 * src/resharding/cutover.h
 *		Phase cutover of the resharding engine (cutover.c).
 */
#ifndef SUBSETTING_RESHARDING_CUTOVER_H
#define SUBSETTING_RESHARDING_CUTOVER_H

#include "resharding/engine.h"

extern bool step_cutover(engine *e);

#endif							/* SUBSETTING_RESHARDING_CUTOVER_H */
