/*
 * src/resharding/tables.c
 *		The phase table (phases.h) and the operation table (operations.h) of
 *		the resharding engine as data, for its units (the driver has the
 *		steps themselves, cutover.c the cutover units; procedures.c shows the
 *		tables: reshard_phases(), reshard_operations()).
 */
#include "postgres.h"

#include "resharding/tables.h"

static const phase_row phases[PHASE_COUNT] = {
#define PHASE(symbol, name, step, isolation, locks, routine, next) \
	[symbol] = {name, #step, isolation, locks, routine, next},
#include "resharding/phases.h"
#undef PHASE
};

/*
 * A move's routines (src/sql/placement/move_phase_*.sql), by phase, where
 * its work differs from a resharding's: it makes no new parent and no
 * shadows, it copies one partition whole, to a table here or on a server.
 * It shares the catch-up (the change log's apply) with every operation.
 */
static const routine_id move_routines[PHASE_COUNT] = {
	[PHASE_SETUP] = ROUTINE_MOVE_SETUP,
	[PHASE_CAPTURE] = ROUTINE_NONE,
	[PHASE_COPY] = ROUTINE_MOVE_COPY,
	[PHASE_CATCH_UP] = ROUTINE_NONE,
	[PHASE_VERIFY] = ROUTINE_MOVE_VERIFY,
	[PHASE_CUTOVER] = ROUTINE_MOVE_CUTOVER,
	[PHASE_FINISH] = ROUTINE_MOVE_FINISH,
	[PHASE_DONE] = ROUTINE_NONE,
	[PHASE_UNDO] = ROUTINE_MOVE_UNDO,
	[PHASE_ABORTED] = ROUTINE_NONE,
};

static const operation_row operations[OPERATION_COUNT] = {
#define OPERATION(symbol, name, partition, rebuilds, plan, routines, cutover) \
	[symbol] = {name, partition, rebuilds, plan, routines, #cutover},
#include "resharding/operations.h"
#undef OPERATION
};

const phase_row *
phase_of(reshard_phase phase)
{
	Assert(phase >= 0 && phase < PHASE_COUNT);
	return &phases[phase];
}

const char *
phase_name(reshard_phase phase)
{
	return phase_of(phase)->name;
}

reshard_phase
phase_from_name(const char *name)
{
	for (int phase = 0; phase < PHASE_COUNT; phase++)
		if (strcmp(phases[phase].name, name) == 0)
			return (reshard_phase) phase;
	elog(ERROR, "unknown resharding phase \"%s\"", name);
	pg_unreachable();
}

reshard_phase
next_phase(reshard_phase phase)
{
	return phase_of(phase)->next;
}

/* Whether a call in phase has ended (done or aborted: the phase after it is itself, and it has no step). */
bool
phase_ended(reshard_phase phase)
{
	return phase_of(phase)->next == phase;
}

const operation_row *
operation_of(reshard_operation operation)
{
	Assert(operation >= 0 && operation < OPERATION_COUNT);
	return &operations[operation];
}

/*
 * The SQL routine that does the work of phase in operation: the
 * operation's own (operations.h's column routines), else the phase
 * table's.
 */
routine_id
phase_routine(reshard_operation operation, reshard_phase phase)
{
	const routine_id *own = operation_of(operation)->routines;

	if (own != NULL && own[phase] != ROUTINE_NONE)
		return own[phase];
	return phase_of(phase)->routine;
}

/*
 * The operation of that name: a word of the state row (read when a call
 * begins), or of a caller (reshard_begin, reshard_engine_run), whose
 * unknown word is an error that names it.
 */
reshard_operation
operation_from_name(const char *name)
{
	for (int operation = 0; operation < OPERATION_COUNT; operation++)
		if (strcmp(operations[operation].name, name) == 0)
			return (reshard_operation) operation;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown resharding operation %s", name)));
	pg_unreachable();
}
