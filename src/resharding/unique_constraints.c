/*
 * src/resharding/unique_constraints.c
 *		unique_constraints_to_partitions and unique_constraints_to_parent
 *		(src/sql/placement/partition_unique_constraints.sql): a table's
 *		PRIMARY KEY and UNIQUE constraints handed to its partitions, so that
 *		they can move to servers, and back.
 *
 * PostgreSQL allows no foreign partition under a table with a unique index,
 * and dropping the table's constraint drops its partitions' indexes with it.
 * So each partition's index is first detached from the table's, as DETACH
 * PARTITION detaches it (the index and its constraint become the
 * partition's own), then the table's constraint is dropped: no index is
 * built, no row read, and the transaction is short.  Back: the table's
 * constraint added again takes each partition's (of the same definition)
 * as its partition, as PostgreSQL does when it finds one: nothing is built.
 * Either way in one transaction, as the table's owner (table_owner.h), that
 * waits for the table at most cutover_budget and is tried at most
 * cutover_attempts times, the engine's claim held (no call of the engine
 * runs on the table meanwhile).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "resharding/acl.h"
#include "resharding/claims.h"
#include "resharding/records.h"
#include "resharding/state.h"
#include "resharding/xact.h"
#include "table_owner.h"

/* A constraint handed over: its name, its definition, the table's index of it. */
typedef struct handed_constraint
{
	char	   *name;
	char	   *definition;
	Oid			index;
} handed_constraint;

/*
 * Each partition's index of the table's index parent_index becomes the
 * partition's own, with its constraint (what DETACH PARTITION does to a
 * partition's indexes).
 */
static void
detach_partition_indexes(Oid parent_index)
{
	ListCell   *cell;

	foreach(cell, find_inheritance_children(parent_index, AccessExclusiveLock))
	{
		Oid			child = lfirst_oid(cell);
		Relation	index = index_open(child, AccessExclusiveLock);
		Oid			constraint = get_relation_idx_constraint_oid(IndexGetRelation(child, false), child);

		IndexSetParentIndex(index, InvalidOid);
		if (OidIsValid(constraint))
			ConstraintSetParentConstraint(constraint, InvalidOid, InvalidOid);
		index_close(index, NoLock);
	}
	CommandCounterIncrement();
}

static void
run_sql(const char *sql, int expected)
{
	if (SPI_execute(sql, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
}

/*
 * One attempt: the table and its partitions locked (each wait at most the
 * budget), the constraints handed over, what the DBA's event triggers
 * granted on them for that DDL taken back (acl.h), and
 * partition_unique_constraints written as its owner (record_owner).
 */
typedef struct hand_over_call
{
	Oid			parent;
	bool		to_partitions;
	List	   *constraints;
	const char *schema;
	Oid			record_owner;
	int			budget_ms;
} hand_over_call;

static void
hand_over(void *arg)
{
	hand_over_call *call = arg;
	Oid			parent = call->parent;
	bool		to_partitions = call->to_partitions;
	List	   *constraints = call->constraints;
	const char *schema = call->schema;
	Oid			record_owner = call->record_owner;
	char	   *table = relation_name(parent);
	ListCell   *cell;
	List	   *kept;

	set_lock_timeout(call->budget_ms);
	claim_for_transaction(parent);
	LockRelationOid(parent, AccessExclusiveLock);
	/* (what an event trigger of the DBA's grants on them for this DDL taken back) */
	kept = reshard_grants_kept(lcons_oid(parent, find_inheritance_children(parent, AccessExclusiveLock)));
	foreach(cell, constraints)
	{
		handed_constraint *c = lfirst(cell);

		if (to_partitions)
		{
			detach_partition_indexes(c->index);
			run_sql(psprintf("ALTER TABLE %s DROP CONSTRAINT %s", table, quote_identifier(c->name)), SPI_OK_UTILITY);
		}
		else
			run_sql(psprintf("ALTER TABLE %s ADD CONSTRAINT %s %s", table, quote_identifier(c->name), c->definition),
					SPI_OK_UTILITY);
	}
	reshard_grants_restore(kept);
	run_as_records_owner(record_owner, psprintf("DELETE FROM %s.partition_unique_constraints WHERE parent = %u",
												schema, parent), SPI_OK_DELETE);
	if (to_partitions)
		foreach(cell, constraints)
		{
			handed_constraint *c = lfirst(cell);

			run_as_records_owner(record_owner,
								 psprintf("INSERT INTO %s.partition_unique_constraints VALUES (%u, %s, %s)", schema,
										  parent, quote_literal_cstr(c->name), quote_literal_cstr(c->definition)),
								 SPI_OK_INSERT);
		}
}

/* The call of either procedure: (parent, cutover_budget, cutover_attempts). */
static void
hand_unique_constraints(FunctionCallInfo fcinfo, bool to_partitions)
{
	Oid			parent;
	int			budget_ms;
	int			attempts;
	table_owner_context owner;
	int			nest_level;
	char	   *schema;
	Oid			record_owner;
	bool		isnull;
	List	   *constraints = NIL;
	Datum		args[2];
	Oid			types[2] = {OIDOID, BOOLOID};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	parent = PG_GETARG_OID(0);
	budget_ms = cutover_budget_ms(PG_GETARG_INTERVAL_P(1));
	attempts = checked_cutover_attempts(PG_GETARG_INT32(2));
	check_owner(parent);
	SPI_connect();
	nest_level = safe_search_path_begin();
	schema = extension_schema("partition_unique_constraints", &record_owner, NULL);

	table_owner_enter(parent, &owner);
	args[0] = ObjectIdGetDatum(parent);
	args[1] = BoolGetDatum(to_partitions);
	if (SPI_execute_with_args(psprintf("SELECT name, definition, index FROM %s.partition_unique_plan($1, $2)", schema),
							  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not plan the unique constraints of %s", relation_name(parent));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		handed_constraint *c = palloc(sizeof(handed_constraint));
		HeapTuple	row = SPI_tuptable->vals[i];

		c->name = SPI_getvalue(row, SPI_tuptable->tupdesc, 1);
		c->definition = SPI_getvalue(row, SPI_tuptable->tupdesc, 2);
		c->index = DatumGetObjectId(SPI_getbinval(row, SPI_tuptable->tupdesc, 3, &isnull));
		constraints = lappend(constraints, c);
	}

	if (constraints != NIL)
	{
		hand_over_call call = {parent, to_partitions, constraints, schema, record_owner, budget_ms};

		run_with_lock_attempts(parent, budget_ms, attempts, hand_over, &call);
	}
	table_owner_leave(&owner);
	safe_search_path_end(nest_level);
	SPI_finish();
}

PG_FUNCTION_INFO_V1(unique_constraints_to_partitions);

/* CALL unique_constraints_to_partitions(parent, cutover_budget, cutover_attempts) */
Datum
unique_constraints_to_partitions(PG_FUNCTION_ARGS)
{
	hand_unique_constraints(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(unique_constraints_to_parent);

/* CALL unique_constraints_to_parent(parent, cutover_budget, cutover_attempts) */
Datum
unique_constraints_to_parent(PG_FUNCTION_ARGS)
{
	hand_unique_constraints(fcinfo, false);
	PG_RETURN_VOID();
}
