/*
 * src/resharding/records.c
 *		The extension's records of how tables are placed (records.h).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "resharding/records.h"
#include "resharding/state.h"

char *
extension_schema(const char *table, Oid *owner, Oid *rowtype)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {table != NULL ? CStringGetTextDatum(table) : (Datum) 0};
	char		nulls[1] = {table != NULL ? ' ' : 'n'};
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.quote_ident(n.nspname), c.relowner, c.reltype"
							  " FROM pg_catalog.pg_extension x JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace"
							  " LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = $1"
							  " WHERE x.extname = 'subsetting'", 1, argtypes, args, nulls, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "extension subsetting is not installed");
	if (table != NULL)
	{
		Datum		table_owner = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

		if (isnull)
			elog(ERROR, "table %s of extension subsetting is missing", table);
		if (owner != NULL)
			*owner = DatumGetObjectId(table_owner);
		if (rowtype != NULL)
			*rowtype = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	}
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

void
run_as_records_owner(Oid owner, const char *sql, int expected)
{
	Oid			saved_user;
	int			saved_context;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	if (SPI_execute(sql, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	SetUserIdAndSecContext(saved_user, saved_context);
}

void
check_owner(Oid relid)
{
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!RELATION_OWNERCHECK(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s", relation_name(relid))));
}
