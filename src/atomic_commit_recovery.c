/*
 * src/atomic_commit_recovery.c
 *		Recovery of atomic commit (atomic_commit.c): the parts a crash, a
 *		lost connection or a server down left prepared on servers are
 *		committed if their transaction committed here, rolled back if it did
 *		not; by atomic_commit_recover() (a superuser's call) and by a
 *		background worker the commits start when they leave a part behind.
 *
 * On every postgres_fdw server, through each user mapping until every part
 * is resolved (a prepared transaction can be finished only by its owner or
 * a superuser), it lists the prepared transactions of this database's
 * names (atomic_commit.h) and decides each by its transaction here: still
 * running, it is left alone; started before the postmaster's last start, or
 * too old for the commit log, by atomic_commit_decisions (a name is there if
 * and only if the transaction committed); else by the commit log.  Other
 * systems' prepared transactions, and other databases', are never touched.
 * Then it deletes the decisions of transactions that ended before the
 * listing whose parts are no longer prepared.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "atomic_commit.h"
#include "resharding/copy.h"

/* The advisory locks (two int4 keys): a recovery pass; a worker's life. */
#define RECOVERY_LOCK_CLASS 0x73756273	/* 'subs' */
#define RECOVERY_PASS_LOCK 1
#define RECOVERY_WORKER_LOCK 2

/* Where a pass's outcomes go: the caller's rows, or only counted (the worker). */
typedef struct recovery
{
	Tuplestorestate *rows;
	TupleDesc	desc;
	Oid			decisions;
	const char *schema;
	char	   *prefix;
	int			left;			/* parts not resolved, servers not reached */
	int			resolved;		/* parts committed or rolled back */
} recovery;

static void
outcome(recovery *r, const char *server, const char *gid, const char *what, bool resolved)
{
	if (!resolved)
		r->left++;
	else if (strcmp(what, "in progress") != 0)
		r->resolved++;
	if (r->rows != NULL)
	{
		Datum		values[3];
		bool		nulls[3] = {false, gid == NULL, false};

		values[0] = CStringGetTextDatum(server);
		values[1] = gid ? CStringGetTextDatum(gid) : (Datum) 0;
		values[2] = CStringGetTextDatum(what);
		tuplestore_putvalues(r->rows, r->desc, values, nulls);
	}
	else if (!resolved)
		elog(LOG, "subsetting: atomic commit recovery on server \"%s\": %s%s%s",
			 server, what, gid ? " " : "", gid ? gid : "");
}

/*
 * Did the transaction of a part's name commit here?  false with *running
 * when it still runs.
 */
static bool
transaction_committed(recovery *r, const char *gid, bool *running)
{
	int64		start;
	uint64		fxid;
	unsigned int mapping;
	bool		by_decision = true;
	bool		committed = false;

	*running = false;
	if (sscanf(gid + strlen(r->prefix), INT64_FORMAT "_" UINT64_FORMAT "_%u", &start, &fxid, &mapping) != 3)
		return false;			/* not a name of ours: never made, rolled back */
	if (start == (int64) PgStartTime)
	{
		TransactionId xid = (TransactionId) fxid;

		if (TransactionIdIsInProgress(xid))
		{
			*running = true;
			return false;
		}
		LWLockAcquire(XactTruncationLock, LW_SHARED);
		if (!TransactionIdPrecedes(xid, OLDEST_CLOG_XID))
		{
			by_decision = false;
			committed = TransactionIdDidCommit(xid);
		}
		LWLockRelease(XactTruncationLock);
	}
	if (by_decision)
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(gid)};

		if (SPI_execute_with_args(psprintf("SELECT FROM %s.atomic_commit_decisions WHERE gid = $1", r->schema),
								  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read %s.atomic_commit_decisions", r->schema);
		committed = SPI_processed == 1;
	}
	return committed;
}

