-- src/sql/resharding/reshard_remote_sql.sql
--	reshard_remote_sql, reshard_remote_query: the statements that run statements, or a query, on a server through dblink, with a safe search_path (internal)

-- The engine's statements on a server (a shard, or where a partition
-- moves) go through dblink, over a connection opened for them as the
-- caller's user mapping says and closed after them, committed there at
-- once.  This returns the statement to EXECUTE here: dblink_exec of the
-- dblink extension's schema, its statements preceded by search_path =
-- pg_catalog, pg_temp, whatever the role's or the database's settings
-- there say: a name the engine does not qualify (a function, an operator,
-- an aggregate) is pg_catalog's, never one another role made in a schema
-- of the owner's search_path there.  And none of the role's or the
-- database's timeouts there (for the statements of this one call:
-- reshard_remote_untimed; a statement that needs a lock_timeout sets it).  (The plan
-- checks that dblink is installed before a call needs it.)  Not revoked
-- from PUBLIC: the routines that run as the table's owner call it in SQL;
-- it reads the catalog only.
--
-- reshard_remote_untimed() is the condition that turns those timeouts off
-- for the rest of the transaction it is evaluated in, on a server of any
-- version: statement_timeout, idle_in_transaction_session_timeout and,
-- where there is one (PostgreSQL 17 on), transaction_timeout.  The engine's
-- connections through dblink evaluate it first (in a DO block: dblink
-- returns the rows of the first statement that returns any); its transactions through
-- postgres_fdw, which sets none of them, read a view there that evaluates it
-- (move_destination_guard; reshard_shard_views) before what may take long.
CREATE FUNCTION reshard_remote_untimed() RETURNS text
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT 'pg_catalog.set_config(''statement_timeout'', ''0'', true) IS NOT NULL'
           ' AND pg_catalog.set_config(''idle_in_transaction_session_timeout'', ''0'', true) IS NOT NULL'
           ' AND CASE WHEN pg_catalog.current_setting(''transaction_timeout'', true) IS NULL THEN true'
           ' ELSE pg_catalog.set_config(''transaction_timeout'', ''0'', true) IS NOT NULL END';
END;

COMMENT ON FUNCTION reshard_remote_untimed() IS
'resharding: the condition that turns a server''s timeouts off for the rest of the engine''s transaction there (internal)';

CREATE FUNCTION reshard_remote_sql(server name, statements text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT format('SELECT %sdblink_exec(%L, %L)',
                  (SELECT quote_ident(n.nspname) || '.' FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                   WHERE x.extname = 'dblink'),
                  server, format('SET search_path = pg_catalog, pg_temp; DO %L; ', format('BEGIN PERFORM %s; END', @extschema@.reshard_remote_untimed())) || statements);
END;

COMMENT ON FUNCTION reshard_remote_sql(name, text) IS
'resharding: the statement that runs statements on a server through dblink, with search_path pg_catalog (internal)';

-- The same for a query whose rows are read here: the statement to EXECUTE
-- here that returns the rows of query on the server, as columns (a column
-- definition list: "problem text"), read under the same search_path and
-- without the timeouts there (dblink returns the rows of the last
-- statement it sends).
CREATE FUNCTION reshard_remote_query(server name, query text, columns text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT format('SELECT x.* FROM %sdblink(%L, %L) AS x(%s)',
                  (SELECT quote_ident(n.nspname) || '.' FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                   WHERE x.extname = 'dblink'),
                  server, format('SET search_path = pg_catalog, pg_temp; DO %L; ', format('BEGIN PERFORM %s; END', @extschema@.reshard_remote_untimed())) || query, columns);
END;

COMMENT ON FUNCTION reshard_remote_query(name, text, text) IS
'resharding: the statement that returns the rows of a query on a server through dblink, with search_path pg_catalog (internal)';
