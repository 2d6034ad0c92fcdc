/*
 * src/module.h
 *		What the files of the SQL skin give the module's _PG_init, and what
 *		module.c gives them: the core's interrupt check on the server.
 */
#ifndef SUBSETTING_MODULE_H
#define SUBSETTING_MODULE_H

#include "core/interrupts.h"

/*
 * What every skin file passes where the core takes a core_interrupts: it
 * calls CHECK_FOR_INTERRUPTS(), so a long call of the core answers query
 * cancel (and does not return then).
 */
extern const core_interrupts server_interrupts;

/* src/ring_cache.c: subsetting.ring_cache_size */
extern void ring_define_settings(void);

/* src/atomic_commit.c: subsetting.atomic_commit, its hooks and callbacks */
extern void atomic_commit_define_settings(void);

#endif							/* SUBSETTING_MODULE_H */
