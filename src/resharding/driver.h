/*
 * src/resharding/driver.h
 *		The driver of the resharding engine (driver.c): what the procedures
 *		(procedures.c) call once they have read their arguments.
 */
#ifndef SUBSETTING_RESHARDING_DRIVER_H
#define SUBSETTING_RESHARDING_DRIVER_H

#include "fmgr.h"
#include "datatype/timestamp.h"

#include "resharding/engine.h"

/*
 * Whether the rows that leave or enter postgres_fdw shards are hidden on
 * their servers (reshard_shard_views): as the call says, or where the
 * shards allow it (the plan decides: shard_views NULL).
 */
typedef enum shard_views_choice
{
	SHARD_VIEWS_NO,
	SHARD_VIEWS_YES,
	SHARD_VIEWS_WHERE_SHARDS_ALLOW,
} shard_views_choice;

/* A call of operation from its checks to the end, or the rest of an interrupted one; the rows it moved. */
extern int64 run_call(FunctionCallInfo fcinfo, Oid parent, reshard_operation operation, Oid partition,
					  const char *server, Interval *budget, int attempts, shard_views_choice shard_views);

/* A move, as run_call; it may wait at its cutover, or cut over the moves waiting there with its own. */
extern int64 run_move(FunctionCallInfo fcinfo, Oid parent, Oid partition, const char *server, Interval *budget,
					  int attempts, bool stop_before_cutover, List *waiting_moves);

/* Whether a move of parent was interrupted, and if so its partition and server (NULL: here). */
extern bool interrupted_move(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts, Oid *partition,
							 char **server);

/* Whether a move of parent has cut over and not finished, and to which server. */
extern bool move_cut_over(FunctionCallInfo fcinfo, Oid parent, Oid partition, const char *to_server,
						  char **server);

/* reshard_begin, reshard_step (tests), reshard_abort */

extern void begin_call(FunctionCallInfo fcinfo, Oid parent, reshard_operation operation, Oid partition,
					   const char *server);
extern void step_call(FunctionCallInfo fcinfo, Oid parent, Interval *budget, int attempts);
extern void abort_call(FunctionCallInfo fcinfo, Oid parent);

#endif							/* SUBSETTING_RESHARDING_DRIVER_H */
