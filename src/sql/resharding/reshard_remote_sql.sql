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
-- of the owner's search_path there.  And no statement_timeout of the
-- role's or the database's there (for the statements of this one call:
-- SET LOCAL; a statement that needs a lock_timeout sets it).  (The plan
-- checks that dblink is installed before a call needs it.)  Not revoked
-- from PUBLIC: the routines that run as the table's owner call it in SQL;
-- it reads the catalog only.
CREATE FUNCTION reshard_remote_sql(server name, statements text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT format('SELECT %sdblink_exec(%L, %L)',
                  (SELECT quote_ident(n.nspname) || '.' FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                   WHERE x.extname = 'dblink'),
                  server, 'SET search_path = pg_catalog, pg_temp; SET LOCAL statement_timeout = 0; ' || statements);
END;

COMMENT ON FUNCTION reshard_remote_sql(name, text) IS
'resharding: the statement that runs statements on a server through dblink, with search_path pg_catalog (internal)';

-- The same for a query whose rows are read here: the statement to EXECUTE
-- here that returns the rows of query on the server, as columns (a column
-- definition list: "problem text"), read under the same search_path and
-- without a statement_timeout there (dblink returns the rows of the last
-- statement it sends).
CREATE FUNCTION reshard_remote_query(server name, query text, columns text) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT format('SELECT x.* FROM %sdblink(%L, %L) AS x(%s)',
                  (SELECT quote_ident(n.nspname) || '.' FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                   WHERE x.extname = 'dblink'),
                  server, 'SET search_path = pg_catalog, pg_temp; SET LOCAL statement_timeout = 0; ' || query, columns);
END;

COMMENT ON FUNCTION reshard_remote_query(name, text, text) IS
'resharding: the statement that returns the rows of a query on a server through dblink, with search_path pg_catalog (internal)';
