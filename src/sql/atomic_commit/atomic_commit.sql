-- src/sql/atomic_commit/atomic_commit.sql
--	Atomic commit across servers: the decisions of transactions prepared on
--	servers, and their recovery (src/atomic_commit.c,
--	src/atomic_commit_recovery.c; docs/scaling-out.md, "Atomic commit")

-- A transaction that wrote through postgres_fdw on two or more servers
-- inserts here, in its own transaction, the name of each part it prepared on
-- a server: a name is here if and only if the transaction committed.
-- Recovery commits a part left prepared whose transaction it cannot find in
-- this server's commit log (started before the last start of the postmaster,
-- or too old) if and only if its name is here, and deletes the names whose
-- parts are no longer prepared.  Written by the extension alone, as this
-- table's owner; row-level security without a policy keeps out the members
-- of pg_write_all_data and pg_read_all_data, as for reshard_state.
CREATE TABLE atomic_commit_decisions (
    gid text PRIMARY KEY,          -- the prepared transaction's name on the server
    server oid NOT NULL,           -- the foreign server
    owner oid NOT NULL             -- the role whose user mapping prepared it
);
REVOKE ALL ON atomic_commit_decisions FROM PUBLIC;
ALTER TABLE atomic_commit_decisions ENABLE ROW LEVEL SECURITY;

-- When a recovery last ended with nothing left: the start of the
-- postmaster it ran under.  The first transaction of a session prepared on
-- servers starts the recovery worker unless it ran since the postmaster
-- started (a crash may have left parts prepared that no decision names).
CREATE TABLE atomic_commit_recovered (
    postmaster_start_time timestamptz NOT NULL
);
REVOKE ALL ON atomic_commit_recovered FROM PUBLIC;
ALTER TABLE atomic_commit_recovered ENABLE ROW LEVEL SECURITY;

-- Resolves, on every postgres_fdw server, the parts of this database's
-- transactions left prepared: committed if the transaction committed here,
-- rolled back if not, left alone while it runs.  One row per part found
-- (and per server it could not reach, gid NULL).  Superusers only: it
-- connects through every role's user mapping.
CREATE FUNCTION atomic_commit_recover(OUT server text, OUT gid text, OUT outcome text)
RETURNS SETOF record
LANGUAGE C STRICT VOLATILE AS 'MODULE_PATHNAME', 'atomic_commit_recover';
REVOKE ALL ON FUNCTION atomic_commit_recover() FROM PUBLIC;

COMMENT ON FUNCTION atomic_commit_recover() IS
'atomic commit: on every postgres_fdw server, commits the parts this database''s transactions left prepared if they committed here, rolls back the others, and says what it did, one row per part (superusers; a background worker does it after a failed commit; see docs/scaling-out.md)';

-- On a server: a coordinator's transaction sets the name of its part here
-- (UPDATE atomic_commit_marker SET gid = ..., through the foreign table
-- atomic_commit_add_server made there: postgres_fdw sends it as one
-- statement, one round trip); the view's one row goes to the trigger, which
-- keeps the name and changes nothing, and the COMMIT that postgres_fdw then
-- sends prepares the transaction under that name.  Every role may update:
-- an update changes only what the updating transaction's own COMMIT does.
CREATE VIEW atomic_commit_marker AS SELECT NULL::text AS gid;
GRANT UPDATE ON atomic_commit_marker TO PUBLIC;

CREATE FUNCTION atomic_commit_mark() RETURNS trigger
LANGUAGE C AS 'MODULE_PATHNAME', 'atomic_commit_mark';

CREATE TRIGGER atomic_commit_mark INSTEAD OF UPDATE ON atomic_commit_marker
FOR EACH ROW EXECUTE FUNCTION atomic_commit_mark();

COMMENT ON FUNCTION atomic_commit_mark() IS
'atomic commit: the trigger of atomic_commit_marker, on a server: the COMMIT of the transaction prepares it under the name set (internal)';

-- On a coordinator: the servers set up for atomic commit, each with the
-- foreign table through which transactions mark their parts there.  Written
-- by atomic_commit_add_server (superusers), read by every role's commits;
-- row-level security lets others read it and write nothing, members of
-- pg_write_all_data included.
CREATE TABLE atomic_commit_servers (
    server oid PRIMARY KEY,
    marker regclass NOT NULL
);
REVOKE ALL ON atomic_commit_servers FROM PUBLIC;
GRANT SELECT ON atomic_commit_servers TO PUBLIC;
ALTER TABLE atomic_commit_servers ENABLE ROW LEVEL SECURITY;
CREATE POLICY atomic_commit_servers_read ON atomic_commit_servers FOR SELECT USING (true);

CREATE FUNCTION atomic_commit_add_server(server name) RETURNS void
LANGUAGE C STRICT VOLATILE AS 'MODULE_PATHNAME', 'atomic_commit_add_server';
REVOKE ALL ON FUNCTION atomic_commit_add_server(name) FROM PUBLIC;

COMMENT ON FUNCTION atomic_commit_add_server(name) IS
'atomic commit: sets up a postgres_fdw server (with the extension and max_prepared_transactions above zero) so that transactions writing on it and on other servers commit on all or on none (superusers; see docs/scaling-out.md)';
