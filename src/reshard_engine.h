/*
 * src/reshard_engine.h
 *		What the files of the resharding engine share (docs/resharding-engine.md):
 *		the phases, the state row's columns, the SQL routines, and the engine
 *		of one call.
 *
 *	reshard_engine.c	the procedures and the driver: a call from its plan to
 *						the end, one step at a time, by the phase table
 *	reshard_phases.c	the phase table as data, and reshard_phases()
 *	reshard_state.c		the state row (typed access by column number), the
 *						SQL routines (resolved once per call), the claim
 *	reshard_xact.c		transactions, subtransactions and lock waits
 *	reshard_steps.c		the steps of every phase but the cutover
 *	reshard_cutover.c	the cutover: attempts within a budget
 *	reshard_shards.c	postgres_fdw partitions: their snapshots, shard_views
 *
 * Like every file of the skin, the ones that include this header include
 * postgres.h first.
 */
#ifndef SUBSETTING_RESHARD_ENGINE_H
#define SUBSETTING_RESHARD_ENGINE_H

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "utils/elog.h"
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
	STATE_COLUMNS				/* how many */
} state_column;

/* The extension's SQL routines the engine calls (their names and arguments: reshard_state.c). */
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
	ROUTINE_SHARD_VIEWS,
	ROUTINE_CAPTURE_TRIGGER,
	ROUTINE_GUARD_TRIGGER,
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

/* The phases, in the order of the phase table (reshard_phases.h). */
typedef enum reshard_phase
{
#define PHASE(symbol, name, step, isolation, locks, routine, next) symbol,
#include "reshard_phases.h"
#undef PHASE
	PHASE_COUNT
} reshard_phase;

/* A row of the phase table, but its step (reshard_phases.c; the driver has the steps). */
typedef struct phase_row
{
	const char *name;			/* the value in reshard_state.phase */
	const char *step_name;		/* the C function of its step */
	step_isolation isolation;
	lock_policy locks;
	routine_id	routine;
	reshard_phase next;
} phase_row;

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
} engine;

/* A unit of work in a transaction; true when the phase it belongs to is complete. */
typedef bool (*engine_unit) (engine *e);

/* The steps (the phase table's column step). */
extern bool step_setup(engine *e);
extern bool step_capture(engine *e);
extern bool step_copy(engine *e);
extern bool step_catch_up(engine *e);
extern bool step_verify(engine *e);
extern bool step_cutover(engine *e);
extern bool step_finish(engine *e);
extern bool step_undo(engine *e);
extern bool step_sweep(engine *e);

/* reshard_phases.c: the phase table */
extern const phase_row *phase_of(reshard_phase phase);
extern const char *phase_name(reshard_phase phase);
extern reshard_phase phase_from_name(const char *name);
extern reshard_phase next_phase(reshard_phase phase);
extern bool phase_ended(reshard_phase phase);

/* reshard_indexes.c: the shadows' indexes, once they are full */
extern void index_shadows(engine *e);

/* reshard_steps.c: what more than one step does */
extern bool unit_check_catalog(engine *e);
extern void catch_up(engine *e);

/* reshard_state.c: the state row */
extern void state_open(engine *e);
extern bool load_state(engine *e);
extern void save_state(engine *e);
extern void insert_state(engine *e);
extern void delete_states(engine *e, bool this_table, bool of_dropped_tables);
extern void new_state(engine *e);
extern void refuse_linked_reshardings(engine *e);
extern bool state_is_null(engine *e, state_column column);
extern bool state_bool(engine *e, state_column column);
extern int64 state_int64(engine *e, state_column column);
extern Oid	state_oid(engine *e, state_column column);
extern List *state_oids(engine *e, state_column column);
extern int	state_array_length(engine *e, state_column column);
extern char *state_text(engine *e, state_column column);
extern void set_state_int64(engine *e, state_column column, int64 value);
extern void set_state_oid(engine *e, state_column column, Oid value);
extern void set_state_bool(engine *e, state_column column, bool value);
extern void set_state_null(engine *e, state_column column);
extern void set_state_text(engine *e, state_column column, const char *value);
extern void set_phase(engine *e, reshard_phase phase);
extern Oid	routine_oid(engine *e, routine_id routine);
extern void run_routine(engine *e, routine_id routine, int nargs, Datum arg1, Datum arg2);
extern List *replaced_sources(engine *e, List **filled);
extern void apply_log(engine *e, int64 max_changes, TimestampTz deadline);
extern void claim(engine *e);
extern void unclaim(engine *e);
extern bool moving(engine *e);
extern Oid	moved_to(engine *e);
extern void claim_new_parent(engine *e);
extern void follow_new_parent(engine *e);
extern char *relation_name(Oid relation);

/* reshard_xact.c: transactions and locks */
extern void restore_session_settings(engine *e);
extern void settle_session_settings(engine *e);
extern void commit_transaction(void);
extern void next_transaction(bool repeatable_read);
extern void rollback_transaction(void);
extern void set_lock_timeout(int ms);
extern ErrorData *try_unit(engine *e, engine_unit unit, bool *complete);
extern void back_off(int ms);
extern char *out_of_attempts(engine *e, const char *why);
extern void with_lock_retries(engine *e, engine_unit unit, bool advance, const char *what);
extern void run_unit(engine *e, engine_unit unit, bool advance);
extern void lock_relations(List *relations, LOCKMODE mode);
extern void lock_with_retries(engine *e, List *relations, LOCKMODE mode, const char *what);
extern int	stop_triggers(engine *e, Oid relation);

/* reshard_shards.c: foreign partitions */
extern List *foreign_tables(List *relations);
extern List *shard_view_sources(engine *e);
extern void shard_views_lock_parent(engine *e);
extern void snapshot_foreign_partitions(engine *e, List *partitions);
extern void shard_views(engine *e, const char *action);
extern void arm_shards(engine *e);
extern void finish_shards(engine *e);

#endif							/* SUBSETTING_RESHARD_ENGINE_H */
