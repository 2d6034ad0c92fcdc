/*
 * src/resharding/indexes.h
 *		The indexes of the tables a call fills, once they are full (indexes.c).
 */
#ifndef SUBSETTING_RESHARDING_INDEXES_H
#define SUBSETTING_RESHARDING_INDEXES_H

#include "resharding/engine.h"

extern void index_shadows(engine *e);

#endif							/* SUBSETTING_RESHARDING_INDEXES_H */
