/*
 * src/resharding/engine.h
 *		The types the units of the resharding engine share
 *		(docs/resharding-engine.md): the state row's columns, the SQL
 *		routines, the phase and operation tables' rows, and the engine of
 *		one call.  Each unit declares its own functions in its own header:
 *
 *	procedures.c	the SQL procedures (reshard_add_partition, partition_move,
 *					rebalance, reshard_abort, ...): arguments, then the driver
 *	driver.c		a call from its plan to the end, one step at a time, by the
 *					phase table; the only unit that writes a phase
 *	tables.c		the phase table (phases.h) and the operation table
 *					(operations.h) as data
 *	state.c			the state row (typed access by column number), the SQL
 *					routines (resolved once per call), the claim
 *	xact.c			transactions, subtransactions and lock waits
 *	steps.c			the steps of every phase but the cutover
 *	cutover.c		the cutover: attempts within a budget, one unit per operation
 *	shards.c		postgres_fdw partitions: their snapshots, shard_views
 *	indexes.c		the indexes of the tables a call fills
 *	acl.c			privileges copied in the catalog
 *	capture.c		the change log's and the guards' triggers
 *	copy.c, remote.c	reshard_copy_rows: a table's rows into another, here or
 *					on a server (remote.c: the libpq side)
 *	inspect.c		read-only functions over a table's layout
 *
 * Like every file of the skin, the ones that include this header include
 * postgres.h first.
 */
#ifndef SUBSETTING_RESHARDING_ENGINE_H
#define SUBSETTING_RESHARDING_ENGINE_H

#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "utils/palloc.h"

/* The columns of reshard_state (src/sql/resharding/reshard_state.sql), in order: checked when a call begins. */
typedef enum state_column
{
	STATE_PARENT,
	STATE_PARENT_NAME,
	STATE_OPERATION,
	STATE_PARTITION,
	STATE_BUCKET,
	STATE_METHOD,
	STATE_KEY,
	STATE_OLD_BUCKETS,
	STATE_NEW_BUCKETS,
	STATE_OLD_BUCKET_SQL,
	STATE_NEW_BUCKET_SQL,
	STATE_NEW_PARTITION_BY,
	STATE_NEW_BOUND,
	STATE_SOURCES,
	STATE_SHADOWS,
	STATE_NEW_PARENT,
	STATE_LOG,
	STATE_LOG_SEQUENCE,
	STATE_NAME_KEY,
	STATE_CATALOG,
	STATE_VALIDATE,
	STATE_FOREIGN_KEYS,
	STATE_ANALYZE_PARENT,
	STATE_SHARD_VIEWS,
	STATE_SHARD_OPTIONS,
	STATE_HIDDEN_KEYS,
	STATE_SERVER,
	STATE_PHASE,
	STATE_ROWS_TO_MOVE,
	STATE_ROWS_COPIED,
	STATE_ROWS_VERIFIED,
	STATE_SOURCES_COPIED,
	STATE_CHANGES_APPLIED,
	STATE_CHANGES_WAITING,
	STATE_CUTOVER_ATTEMPTS,
	STATE_STARTED,
	STATE_LAST_PROGRESS,
	STATE_BACKEND_PID,
	STATE_ERROR,
	STATE_MADE,
	STATE_COLUMNS				/* how many */
} state_column;

/* The extension's SQL routines the engine calls (their names and arguments: state.c). */
typedef enum routine_id
{
	ROUTINE_NONE = -1,
	ROUTINE_PLAN,
	ROUTINE_CHECK_CATALOG,
	ROUTINE_PHASE_SETUP,
	ROUTINE_PHASE_COPY,
	ROUTINE_APPLY_LOG,
	ROUTINE_PHASE_VERIFY,
	ROUTINE_TAKEOVER_SQL,
	ROUTINE_PHASE_CUTOVER,
	ROUTINE_PHASE_FINISH,
	ROUTINE_PHASE_UNDO,
	ROUTINE_MOVE_PLAN,
	ROUTINE_MOVE_SETUP,
	ROUTINE_MOVE_COPY,
	ROUTINE_MOVE_VERIFY,
	ROUTINE_MOVE_CUTOVER,
	ROUTINE_MOVE_FINISH,
	ROUTINE_MOVE_UNDO,
	ROUTINE_MOVE_FOREIGN_KEYS,
	ROUTINE_SHARD_VIEWS,
	ROUTINE_CAPTURE_TRIGGER,
	ROUTINE_GUARD_TRIGGER,
	ROUTINE_WHOLE_ROW_TRIGGER,
	ROUTINE_CLEANUP_DROP,
	ROUTINE_COUNT
} routine_id;

