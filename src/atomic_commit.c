/*
 * src/atomic_commit.c
 *		Atomic commit across servers: a transaction that wrote through
 *		postgres_fdw on two or more servers (this server counting as one when
 *		it wrote too) commits on every one of them or on none.
 *
 * postgres_fdw commits each server's part of a transaction on its own, at
 * pre-commit, one server after the other: a server that refuses at commit, or
 * dies, after another committed leaves half of the transaction.  postgres_fdw
 * sends its COMMIT on a connection no other module can reach (GetConnection
 * is not exported from PostgreSQL 16 on), so the prepare happens on the
 * server: with subsetting.atomic_commit on (the default),
 *
 *	1. every foreign table the executor wrote through (ExecutorEnd: the result
 *	   relations, planned or tuple-routed) adds its server and user mapping to
 *	   the transaction's parts;
 *	2. at pre-commit, ahead of postgres_fdw's callback (this module's goes
 *	   first again at each transaction's first write, after postgres_fdw's was
 *	   registered), a transaction with two parts or more names each part
 *	   (atomic_commit.h) and sets the name, as the part's role, in the
 *	   server's view atomic_commit_marker through the foreign table that
 *	   atomic_commit_add_server made here (an UPDATE that postgres_fdw sends
 *	   as one statement): on the server, the view's trigger keeps the name,
 *	   and the COMMIT postgres_fdw then sends becomes PREPARE
 *	   TRANSACTION with that name (this module's utility hook, there); the
 *	   names also go into atomic_commit_decisions, in this transaction, which
 *	   holds them if and only if it commits;
 *	3. after the local commit, each part is committed (COMMIT PREPARED), after
 *	   an abort rolled back, on a connection of this module's own to the
 *	   server (opened at pre-commit, kept for the session), waiting at most
 *	   subsetting.atomic_commit_timeout each (interrupts are held then); what
 *	   it could not finish is left to recovery (atomic_commit_recovery.c),
 *	   whose worker it starts.
 *
 * A transaction that wrote on one server only is left to postgres_fdw as it
 * was: no marker, no prepare, no record.
 */
#include "postgres.h"

#include <sys/socket.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/latch.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "module.h"
#include "table_owner.h"
#include "atomic_commit.h"
#include "resharding/copy.h"

/* subsetting.atomic_commit_test_stop: where a test stops the coordinator */
typedef enum test_stop
{
	TEST_STOP_NONE,
	TEST_STOP_PREPARED,			/* every part prepared, this transaction not committed */
	TEST_STOP_COMMITTED,		/* committed here, no part committed */
	TEST_STOP_SECOND_PHASE		/* the first part committed, not the others */
} test_stop;

static const struct config_enum_entry test_stop_options[] = {
	{"none", TEST_STOP_NONE, false},
	{"prepared", TEST_STOP_PREPARED, false},
	{"committed", TEST_STOP_COMMITTED, false},
	{"second phase", TEST_STOP_SECOND_PHASE, false},
	{NULL, 0, false}
};

static bool atomic_commit = true;
static int	atomic_commit_timeout = 30000;
static int	atomic_commit_test_stop = TEST_STOP_NONE;

/* A server's part of the transaction: one per user mapping written through. */
typedef struct part
{
	Oid			mapping;
	Oid			server;
	Oid			user;
	PGconn	   *conn;			/* this module's own, for the second phase */
	bool		marked;			/* its marker set: the server prepares it */
	char		gid[GIDSIZE];
} part;

/* The transaction's parts (TopTransactionContext); NIL between transactions. */
static List *parts = NIL;

/* This module's connections, by user mapping (TopMemoryContext). */
typedef struct own_conn
{
	Oid			mapping;
	PGconn	   *conn;
} own_conn;
static List *own_conns = NIL;
static bool own_conns_stale = false;	/* a server or mapping changed */

/* Parts committed by this backend, whose decisions the next prepare deletes. */
#define MAX_DONE_DECISIONS 1024
static char *done_decisions[MAX_DONE_DECISIONS];
static int	n_done_decisions = 0;

/* On a server: the name the COMMIT of this transaction prepares it under. */
static char *commit_as_gid = NULL;

static ExecutorEnd_hook_type previous_executor_end = NULL;
static ProcessUtility_hook_type previous_process_utility = NULL;

