/*
 * src/module.c
 *		The module's one magic block (PG_MODULE_MAGIC, with its name and version
 *		where the server knows them: src/compat.h), its settings, and the
 *		core's interrupt check on the server.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "compat.h"
#include "module.h"

SUBSETTING_MODULE_MAGIC;

/* Raises query cancel (and the like) if one is pending; else goes on. */
static int
check_for_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
	return 0;
}

const core_interrupts server_interrupts = {check_for_interrupts, NULL};

/* Declared PGDLLEXPORT by compat.h (fmgr.h from PostgreSQL 16 on). */
void
_PG_init(void)
{
	ring_define_settings();
	atomic_commit_define_settings();
	MarkGUCPrefixReserved("subsetting");
}
