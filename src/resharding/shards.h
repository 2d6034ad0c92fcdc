/*
 * src/resharding/shards.h
 *		The resharding engine and postgres_fdw partitions (shards.c).
 */
#ifndef SUBSETTING_RESHARDING_SHARDS_H
#define SUBSETTING_RESHARDING_SHARDS_H

#include "resharding/engine.h"

extern List *foreign_tables(List *relations);
extern void snapshot_foreign_partitions(engine *e, List *partitions);

/* shard_views */
extern List *shard_view_sources(engine *e);
extern void shard_views_lock_parent(engine *e);
extern void shard_views(engine *e, const char *action);
extern void arm_shards(engine *e);
extern void finish_shards(engine *e);

#endif							/* SUBSETTING_RESHARDING_SHARDS_H */
