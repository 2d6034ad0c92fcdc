/*
 * src/core/interrupts.h
 *		How a long loop of the core lets its caller answer query cancel: the
 *		one callback of the whole core for it.  Every function of the core
 *		that may run long takes a core_interrupts and calls check(arg) every
 *		so many steps (INTERRUPTS_EVERY, or as its header says).  NULL, or a
 *		NULL check: no checks.
 *
 * check returns 0 to go on.  A server's check raises the cancel and does
 * not return then: the core has nothing to undo, since its memory comes
 * from the caller.  A nonzero return asks the work to stop where it stands:
 * the ring's functions then free what they allocated and return
 * RING_ECANCELED (tests use this to cancel at a chosen step); the others,
 * which write only into the caller's buffers, go on.
 */
#ifndef SUBSETTING_CORE_INTERRUPTS_H
#define SUBSETTING_CORE_INTERRUPTS_H

#include <stddef.h>
#include <stdint.h>

#define INTERRUPTS_EVERY 65536

typedef struct core_interrupts
{
	int			(*check) (void *arg);
	void	   *arg;
} core_interrupts;

/* Calls ci->check now; returns what it returns (0 if there is none). */
static inline int
core_interrupts_check(const core_interrupts *ci)
{
	return ci != NULL && ci->check != NULL ? ci->check(ci->arg) : 0;
}

/*
 * Calls ci->check when step is a multiple of INTERRUPTS_EVERY; returns what
 * it returns, 0 otherwise.
 */
static inline int
core_interrupts_poll(const core_interrupts *ci, uint64_t step)
{
	return step % INTERRUPTS_EVERY == 0 ? core_interrupts_check(ci) : 0;
}

#endif							/* SUBSETTING_CORE_INTERRUPTS_H */