/* Runs sql on the connection; the error's message, or NULL. */
static char *
remote_command(PGconn *conn, const char *sql)
{
	PGresult   *res;
	char	   *error = NULL;

	if (!PQsendQuery(conn, sql))
		return pchomp(PQerrorMessage(conn));
	res = atomic_commit_await(conn, -1);
	if (res == NULL || (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK))
		error = res ? pchomp(PQresultErrorMessage(res)) : pstrdup("no answer");
	PQclear(res);
	return error;
}

/*
 * One server through one mapping: resolves the parts listed there that the
 * mapping's role may finish and that are not resolved yet (resolved, by
 * name); returns false if the server could not be reached or listed.
 * *listed gets the names prepared there (the first time), less those it
 * finished.
 */
static bool
recover_through(recovery *r, ForeignServer *server, UserMapping *mapping,
				List **resolved, List **unresolvable, List **listed, bool first)
{
	CopyEnd		e = {0};
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	PGresult   *res = NULL;
	char	   *sql;
	volatile bool ok = true;

	e.server = server;
	e.mapping = mapping;
	e.role = "for the recovery of prepared transactions";

	/* connection errors end in a subtransaction: the pass goes on */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		connect_remote(&e);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(cxt);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		if (first)
			outcome(r, server->servername, NULL, error->message, false);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	if (!ok)
	{
		if (e.conn)
			PQfinish(e.conn);
		return false;
	}

	sql = psprintf("SELECT gid, (owner = current_user OR"
				   " (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user))::text"
				   " FROM pg_catalog.pg_prepared_xacts"
				   " WHERE database = pg_catalog.current_database() AND pg_catalog.starts_with(gid, '%s')"
				   " ORDER BY gid", r->prefix);
	if (PQsendQuery(e.conn, sql))
		res = atomic_commit_await(e.conn, -1);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		if (first)
			outcome(r, server->servername, NULL,
					psprintf("could not list its prepared transactions: %s",
							 res ? pchomp(PQresultErrorMessage(res)) : pchomp(PQerrorMessage(e.conn))),
					false);
		PQclear(res);
		PQfinish(e.conn);
		return false;
	}
	for (int i = 0; i < PQntuples(res); i++)
	{
		char	   *gid = pstrdup(PQgetvalue(res, i, 0));
		bool		may = strcmp(PQgetvalue(res, i, 1), "true") == 0;
		bool		running;
		bool		commit;
		char	   *error;

		if (first)
			*listed = lappend(*listed, makeString(gid));
		if (list_member(*resolved, makeString(gid)))
			continue;
		if (!may)
		{
			if (!list_member(*unresolvable, makeString(gid)))
				*unresolvable = lappend(*unresolvable, makeString(gid));
			continue;
		}
		commit = transaction_committed(r, gid, &running);
		*resolved = lappend(*resolved, makeString(gid));
		if (running)
		{
			outcome(r, server->servername, gid, "in progress", true);
			continue;
		}
		error = remote_command(e.conn, psprintf("%s PREPARED '%s'", commit ? "COMMIT" : "ROLLBACK", gid));
		if (error == NULL)
		{
			outcome(r, server->servername, gid, commit ? "committed" : "rolled back", true);
			*listed = list_delete(*listed, makeString(gid));	/* no longer prepared */
		}
		else
			outcome(r, server->servername, gid,
					psprintf("could not %s: %s", commit ? "commit" : "roll back", error), false);
	}
	PQclear(res);
	PQfinish(e.conn);
	return true;
}

/*
 * Deletes the decisions of server whose names are not prepared there (listed)
 * and whose transactions ended before the listing (xid before horizon, or an
 * earlier start of the postmaster).
 */
