/*
 * src/module.c
 *		The module's one PG_MODULE_MAGIC, and its settings.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "compat.h"
#include "module.h"

PG_MODULE_MAGIC;

/* Declared PGDLLEXPORT by compat.h (fmgr.h from PostgreSQL 16 on). */
void
_PG_init(void)
{
	ring_define_settings();
	MarkGUCPrefixReserved("subsetting");
}
