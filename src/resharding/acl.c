/*
 * src/resharding/acl.c
 *		The privileges of the tables the resharding engine puts in the place
 *		of others (acl.h).
 *
 * A GRANT statement names its grantor as the role that runs it: the engine,
 * which runs as the table's owner, could only give back as the owner's the
 * grants other roles made WITH GRANT OPTION, and REVOKE ... CASCADE from
 * such a role would then no longer reach what it granted.  So the ACLs are
 * copied as they are in the catalogs, aclitem by aclitem, as PostgreSQL's
 * own GRANT writes them (ExecGrant_Relation, ExecGrant_Attribute): the
 * tuple of pg_class and of each column in pg_attribute updated, the roles
 * the ACL names recorded in pg_shdepend (so that DROP ROLE of a grantee is
 * refused and DROP OWNED and REASSIGN OWNED find them), and the change made
 * visible.  Only the engine calls this, on tables of the owner of the table
 * it reshards and with ACLs read from tables of the same owner.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "resharding/acl.h"
#include "resharding/state.h"
#include "resharding/tables.h"

/* A column's ACL, by the column's name (columns are matched by name: attnums differ). */
typedef struct column_grants
{
	char	   *name;
	Acl		   *acl;			/* NULL: none */
} column_grants;

struct reshard_grants
{
	Oid			target;
	Acl		   *acl;			/* NULL: the default (the owner's) */
	List	   *columns;		/* of column_grants, the columns whose ACL is not NULL */
};

/* relation's ACL (a copy), or NULL; its owner in *owner. */
static Acl *
relation_acl(Oid relation, Oid *owner)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));
	Datum		datum;
	bool		isnull;
	Acl		   *acl = NULL;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relation);
	*owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	datum = SysCacheGetAttr(RELOID, tuple, Anum_pg_class_relacl, &isnull);
	if (!isnull)
		acl = DatumGetAclPCopy(datum);
	ReleaseSysCache(tuple);
	return acl;
}

/*
 * The columns of relation (not dropped) with their ACLs (copies), a column
 * without one too; read from the catalog caches, taking no lock.
 */
static List *
relation_columns(Oid relation)
{
	HeapTuple	class_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));
	int			natts;
	List	   *columns = NIL;

	if (!HeapTupleIsValid(class_tuple))
		elog(ERROR, "cache lookup failed for relation %u", relation);
	natts = ((Form_pg_class) GETSTRUCT(class_tuple))->relnatts;
	ReleaseSysCache(class_tuple);
	for (int attnum = 1; attnum <= natts; attnum++)
	{
		HeapTuple	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relation), Int16GetDatum(attnum));
		Form_pg_attribute att;
		column_grants *column;
		Datum		datum;
		bool		isnull;

		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "cache lookup failed for column %d of relation %u", attnum, relation);
		att = (Form_pg_attribute) GETSTRUCT(tuple);
		if (!att->attisdropped)
		{
			column = palloc0(sizeof(column_grants));
			column->name = pstrdup(NameStr(att->attname));
			datum = SysCacheGetAttr(ATTNUM, tuple, Anum_pg_attribute_attacl, &isnull);
			if (!isnull)
				column->acl = DatumGetAclPCopy(datum);
			columns = lappend(columns, column);
		}
		ReleaseSysCache(tuple);
	}
	return columns;
}

reshard_grants *
reshard_grants_of(Oid old, Oid target)
{
	reshard_grants *grants = palloc0(sizeof(reshard_grants));
	Oid			owner;
	ListCell   *cell;

	grants->target = target;
	grants->acl = relation_acl(old, &owner);
	foreach(cell, relation_columns(old))
		if (((column_grants *) lfirst(cell))->acl != NULL)
			grants->columns = lappend(grants->columns, lfirst(cell));
	return grants;
}

/* The item of acl with grantee and grantor, or NULL. */
static AclItem *
acl_find(Acl *acl, Oid grantee, Oid grantor)
{
	AclItem    *items = ACL_DAT(acl);

	for (int i = 0; i < ACL_NUM(acl); i++)
		if (items[i].ai_grantee == grantee && items[i].ai_grantor == grantor)
			return &items[i];
	return NULL;
}

