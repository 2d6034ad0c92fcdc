/*
 * src/core/interrupts.h
 *		How a long loop of the core lets its caller answer query cancel: it
 *		calls check(arg) every INTERRUPTS_EVERY steps.  A server's check
 *		raises the cancel (it does not return then); the core has nothing to
 *		undo, since it writes only into the caller's buffers.  NULL: no checks.
 */
#ifndef SUBSETTING_CORE_INTERRUPTS_H
#define SUBSETTING_CORE_INTERRUPTS_H

#include <stddef.h>
#include <stdint.h>

#define INTERRUPTS_EVERY 65536

typedef struct core_interrupts
{
	void		(*check) (void *arg);
	void	   *arg;
} core_interrupts;

/* Calls ci->check when step is a multiple of INTERRUPTS_EVERY. */
static inline void
core_interrupts_poll(const core_interrupts *ci, uint64_t step)
{
	if (ci != NULL && ci->check != NULL && step % INTERRUPTS_EVERY == 0)
		ci->check(ci->arg);
}

#endif							/* SUBSETTING_CORE_INTERRUPTS_H */
