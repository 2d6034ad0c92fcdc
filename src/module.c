/*
 * src/module.c
 *		The module's one PG_MODULE_MAGIC.
 */
#include "postgres.h"

#include "fmgr.h"

#include "compat.h"

PG_MODULE_MAGIC;