/*
 * The grants every ACL of acls has (NULL members: none; all NULL: NULL),
 * owner being the owner of all: each item of the first whose grantee and
 * grantor have an item in every other, with the privileges and grant
 * options all of them give; then, until nothing changes, a grant made by
 * another role than the owner keeps only what its grantor may still grant
 * (what the grant options left to it allow, in the ACL or in also: a
 * column's grantor may hold its grant option on the table), as REVOKE ...
 * CASCADE would leave it.  Items left with nothing are dropped.
 */
static Acl *
acl_common(List *acls, Oid owner, Acl *also)
{
	Acl		   *result = NULL;
	AclItem    *items;
	bool		changed;
	int			n;
	ListCell   *cell;

	foreach(cell, acls)
	{
		if (lfirst(cell) != NULL)
			break;
		if (lnext(acls, cell) == NULL)
			return NULL;
	}
	foreach(cell, acls)
	{
		Acl		   *acl = (Acl *) lfirst(cell);

		if (acl == NULL)
			return NULL;		/* (a column's: none) */
		if (result == NULL)
		{
			result = (Acl *) DatumGetPointer(datumCopy(PointerGetDatum(acl), false, -1));
			continue;
		}
		items = ACL_DAT(result);
		for (int i = 0; i < ACL_NUM(result); i++)
		{
			AclItem    *other = acl_find(acl, items[i].ai_grantee, items[i].ai_grantor);

			items[i].ai_privs = other == NULL ? 0 : items[i].ai_privs & other->ai_privs;
		}
	}
	items = ACL_DAT(result);
	do
	{
		changed = false;
		for (int i = 0; i < ACL_NUM(result); i++)
		{
			AclMode		options = 0;
			AclMode		kept;

			if (items[i].ai_grantor == owner)
				continue;
			for (int j = 0; j < ACL_NUM(result); j++)
				if (items[j].ai_grantee == items[i].ai_grantor)
					options |= ACLITEM_GET_GOPTIONS(items[j]);
			for (int j = 0; also != NULL && j < ACL_NUM(also); j++)
				if (ACL_DAT(also)[j].ai_grantee == items[i].ai_grantor)
					options |= ACLITEM_GET_GOPTIONS(ACL_DAT(also)[j]);
			kept = items[i].ai_privs & (options | ACL_GRANT_OPTION_FOR(options));
			if (kept != items[i].ai_privs)
			{
				items[i].ai_privs = kept;
				changed = true;
			}
		}
	} while (changed);
	n = 0;
	for (int i = 0; i < ACL_NUM(result); i++)
		if (items[i].ai_privs != 0)
			items[n++] = items[i];
	if (n == 0)
		return NULL;
	ARR_DIMS(result)[0] = n;
	SET_VARSIZE(result, ACL_N_SIZE(n));
	return result;
}

reshard_grants *
reshard_grants_common(List *relations, Oid target)
{
	reshard_grants *grants = palloc0(sizeof(reshard_grants));
	List	   *acls = NIL;
	List	   *columns_of = NIL;
	Oid			owner = InvalidOid;
	ListCell   *cell;
	ListCell   *c;

	grants->target = target;
	if (relations == NIL)
	{
		grants->acl = relation_acl(target, &owner);
		return grants;
	}
	foreach(cell, relations)
	{
		acls = lappend(acls, relation_acl(lfirst_oid(cell), &owner));
		columns_of = lappend(columns_of, relation_columns(lfirst_oid(cell)));
	}
	/* all the default (NULL): the default; else a default spelled out */
	if (list_member_ptr(acls, NULL))
	{
		bool		all_default = true;

		foreach(cell, acls)
			all_default = all_default && lfirst(cell) == NULL;
		foreach(cell, acls)
			if (lfirst(cell) == NULL && !all_default)
				lfirst(cell) = acldefault(OBJECT_TABLE, owner);
	}
	grants->acl = acl_common(acls, owner, NULL);
	/* each column of the first, by name, with what the others' of that name give */
	foreach(c, (List *) linitial(columns_of))
	{
		column_grants *column = palloc0(sizeof(column_grants));
		List	   *column_acls = NIL;

		column->name = ((column_grants *) lfirst(c))->name;
		foreach(cell, columns_of)
		{
			Acl		   *acl = NULL;
			ListCell   *o;

			foreach(o, (List *) lfirst(cell))
				if (strcmp(((column_grants *) lfirst(o))->name, column->name) == 0)
					acl = ((column_grants *) lfirst(o))->acl;
			column_acls = lappend(column_acls, acl);
		}
		column->acl = acl_common(column_acls, owner,
								 grants->acl != NULL ? grants->acl : acldefault(OBJECT_TABLE, owner));
		if (column->acl != NULL)
			grants->columns = lappend(grants->columns, column);
	}
	return grants;
}

