/*
 * src/table_owner.h
 *		Running a table owner's code on someone else's behalf, as
 *		PostgreSQL's maintenance commands do (VACUUM, ANALYZE, REINDEX,
 *		REFRESH MATERIALIZED VIEW): as the owner, in a security-restricted
 *		operation, with a search_path of pg_catalog and pg_temp only.
 */
#ifndef SUBSETTING_TABLE_OWNER_H
#define SUBSETTING_TABLE_OWNER_H

/* Oid: postgres.h, which the .c file includes first. */

/* The owner of relation relid; an error if there is no such relation. */
extern Oid	relation_owner(Oid relid);

/* What table_owner_enter changed, for table_owner_leave to restore. */
typedef struct table_owner_context
{
	Oid			saved_user;
	int			saved_security_context;
	int			saved_guc_nest_level;
} table_owner_context;

/*
 * Becomes the owner of relation relid: the current user is the owner (not
 * a role the caller is a member of), SET ROLE and SET SESSION AUTHORIZATION
 * are refused (so the owner's code cannot take back the caller's rights),
 * temporary objects cannot be created, and settings changed by the owner's
 * code end with table_owner_leave.  An error in between leaves the
 * transaction or subtransaction, whose abort restores the user and the
 * settings.
 */
extern void table_owner_enter(Oid relid, table_owner_context *context);

/* Back to the user, security context and settings before table_owner_enter. */
extern void table_owner_leave(const table_owner_context *context);

/*
 * search_path = pg_catalog, pg_temp until safe_search_path_end (or the
 * abort of the transaction or subtransaction): for the extension's own
 * queries, whose operators and functions the caller's search_path could
 * otherwise resolve to another role's.  Returns the GUC nest level to end.
 */
extern int	safe_search_path_begin(void);
extern void safe_search_path_end(int nest_level);

#endif							/* SUBSETTING_TABLE_OWNER_H */
