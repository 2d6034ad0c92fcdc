/*
 * src/resharding/remote.c
 *		reshard_copy_rows' connections (copy.h): a foreign table's end of the
 *		copy opens one to its server, as the current user, by the rules
 *		postgres_fdw follows; every wait on it is a wait on its socket and
 *		this backend's latch, so that a cancel, statement_timeout or
 *		termination ends the call at once; the server's errors are raised
 *		here, named as coming from it.
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "resharding/copy.h"

/* An error of a remote connection, with libpq's message. */
pg_noreturn void
connection_error(CopyEnd *e, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("could not %s on server \"%s\" %s",
					what, e->server->servername, end_label(e)),
			 errdetail_internal("%s", pchomp(PQerrorMessage(e->conn)))));
}

/*
 * An error a remote server reported: its SQLSTATE and message, named as
 * coming from that server.  (The result is freed first: the connection is
 * closed by the caller's PG_FINALLY.)
 */
pg_noreturn void
remote_error(CopyEnd *e, PGresult *res, const char *what)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
	int			code = ERRCODE_FDW_ERROR;
	char	   *msg;
	char	   *det = detail ? pstrdup(detail) : NULL;
	char	   *hin = hint ? pstrdup(hint) : NULL;

	if (sqlstate && strlen(sqlstate) == 5)
		code = MAKE_SQLSTATE(sqlstate[0], sqlstate[1], sqlstate[2], sqlstate[3], sqlstate[4]);
	if (primary)
		msg = pstrdup(primary);
	else if (PQresultErrorMessage(res)[0])
		msg = pchomp(PQresultErrorMessage(res));
	else
		msg = pchomp(PQerrorMessage(e->conn));
	PQclear(res);
	ereport(ERROR,
			(errcode(code),
			 errmsg("could not %s on server \"%s\" %s: %s",
					what, e->server->servername, end_label(e), msg),
			 det ? errdetail_internal("%s", det) : 0,
			 hin ? errhint("%s", hin) : 0));
}

/*
 * Waits until the connection's socket is ready for events (or may have
 * become so), or this backend's latch is set; then handles interrupts.
 */
int
wait_socket(CopyEnd *e, int events)
{
	pgsocket	sock = PQsocket(e->conn);
	int			rc;

	if (sock == PGINVALID_SOCKET)
		connection_error(e, "wait for the connection");
	rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | events,
						   sock, -1L, PG_WAIT_EXTENSION);
	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return rc;
}

/* Sends whatever libpq holds for the server, waiting as needed. */
void
flush_all(CopyEnd *e)
{
	int			rc;

	while ((rc = PQflush(e->conn)) == 1)
	{
		int			ev = wait_socket(e, WL_SOCKET_WRITEABLE | WL_SOCKET_READABLE);

		if ((ev & WL_SOCKET_READABLE) && !PQconsumeInput(e->conn))
			connection_error(e, "read from the connection");
	}
	if (rc < 0)
		connection_error(e, "send to the connection");
}

/* The next result of the connection, waiting for it; NULL when none. */
PGresult *
next_result(CopyEnd *e)
{
	flush_all(e);
	while (PQisBusy(e->conn))
	{
		wait_socket(e, WL_SOCKET_READABLE);
		if (!PQconsumeInput(e->conn))
			connection_error(e, "read from the connection");
	}
	return PQgetResult(e->conn);
}

/* Reads the results that remain; any error is reported. */
void
drain_results(CopyEnd *e, const char *what)
{
	PGresult   *res;

	while ((res = next_result(e)) != NULL)
	{
		if (PQresultStatus(res) == PGRES_FATAL_ERROR)
			remote_error(e, res, what);
		PQclear(res);
	}
}

/*
 * Runs sql on the connection; every result must be expect.  A COPY (expect
 * PGRES_COPY_IN or PGRES_COPY_OUT) returns when it has begun.
 */
void
run_remote(CopyEnd *e, const char *sql, ExecStatusType expect, const char *what)
{
	PGresult   *res;

	if (!PQsendQuery(e->conn, sql))
		connection_error(e, what);
	while ((res = next_result(e)) != NULL)
	{
		ExecStatusType status = PQresultStatus(res);

		if (status != expect)
		{
			if (status == PGRES_FATAL_ERROR)
				remote_error(e, res, what);
			PQclear(res);
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("could not %s on server \"%s\" %s: unexpected result %s",
							what, e->server->servername, end_label(e),
							PQresStatus(status))));
		}
		PQclear(res);
		if (expect == PGRES_COPY_IN || expect == PGRES_COPY_OUT)
			return;
	}
}

