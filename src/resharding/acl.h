/*
 * src/resharding/acl.h
 *		The privileges of the tables the resharding engine puts in the place
 *		of others (acl.c): copied exactly, grantors included.
 */
#ifndef SUBSETTING_RESHARDING_ACL_H
#define SUBSETTING_RESHARDING_ACL_H

#include "resharding/engine.h"

/* The privileges read from the catalogs, to be given to a table (opaque). */
typedef struct reshard_grants reshard_grants;

/*
 * What relation old grants (its own ACL and its columns' ACLs, by column
 * name), read now, to be given to target once old is gone.
 */
extern reshard_grants *reshard_grants_of(Oid old, Oid target);

/*
 * What every one of relations (of one owner) grants, to be given to target:
 * their ACL when they all have the same, else only the grants each of them
 * has (same grantee, same grantor, the privileges and grant options they
 * all give), a grant whose grantor keeps no grant option for it left out.
 * The same for each column, by name.
 */
extern reshard_grants *reshard_grants_common(List *relations, Oid target);

/*
 * Gives target what grants holds: its ACL and its columns' are replaced in
 * pg_class and pg_attribute, pg_shdepend follows (as GRANT and REVOKE do);
 * no GRANT statement runs, so the grantors stay what they were.  The
 * caller holds a lock on target that blocks GRANT and VACUUM.
 */
extern void reshard_grants_give(reshard_grants *grants);

/*
 * What the engine's tables get: read at the
 * cutover before the old tables are dropped, each table that takes the
 * place of another (the new parent, each shadow) its ACLs exactly; adding,
 * the new partition the partitions' (reshard_grants_common).  Given after
 * the cutover's statements, in its transaction.
 */
extern List *reshard_cutover_grants(engine *e);
extern reshard_grants *reshard_new_partition_grants(engine *e);
extern void reshard_grants_give_all(List *grants);

/*
 * The tables the cutover renamed away (the old parent, the old local
 * partitions, until the finish drops them): every right of every role but
 * their owner revoked, their columns' included, in the cutover's
 * transaction, so that no role reads their stale rows or writes rows there
 * that nobody reads.  A relation of relations that the cutover dropped is
 * passed over.
 */
extern void reshard_grants_revoke_all(List *relations);

/*
 * The engine's own DDL (ALTER, COMMENT, CREATE INDEX...) fires the event
 * triggers of the DBA's, which may grant on the tables it names.  Around
 * each of the engine's SQL routines (run_routine): the grants of the
 * relations of the call (the table, its partitions, the tables the call
 * filled, its log) kept before, and after, those a grant changed meanwhile
 * given back exactly what they had (reshard_grants_give); a relation
 * dropped meanwhile is passed over.
 */
extern List *reshard_grants_kept(List *relations);
extern void reshard_grants_restore(List *kept);

#endif							/* SUBSETTING_RESHARDING_ACL_H */
