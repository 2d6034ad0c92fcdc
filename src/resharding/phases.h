/*
 * src/resharding/phases.h
 *		The phase table of the resharding engine (docs/resharding-engine.md):
 *		one line per value of reshard_state.phase, in the order a call goes
 *		through them, whatever its operation (operations.h says what differs).
 *
 * PHASE(symbol, name, step, isolation, locks, routine, next)
 *	symbol		the enum value (reshard_phase, engine.h)
 *	name		the value in reshard_state.phase (its CHECK lists the same)
 *	step		the C function that does one step of the phase; it returns
 *				true when the phase is complete, its last transaction
 *				left open for the driver (steps.c, cutover.c)
 *	isolation	of the step's transactions
 *	locks		how the step waits for locks (lock_policy, engine.h)
 *	routine		the SQL routine that does the phase's work (ROUTINE_NONE:
 *				the step works in C); the steps call it, and the others
 *				they need, through the routine table (state.c)
 *	next		the phase once the step says this one is complete; only the
 *				driver (driver.c) moves a call on, by this column,
 *				except that any phase before finish goes to undo when
 *				the call fails or is aborted
 *
 * Before setup, the operation's plan (operations.h) checks the table and
 * fills the state row, which is written in phase setup.  Done and aborted are final.
 *
 * This file is a list, included where the table is needed with PHASE
 * defined (as PostgreSQL's rmgrlist.h): no include guard.
 */

/*    symbol          name        step           isolation        locks             routine                next */
PHASE(PHASE_SETUP,    "setup",    step_setup,    READ_COMMITTED,  LOCKS_NONE,       ROUTINE_PHASE_SETUP,   PHASE_CAPTURE)
PHASE(PHASE_CAPTURE,  "capture",  step_capture,  READ_COMMITTED,  LOCKS_RETRIED,    ROUTINE_NONE,          PHASE_COPY)
PHASE(PHASE_COPY,     "copy",     step_copy,     REPEATABLE_READ, LOCKS_OWN,        ROUTINE_PHASE_COPY,    PHASE_CATCH_UP)
PHASE(PHASE_CATCH_UP, "catch up", step_catch_up, READ_COMMITTED,  LOCKS_NONE,       ROUTINE_APPLY_LOG,     PHASE_VERIFY)
PHASE(PHASE_VERIFY,   "verify",   step_verify,   REPEATABLE_READ, LOCKS_NONE,       ROUTINE_PHASE_VERIFY,  PHASE_CUTOVER)
PHASE(PHASE_CUTOVER,  "cutover",  step_cutover,  READ_COMMITTED,  LOCKS_CUTOVER,    ROUTINE_PHASE_CUTOVER, PHASE_FINISH)
PHASE(PHASE_FINISH,   "finish",   step_finish,   READ_COMMITTED,  LOCKS_OWN,        ROUTINE_PHASE_FINISH,  PHASE_DONE)
PHASE(PHASE_DONE,     "done",     NULL,          READ_COMMITTED,  LOCKS_NONE,       ROUTINE_NONE,          PHASE_DONE)
PHASE(PHASE_UNDO,     "undo",     step_undo,     READ_COMMITTED,  LOCKS_RETRIED,    ROUTINE_PHASE_UNDO,    PHASE_ABORTED)
PHASE(PHASE_ABORTED,  "aborted",  NULL,          READ_COMMITTED,  LOCKS_NONE,       ROUTINE_NONE,          PHASE_ABORTED)
