/*
 * src/resharding/claims.c
 *		Who runs a call of the engine (claims.h): the claim on its table, and
 *		the refusal of a call while one of a linked table runs.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"

#include "resharding/claims.h"
#include "resharding/state.h"
#include "table_owner.h"

/* The advisory locks' objsubid; SQL's advisory lock functions use 1 and 2. */
#define RESHARD_LOCK_KIND 3

/*
 * The backend running a resharding holds a session lock no SQL function can
 * take (advisory, objsubid RESHARD_LOCK_KIND): while it holds it, no other
 * backend runs a step of that resharding; when it is gone (killed,
 * crashed), the lock is gone with it and the next call continues.
 */
static LOCKTAG
claim_tag(Oid parent)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, parent, 0, RESHARD_LOCK_KIND);
	return tag;
}

/* The error of a claim that another backend holds. */
static void
refuse_claimed(Oid table)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("table %s is being resharded by another backend", relation_name(table)),
			 errhint("See reshard_progress.")));
}

/* This backend runs the resharding of table, or an error says who does. */
static void
claim_table(engine *e, Oid table)
{
	LOCKTAG		tag = claim_tag(table);
	MemoryContext old;

	if (list_member_oid(e->claims, table))
		return;
	if (LockAcquire(&tag, ExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		refuse_claimed(table);
	old = MemoryContextSwitchTo(e->memory);
	e->claims = lappend_oid(e->claims, table);
	MemoryContextSwitchTo(old);
}

/*
 * For the extension's changes of a table outside the engine's calls
 * (unique_constraints.c): no call of the engine runs on table until this
 * transaction ends, or an error says that one does.
 */
void
claim_for_transaction(Oid table)
{
	LOCKTAG		tag = claim_tag(table);

	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		refuse_claimed(table);
}

/* This backend runs the resharding of e->parent, or an error says who does. */
void
claim(engine *e)
{
	claim_table(e, e->parent);
}

/* Every claim of this call released. */
void
unclaim(engine *e)
{
	ListCell   *cell;

	foreach(cell, e->claims)
	{
		LOCKTAG		tag = claim_tag(lfirst_oid(cell));

		LockRelease(&tag, ExclusiveLock, true);
	}
	e->claims = NIL;
}

/*
 * Before the cutover commits: the new parent, whose OID the state row will
 * have, claimed too, so that no other backend can take the resharding over
 * between the commit and follow_new_parent.
 */
void
claim_new_parent(engine *e)
{
	claim_table(e, state_oid(e, STATE_PARENT));
}

/* After the cutover committed, the state is the new parent's: so is the claim (claim_new_parent). */
void
follow_new_parent(engine *e)
{
	Oid			parent = state_oid(e, STATE_PARENT);
	LOCKTAG		tag = claim_tag(e->parent);

	if (parent == e->parent)
		return;
	Assert(list_member_oid(e->claims, parent));
	LockRelease(&tag, ExclusiveLock, true);
	e->claims = list_delete_oid(e->claims, e->parent);
	e->parent = parent;
}

/*
 * A new resharding of e->parent is refused while one of a table that a
 * foreign key links to it (either way, on the tables or on their
 * partitions) has not ended: from its cutover to its finish the foreign
 * keys between the two are on the partitions only, and its cutover and
 * finish change the rows PostgreSQL keeps of them for each partition, so a
 * resharding of the other table would fail late, its copy thrown away (its
 * checks find the table changed) or with an error that blames its
 * partitions.  Two calls that begin at once: each takes a lock (advisory,
 * no table's: classid 0) until its state row commits, so that the second
 * sees the first's (read with a snapshot taken after the lock: not read
 * only).  Moves are not refused for one another's: the foreign keys that
 * link their tables are those their partitions keep (a move refuses any
 * other), which the moves of a bucket's partitions take with them in one
 * cutover (move_foreign_keys).
 */
void
refuse_linked_reshardings(engine *e, reshard_operation operation)
{
	LOCKTAG		tag;
	Oid			saved_user;
	int			saved_context;
	Datum		args[2] = {ObjectIdGetDatum(e->parent), BoolGetDatum(operation == OPERATION_MOVE)};
	Oid			types[2] = {OIDOID, BOOLOID};
	int			ret;
	int			nest_level;
	char	   *others = NULL;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, InvalidOid, 0, RESHARD_LOCK_KIND);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	nest_level = safe_search_path_begin();
	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(e->state_owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	ret = SPI_execute_with_args(psprintf(
		"SELECT pg_catalog.string_agg(pg_catalog.format('%%s (phase %%s)', s.parent_name, s.phase), ', ' ORDER BY s.parent_name)"
		" FROM %s.reshard_state AS s"
		" WHERE s.parent <> $1 AND s.phase NOT IN ('done', 'aborted') AND NOT ($2 AND s.operation = 'move')"
		"   AND EXISTS (SELECT FROM pg_catalog.pg_constraint c WHERE c.contype = 'f'"
		"     AND (c.conrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree($1) AS t)"
		"          AND c.confrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(s.parent) AS t)"
		"          OR c.confrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree($1) AS t)"
		"          AND c.conrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(s.parent) AS t)))",
		e->schema), 2, types, args, NULL, false, 0);
	SetUserIdAndSecContext(saved_user, saved_context);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the reshardings in progress");
	others = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	safe_search_path_end(nest_level);
	if (others != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot reshard %s while %s, linked to it by a foreign key, is being resharded",
						relation_name(e->parent), others),
				 errdetail("A resharding moves the foreign keys between the two tables to its table's new partitions "
						   "at its cutover and finish; a resharding of the other table would find them changed."),
				 errhint("Call it again once that resharding is done (see reshard_progress); an interrupted one is "
						 "finished by calling it again, or undone by reshard_abort.")));
}