static void xact_callback(XactEvent event, void *arg);

/* --- which writes are postgres_fdw's --------------------------------------- */
/* Is the foreign data wrapper's handler postgres_fdw's? (cached by handler) */
static bool
is_postgres_fdw_handler(Oid handler)
{
	static Oid	known = InvalidOid;
	static bool known_is = false;
	HeapTuple	tuple;
	bool		is = false;

	if (handler == known)
		return known_is;
	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(handler));
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_prosrc, &isnull);
		Datum		bin = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_probin, &isnull);

		if (!isnull)
		{
			char	   *lib = TextDatumGetCString(bin);
			size_t		len = strlen(lib);

			is = strcmp(TextDatumGetCString(src), "postgres_fdw_handler") == 0 &&
				len >= strlen("postgres_fdw") &&
				strcmp(lib + len - strlen("postgres_fdw"), "postgres_fdw") == 0;
		}
		ReleaseSysCache(tuple);
	}
	known = handler;
	known_is = is;
	return is;
}

/*
 * The role postgres_fdw connects as for a result relation: the relation's
 * checkAsUser (a view's owner, ...), or the current user; for a partition
 * that tuple routing opened, its root's.
 */
static Oid
result_relation_user(ResultRelInfo *rri, EState *estate)
{
#if PG_VERSION_NUM >= 160000
	return ExecGetResultRelCheckAsUser(rri, estate);
#else
	Index		rti = rri->ri_RangeTableIndex;
	RangeTblEntry *rte;

	if (rti == 0 && rri->ri_RootResultRelInfo != NULL)
		rti = rri->ri_RootResultRelInfo->ri_RangeTableIndex;
	rte = exec_rt_fetch(rti, estate);
	return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
#endif
}

/*
 * Adds the part of a server, through user's mapping, once per mapping.  The
 * first part of the transaction puts this module's callback first, ahead of
 * postgres_fdw's (which a connection's first use registered).
 */
