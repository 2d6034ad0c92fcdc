/*
 * src/resharding/indexes.c
 *		The indexes of the shadows of a resharding (indexes.h), built
 *		once the copy has filled them.
 *
 * A shadow is made without indexes (reshard_phase_setup), so that the copy
 * writes its rows only: an index built over a full table is written once,
 * page by page, where one kept up during the copy is written row by row
 * (about three times its WAL, and slower).  When the last old partition
 * has been copied, each shadow gets the indexes of the partition it
 * replaces, as CREATE TABLE ... (LIKE ... INCLUDING ALL) would have given
 * it (the same definitions, constraints and tablespaces; new names, which
 * the cutover swaps), before the catch-up needs them.
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "parser/parse_utilcmd.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "resharding/indexes.h"
#include "resharding/state.h"
#include "table_owner.h"

/* The indexes of source, defined on shadow (which has the same columns, by name). */
static void
clone_indexes(Oid source, Oid shadow)
{
	Relation	source_rel = table_open(source, AccessShareLock);
	Relation	shadow_rel = table_open(shadow, ShareLock);
	AttrMap    *map = ATTRMAP_BY_NAME(RelationGetDescr(shadow_rel), RelationGetDescr(source_rel));
	RangeVar   *shadow_name = makeRangeVar(get_namespace_name(RelationGetNamespace(shadow_rel)),
										   pstrdup(RelationGetRelationName(shadow_rel)), -1);
	List	   *statements = NIL;
	ListCell   *cell;

	/* (the shadow's indexes are all built here: none means none was) */
	if (RelationGetIndexList(shadow_rel) == NIL)
		foreach(cell, RelationGetIndexList(source_rel))
		{
			Relation	index = index_open(lfirst_oid(cell), AccessShareLock);

			statements = lappend(statements, generateClonedIndexStmt(shadow_name, index, map, NULL));
			index_close(index, AccessShareLock);
		}
	free_attrmap(map);
	/* (closed, still locked: CREATE INDEX refuses a table this session has open) */
	table_close(shadow_rel, NoLock);
	table_close(source_rel, NoLock);
	/* (a build in parallel shares the transaction's snapshot with its workers: taken now if not yet) */
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(cell, statements)
	{
		(void) DEFINE_INDEX(shadow, lfirst(cell));
		CommandCounterIncrement();
	}
	PopActiveSnapshot();
}

/*
 * The indexes of each shadow (the tables that take the old local
 * partitions' places), and of the table a partition moves into here, as
 * the table's owner, in the copy's last transaction.  The new partition,
 * the DBA's, has its own already.
 */
void
index_shadows(engine *e)
{
	table_owner_context owner;
	List	   *filled;
	List	   *old = replaced_sources(e, &filled);
	ListCell   *o;
	ListCell   *f;

	table_owner_enter(e->parent, &owner);
	/* (each index where its counterpart is, whatever the caller's default_tablespace says) */
	(void) set_config_option("default_tablespace", "", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/* (but the first of each: the old parent and the new one) */
	forboth(o, list_delete_first(old), f, list_delete_first(filled))
		clone_indexes(lfirst_oid(o), lfirst_oid(f));
	/* a partition moved here from a server: the table's (its partitioned indexes) */
	if (moving(e))
	{
		Oid			target = moved_to(e);

		if (get_rel_relkind(target) != RELKIND_FOREIGN_TABLE)
			clone_indexes(e->parent, target);
	}
	table_owner_leave(&owner);
}
