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

void		_PG_init(void);

void
_PG_init(void)
{
	ring_define_settings();
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("subsetting");
#else
	EmitWarningsOnPlaceholders("subsetting");
#endif
}
