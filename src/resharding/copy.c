/*
 * src/resharding/copy.c
 *		reshard_copy_rows: the rows of one table copied into another, each a
 *		table of this server or a foreign table of a postgres_fdw server, in
 *		COPY's text format over connections of the function's own.
 *
 * Both ends are an "end": a local table (read by a heap scan and written by
 * COPY FROM's own CopyFrom) or a postgres_fdw foreign table (a libpq
 * connection opened for the call, to its server as the current user, that
 * runs COPY ... TO STDOUT or COPY ... FROM STDIN in a transaction of its
 * own).  The source end produces lines of COPY text (source_next); the
 * target end consumes them: CopyFrom pulls them through copy_source_cb, a
 * remote COPY FROM STDIN is sent them in buffers of 64 kB.  So the rows
 * stream without waiting for each batch.
 *
 * Every wait on a remote server is a wait on its socket and this backend's
 * latch (wait_socket), so that a cancel, statement_timeout or termination
 * ends the call at once, and a server that goes away ends it with an error.
 * A connection is closed whatever happens (PG_FINALLY): a remote transaction
 * that was not committed is then rolled back by its server.
 *
 * Text round-trips exactly because both sides format and parse it with the
 * same settings (DateStyle ISO, IntervalStyle postgres, extra_float_digits
 * 3, TimeZone UTC, bytea_output hex, lc_monetary C), set on the remote
 * session and here for the call (NewGUCNestLevel, as postgres_fdw does), and
 * with the remote session's client_encoding this database's encoding.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/copy.h"
#include "commands/defrem.h"
#include "executor/tuptable.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_relation.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "resharding/copy.h"

/* Lines are sent to a remote COPY FROM STDIN in buffers of this size. */
#define COPY_BUFFER_SIZE 65536

/*
 * The source that copy_source_cb reads: CopyFrom's callback has no argument
 * of its own.  Set for the duration of CopyFrom only.
 */
static CopyEnd *current_source = NULL;

/* The remote name of the foreign table's column attnum, quoted. */
static char *
remote_column(Relation rel, AttrNumber attnum)
{
	const char *name = NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname);
	ListCell   *lc;

	foreach(lc, GetForeignColumnOptions(RelationGetRelid(rel), attnum))
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "column_name") == 0)
			name = defGetString(d);
	}
	return pstrdup(quote_identifier(name));
}

/*
 * Opens rel as one end: checks its kind, the current user's privilege on it,
 * and for a foreign table its wrapper, server, user mapping and remote name.
 */
static void
open_end(CopyEnd *e, Oid relid, const char *role, LOCKMODE lockmode, AclMode mode)
{
	char		relkind;
	Relation	rel;

	memset(e, 0, sizeof(*e));
	e->role = role;
	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s relation with OID %u does not exist", role, relid)));
	if (!(relkind == RELKIND_RELATION || relkind == RELKIND_FOREIGN_TABLE ||
		  (relkind == RELKIND_PARTITIONED_TABLE && mode == ACL_INSERT)))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s \"%s\" is not a table or a foreign table", role, get_rel_name(relid))));
	if (pg_class_aclcheck(relid, GetUserId(), mode) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid))));

	rel = table_open(relid, lockmode);
	e->rel = rel;
	if (relkind != RELKIND_FOREIGN_TABLE)
	{
		if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot copy rows of table \"%s\", which has row-level security",
							RelationGetRelationName(rel))));
	}
	else
	{
		ForeignTable *ft = GetForeignTable(relid);
		ForeignDataWrapper *fdw;
		char	   *handler;
		const char *nspname = get_namespace_name(RelationGetNamespace(rel));
		const char *relname = RelationGetRelationName(rel);
		ListCell   *lc;

		e->remote = true;
		e->server = GetForeignServer(ft->serverid);
		fdw = GetForeignDataWrapper(e->server->fdwid);
		handler = OidIsValid(fdw->fdwhandler) ? get_func_name(fdw->fdwhandler) : NULL;
		if (handler == NULL || strcmp(handler, "postgres_fdw_handler") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("%s \"%s\" is a foreign table of server \"%s\" of foreign-data wrapper \"%s\", not of postgres_fdw",
							role, relname, e->server->servername, fdw->fdwname)));
		e->mapping = GetUserMapping(GetUserId(), ft->serverid);
		foreach(lc, ft->options)
		{
			DefElem    *d = lfirst_node(DefElem, lc);

			if (strcmp(d->defname, "schema_name") == 0)
				nspname = defGetString(d);
			else if (strcmp(d->defname, "table_name") == 0)
				relname = defGetString(d);
		}
		e->remote_name = quote_qualified_identifier(nspname, relname);
	}
}

