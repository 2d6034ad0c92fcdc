/*
 * src/resharding/copy.h
 *		What the two files of reshard_copy_rows share (copy.c, the copy;
 *		remote.c, the libpq side of a foreign table's end).
 */
#ifndef SUBSETTING_RESHARDING_COPY_H
#define SUBSETTING_RESHARDING_COPY_H

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "utils/rel.h"

/*
 * One end of the copy: a local table or a postgres_fdw foreign table; or,
 * without a table, a connection of atomic commit's to a server (its second
 * phase, its recovery, a server's set-up: src/atomic_commit*.c), of which
 * only server, mapping, role and conn are used.
 */
typedef struct CopyEnd
{
	Relation	rel;
	const char *role;			/* "source" or "target", for messages */
	bool		remote;
	ForeignServer *server;		/* remote: its server ... */
	UserMapping *mapping;		/* ... and the current user's mapping */
	char	   *remote_name;	/* remote: schema.table, quoted */
	PGconn	   *conn;			/* remote: open during the call */
	bool		copy_done;		/* remote source: COPY TO STDOUT ended */

	/* the columns copied, in the source's order */
	int			ncols;
	AttrNumber *attnums;		/* this end's attribute numbers */
	char	  **remote_cols;	/* remote: the remote columns' names, quoted */

	/* local source */
	TableScanDesc scan;
	TupleTableSlot *slot;
	FmgrInfo   *out;			/* output functions */
	MemoryContext rowcxt;		/* reset for each row */

	/* source: COPY text produced and not yet consumed */
	StringInfoData buf;
	int			bufpos;
} CopyEnd;

/* The end's table, by name, for messages. */
static inline const char *
end_name(CopyEnd *e)
{
	return RelationGetRelationName(e->rel);
}

/*
 * What the end is, for messages after a server's name: of its role and
 * table ('of target "t"'); for a connection without a table (rel NULL), its
 * role alone ('for the recovery of prepared transactions').
 */
static inline const char *
end_label(CopyEnd *e)
{
	return e->rel != NULL ? psprintf("of %s \"%s\"", e->role, end_name(e)) : e->role;
}

/* remote.c: a foreign table's end, over a connection of the call's own */
extern void connect_remote(CopyEnd *e);
extern void run_remote(CopyEnd *e, const char *sql, ExecStatusType expect, const char *what);
extern PGresult *next_result(CopyEnd *e);
extern void drain_results(CopyEnd *e, const char *what);
extern void flush_all(CopyEnd *e);
extern int	wait_socket(CopyEnd *e, int events);
extern pg_noreturn void connection_error(CopyEnd *e, const char *what);
extern pg_noreturn void remote_error(CopyEnd *e, PGresult *res, const char *what);

#endif							/* SUBSETTING_RESHARDING_COPY_H */