static void
add_part(Oid server, Oid user)
{
	UserMapping *mapping = GetUserMapping(user, server);
	ListCell   *lc;
	MemoryContext old;
	part	   *p;

	foreach(lc, parts)
		if (((part *) lfirst(lc))->mapping == mapping->umid)
			return;
	if (parts == NIL)
	{
		UnregisterXactCallback(xact_callback, NULL);
		RegisterXactCallback(xact_callback, NULL);
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc0(sizeof(part));
	p->mapping = mapping->umid;
	p->server = server;
	p->user = user;
	parts = lappend(parts, p);
	MemoryContextSwitchTo(old);
}

/* Is server a postgres_fdw server? */
static bool
is_postgres_fdw_server(Oid server)
{
	return is_postgres_fdw_handler(GetForeignDataWrapper(GetForeignServer(server)->fdwid)->fdwhandler);
}

/* The part of a foreign table written through. */
static void
add_written_part(ResultRelInfo *rri, EState *estate)
{
	Oid			server;

	if (rri->ri_RelationDesc->rd_rel->relkind != RELKIND_FOREIGN_TABLE)
		return;
	server = GetForeignServerIdByRelId(RelationGetRelid(rri->ri_RelationDesc));
	if (is_postgres_fdw_server(server))
		add_part(server, result_relation_user(rri, estate));
}

void
atomic_commit_include(Oid server, Oid user)
{
	if (is_postgres_fdw_server(server))
		add_part(server, user);
}

static void
track_writes(QueryDesc *query)
{
	EState	   *estate = query->estate;
	ListCell   *lc;

	if (estate != NULL && !IsParallelWorker() && !(estate->es_top_eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		foreach(lc, estate->es_opened_result_relations)
			add_written_part(lfirst(lc), estate);
		foreach(lc, estate->es_tuple_routing_result_relations)
			add_written_part(lfirst(lc), estate);
	}
	if (previous_executor_end)
		previous_executor_end(query);
	else
		standard_ExecutorEnd(query);
}

/* --- this module's connections ------------------------------------------- */

/* A server or user mapping changed: the connections are opened again. */
static void
connections_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	own_conns_stale = true;
}

/*
 * This module's connection through a user mapping: opened the first time
 * (or again after a server or mapping changed, or after it broke), as
 * reshard_copy_rows opens its own (src/resharding/remote.c).
 */
static PGconn *
own_connection(part *p)
{
	ListCell   *lc;
	own_conn   *c = NULL;
	CopyEnd		e = {0};

	foreach(lc, own_conns)
		if (((own_conn *) lfirst(lc))->mapping == p->mapping)
			c = lfirst(lc);
	if (own_conns_stale)
	{
		foreach(lc, own_conns)
		{
			own_conn   *stale = lfirst(lc);

			if (stale->conn)
				PQfinish(stale->conn);
			stale->conn = NULL;
		}
		own_conns_stale = false;
	}
	/* (reading what waits on it finds a connection the server closed) */
	if (c != NULL && c->conn != NULL && PQconsumeInput(c->conn) && PQstatus(c->conn) == CONNECTION_OK &&
		PQtransactionStatus(c->conn) == PQTRANS_IDLE)
		return c->conn;
	if (c == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		c = palloc0(sizeof(own_conn));
		c->mapping = p->mapping;
		own_conns = lappend(own_conns, c);
		MemoryContextSwitchTo(old);
	}
	if (c->conn != NULL)
		PQfinish(c->conn);
	c->conn = NULL;
	e.server = GetForeignServer(p->server);
	e.mapping = GetUserMapping(p->user, p->server);
	e.role = "for the commit of prepared transactions";
	PG_TRY();
	{
		connect_remote(&e);
	}
	PG_CATCH();
	{
		if (e.conn != NULL)
			PQfinish(e.conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	c->conn = e.conn;
	return c->conn;
}

PGresult *
atomic_commit_await(PGconn *conn, long timeout_ms)
{
	PGresult   *last = NULL;
	TimestampTz deadline = 0;

	if (timeout_ms >= 0)
		deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	for (;;)
	{
		PGresult   *res;
		int			unsent;

		/* (what is left of the query in libpq's buffer is sent as the socket takes it) */
		while ((unsent = PQflush(conn)) == 1 || PQisBusy(conn))
		{
			long		wait = -1;
			int			rc;

			if (unsent < 0 || PQsocket(conn) == PGINVALID_SOCKET)
				break;			/* broken: its error is the result */
			if (timeout_ms >= 0)
			{
				wait = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
				if (wait <= 0)
				{
					/* the server is gone or hangs: break the connection */
					shutdown(PQsocket(conn), SHUT_RDWR);
					(void) PQconsumeInput(conn);
					while ((res = PQgetResult(conn)) != NULL)
						PQclear(res);
					PQclear(last);
					return NULL;
				}
			}
			rc = WaitLatchOrSocket(MyLatch,
								   WL_LATCH_SET | WL_SOCKET_READABLE | WL_EXIT_ON_PM_DEATH |
								   (unsent == 1 ? WL_SOCKET_WRITEABLE : 0) |
								   (timeout_ms >= 0 ? WL_TIMEOUT : 0),
								   PQsocket(conn), wait, PG_WAIT_EXTENSION);
			if (rc & WL_LATCH_SET)
			{
				ResetLatch(MyLatch);
				CHECK_FOR_INTERRUPTS();
			}
			if ((rc & WL_SOCKET_READABLE) && !PQconsumeInput(conn))
				break;
		}
		res = PQgetResult(conn);
		if (res == NULL)
			break;
		PQclear(last);
		last = res;
	}
	return last;
}

/* --- names -------------------------------------------------------------- */

char *
atomic_commit_gid_prefix(void)
{
	return psprintf(ATOMIC_COMMIT_GID_PREFIX UINT64_FORMAT "_%u_",
					GetSystemIdentifier(), MyDatabaseId);
}

/* The extension's schema in this database; InvalidOid without it. */
static Oid
extension_namespace(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			namespace = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("subsetting"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		namespace = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return namespace;
}

Oid
atomic_commit_decisions(Oid *owner)
{
	Oid			namespace = extension_namespace();
	Oid			relid;

	if (!OidIsValid(namespace))
		return InvalidOid;
	relid = get_relname_relid("atomic_commit_decisions", namespace);
	if (OidIsValid(relid) && owner != NULL)
		*owner = relation_owner(relid);
	return relid;
}

/* --- on a server: the COMMIT that prepares ------------------------------- */

PG_FUNCTION_INFO_V1(atomic_commit_mark);

/*
 * The INSTEAD OF UPDATE trigger of atomic_commit_marker: the COMMIT of this
 * transaction will prepare it under the name set (a coordinator's, of
 * atomic_commit.h's form), which is not stored.
 */
Datum
atomic_commit_mark(PG_FUNCTION_ARGS)
{
	TriggerData *trigger = (TriggerData *) fcinfo->context;
	bool		isnull;
	Datum		gid;
	char	   *name;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_INSTEAD(trigger->tg_event) ||
		!TRIGGER_FIRED_BY_UPDATE(trigger->tg_event) || !TRIGGER_FIRED_FOR_ROW(trigger->tg_event))
		elog(ERROR, "atomic_commit_mark: not called as an INSTEAD OF UPDATE row trigger");
	gid = heap_getattr(trigger->tg_newtuple, 1, trigger->tg_relation->rd_att, &isnull);
	name = isnull ? NULL : TextDatumGetCString(gid);
	if (name == NULL || strncmp(name, ATOMIC_COMMIT_GID_PREFIX, strlen(ATOMIC_COMMIT_GID_PREFIX)) != 0 ||
		strlen(name) >= GIDSIZE || strchr(name, '\'') != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid name of a prepared transaction: %s", name ? name : "NULL"),
				 errdetail("A coordinator's atomic commit names its parts \"%s...\".", ATOMIC_COMMIT_GID_PREFIX)));
	if (max_prepared_xacts == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this server does not allow prepared transactions (max_prepared_transactions = 0)"),
				 errhint("Set max_prepared_transactions above zero on this server, or SET subsetting.atomic_commit = off on the coordinator to commit each server's part on its own.")));
	if (!IsTransactionBlock())
		ereport(ERROR,
				(errcode(ERRCODE_NO_ACTIVE_SQL_TRANSACTION),
				 errmsg("atomic_commit_marker takes a name only in a transaction block")));
	commit_as_gid = MemoryContextStrdup(TopTransactionContext, name);
	return PointerGetDatum(NULL);
}

/*
 * The utility hook, on a server: COMMIT, in a transaction a marker named,
 * is PREPARE TRANSACTION under that name.  On a coordinator: COPY FROM into
 * a table writes, through postgres_fdw, on the servers of its foreign
 * partitions that rows go to, which no executor hook sees: each such server
 * is taken as written on (one where no row went only commits an empty part).
 */
static void
process_utility(PlannedStmt *pstmt, const char *query, bool read_only_tree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *env, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	Oid			copied = InvalidOid;

	if (commit_as_gid != NULL && IsA(stmt, TransactionStmt) &&
		((TransactionStmt *) stmt)->kind == TRANS_STMT_COMMIT &&
		!((TransactionStmt *) stmt)->chain && IsTransactionBlock())
	{
		PlannedStmt *prepare = makeNode(PlannedStmt);
		TransactionStmt *t = makeNode(TransactionStmt);

		memcpy(prepare, pstmt, sizeof(PlannedStmt));
		t->kind = TRANS_STMT_PREPARE;
		t->gid = commit_as_gid;
		prepare->utilityStmt = (Node *) t;
		pstmt = prepare;
	}
	if (IsA(stmt, CopyStmt) && ((CopyStmt *) stmt)->is_from && ((CopyStmt *) stmt)->relation != NULL)
		copied = RangeVarGetRelid(((CopyStmt *) stmt)->relation, NoLock, true);

	if (previous_process_utility)
		previous_process_utility(pstmt, query, read_only_tree, context, params, env, dest, qc);
	else
		standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc);

	if (OidIsValid(copied))
	{
		ListCell   *lc;

		foreach(lc, find_all_inheritors(copied, NoLock, NULL))
		{
			Oid			server;

			if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_FOREIGN_TABLE)
				continue;
			server = GetForeignServerIdByRelId(lfirst_oid(lc));
			/* (without a mapping, no row could go there) */
			if (SearchSysCacheExists2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(GetUserId()), ObjectIdGetDatum(server)) ||
				SearchSysCacheExists2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid), ObjectIdGetDatum(server)))
				atomic_commit_include(server, GetUserId());
		}
	}
}