/* Columns: the source's that are copied, and the target's of the same names. */
static void
map_columns(CopyEnd *src, CopyEnd *dst)
{
	TupleDesc	sdesc = RelationGetDescr(src->rel);
	TupleDesc	ddesc = RelationGetDescr(dst->rel);
	int			i;

	src->attnums = palloc(sizeof(AttrNumber) * sdesc->natts);
	dst->attnums = palloc(sizeof(AttrNumber) * sdesc->natts);
	for (i = 0; i < sdesc->natts; i++)
	{
		Form_pg_attribute sa = TupleDescAttr(sdesc, i);
		AttrNumber	dattnum;

		if (sa->attisdropped || sa->attgenerated)
			continue;
		dattnum = get_attnum(RelationGetRelid(dst->rel), NameStr(sa->attname));
		if (dattnum == InvalidAttrNumber || dattnum < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of source \"%s\" does not exist in target \"%s\"",
							NameStr(sa->attname), end_name(src), end_name(dst))));
		if (TupleDescAttr(ddesc, dattnum - 1)->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" of target \"%s\" is a generated column",
							NameStr(sa->attname), end_name(dst))));
		src->attnums[src->ncols++] = sa->attnum;
		dst->attnums[dst->ncols++] = dattnum;
	}
	if (src->ncols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source \"%s\" has no columns to copy", end_name(src))));
	if (src->remote)
	{
		src->remote_cols = palloc(sizeof(char *) * src->ncols);
		for (i = 0; i < src->ncols; i++)
			src->remote_cols[i] = remote_column(src->rel, src->attnums[i]);
	}
	if (dst->remote)
	{
		dst->remote_cols = palloc(sizeof(char *) * dst->ncols);
		for (i = 0; i < dst->ncols; i++)
			dst->remote_cols[i] = remote_column(dst->rel, dst->attnums[i]);
	}
}

/* Appends s to buf as a column of COPY's text format. */
static void
append_copy_text(StringInfo buf, const char *s)
{
	const char *start = s;
	const char *p;

	for (p = s; *p; p++)
	{
		unsigned char c = (unsigned char) *p;
		char		esc;

		if (c >= 0x20 && c != '\\')
			continue;
		switch (c)
		{
			case '\\':
				esc = '\\';
				break;
			case '\b':
				esc = 'b';
				break;
			case '\f':
				esc = 'f';
				break;
			case '\n':
				esc = 'n';
				break;
			case '\r':
				esc = 'r';
				break;
			case '\t':
				esc = 't';
				break;
			case '\v':
				esc = 'v';
				break;
			default:
				continue;		/* other control characters go as they are */
		}
		appendBinaryStringInfo(buf, start, p - start);
		appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, esc);
		start = p + 1;
	}
	appendBinaryStringInfo(buf, start, p - start);
}

/* A local source: its scan and output functions. */
static void
begin_local_source(CopyEnd *src)
{
	TupleDesc	desc = RelationGetDescr(src->rel);
	int			i;

	src->out = palloc(sizeof(FmgrInfo) * src->ncols);
	for (i = 0; i < src->ncols; i++)
	{
		Oid			func;
		bool		isvarlena;

		getTypeOutputInfo(TupleDescAttr(desc, src->attnums[i] - 1)->atttypid, &func, &isvarlena);
		fmgr_info(func, &src->out[i]);
	}
	src->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "reshard_copy_rows row",
										ALLOCSET_DEFAULT_SIZES);
	src->slot = table_slot_create(src->rel, NULL);
	src->scan = table_beginscan(src->rel, GetActiveSnapshot(), 0, NULL);
}

/* A remote source: COPY (SELECT ...) TO STDOUT in a read-only transaction. */
static void
begin_remote_source(CopyEnd *src)
{
	StringInfoData sql;
	int			i;

	connect_remote(src);
	run_remote(src, "START TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY",
			   PGRES_COMMAND_OK, "begin a transaction");
	initStringInfo(&sql);
	appendStringInfoString(&sql, "COPY (SELECT ");
	for (i = 0; i < src->ncols; i++)
		appendStringInfo(&sql, "%s%s", i ? ", " : "", src->remote_cols[i]);
	appendStringInfo(&sql, " FROM %s) TO STDOUT", src->remote_name);
	run_remote(src, sql.data, PGRES_COPY_OUT, "read rows");
}

/*
 * Appends the source's next row to its buffer as a line of COPY text;
 * false at the end of the rows.
 */
