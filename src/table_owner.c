/*
 * src/table_owner.c
 *		Running a table owner's code on someone else's behalf (table_owner.h):
 *		what matview.c and vacuum.c do before they evaluate a table's
 *		expressions.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "catalog/pg_class.h"
#include "access/htup_details.h"

#include "table_owner.h"

Oid
relation_owner(Oid relid)
{
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

void
table_owner_enter(Oid relid, table_owner_context *context)
{
	Oid			owner = relation_owner(relid);

	GetUserIdAndSecContext(&context->saved_user, &context->saved_security_context);
	SetUserIdAndSecContext(owner,
						   context->saved_security_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	context->saved_guc_nest_level = safe_search_path_begin();
}

void
table_owner_leave(const table_owner_context *context)
{
	safe_search_path_end(context->saved_guc_nest_level);
	SetUserIdAndSecContext(context->saved_user, context->saved_security_context);
}

int
safe_search_path_begin(void)
{
	int			nest_level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nest_level;
}

void
safe_search_path_end(int nest_level)
{
	AtEOXact_GUC(false, nest_level);
}
