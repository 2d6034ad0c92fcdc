/*
 * src/resharding/xact.h
 *		The resharding engine's transactions, subtransactions and lock waits
 *		(xact.c).
 */
#ifndef SUBSETTING_RESHARDING_XACT_H
#define SUBSETTING_RESHARDING_XACT_H

#include "datatype/timestamp.h"
#include "utils/elog.h"

#include "resharding/engine.h"

/* the caller's settings */
extern void settle_session_settings(engine *e);
extern void restore_session_settings(engine *e);

/* transactions */
extern void next_transaction(bool repeatable_read);
extern void rollback_transaction(void);
extern void commit_state(engine *e);

/* units of work, in subtransactions */
extern ErrorData *try_unit(engine *e, engine_unit unit, bool *complete);
extern bool run_unit(engine *e, engine_unit unit);
extern bool with_lock_retries(engine *e, engine_unit unit, const char *what);

/* locks */
extern int	cutover_budget_ms(Interval *budget);
extern int	checked_cutover_attempts(int attempts);
extern void set_lock_timeout(int ms);
extern void lock_relations(List *relations, LOCKMODE mode);
extern void lock_with_retries(engine *e, List *relations, LOCKMODE mode, const char *what);
extern void back_off(int ms);
extern char *out_of_attempts(engine *e, const char *why);
extern void run_with_lock_attempts(Oid relation, int budget_ms, int attempts, void (*work) (void *), void *arg);

/* the engine's triggers */
extern int	stop_triggers(engine *e, Oid relation);
extern int	stop_trigger(engine *e, Oid relation, const char *name, bool wait);

#endif							/* SUBSETTING_RESHARDING_XACT_H */
