/*
 * src/resharding/colocation.c
 *		colocate and uncolocate (src/sql/placement/colocation.sql): the
 *		groups of tables whose partitions of a bucket live on the same server,
 *		kept in colocated_tables, which only they write (records.h).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "resharding/records.h"
#include "resharding/state.h"
#include "table_owner.h"

/* An error (22023, as for any bad argument of a function) unless relid is a relation. */
static void
check_table_exists(Oid relid)
{
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("relation with OID %u does not exist", relid)));
}

PG_FUNCTION_INFO_V1(colocate);

/*
 * colocate(tables regclass[]) → int: the caller owns every table; the checks
 * (colocation_plan, as the caller) give the group; the tables, and the
 * groups some of them were in, are that group.
 */
Datum
colocate(PG_FUNCTION_ARGS)
{
	ArrayType  *tables;
	Datum	   *elements;
	bool	   *nulls;
	int			count;
	int			nest_level;
	char	   *schema;
	Oid			owner;
	Oid			argtypes[1] = {REGCLASSARRAYOID};
	Datum		args[1];
	bool		isnull;
	int			group;
	StringInfoData oids;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tables must not be null, nor any of them")));
	tables = PG_GETARG_ARRAYTYPE_P(0);
	deconstruct_array(tables, REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT, &elements, &nulls, &count);
	initStringInfo(&oids);
	for (int i = 0; i < count; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("tables must not be null, nor any of them")));
		check_table_exists(DatumGetObjectId(elements[i]));
		check_owner(DatumGetObjectId(elements[i]));
		appendStringInfo(&oids, "%s%u", i > 0 ? "," : "", DatumGetObjectId(elements[i]));
	}

	SPI_connect();
	nest_level = safe_search_path_begin();
	schema = extension_schema("colocated_tables", &owner, NULL);
	args[0] = PointerGetDatum(tables);
	if (SPI_execute_with_args(psprintf("SELECT %s.colocation_plan($1)", schema), 1, argtypes, args, NULL, false, 1)
		!= SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not plan the group of %s", oids.data);
	group = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	run_as_records_owner(owner,
						 psprintf("UPDATE %1$s.colocated_tables SET colocation_group = %2$d WHERE colocation_group IN"
								  " (SELECT colocation_group FROM %1$s.colocated_tables WHERE parent IN (%3$s))",
								  schema, group, oids.data),
						 SPI_OK_UPDATE);
	run_as_records_owner(owner,
						 psprintf("INSERT INTO %1$s.colocated_tables SELECT DISTINCT t, %2$d"
								  " FROM pg_catalog.unnest('{%3$s}'::pg_catalog.oid[]) AS t"
								  " ON CONFLICT (parent) DO NOTHING",
								  schema, group, oids.data),
						 SPI_OK_INSERT);
	safe_search_path_end(nest_level);
	SPI_finish();
	PG_RETURN_INT32(group);
}

PG_FUNCTION_INFO_V1(uncolocate);

/* uncolocate(parent regclass): out of its group; a group of one left is none. */
Datum
uncolocate(PG_FUNCTION_ARGS)
{
	Oid			parent;
	int			nest_level;
	char	   *schema;
	Oid			owner;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent must not be null")));
	parent = PG_GETARG_OID(0);
	check_table_exists(parent);
	check_owner(parent);
	SPI_connect();
	nest_level = safe_search_path_begin();
	schema = extension_schema("colocated_tables", &owner, NULL);
	/* (the partitions' foreign keys to another table of the group need the group: partition_foreign_keys.sql) */
	if (SPI_execute(psprintf("SELECT pg_catalog.string_agg(pg_catalog.format('%%I of %%s to %%s', k.name, k.parent, k.referenced), ', ')"
							 " FROM %s.partition_foreign_keys k"
							 " WHERE (k.parent = %u OR k.referenced = %u) AND k.parent <> k.referenced",
							 schema, parent, parent), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the foreign keys of %s", relation_name(parent));
	if (SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot take %s out of its group: the partitions keep foreign keys between its tables: %s",
						relation_name(parent), SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
				 errhint("foreign_keys_to_parent gives such a foreign key back to its table first.")));
	run_as_records_owner(owner,
						 psprintf("WITH gone AS (DELETE FROM %1$s.colocated_tables WHERE parent = %2$u RETURNING colocation_group)"
								  " DELETE FROM %1$s.colocated_tables c USING gone"
								  " WHERE c.colocation_group = gone.colocation_group"
								  "   AND (SELECT pg_catalog.count(*) FROM %1$s.colocated_tables g"
								  "        WHERE g.colocation_group = c.colocation_group) = 2",
								  schema, parent),
						 SPI_OK_DELETE);
	safe_search_path_end(nest_level);
	SPI_finish();
	PG_RETURN_VOID();
}
