-- Settings of a real server never fail a resharding late: a statement_timeout
-- or a default_tablespace set for the caller's role does not apply to the
-- call (its copies go where the partitions they copy are); one the session
-- sets itself is the caller's limit and is kept; a read-only session is
-- refused at once, saying why.  The table is as it was after a failed call.
-- The shadows' indexes are built with parallel workers where PostgreSQL
-- chooses to.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
SELECT current_user AS superuser \gset
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE reshard_settings_elsewhere LOCATION '';
RESET allow_in_place_tablespaces;
CREATE ROLE reshard_settings_owner LOGIN;
CREATE ROLE reshard_settings_reader LOGIN;
GRANT CREATE ON TABLESPACE reshard_settings_elsewhere TO reshard_settings_owner;
GRANT CREATE ON SCHEMA public TO reshard_settings_owner;
-- Each copied row costs 10 ms in the owner's index expression: a call takes
-- seconds, longer than the timeouts below.
CREATE FUNCTION reshard_settings_slow(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog AS $$ BEGIN PERFORM pg_sleep(0.01); RETURN v; END $$;
CREATE TABLE rs (id bigint NOT NULL, v int NOT NULL) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE rs_0 PARTITION OF rs FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE rs_1 PARTITION OF rs FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO rs SELECT i, i FROM generate_series(1, 150) AS i;
CREATE INDEX rs_slow ON rs (reshard_settings_slow(v));
CREATE TABLE rs_2 (LIKE rs INCLUDING ALL);
ALTER TABLE rs OWNER TO reshard_settings_owner;
ALTER TABLE rs_0 OWNER TO reshard_settings_owner;
ALTER TABLE rs_1 OWNER TO reshard_settings_owner;
ALTER TABLE rs_2 OWNER TO reshard_settings_owner;
CREATE TABLE rs_before AS SELECT * FROM rs;
CREATE FUNCTION rs_layout() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s %s %s', c.relname, pg_get_expr(c.relpartbound, c.oid),
                             coalesce(t.spcname, 'default')), ', ' ORDER BY c.relname)
    FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
    WHERE i.inhparent = 'rs'::regclass
$$;
CREATE FUNCTION rs_indexes_elsewhere() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM pg_class WHERE reltablespace <> 0 AND relname LIKE 'rs%'
$$;
CREATE FUNCTION rs_differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (TABLE rs EXCEPT ALL TABLE rs_before) AS a)
         + (SELECT count(*) FROM (TABLE rs_before EXCEPT ALL TABLE rs) AS b)
$$;

-- A read-only session (for the role): refused at once, saying why.
ALTER ROLE reshard_settings_reader SET default_transaction_read_only = on;
GRANT reshard_settings_owner TO reshard_settings_reader;
\c - reshard_settings_reader
SET ROLE reshard_settings_owner;
CALL reshard_add_partition('rs', 'rs_2');
\c - :superuser
SELECT rs_layout(), rs_differences(), (SELECT count(*) FROM reshard_progress) AS resharding_rows;

-- A statement_timeout the session sets itself is kept: the call is
-- cancelled, and undoes itself.
\c - reshard_settings_owner
SET statement_timeout = '1s';
\set VERBOSITY terse
CALL reshard_add_partition('rs', 'rs_2');
\set VERBOSITY default
RESET statement_timeout;
\c - :superuser
SELECT rs_layout(), rs_differences(), (SELECT phase FROM reshard_progress) AS phase;

-- A statement_timeout and a default_tablespace of the role do not apply:
-- the call ends, and nothing of the table moved to the other tablespace.
ALTER ROLE reshard_settings_owner SET statement_timeout = '1s';
ALTER ROLE reshard_settings_owner SET default_tablespace = 'reshard_settings_elsewhere';
\c - reshard_settings_owner
SHOW statement_timeout;
SHOW default_tablespace;
CALL reshard_add_partition('rs', 'rs_2') \gset
\c - :superuser
SELECT rs_layout(), rs_differences(), rs_indexes_elsewhere(), (SELECT phase FROM reshard_progress) AS phase,
       :moved_rows = (SELECT count(*) FROM rs_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed;

-- Settings under which PostgreSQL builds the shadows' indexes with
-- parallel workers (as it does with the defaults for a large table): the
-- call ends, every row in its place.
CREATE TABLE rp (id bigint PRIMARY KEY, v text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE rp_0 PARTITION OF rp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE rp_1 PARTITION OF rp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO rp SELECT i, md5(i::text) FROM generate_series(1, 20000) AS i;
CREATE TABLE rp_2 (LIKE rp INCLUDING ALL);
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
CALL reshard_add_partition('rp', 'rp_2');
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SELECT count(*) AS rows, count(*) FILTER (WHERE tableoid <> format('rp_%s', jumpbackhash(id, 3))::regclass) AS misplaced,
       (SELECT phase FROM reshard_progress WHERE "table" = 'public.rp') AS phase
FROM rp;
DROP TABLE rp;

DROP TABLE rs, rs_2, rs_before;
DROP FUNCTION rs_layout(), rs_indexes_elsewhere(), rs_differences(), reshard_settings_slow(int);
DELETE FROM reshard_state;
REVOKE CREATE ON SCHEMA public FROM reshard_settings_owner;
DROP OWNED BY reshard_settings_owner;
DROP ROLE reshard_settings_reader;
DROP ROLE reshard_settings_owner;
DROP TABLESPACE reshard_settings_elsewhere;

-- What the engine's sessions on a server evaluate first
-- (reshard_remote_untimed) turns the role's and the database's timeouts off
-- for the rest of the transaction, on every version (transaction_timeout
-- from PostgreSQL 17 on).
BEGIN;
SET LOCAL statement_timeout = '5s';
SET LOCAL idle_in_transaction_session_timeout = '5s';
DO $$BEGIN
    IF current_setting('transaction_timeout', true) IS NOT NULL THEN
        PERFORM set_config('transaction_timeout', '5s', true);
    END IF;
END$$;
DO $$BEGIN EXECUTE 'SELECT ' || reshard_remote_untimed(); END$$;
SELECT current_setting('statement_timeout') AS statement_timeout,
       current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction_session_timeout,
       coalesce(current_setting('transaction_timeout', true), '0') AS transaction_timeout;
COMMIT;
