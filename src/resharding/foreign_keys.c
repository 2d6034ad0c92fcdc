/*
 * src/resharding/foreign_keys.c
 *		foreign_keys_to_partitions and foreign_keys_to_parent
 *		(src/sql/placement/partition_foreign_keys.sql): a table's foreign
 *		keys to tables co-located with it handed to its partitions, each to
 *		the partition of the same bucket, and back.
 *
 * partition_foreign_key_plan checks the tables and gives the statements, as
 * the table's owner.  The statements of the hand-over run in one
 * transaction, as the table's owner (table_owner.h), that waits for each
 * table at most cutover_budget and is tried at most cutover_attempts times,
 * the engine's claim held (no call of the engine runs on the table
 * meanwhile): to the partitions, the table's foreign key dropped and each
 * partition's added NOT VALID, which reads no row (the table's held for
 * every row until then); back, the partitions' dropped and the table's
 * added, which PostgreSQL checks on every row then.  Then, to the
 * partitions, each partition's foreign key is validated in a transaction
 * of its own (VALIDATE CONSTRAINT blocks no writer), so the call commits:
 * it is refused in a transaction block, and called again after it was cut
 * short, validates what is left.
 */
#include "postgres.h"

#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "resharding/acl.h"
#include "resharding/claims.h"
#include "resharding/records.h"
#include "resharding/state.h"
#include "resharding/xact.h"
#include "table_owner.h"

/* The hand-over of one call: its statements, the tables they lock, the records to write. */
typedef struct foreign_key_hand_over
{
	Oid			parent;
	bool		to_partitions;
	List	   *statements;		/* of the one transaction, in their order */
	List	   *tables;			/* the table and the tables referred to */
	List	   *records;		/* INSERT statements of partition_foreign_keys */
	const char *schema;
	Oid			record_owner;
	int			budget_ms;
} foreign_key_hand_over;

static void
run_statement(const char *sql)
{
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not run \"%s\"", sql);
}

/*
 * The one transaction: the tables locked (each wait at most the budget),
 * the statements run, what the DBA's event triggers granted for that DDL
 * taken back (acl.h), and partition_foreign_keys written as its owner.
 */
static void
hand_over(void *arg)
{
	foreign_key_hand_over *h = arg;
	List	   *relations = NIL;
	List	   *kept;
	ListCell   *cell;

	set_lock_timeout(h->budget_ms);
	claim_for_transaction(h->parent);
	foreach(cell, h->tables)
	{
		LockRelationOid(lfirst_oid(cell), AccessExclusiveLock);
		relations = list_concat(relations, lcons_oid(lfirst_oid(cell),
													  find_inheritance_children(lfirst_oid(cell), AccessExclusiveLock)));
	}
	/* (what an event trigger of the DBA's grants on them for this DDL taken back) */
	kept = reshard_grants_kept(relations);
	foreach(cell, h->statements)
		run_statement(lfirst(cell));
	reshard_grants_restore(kept);
	if (!h->to_partitions)
		run_as_records_owner(h->record_owner, psprintf("DELETE FROM %s.partition_foreign_keys WHERE parent = %u",
														h->schema, h->parent), SPI_OK_DELETE);
	foreach(cell, h->records)
		run_as_records_owner(h->record_owner, lfirst(cell), SPI_OK_INSERT);
}

/* The call of either procedure: (parent, cutover_budget, cutover_attempts). */
static void
hand_foreign_keys(FunctionCallInfo fcinfo, bool to_partitions)
{
	bool		atomic = fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic;
	foreign_key_hand_over h = {0};
	List	   *validations = NIL;
	table_owner_context owner;
	int			nest_level;
	int			attempts;
	Datum		args[2];
	Oid			types[2] = {OIDOID, BOOLOID};
	ListCell   *cell;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	h.parent = PG_GETARG_OID(0);
	h.to_partitions = to_partitions;
	h.budget_ms = cutover_budget_ms(PG_GETARG_INTERVAL_P(1));
	attempts = checked_cutover_attempts(PG_GETARG_INT32(2));
	check_owner(h.parent);
	SPI_connect_ext(atomic ? 0 : SPI_OPT_NONATOMIC);
	nest_level = safe_search_path_begin();
	h.schema = extension_schema("partition_foreign_keys", &h.record_owner, NULL);

	table_owner_enter(h.parent, &owner);
	h.tables = list_make1_oid(h.parent);
	args[0] = ObjectIdGetDatum(h.parent);
	args[1] = BoolGetDatum(to_partitions);
	if (SPI_execute_with_args(psprintf("SELECT step, statement, name, referenced, columns, referenced_columns, options"
									   " FROM %s.partition_foreign_key_plan($1, $2)", h.schema),
							  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not plan the foreign keys of %s", relation_name(h.parent));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *statement = SPI_getvalue(row, desc, 2);
		bool		isnull;
		Oid			referenced = DatumGetObjectId(SPI_getbinval(row, desc, 4, &isnull));

		if (strcmp(SPI_getvalue(row, desc, 1), "validate") == 0)
		{
			validations = lappend(validations, statement);
			continue;
		}
		h.statements = lappend(h.statements, statement);
		if (!isnull)
			h.tables = list_append_unique_oid(h.tables, referenced);
		if (SPI_getvalue(row, desc, 3) != NULL)
			h.records = lappend(h.records,
								psprintf("INSERT INTO %s.partition_foreign_keys VALUES (%u, %s, %u, %s, %s, %s)",
										 h.schema, h.parent, quote_literal_cstr(SPI_getvalue(row, desc, 3)), referenced,
										 quote_literal_cstr(SPI_getvalue(row, desc, 5)),
										 quote_literal_cstr(SPI_getvalue(row, desc, 6)),
										 quote_literal_cstr(SPI_getvalue(row, desc, 7))));
	}
	if (validations != NIL && atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("cannot hand the foreign keys of %s to its partitions inside a transaction block",
						relation_name(h.parent)),
				 errdetail("It validates each partition's foreign key in a transaction of its own."),
				 errhint("Call it on its own, outside BEGIN ... COMMIT.")));
	if (h.statements != NIL)
		run_with_lock_attempts(h.parent, h.budget_ms, attempts, hand_over, &h);
	table_owner_leave(&owner);

	safe_search_path_end(nest_level);

	/* (each in a transaction of its own: SHARE UPDATE EXCLUSIVE, which no writer waits for) */
	foreach(cell, validations)
	{
		SPI_commit();
		nest_level = safe_search_path_begin();
		table_owner_enter(h.parent, &owner);
		claim_for_transaction(h.parent);
		run_statement(lfirst(cell));
		table_owner_leave(&owner);
		safe_search_path_end(nest_level);
	}
	SPI_finish();
}

PG_FUNCTION_INFO_V1(foreign_keys_to_partitions);

/* CALL foreign_keys_to_partitions(parent, cutover_budget, cutover_attempts) */
Datum
foreign_keys_to_partitions(PG_FUNCTION_ARGS)
{
	hand_foreign_keys(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(foreign_keys_to_parent);

/* CALL foreign_keys_to_parent(parent, cutover_budget, cutover_attempts) */
Datum
foreign_keys_to_parent(PG_FUNCTION_ARGS)
{
	hand_foreign_keys(fcinfo, false);
	PG_RETURN_VOID();
}