/* --- decisions ----------------------------------------------------------- */

/*
 * Inserts the parts' names into atomic_commit_decisions (as its owner, in
 * this transaction), and deletes those of this backend's earlier
 * transactions whose parts it committed.  The first time in the backend,
 * starts the recovery worker if no recovery ended since the postmaster
 * started here (a crash may have left parts prepared that no decision
 * names), or if decisions pile up.
 */
static void
record_decisions(Oid decisions)
{
	static bool recovery_checked = false;
	table_owner_context owner;
	int			n = list_length(parts);
	Datum	   *gids = palloc(sizeof(Datum) * n);
	Datum	   *servers = palloc(sizeof(Datum) * n);
	Datum	   *users = palloc(sizeof(Datum) * n);
	Oid			argtypes[4] = {TEXTARRAYOID, OIDARRAYOID, OIDARRAYOID, TEXTARRAYOID};
	Datum		args[4];
	Datum	   *done = palloc(sizeof(Datum) * Max(n_done_decisions, 1));
	const char *schema = quote_identifier(get_namespace_name(get_rel_namespace(decisions)));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, parts)
	{
		part	   *p = lfirst(lc);

		gids[i] = CStringGetTextDatum(p->gid);
		servers[i] = ObjectIdGetDatum(p->server);
		users[i] = ObjectIdGetDatum(p->user);
		i++;
	}
	for (i = 0; i < n_done_decisions; i++)
		done[i] = CStringGetTextDatum(done_decisions[i]);
	args[0] = PointerGetDatum(construct_array(gids, n, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(servers, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(users, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	args[3] = PointerGetDatum(construct_array(done, n_done_decisions, TEXTOID, -1, false, TYPALIGN_INT));

	table_owner_enter(decisions, &owner);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("WITH done AS (DELETE FROM %s.atomic_commit_decisions WHERE gid = ANY ($4))"
									   " INSERT INTO %s.atomic_commit_decisions (gid, server, owner)"
									   " SELECT * FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), pg_catalog.unnest($3))", schema, schema),
							  4, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the decision of a transaction prepared on servers");
	if (!recovery_checked)
	{
		bool		isnull;

		recovery_checked = true;
		if (SPI_execute(psprintf("SELECT NOT EXISTS (SELECT FROM %s.atomic_commit_recovered"
								 "  WHERE postmaster_start_time = pg_catalog.pg_postmaster_start_time())"
								 " OR (SELECT pg_catalog.count(*) FROM (SELECT FROM %s.atomic_commit_decisions LIMIT %d) d) >= %d",
								 schema, schema, MAX_DONE_DECISIONS, MAX_DONE_DECISIONS),
						true, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not read %s.atomic_commit_recovered", schema);
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			atomic_commit_start_recovery();
	}
	SPI_finish();
	table_owner_leave(&owner);

	for (i = 0; i < n_done_decisions; i++)
		pfree(done_decisions[i]);
	n_done_decisions = 0;
}

/* --- the two phases -------------------------------------------------------- */

/*
 * Waits here, where subsetting.atomic_commit_test_stop says, until the test
 * that set it stops this server or cancels this backend's query: before
 * the commit here, the cancel aborts the transaction; after it (interrupts
 * are held then), it only ends the wait.
 */
static void
stop_for_test(test_stop where)
{
	if (atomic_commit_test_stop != where)
		return;
	elog(LOG, "subsetting: atomic commit stopped for a test at \"%s\"",
		 test_stop_options[where].name);
	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (QueryCancelPending && INTERRUPTS_CAN_BE_PROCESSED())
			CHECK_FOR_INTERRUPTS();	/* before the commit here: an abort */
		if (QueryCancelPending)
		{
			QueryCancelPending = false;
			elog(LOG, "subsetting: atomic commit released by the test at \"%s\"",
				 test_stop_options[where].name);
			return;
		}
		if (ProcDiePending && INTERRUPTS_CAN_BE_PROCESSED())
			CHECK_FOR_INTERRUPTS();
	}
}

/* The server's name, for messages. */
static const char *
server_name(part *p)
{
	return GetForeignServer(p->server)->servername;
}

/*
 * The foreign table through which markers go to a server, as
 * atomic_commit_add_server recorded it (made by a superuser, on that
 * server); NULL if there is none.  SPI connected.
 */
static char *
marker_table(part *p, const char *schema)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(p->server)};
	bool		isnull;
	Oid			marker = InvalidOid;

	if (SPI_execute_with_args(psprintf("SELECT marker FROM %s.atomic_commit_servers WHERE server = $1", schema),
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s.atomic_commit_servers", schema);
	if (SPI_processed == 1)
		marker = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!OidIsValid(marker) || get_rel_relkind(marker) != RELKIND_FOREIGN_TABLE ||
		GetForeignServerIdByRelId(marker) != p->server || !superuser_arg(relation_owner(marker)))
		return NULL;
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(marker)), get_rel_name(marker));
}

/*
 * A server written through is not set up: the transaction commits as
 * postgres_fdw commits, each server's part on its own, and the session is
 * told so once for each such server.
 */
static void
warn_not_set_up(part *p)
{
	static List *warned = NIL;
	MemoryContext old;

	if (list_member_oid(warned, p->server))
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	warned = lappend_oid(warned, p->server);
	MemoryContextSwitchTo(old);
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("server \"%s\" is not set up for atomic commit: transactions that write on it and on another server commit each server's part on its own",
					server_name(p)),
			 errdetail("This is said once per session for each such server."),
			 errhint("Install the extension subsetting on server \"%s\" and call atomic_commit_add_server('%s') here, or SET subsetting.atomic_commit = off.",
					 server_name(p), server_name(p))));
}