/* Is the option keyword one of libpq's that a server or mapping may set? */
static bool
is_libpq_option(PQconninfoOption *defaults, const char *keyword)
{
	PQconninfoOption *o;

	/* set by this module, as postgres_fdw does */
	if (strcmp(keyword, "client_encoding") == 0 ||
		strcmp(keyword, "fallback_application_name") == 0)
		return false;
	for (o = defaults; o->keyword; o++)
		if (strcmp(o->keyword, keyword) == 0)
			return strchr(o->dispchar, 'D') == NULL;	/* not a debug option */
	return false;
}

/*
 * Opens the end's connection: to its server, as the current user, with the
 * libpq options of the server and the user mapping; the rules postgres_fdw
 * follows for a role that is not superuser (a password in the mapping, and
 * used by the server, unless a superuser set password_required 'false').
 */
void
connect_remote(CopyEnd *e)
{
	PQconninfoOption *defaults = PQconndefaults();
	List	   *options;
	ListCell   *lc;
	const char **keywords;
	const char **values;
	int			n = 0;
	bool		has_password = false;
	bool		password_required = true;
	bool		superuser_mapping = superuser_arg(e->mapping->userid);
	PostgresPollingStatusType poll = PGRES_POLLING_WRITING;

	if (defaults == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	options = list_concat(list_copy(e->server->options), e->mapping->options);
	keywords = palloc0(sizeof(char *) * (list_length(options) + 3));
	values = palloc0(sizeof(char *) * (list_length(options) + 3));
	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "password_required") == 0)
			password_required = defGetBoolean(d);
		if (!is_libpq_option(defaults, d->defname))
			continue;
		keywords[n] = d->defname;
		values[n] = defGetString(d);
		if (strcmp(d->defname, "password") == 0 && values[n][0] != '\0')
			has_password = true;
		n++;
	}
	PQconninfoFree(defaults);
	keywords[n] = "fallback_application_name";
	values[n++] = "subsetting";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	keywords[n] = NULL;
	values[n] = NULL;

	if (!superuser_mapping && password_required && !has_password)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required to connect to server \"%s\" %s",
						e->server->servername, end_label(e)),
				 errdetail("Non-superusers must provide a password in the user mapping.")));

	e->conn = PQconnectStartParams(keywords, values, false);
	if (e->conn == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (PQstatus(e->conn) == CONNECTION_BAD)
		poll = PGRES_POLLING_FAILED;
	while (poll != PGRES_POLLING_OK)
	{
		if (poll == PGRES_POLLING_FAILED)
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to server \"%s\" %s",
							e->server->servername, end_label(e)),
					 errdetail_internal("%s", pchomp(PQerrorMessage(e->conn)))));
		wait_socket(e, poll == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE);
		poll = PQconnectPoll(e->conn);
	}

	if (!superuser_mapping && password_required && !PQconnectionUsedPassword(e->conn))
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("password is required to connect to server \"%s\" %s",
						e->server->servername, end_label(e)),
				 errdetail("Non-superuser cannot connect if the server does not request a password."),
				 errhint("Target server's authentication method must be changed or password_required=false set in the user mapping attributes.")));

	if (PQsetnonblocking(e->conn, 1) != 0)
		connection_error(e, "set the connection nonblocking");

	/*
	 * (and no time limit of the role's there, or of the server's: the copy
	 * is as long as the table, and this backend's cancel ends it)
	 */
	run_remote(e,
			   "SET search_path = pg_catalog, pg_temp; SET datestyle = ISO; "
			   "SET intervalstyle = postgres; SET extra_float_digits = 3; "
			   "SET timezone = 'UTC'; SET bytea_output = hex; SET lc_monetary = 'C'; "
			   "SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0",
			   PGRES_COMMAND_OK, "configure the remote session");
	/* (transaction_timeout: PostgreSQL 17 on) */
	if (PQserverVersion(e->conn) >= 170000)
		run_remote(e, "SET transaction_timeout = 0", PGRES_COMMAND_OK, "configure the remote session");
}
