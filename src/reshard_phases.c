/*
 * src/reshard_phases.c
 *		The phase table of the resharding engine (reshard_phases.h) as data:
 *		each phase's name, isolation, lock policy, SQL routine and next
 *		phase, for the engine's files (the driver, reshard_engine.c, has the
 *		steps themselves, and reshard_phases(), which shows the table).
 */
#include "postgres.h"

#include "compat.h"
#include "reshard_engine.h"

static const phase_row phases[PHASE_COUNT] = {
#define PHASE(symbol, name, step, isolation, locks, routine, next) \
	[symbol] = {name, #step, isolation, locks, routine, next},
#include "reshard_phases.h"
#undef PHASE
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

/* Whether a resharding in phase has ended (done or aborted: the phase after it is itself, and it has no step). */
bool
phase_ended(reshard_phase phase)
{
	return phase_of(phase)->next == phase;
}
