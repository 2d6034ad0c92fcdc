/*
 * src/module.c
 *		The module's one magic block (PG_MODULE_MAGIC, with its name and version
 *		where the server knows them: src/compat.h), and its settings.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "compat.h"
#include "module.h"

SUBSETTING_MODULE_MAGIC;

/* Declared PGDLLEXPORT by compat.h (fmgr.h from PostgreSQL 16 on). */
void
_PG_init(void)
{
	ring_define_settings();
	MarkGUCPrefixReserved("subsetting");
}
