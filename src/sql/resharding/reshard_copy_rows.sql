-- src/sql/resharding/reshard_copy_rows.sql
--	reshard_copy_rows: the rows of a table copied into another, between this
--	server and postgres_fdw servers, with COPY (internal)

-- Each of source and target is a table of this server or a foreign table of
-- a postgres_fdw server (whose rows go through a connection of the
-- function's own, as the current user, in COPY's text format and in a
-- remote transaction committed before it returns).  Returns the number of
-- rows target took.  (src/resharding/copy.c)  It needs what INSERT INTO
-- target SELECT * FROM source would (privileges, user mappings, passwords
-- for a role that is not a superuser, as postgres_fdw asks), so everyone
-- may call it: the engine does, as the table's owner.
CREATE FUNCTION reshard_copy_rows(source regclass, target regclass) RETURNS bigint
LANGUAGE C STRICT AS 'MODULE_PATHNAME', 'reshard_copy_rows';

COMMENT ON FUNCTION reshard_copy_rows(regclass, regclass) IS
'resharding: copies the rows of a table into another, here or on postgres_fdw servers, with COPY (internal)';