/*
 * Pre-commit, ahead of postgres_fdw: names every part and inserts its
 * marker on its server (whose COMMIT then prepares it), opens the
 * connections of the second phase, and records the names; unless a server
 * written through is not set up (warn_not_set_up).  An error aborts the
 * transaction, whose abort rolls back what was prepared.
 */
static void
prepare_parts(void)
{
	int			participants = list_length(parts);
	Oid			decisions;
	Oid			saved_user;
	int			saved_context;
	FullTransactionId fxid;
	uint32		nonce;
	char	   *prefix;
	const char *schema;
	char	  **markers = palloc(sizeof(char *) * list_length(parts));
	bool		ready = true;
	int			nest_level;
	ListCell   *lc;

	if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
		participants++;			/* this server wrote too */
	if (!atomic_commit || participants < 2)
		return;
	decisions = atomic_commit_decisions(NULL);
	if (!OidIsValid(decisions))
		return;					/* the extension is not in this database */

	GetUserIdAndSecContext(&saved_user, &saved_context);
	nest_level = safe_search_path_begin();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	schema = quote_identifier(get_namespace_name(get_rel_namespace(decisions)));
	foreach(lc, parts)
	{
		part	   *p = lfirst(lc);

		markers[foreach_current_index(lc)] = marker_table(p, schema);
		if (markers[foreach_current_index(lc)] == NULL)
		{
			warn_not_set_up(p);
			ready = false;
		}
	}
	if (!ready)
	{
		SPI_finish();
		PopActiveSnapshot();
		safe_search_path_end(nest_level);
		return;
	}

	fxid = GetTopFullTransactionId();
	prefix = atomic_commit_gid_prefix();
	if (!pg_strong_random(&nonce, sizeof(nonce)))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("could not generate a random number")));
	foreach(lc, parts)
	{
		part	   *p = lfirst(lc);
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1];

		snprintf(p->gid, sizeof(p->gid), "%s" INT64_FORMAT "_" UINT64_FORMAT "_%u_%u",
				 prefix, (int64) PgStartTime, U64FromFullTransactionId(fxid), p->mapping, nonce);
		p->conn = own_connection(p);
		args[0] = CStringGetTextDatum(p->gid);
		/* as the part's role: through the connection of its writes */
		SetUserIdAndSecContext(p->user, saved_context | SECURITY_LOCAL_USERID_CHANGE);
		p->marked = true;
		if (SPI_execute_with_args(psprintf("UPDATE %s SET gid = $1", markers[foreach_current_index(lc)]),
								  1, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not mark the transaction's part on server \"%s\"", server_name(p));
		SetUserIdAndSecContext(saved_user, saved_context);
	}
	SPI_finish();
	record_decisions(decisions);
	PopActiveSnapshot();
	safe_search_path_end(nest_level);
}