/*
 * Replaces attribute (in pg_class when column is NULL, else the column of
 * that name in pg_attribute) of target's catalog tuple by acl (NULL: null),
 * and pg_shdepend's record of the roles the old one named by those of the
 * new one (the default ACL's when null), as ExecGrant_Relation does.
 */
static void
set_acl(Oid target, const char *column, Acl *acl)
{
	Oid			catalog = column == NULL ? RelationRelationId : AttributeRelationId;
	int			attribute = column == NULL ? Anum_pg_class_relacl : Anum_pg_attribute_attacl;
	Relation	rel = table_open(catalog, RowExclusiveLock);
	HeapTuple	tuple;
	HeapTuple	updated;
	Datum	   *values;
	bool	   *nulls;
	bool	   *replace;
	Datum		datum;
	bool		isnull;
	Acl		   *old_acl;
	Acl		   *new_acl = acl;
	Oid		   *old_members;
	Oid		   *new_members;
	int			old_count;
	int			new_count;
	Oid			owner;
	int32		subid = 0;

	if (column == NULL)
		tuple = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(target));
	else
		tuple = SearchSysCacheCopyAttName(target, column);
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for %s of relation %u", column == NULL ? "the ACL" : column, target);
	if (column != NULL)
		subid = ((Form_pg_attribute) GETSTRUCT(tuple))->attnum;
	(void) relation_acl(target, &owner);
	datum = heap_getattr(tuple, attribute, RelationGetDescr(rel), &isnull);
	old_acl = isnull ? (column == NULL ? acldefault(OBJECT_TABLE, owner) : NULL) : DatumGetAclP(datum);
	if (new_acl == NULL && column == NULL)
		new_acl = acldefault(OBJECT_TABLE, owner);
	if (!(isnull && acl == NULL))
	{
		values = palloc0(sizeof(Datum) * RelationGetDescr(rel)->natts);
		nulls = palloc0(sizeof(bool) * RelationGetDescr(rel)->natts);
		replace = palloc0(sizeof(bool) * RelationGetDescr(rel)->natts);
		replace[attribute - 1] = true;
		if (acl == NULL)
			nulls[attribute - 1] = true;
		else
			values[attribute - 1] = PointerGetDatum(acl);
		old_count = old_acl == NULL ? 0 : aclmembers(old_acl, &old_members);
		new_count = new_acl == NULL ? 0 : aclmembers(new_acl, &new_members);
		if (old_count == 0)
			old_members = NULL;
		if (new_count == 0)
			new_members = NULL;
		updated = heap_modify_tuple(tuple, RelationGetDescr(rel), values, nulls, replace);
		CatalogTupleUpdate(rel, &updated->t_self, updated);
		updateAclDependencies(RelationRelationId, target, subid, owner,
							  old_count, old_members, new_count, new_members);
	}
	table_close(rel, RowExclusiveLock);
}

void
reshard_grants_give(reshard_grants *grants)
{
	ListCell   *cell;

	LockRelationOid(grants->target, ShareUpdateExclusiveLock);
	set_acl(grants->target, NULL, grants->acl);
	foreach(cell, relation_columns(grants->target))
	{
		column_grants *now = (column_grants *) lfirst(cell);
		Acl		   *acl = NULL;
		ListCell   *g;

		foreach(g, grants->columns)
			if (strcmp(((column_grants *) lfirst(g))->name, now->name) == 0)
				acl = ((column_grants *) lfirst(g))->acl;
		if (acl != NULL || now->acl != NULL)
			set_acl(grants->target, now->name, acl);
	}
	CommandCounterIncrement();
}

/*
 * Takes from relation every right of every role but its owner: of its ACL
 * only the owner's own items stay (a NULL ACL, the default, is the owner's
 * alone already), its columns' ACLs go.  pg_shdepend follows (set_acl).
 */