static bool
source_next(CopyEnd *src)
{
	CHECK_FOR_INTERRUPTS();
	if (!src->remote)
	{
		MemoryContext old;
		int			i;

		if (!table_scan_getnextslot(src->scan, ForwardScanDirection, src->slot))
			return false;
		slot_getallattrs(src->slot);
		MemoryContextReset(src->rowcxt);
		old = MemoryContextSwitchTo(src->rowcxt);
		for (i = 0; i < src->ncols; i++)
		{
			int			a = src->attnums[i] - 1;

			if (i > 0)
				appendStringInfoChar(&src->buf, '\t');
			if (src->slot->tts_isnull[a])
				appendBinaryStringInfo(&src->buf, "\\N", 2);
			else
				append_copy_text(&src->buf,
								 OutputFunctionCall(&src->out[i], src->slot->tts_values[a]));
		}
		appendStringInfoChar(&src->buf, '\n');
		MemoryContextSwitchTo(old);
		return true;
	}

	if (src->copy_done)
		return false;
	for (;;)
	{
		char	   *line = NULL;
		int			len = PQgetCopyData(src->conn, &line, 1);

		if (len > 0)
		{
			appendBinaryStringInfo(&src->buf, line, len);
			PQfreemem(line);
			return true;
		}
		if (len == 0)
		{
			wait_socket(src, WL_SOCKET_READABLE);
			if (!PQconsumeInput(src->conn))
				connection_error(src, "read rows");
			continue;
		}
		if (len == -1)
		{
			PGresult   *res = next_result(src);

			if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
			{
				if (res && PQresultStatus(res) == PGRES_FATAL_ERROR)
					remote_error(src, res, "read rows");
				connection_error(src, "read rows");
			}
			PQclear(res);
			drain_results(src, "read rows");
			src->copy_done = true;
			return false;
		}
		connection_error(src, "read rows");
	}
}

/* CopyFrom's data source: the lines of current_source. */
static int
copy_source_cb(void *outbuf, int minread, int maxread)
{
	CopyEnd    *src = current_source;
	int			n = 0;

	while (n < maxread)
	{
		int			avail = src->buf.len - src->bufpos;

		if (avail == 0)
		{
			if (n >= minread)
				break;
			resetStringInfo(&src->buf);
			src->bufpos = 0;
			if (!source_next(src))
				break;
			continue;
		}
		if (avail > maxread - n)
			avail = maxread - n;
		memcpy((char *) outbuf + n, src->buf.data + src->bufpos, avail);
		src->bufpos += avail;
		n += avail;
	}
	return n;
}

/* The rows into a local target: COPY FROM's CopyFrom, reading the source. */
static uint64
copy_into_local(CopyEnd *src, CopyEnd *dst)
{
	ParseState *pstate = make_parsestate(NULL);
	List	   *attnames = NIL;
	List	   *options;
	CopyFromState cstate;
	uint64		count;
	int			i;

	for (i = 0; i < dst->ncols; i++)
		attnames = lappend(attnames,
						   makeString(pstrdup(NameStr(TupleDescAttr(RelationGetDescr(dst->rel),
																	dst->attnums[i] - 1)->attname))));
	options = list_make1(makeDefElem("encoding",
									 (Node *) makeString(pstrdup(GetDatabaseEncodingName())), -1));
	addRangeTableEntryForRelation(pstate, dst->rel, RowExclusiveLock, NULL, false, false);
	current_source = src;
	cstate = BeginCopyFrom(pstate, dst->rel, NULL, NULL, false, copy_source_cb, attnames, options);
	count = CopyFrom(cstate);
	EndCopyFrom(cstate);
	current_source = NULL;
	return count;
}

/* Sends len bytes of COPY data to a remote target. */
static void
put_copy_data(CopyEnd *dst, const char *data, int len)
{
	int			rc;

	while ((rc = PQputCopyData(dst->conn, data, len)) == 0)
	{
		int			ev = wait_socket(dst, WL_SOCKET_WRITEABLE | WL_SOCKET_READABLE);

		if ((ev & WL_SOCKET_READABLE) && !PQconsumeInput(dst->conn))
			connection_error(dst, "write rows");
	}
	if (rc < 0)
	{
		/* the server may have ended the COPY with an error */
		PGresult   *res = next_result(dst);

		if (res && PQresultStatus(res) == PGRES_FATAL_ERROR)
			remote_error(dst, res, "write rows");
		connection_error(dst, "write rows");
	}
	flush_all(dst);
}

