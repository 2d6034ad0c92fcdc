/*
 * src/resharding/inspect.c
 *		The read-only helpers of resharding that read rows: reshard_check
 *		(rows in the wrong partition) and reshard_dry_run (rows a resharding
 *		would move), as safe to run on any table as a SELECT of it.
 *
 * Counting evaluates the partition key, which may call the table owner's
 * functions and operators.  The caller needs SELECT on the table, as for
 * reading it, and the counts are computed as the owner, in a
 * security-restricted operation (src/table_owner.h), as ANALYZE computes
 * them: the owner's code never runs with the caller's rights.  The queries
 * are composed in SQL by sharding_layout and reshard_bucket_sql, with a
 * search_path of pg_catalog and pg_temp so that every name in them is
 * written qualified.  (In the queries below, %1$s is the extension's schema
 * and %%s a placeholder of SQL's format().)
 */
#include "postgres.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "table_owner.h"

/*
 * One row per partition: the partition, its bucket, and the query that
 * counts its rows and those that match the condition.  $1 is the parent;
 * $2 the bucket count of the dry run (NULL: what reshard_add_partition
 * would make).  A hash partition holds the rows with a NULL key in bucket
 * 0, as PostgreSQL places them.  The dry run has no query for a partition
 * that holds no single bucket.
 */
static const char *const check_queries =
"SELECT l.partition, l.bucket, pg_catalog.format("
"  'SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE %%s IS DISTINCT FROM %%s) FROM %%s',"
"  CASE WHEN l.method = 'hash_operator_class' THEN pg_catalog.format('COALESCE(%%s, 0)', b.expr) ELSE b.expr END,"
"  COALESCE(l.bucket::text, 'NULL'), l.partition)"
" FROM %1$s.sharding_layout($1, true) AS l"
" CROSS JOIN LATERAL (SELECT %1$s.reshard_bucket_sql(l.hash_function, l.key, l.buckets, l.removed) AS expr) AS b"
" WHERE l.partition IS NOT NULL";

static const char *const dry_run_queries =
"SELECT l.partition, l.bucket, CASE WHEN l.bucket IS NOT NULL THEN pg_catalog.format("
"  'SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE %%s <> %%s) FROM %%s',"
"  CASE WHEN l.method = 'hash_operator_class' THEN pg_catalog.format('COALESCE(%%s, 0)', b.expr) ELSE b.expr END,"
"  l.bucket, l.partition) END"
" FROM %1$s.sharding_layout($1, true) AS l"
" CROSS JOIN LATERAL ("
"   SELECT CASE WHEN $2 IS NOT NULL THEN $2"
"               WHEN l.method = 'jumpbackanchorhash' THEN (%1$s.jumpbackanchorhash_add_bucket(l.buckets, l.removed)).buckets"
"               ELSE l.buckets + 1 END AS buckets,"
"          CASE WHEN $2 IS NULL AND l.method = 'jumpbackanchorhash'"
"               THEN (%1$s.jumpbackanchorhash_add_bucket(l.buckets, l.removed)).removed"
"               ELSE l.removed END AS removed) AS n"
" CROSS JOIN LATERAL (SELECT %1$s.reshard_bucket_sql(l.hash_function, l.key, n.buckets, n.removed) AS expr) AS b"
" WHERE l.partition IS NOT NULL";

/* The name of a relation as regclass prints it (for the current search_path). */
static const char *
relation_name(Oid relid)
{
	return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

/* The caller may read parent as a SELECT of it would: all of its rows. */
static void
check_may_read(Oid parent)
{
	AclResult	result;

	if (get_rel_name(parent) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("relation with OID %u does not exist", parent)));
	result = pg_class_aclcheck(parent, GetUserId(), ACL_SELECT);
	if (result != ACLCHECK_OK)
		aclcheck_error(result, OBJECT_TABLE, get_rel_name(parent));
	if (check_enable_rls(parent, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot count the rows of %s, its row-level security hides rows from the current user",
						relation_name(parent))));
}

/* Runs a count query of the layout as the owner of parent: (rows, matching). */
static void
count_as_owner(Oid parent, const char *query, int64 *rows, int64 *matching)
{
	table_owner_context owner;
	bool		isnull;

	table_owner_enter(parent, &owner);
	if (SPI_execute(query, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not count the rows of a partition of %s", relation_name(parent));
	*rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*matching = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	table_owner_leave(&owner);
}

/*
 * The rows of every partition of parent, and how many match the condition
 * of queries (check_queries or dry_run_queries, with buckets as $2).
 */
static void
partition_counts(FunctionCallInfo fcinfo, const char *queries, Oid parent, Datum buckets, bool buckets_null)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *parent_name;
	const char *schema = quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
	Oid			argtypes[2] = {REGCLASSOID, INT4OID};
	Datum		args[2] = {ObjectIdGetDatum(parent), buckets};
	char		nulls[2] = {' ', buckets_null ? 'n' : ' '};
	int			nest_level;
	SPITupleTable *layout;
	uint64		partitions;

	InitMaterializedSRF(fcinfo, 0);
	check_may_read(parent);
	parent_name = relation_name(parent);

	nest_level = safe_search_path_begin();
	SPI_connect();
	if (SPI_execute_with_args(psprintf(queries, schema), 2, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the layout of %s", parent_name);
	layout = SPI_tuptable;
	partitions = SPI_processed;
	if (partitions == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table %s is not partitioned by the extension's functions or operator classes",
						parent_name)));
	for (uint64 i = 0; i < partitions; i++)
	{
		HeapTuple	tuple = layout->vals[i];
		bool		partition_null;
		bool		bucket_null;
		bool		query_null;
		Datum		partition = SPI_getbinval(tuple, layout->tupdesc, 1, &partition_null);
		Datum		bucket = SPI_getbinval(tuple, layout->tupdesc, 2, &bucket_null);
		Datum		query = SPI_getbinval(tuple, layout->tupdesc, 3, &query_null);
		int64		rows;
		int64		matching;
		Datum		values[4];
		bool		value_nulls[4] = {false, bucket_null, false, false};

		CHECK_FOR_INTERRUPTS();
		if (query_null)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("table %s is not partitioned by the extension one bucket a partition",
							parent_name)));
		count_as_owner(parent, TextDatumGetCString(query), &rows, &matching);
		values[0] = partition;
		values[1] = bucket;
		values[2] = Int64GetDatum(rows);
		values[3] = Int64GetDatum(matching);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, value_nulls);
	}
	SPI_finish();
	safe_search_path_end(nest_level);
}

PG_FUNCTION_INFO_V1(reshard_check);
Datum
reshard_check(PG_FUNCTION_ARGS)
{
	partition_counts(fcinfo, check_queries, PG_GETARG_OID(0), (Datum) 0, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(reshard_dry_run);
Datum
reshard_dry_run(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent must not be null")));
	if (!PG_ARGISNULL(1) && PG_GETARG_INT32(1) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of buckets must be at least 1, got %d", PG_GETARG_INT32(1))));
	partition_counts(fcinfo, dry_run_queries, PG_GETARG_OID(0),
					 PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1));
	return (Datum) 0;
}