static void
grants_revoke(Oid relation)
{
	Oid			owner;
	Acl		   *acl = relation_acl(relation, &owner);
	ListCell   *cell;

	if (acl != NULL)
	{
		AclItem    *items = ACL_DAT(acl);
		int			n = 0;

		for (int i = 0; i < ACL_NUM(acl); i++)
			if (items[i].ai_grantee == owner)
				items[n++] = items[i];
		ARR_DIMS(acl)[0] = n;
		SET_VARSIZE(acl, ACL_N_SIZE(n));
		set_acl(relation, NULL, acl);
	}
	foreach(cell, relation_columns(relation))
		if (((column_grants *) lfirst(cell))->acl != NULL)
			set_acl(relation, ((column_grants *) lfirst(cell))->name, NULL);
}

void
reshard_grants_revoke_all(List *relations)
{
	ListCell   *cell;

	foreach(cell, relations)
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(lfirst_oid(cell))))
			grants_revoke(lfirst_oid(cell));
	CommandCounterIncrement();
}

/*
 * A partition that joins the table (adding) gets what the table's
 * partitions grant, not what the user's CREATE TABLE gave it (the schema's
 * default privileges, the grants of a LIKE ... INCLUDING ALL); NULL for
 * the other operations.
 */
reshard_grants *
reshard_new_partition_grants(engine *e)
{
	if (operation_of(e->operation)->partition != PARTITION_JOINS)
		return NULL;
	return reshard_grants_common(list_delete_oid(find_inheritance_children(e->parent, NoLock),
												 state_oid(e, STATE_PARTITION)),
								 state_oid(e, STATE_PARTITION));
}

/* The grants of each table the cutover replaces (replaced_sources), and the new partition's. */
List *
reshard_cutover_grants(engine *e)
{
	List	   *filled;
	List	   *old = replaced_sources(e, &filled);
	List	   *grants = NIL;
	reshard_grants *added = reshard_new_partition_grants(e);
	ListCell   *o;
	ListCell   *f;

	forboth(o, old, f, filled)
		grants = lappend(grants, reshard_grants_of(lfirst_oid(o), lfirst_oid(f)));
	if (added != NULL)
		grants = lappend(grants, added);
	return grants;
}

void
reshard_grants_give_all(List *grants)
{
	ListCell   *cell;

	foreach(cell, grants)
		reshard_grants_give((reshard_grants *) lfirst(cell));
}

/* Whether two ACLs (NULL: none, or the default) hold the same items. */
static bool
acl_same(Acl *a, Acl *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return ACL_NUM(a) == ACL_NUM(b) && memcmp(ACL_DAT(a), ACL_DAT(b), ACL_NUM(a) * sizeof(AclItem)) == 0;
}

/* Whether relation's ACLs, its own and its columns', are still those of grants (taken of it). */
static bool
grants_unchanged(reshard_grants *grants)
{
	Oid			owner;
	ListCell   *cell;
	int			with_acl = 0;

	if (!acl_same(relation_acl(grants->target, &owner), grants->acl))
		return false;
	foreach(cell, relation_columns(grants->target))
	{
		column_grants *now = (column_grants *) lfirst(cell);
		Acl		   *then = NULL;
		ListCell   *g;

		if (now->acl == NULL)
			continue;
		with_acl++;
		foreach(g, grants->columns)
			if (strcmp(((column_grants *) lfirst(g))->name, now->name) == 0)
				then = ((column_grants *) lfirst(g))->acl;
		if (!acl_same(now->acl, then))
			return false;
	}
	return with_acl == list_length(grants->columns);
}

List *
reshard_grants_kept(List *relations)
{
	List	   *kept = NIL;
	ListCell   *cell;

	foreach(cell, relations)
		if (OidIsValid(lfirst_oid(cell)) && SearchSysCacheExists1(RELOID, ObjectIdGetDatum(lfirst_oid(cell))))
			kept = lappend(kept, reshard_grants_of(lfirst_oid(cell), lfirst_oid(cell)));
	return kept;
}

void
reshard_grants_restore(List *kept)
{
	ListCell   *cell;

	foreach(cell, kept)
	{
		reshard_grants *grants = (reshard_grants *) lfirst(cell);

		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(grants->target)) && !grants_unchanged(grants))
			reshard_grants_give(grants);
	}
}