/* Test stop "prepared": after postgres_fdw's pre-commit prepared every part. */
static void
after_postgres_fdw(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event != XACT_EVENT_PRE_COMMIT || atomic_commit_test_stop != TEST_STOP_PREPARED)
		return;
	foreach(lc, parts)
		if (((part *) lfirst(lc))->marked)
			stop_for_test(TEST_STOP_PREPARED);
}

/*
 * After the commit (commit true) or the abort: commits, or rolls back, the
 * marked parts.  Never raises an error: a part it could not finish is left
 * to recovery, whose worker it starts, with a warning.
 */
static void
finish_parts(bool commit)
{
	ListCell   *lc;
	bool		left = false;
	bool		any = false;
	int			sent = 0;

	foreach(lc, parts)
		any |= ((part *) lfirst(lc))->marked;
	if (!any)
		return;
	if (commit)
	{
		/* the decision is durable before any part commits (synchronous_commit off) */
		XLogFlush(XactLastCommitEnd);
		stop_for_test(TEST_STOP_COMMITTED);
	}

	foreach(lc, parts)
	{
		part	   *p = lfirst(lc);

		if (!p->marked)
			continue;
		if (p->conn == NULL || PQstatus(p->conn) != CONNECTION_OK ||
			!PQsendQuery(p->conn, psprintf("%s PREPARED '%s'", commit ? "COMMIT" : "ROLLBACK", p->gid)))
		{
			p->marked = false;	/* not sent: left to recovery */
			left = true;
			continue;
		}
		if (commit && sent++ == 0 && atomic_commit_test_stop == TEST_STOP_SECOND_PHASE)
		{
			PQclear(atomic_commit_await(p->conn, atomic_commit_timeout));
			stop_for_test(TEST_STOP_SECOND_PHASE);
		}
	}
	foreach(lc, parts)
	{
		part	   *p = lfirst(lc);
		PGresult   *res;
		const char *sqlstate;

		if (!p->marked)
			continue;
		res = atomic_commit_await(p->conn, atomic_commit_timeout);
		sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		/*
		 * Done; or nothing to do (undefined_object): recovery did it first, or
		 * the abort came before the server prepared.
		 */
		if (res != NULL && (PQresultStatus(res) == PGRES_COMMAND_OK ||
							(sqlstate != NULL && strcmp(sqlstate, "42704") == 0)))
		{
			if (commit && n_done_decisions < MAX_DONE_DECISIONS)
				done_decisions[n_done_decisions++] = MemoryContextStrdup(TopMemoryContext, p->gid);
		}
		else
		{
			ereport(WARNING,
					(errmsg("could not %s the transaction's part prepared on server \"%s\": %s",
							commit ? "commit" : "roll back", server_name(p),
							res ? pchomp(PQresultErrorMessage(res)) : "no answer in time"),
					 errdetail("Recovery %s it (prepared transaction \"%s\").",
							   commit ? "commits" : "rolls back", p->gid)));
			left = true;
		}
		PQclear(res);
	}
	if (left)
		atomic_commit_start_recovery();
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (parts != NIL)
				prepare_parts();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
			if (parts != NIL)
				finish_parts(event == XACT_EVENT_COMMIT);
			parts = NIL;
			commit_as_gid = NULL;
			break;
		case XACT_EVENT_PREPARE:
			parts = NIL;
			commit_as_gid = NULL;
			break;
		default:
			break;
	}
}

void
atomic_commit_define_settings(void)
{
	DefineCustomBoolVariable("subsetting.atomic_commit",
							 "Commits a transaction that wrote through postgres_fdw on two or more servers on all of them or on none (two-phase commit).",
							 "Each server's part is prepared before the commit here and committed after it: servers need the extension (atomic_commit_add_server) and max_prepared_transactions above zero.",
							 &atomic_commit, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("subsetting.atomic_commit_timeout",
							"How long, after the commit here, the commit of each part prepared on a server may wait for it.",
							"A part not committed in time is committed by recovery.",
							&atomic_commit_timeout, 30000, 1, INT_MAX, PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("subsetting.atomic_commit_test_stop",
							 "For tests: where a transaction prepared on servers waits until this server is stopped.",
							 NULL, &atomic_commit_test_stop, TEST_STOP_NONE, test_stop_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	previous_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = track_writes;
	previous_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
	RegisterXactCallback(after_postgres_fdw, NULL);
	RegisterXactCallback(xact_callback, NULL);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, connections_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(USERMAPPINGOID, connections_changed, (Datum) 0);
}