static void
delete_decisions(recovery *r, Oid server, List *listed, FullTransactionId horizon)
{
	Oid			argtypes[4] = {OIDOID, TEXTARRAYOID, NUMERICOID, TEXTOID};
	Datum		args[4];
	Datum	   *names = palloc(sizeof(Datum) * Max(list_length(listed), 1));
	int			n = 0;
	ListCell   *lc;

	foreach(lc, listed)
		names[n++] = CStringGetTextDatum(strVal(lfirst(lc)));
	args[0] = ObjectIdGetDatum(server);
	args[1] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
	args[2] = DirectFunctionCall1(int8_numeric, Int64GetDatum((int64) U64FromFullTransactionId(horizon)));
	args[3] = CStringGetTextDatum(psprintf("%s" INT64_FORMAT "_", r->prefix, (int64) PgStartTime));
	if (SPI_execute_with_args(psprintf("DELETE FROM %s.atomic_commit_decisions"
									   " WHERE server = $1 AND gid <> ALL ($2)"
									   " AND (NOT pg_catalog.starts_with(gid, $4)"
									   "  OR pg_catalog.split_part(pg_catalog.substr(gid, pg_catalog.length($4) + 1), '_', 1)::numeric < $3)",
									   r->schema),
							  4, argtypes, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from %s.atomic_commit_decisions", r->schema);
}

/* One pass over every postgres_fdw server.  SPI connected, as a superuser. */
static void
recover(recovery *r)
{
	Oid			owner;
	FullTransactionId horizon;
	FullTransactionId next;
	TransactionId xmin;
	SPITupleTable *servers;
	uint64		nservers;

	r->decisions = atomic_commit_decisions(&owner);
	if (!OidIsValid(r->decisions))
		elog(ERROR, "extension subsetting is not installed");
	r->schema = quote_identifier(get_namespace_name(get_rel_namespace(r->decisions)));
	r->prefix = atomic_commit_gid_prefix();
	if (SPI_execute(psprintf("SELECT pg_catalog.pg_advisory_xact_lock(%d, %d)",
							 RECOVERY_LOCK_CLASS, RECOVERY_PASS_LOCK), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the recovery of prepared transactions");

	/* a transaction before this is over: its parts are listed if prepared */
	xmin = GetLatestSnapshot()->xmin;
	next = ReadNextFullTransactionId();
	horizon = FullTransactionIdFromEpochAndXid(EpochFromFullTransactionId(next) -
											   (xmin > XidFromFullTransactionId(next) ? 1 : 0), xmin);

	/* each postgres_fdw server, with its mappings' roles: those of its decisions first */
	if (SPI_execute(psprintf("SELECT s.oid, pg_catalog.array_agg(m.umuser ORDER BY"
							 "  EXISTS (SELECT FROM %s.atomic_commit_decisions d WHERE d.server = s.oid AND d.owner = m.umuser) DESC,"
							 "  m.umuser)"
							 " FROM pg_catalog.pg_foreign_server s"
							 " JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw"
							 " JOIN pg_catalog.pg_proc p ON p.oid = w.fdwhandler"
							 " JOIN pg_catalog.pg_user_mapping m ON m.umserver = s.oid"
							 " WHERE p.prosrc = 'postgres_fdw_handler'"
							 " GROUP BY s.oid ORDER BY s.oid", r->schema),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the postgres_fdw servers");
	servers = SPI_tuptable;
	nservers = SPI_processed;
	for (uint64 i = 0; i < nservers; i++)
	{
		bool		isnull;
		Oid			serverid = DatumGetObjectId(SPI_getbinval(servers->vals[i], servers->tupdesc, 1, &isnull));
		ArrayType  *users = DatumGetArrayTypeP(SPI_getbinval(servers->vals[i], servers->tupdesc, 2, &isnull));
		Oid		   *user = (Oid *) ARR_DATA_PTR(users);
		int			nusers = ArrayGetNItems(ARR_NDIM(users), ARR_DIMS(users));
		ForeignServer *server = GetForeignServer(serverid);
		List	   *resolved = NIL;
		List	   *unresolvable = NIL;
		List	   *listed = NIL;
		bool		reached = false;
		ListCell   *lc;

		for (int u = 0; u < nusers; u++)
		{
			if (!recover_through(r, server, GetUserMapping(user[u], serverid),
								 &resolved, &unresolvable, &listed, !reached))
				continue;
			reached = true;
			foreach(lc, resolved)
				unresolvable = list_delete(unresolvable, lfirst(lc));
			if (unresolvable == NIL)
				break;
		}
		foreach(lc, unresolvable)
			outcome(r, server->servername, strVal(lfirst(lc)),
					"no user mapping of this server connects as its owner or a superuser", false);
		if (reached)
			delete_decisions(r, serverid, listed, horizon);
	}
}

PG_FUNCTION_INFO_V1(atomic_commit_recover);

/* atomic_commit_recover() RETURNS TABLE (server text, gid text, outcome text) */
Datum
atomic_commit_recover(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	recovery	r = {0};

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to recover prepared transactions"),
				 errdetail("Recovery connects to servers through every role's user mapping: only superusers may call it.")));
	InitMaterializedSRF(fcinfo, 0);
	r.rows = rsinfo->setResult;
	r.desc = rsinfo->setDesc;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	recover(&r);
	SPI_finish();
	return (Datum) 0;
}

/* --- the worker ------------------------------------------------------------ */

PGDLLEXPORT void atomic_commit_recovery_main(Datum database);

/*
 * Recovers until nothing is left, waiting after each pass that left
 * something (a server down): a second after a pass that resolved something,
 * else twice as long as the last time, up to ten seconds; then records that
 * a recovery ended since the postmaster started.  One worker per database
 * at a time.
 */
void
atomic_commit_recovery_main(Datum database)
{
	long		delay = 1000;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(database), InvalidOid, 0);

	for (;;)
	{
		recovery	r = {0};
		bool		isnull;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_execute(psprintf("SELECT pg_catalog.pg_try_advisory_lock(%d, %d)",
								 RECOVERY_LOCK_CLASS, RECOVERY_WORKER_LOCK), false, 0) != SPI_OK_SELECT ||
			!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			proc_exit(0);		/* another worker recovers this database */
		if (OidIsValid(atomic_commit_decisions(NULL)))
			recover(&r);
		if (r.left == 0 && OidIsValid(r.decisions) &&
			SPI_execute(psprintf("DELETE FROM %s.atomic_commit_recovered;"
								 " INSERT INTO %s.atomic_commit_recovered VALUES (pg_catalog.pg_postmaster_start_time())",
								 r.schema, r.schema), false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not write %s.atomic_commit_recovered", r.schema);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (r.left == 0)
			break;
		/* (a pass that resolved something: the next one soon) */
		delay = r.resolved > 0 ? 1000 : Min(delay * 2, 10000);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, delay, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(0);
}

void
atomic_commit_start_recovery(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "subsetting", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "atomic_commit_recovery_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "subsetting atomic commit recovery");
	strlcpy(worker.bgw_type, "subsetting atomic commit recovery", BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	if (!RegisterDynamicBackgroundWorker(&worker, NULL))
		ereport(WARNING,
				(errmsg("could not start the recovery of prepared transactions"),
				 errhint("Raise max_worker_processes, or call atomic_commit_recover().")));
}

/* --- setting up a server --------------------------------------------------- */

PG_FUNCTION_INFO_V1(atomic_commit_add_server);

/*
 * atomic_commit_add_server(server name): checks that the server has the
 * extension (with atomic_commit_marker) and allows prepared transactions,
 * then makes here the foreign table through which transactions mark their
 * parts there, atomic_commit_marker_<server's OID> in the extension's
 * schema (made again if it is there), and records it in
 * atomic_commit_servers.  Superusers only: every role's transactions mark
 * their parts through that table.
 */
Datum
atomic_commit_add_server(PG_FUNCTION_ARGS)
{
	char	   *name = NameStr(*PG_GETARG_NAME(0));
	ForeignServer *server = GetForeignServerByName(name, false);
	CopyEnd		e = {0};
	PGresult   *res = NULL;
	char	   *remote_schema;
	int			max_prepared;
	Oid			decisions;
	const char *schema;
	char	   *marker;
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set up server \"%s\" for atomic commit", name),
				 errdetail("Every role's transactions mark their parts through the table it makes: only superusers may call it.")));
	if (strcmp(GetForeignDataWrapper(server->fdwid)->fdwname, "postgres_fdw") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("server \"%s\" is not a postgres_fdw server", name)));
	decisions = atomic_commit_decisions(NULL);
	if (!OidIsValid(decisions))
		elog(ERROR, "extension subsetting is not installed");
	schema = quote_identifier(get_namespace_name(get_rel_namespace(decisions)));

	e.server = server;
	e.mapping = GetUserMapping(GetUserId(), server->serverid);
	e.role = "to set it up for atomic commit";
	PG_TRY();
	{
		connect_remote(&e);
		if (PQsendQuery(e.conn,
						"SELECT (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension x"
						"  JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace"
						"  JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = 'atomic_commit_marker' AND c.relkind = 'v'"
						"  WHERE x.extname = 'subsetting'),"
						" pg_catalog.current_setting('max_prepared_transactions')"))
			res = atomic_commit_await(e.conn, -1);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("could not read what server \"%s\" has: %s", name,
							res ? pchomp(PQresultErrorMessage(res)) : pchomp(PQerrorMessage(e.conn)))));
		remote_schema = PQgetisnull(res, 0, 0) ? NULL : pstrdup(PQgetvalue(res, 0, 0));
		max_prepared = atoi(PQgetvalue(res, 0, 1));
		PQclear(res);
		res = NULL;
	}
	PG_FINALLY();
	{
		PQclear(res);
		if (e.conn)
			PQfinish(e.conn);
	}
	PG_END_TRY();
	if (remote_schema == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("server \"%s\" does not have the extension subsetting 1.2 or later", name),
				 errhint("CREATE EXTENSION subsetting (or ALTER EXTENSION subsetting UPDATE) in its database: its part of a transaction is prepared by the extension there.")));
	if (max_prepared == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("server \"%s\" does not allow prepared transactions (max_prepared_transactions = 0)", name),
				 errhint("Set max_prepared_transactions there above zero (at least its max_connections, for every session a coordinator may commit through at once), and restart it.")));

	marker = psprintf("%s.atomic_commit_marker_%u", schema, server->serverid);
	args[0] = ObjectIdGetDatum(server->serverid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (OidIsValid(get_relname_relid(psprintf("atomic_commit_marker_%u", server->serverid),
									 get_rel_namespace(decisions))) &&
		SPI_execute(psprintf("DROP FOREIGN TABLE %s", marker), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop %s", marker);
	if (SPI_execute(psprintf("CREATE FOREIGN TABLE %s (gid text) SERVER %s"
							 "  OPTIONS (schema_name %s, table_name 'atomic_commit_marker');"
							 " GRANT UPDATE ON %s TO PUBLIC;"
							 " COMMENT ON FOREIGN TABLE %s IS %s",
							 marker, quote_identifier(name),
							 quote_literal_cstr(remote_schema), marker, marker,
							 quote_literal_cstr(psprintf("atomic commit: the markers of the parts of transactions prepared on server %s (atomic_commit_add_server)", name))),
					false, 0) < 0 ||
		SPI_execute_with_args(psprintf("INSERT INTO %s.atomic_commit_servers"
									   " VALUES ($1, '%s'::pg_catalog.regclass)"
									   " ON CONFLICT (server) DO UPDATE SET marker = excluded.marker",
									   schema, marker),
							  1, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not set up server \"%s\" for atomic commit", name);
	SPI_finish();
	PG_RETURN_VOID();
}
