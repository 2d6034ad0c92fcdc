/*
 * src/resharding/state.h
 *		The state row of a call and the SQL routines it runs (state.c).
 */
#ifndef SUBSETTING_RESHARDING_STATE_H
#define SUBSETTING_RESHARDING_STATE_H

#include "datatype/timestamp.h"

#include "resharding/engine.h"

/* the call's start: the extension's tables and routines; the state row */
extern void state_open(engine *e);
extern bool load_state(engine *e);
extern void record_made(engine *e);
extern void save_state(engine *e);
extern void insert_state(engine *e);
extern void delete_states(engine *e, bool this_table, bool of_dropped_tables);
extern void new_state(engine *e, reshard_operation operation);
extern int	state_table_query(engine *e, const char *query, Datum extra, bool extra_null);

/* the state row's columns, in memory */
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

/* what the state row says */
extern bool moving(engine *e);
extern Oid	moved_to(engine *e);
extern List *replaced_sources(engine *e, List **filled);

/* the SQL routines */
extern Oid	routine_oid(engine *e, routine_id routine);
extern void run_routine(engine *e, routine_id routine, int nargs, Datum arg1, Datum arg2);
extern void apply_log(engine *e, int64 max_changes, TimestampTz deadline);

extern char *relation_name(Oid relation);
extern Oid	partition_parent(Oid relation);

#endif							/* SUBSETTING_RESHARDING_STATE_H */