/* The rows into a remote target: COPY ... FROM STDIN, in its transaction. */
static uint64
copy_into_remote(CopyEnd *src, CopyEnd *dst)
{
	StringInfoData sql;
	PGresult   *res;
	uint64		count;
	int			i;
	int			rc;

	connect_remote(dst);
	run_remote(dst, "START TRANSACTION READ WRITE", PGRES_COMMAND_OK, "begin a transaction");
	initStringInfo(&sql);
	/*
	 * The transaction marked as the engine's, for the source: the table a
	 * partition moves into there refuses other writes
	 * (move_destination_guard.sql).
	 */
	appendStringInfo(&sql, "SELECT pg_catalog.set_config('subsetting_reshard.into_%u', 'on', true)",
					 RelationGetRelid(src->rel));
	run_remote(dst, sql.data, PGRES_TUPLES_OK, "begin a transaction");
	resetStringInfo(&sql);
	appendStringInfo(&sql, "COPY %s (", dst->remote_name);
	for (i = 0; i < dst->ncols; i++)
		appendStringInfo(&sql, "%s%s", i ? ", " : "", dst->remote_cols[i]);
	appendStringInfoString(&sql, ") FROM STDIN");
	run_remote(dst, sql.data, PGRES_COPY_IN, "write rows");

	while (source_next(src))
	{
		if (src->buf.len >= COPY_BUFFER_SIZE)
		{
			put_copy_data(dst, src->buf.data, src->buf.len);
			resetStringInfo(&src->buf);
		}
	}
	if (src->buf.len > 0)
		put_copy_data(dst, src->buf.data, src->buf.len);
	resetStringInfo(&src->buf);

	while ((rc = PQputCopyEnd(dst->conn, NULL)) == 0)
		wait_socket(dst, WL_SOCKET_WRITEABLE);
	if (rc < 0)
		connection_error(dst, "write rows");
	res = next_result(dst);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		if (res && PQresultStatus(res) == PGRES_FATAL_ERROR)
			remote_error(dst, res, "write rows");
		connection_error(dst, "write rows");
	}
	count = strtou64(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	drain_results(dst, "write rows");
	return count;
}

/* The settings under which text round-trips, here for the call. */
static void
set_transfer_settings(bool local_source)
{
	static const char *const settings[][2] = {
		{"datestyle", "ISO"},
		{"intervalstyle", "postgres"},
		{"extra_float_digits", "3"},
		{"timezone", "UTC"},
		{"bytea_output", "hex"},
		{"lc_monetary", "C"},
	};
	int			i;

	for (i = 0; i < lengthof(settings); i++)
		(void) set_config_option(settings[i][0], settings[i][1], PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	/* the output functions of reg* types qualify names not on the path */
	if (local_source)
		(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
}

PG_FUNCTION_INFO_V1(reshard_copy_rows);

/*
 * reshard_copy_rows(source regclass, target regclass) RETURNS bigint
 *
 * Copies every row of source (only that relation) into target; returns the
 * number of rows the target took.  A remote target's rows are committed
 * there before it returns; on any error no remote transaction is committed.
 */
Datum
reshard_copy_rows(PG_FUNCTION_ARGS)
{
	Oid			source = PG_GETARG_OID(0);
	Oid			target = PG_GETARG_OID(1);
	CopyEnd		src;
	CopyEnd		dst;
	uint64		count = 0;
	int			nestlevel;
	bool		pushed_snapshot = false;

	if (source == target)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot copy the rows of \"%s\" into itself", get_rel_name(source))));
	open_end(&src, source, "source", AccessShareLock, ACL_SELECT);
	open_end(&dst, target, "target", RowExclusiveLock, ACL_INSERT);
	/* a write, as INSERT into either would be (ExecCheckXactReadOnly) */
	if (!RelationUsesLocalBuffers(dst.rel))
		PreventCommandIfReadOnly("reshard_copy_rows()");
	map_columns(&src, &dst);
	initStringInfo(&src.buf);

	nestlevel = NewGUCNestLevel();
	set_transfer_settings(!src.remote);

	/*
	 * The local source is read, and the local target written, under the
	 * statement's snapshot; called where there is none (a procedure's C code
	 * after a COMMIT), under a new one.
	 */
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed_snapshot = true;
	}

	PG_TRY();
	{
		if (src.remote)
			begin_remote_source(&src);
		else
			begin_local_source(&src);
		if (dst.remote)
		{
			count = copy_into_remote(&src, &dst);
			run_remote(&dst, "COMMIT", PGRES_COMMAND_OK, "commit");
		}
		else
			count = copy_into_local(&src, &dst);
		if (src.remote)
			run_remote(&src, "COMMIT", PGRES_COMMAND_OK, "end the transaction");
		else
		{
			table_endscan(src.scan);
			ExecDropSingleTupleTableSlot(src.slot);
			MemoryContextDelete(src.rowcxt);
		}
	}
	PG_FINALLY();
	{
		current_source = NULL;
		if (src.conn)
			PQfinish(src.conn);
		if (dst.conn)
			PQfinish(dst.conn);
	}
	PG_END_TRY();

	if (pushed_snapshot)
		PopActiveSnapshot();
	AtEOXact_GUC(true, nestlevel);
	table_close(dst.rel, NoLock);
	table_close(src.rel, NoLock);
	PG_RETURN_INT64((int64) count);
}