/* How a step waits for locks (the phase table's column locks). */
typedef enum lock_policy
{
	LOCKS_NONE,					/* none that writers hold long: one transaction */
	LOCKS_RETRIED,				/* each wait at most the budget; the step retried, at most the attempts */
	LOCKS_CUTOVER,				/* attempts within the budget, a timer, catch-up rounds between */
	LOCKS_OWN					/* the step runs its own transactions, each by one of the above */
} lock_policy;

typedef enum step_isolation
{
	READ_COMMITTED,
	REPEATABLE_READ
} step_isolation;

/* The phases, in the order of the phase table (phases.h). */
typedef enum reshard_phase
{
#define PHASE(symbol, name, step, isolation, locks, routine, next) symbol,
#include "resharding/phases.h"
#undef PHASE
	PHASE_COUNT
} reshard_phase;

/* A row of the phase table, but its step (tables.c; the driver has the steps). */
typedef struct phase_row
{
	const char *name;			/* the value in reshard_state.phase */
	const char *step_name;		/* the C function of its step */
	step_isolation isolation;
	lock_policy locks;
	routine_id	routine;
	reshard_phase next;
} phase_row;

/* What becomes of the partition an operation names (the operation table's column partition). */
typedef enum partition_fate
{
	PARTITION_JOINS,			/* a new partition, attached at the cutover */
	PARTITION_LEAVES,			/* detached at the cutover, emptied by the finish */
	PARTITION_MOVES				/* replaced at the cutover by a table elsewhere, with its rows */
} partition_fate;

/* The operations, in the order of the operation table (operations.h). */
typedef enum reshard_operation
{
#define OPERATION(symbol, name, partition, rebuilds, plan, routines, cutover) symbol,
#include "resharding/operations.h"
#undef OPERATION
	OPERATION_COUNT
} reshard_operation;

/* A row of the operation table, but its cutover unit (tables.c; cutover.c has the units). */
typedef struct operation_row
{
	const char *name;			/* the value in reshard_state.operation */
	partition_fate partition;
	bool		rebuilds;		/* a new parent and a shadow per local bucket */
	routine_id	plan;
	const routine_id *routines; /* by phase: its own, or ROUTINE_NONE (the phase table's); NULL: all the phase table's */
	const char *cutover_name;	/* the C function of one cutover attempt */
} operation_row;

/* What the steps of one call share, kept across its transactions. */
typedef struct engine
{
	Oid			parent;
	char	   *schema;			/* the extension's, quoted */
	Oid			state_owner;	/* reshard_state's owner (the extension's script ran as it) */
	Oid			state_type;		/* reshard_state's row type */
	Oid			routines[ROUTINE_COUNT];	/* resolved when the call begins */
	bool		has_state;		/* values and nulls hold a state row */
	Datum		values[STATE_COLUMNS];	/* the state row, in memory */
	bool		nulls[STATE_COLUMNS];
	reshard_phase phase;		/* values[STATE_PHASE], read */
	reshard_operation operation;	/* values[STATE_OPERATION], read */
	MemoryContext memory;		/* survives the call's commits */
	int			budget_ms;		/* of a cutover attempt, and of each lock wait */
	int			attempts;		/* of the cutover and of each lock */
	List	   *claims;			/* the tables whose resharding this backend claimed (in memory) */
	bool		atomic;			/* called in a transaction block: no commits */
	int			triggers_swept; /* left by an undone resharding, dropped (step_sweep) */
	bool		cutover_committing; /* the COMMIT of the cutover is under way (or failed) */
	bool		keep_work;		/* a step ran out of attempts: the call is not undone (out_of_attempts) */
	List	   *locking;		/* what unit_lock locks, and how */
	LOCKMODE	lock_mode;
	reshard_phase stop_before;	/* the call stops when it reaches this phase (PHASE_COUNT: it does not) */
	List	   *waiting_moves;	/* the tables whose moves wait in phase cutover for this call's cutover */
	List	   *cut_with;		/* their engines, during the cutover (cutover.c) */
} engine;

/*
 * A unit of work in a transaction; true when the phase it belongs to is
 * complete.  A step is the unit of a phase (the phase table's column step):
 * it leaves its last transaction open, and the driver writes the next phase
 * into the state row in it when the step says its phase is complete, saves
 * the row and commits.
 */
typedef bool (*engine_unit) (engine *e);

#endif							/* SUBSETTING_RESHARDING_ENGINE_H */
