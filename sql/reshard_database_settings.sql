-- Settings of the database (ALTER DATABASE ... SET), which apply to every
-- session in it, fail no resharding late, as those of the role do not
-- (reshard_settings): a statement_timeout shorter than the call and a
-- lock_timeout of 1 ms do not cut it short; its copies go where the
-- partitions they copy are, and are of their access method, whatever
-- default_tablespace and default_table_access_method say; a search_path
-- that finds look-alikes of the extension's function and of text's and
-- bigint's equality before pg_catalog and the extension changes nothing it
-- does, with a statement_timeout too; session_replication_role = replica
-- (a subscriber's database) neither; a read-only database is refused at
-- once, saying why, with nothing made.  Each check has a table of its own,
-- all made alike before the database has any setting: afterwards the
-- table holds the rows it held, each in its bucket, its partitions are
-- those the call makes (or those it had, refused), and nothing of the
-- engine is left.  The settings take effect at the next connection (\c);
-- the superuser's sessions that check are in the database too, and undo
-- what of them would get in their way.  Each setting is reset after its
-- check, one by one: the database keeps the settings pg_regress gave it
-- (lc_messages, ...), which RESET ALL would remove for the tests after.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
SELECT current_user AS superuser, current_database() AS db \gset
SELECT coalesce((SELECT setconfig::text FROM pg_db_role_setting
                 WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) AND setrole = 0),
                '') AS database_settings \gset
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE reshard_dbsettings_elsewhere LOCATION '';
RESET allow_in_place_tablespaces;
-- (the heap under another name: a table made with it is not of the heap)
CREATE ACCESS METHOD reshard_dbsettings_heap TYPE TABLE HANDLER heap_tableam_handler;
CREATE ROLE reshard_dbsettings_owner LOGIN;
GRANT CREATE ON TABLESPACE reshard_dbsettings_elsewhere TO reshard_dbsettings_owner;
GRANT CREATE ON SCHEMA public TO reshard_dbsettings_owner;
-- Look-alikes of what SQL run under the caller's search_path could name:
-- the extension's jumpbackhash (every key in bucket 0), text's equality
-- (always true) and bigint's (never).
CREATE SCHEMA rd_lookalikes;
GRANT USAGE ON SCHEMA rd_lookalikes TO PUBLIC;
CREATE FUNCTION rd_lookalikes.jumpbackhash(key bigint, buckets int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 0';
CREATE FUNCTION rd_lookalikes.always(a text, b text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE FUNCTION rd_lookalikes.never(a bigint, b bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false';
CREATE OPERATOR rd_lookalikes.= (LEFTARG = text, RIGHTARG = text, FUNCTION = rd_lookalikes.always);
CREATE OPERATOR rd_lookalikes.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = rd_lookalikes.never);
-- Each copied row costs 10 ms in the owner's index expression of the
-- tables of the checks with a statement_timeout: a call takes seconds,
-- longer than the timeout.
CREATE FUNCTION rd_slow(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog AS $$ BEGIN PERFORM pg_sleep(0.01); RETURN v; END $$;
-- rd_make(t, buckets, slow): a table t (id bigint, v int) of 150 rows,
-- BY HASH in buckets partitions t_0, t_1, ..., with an index on v (slow: on
-- rd_slow(v)); an empty t_<buckets> LIKE it to add; all of them the
-- owner's; and t_before, a copy of its rows.
CREATE PROCEDURE rd_make(t text, buckets int, slow boolean) LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    EXECUTE format('CREATE TABLE public.%I (id bigint NOT NULL, v int NOT NULL) PARTITION BY HASH (id jumpbackhash%s_int8_ops)',
                   t, buckets);
    FOR b IN 0 .. buckets - 1 LOOP
        EXECUTE format('CREATE TABLE public.%I PARTITION OF public.%I FOR VALUES WITH (MODULUS %s, REMAINDER %s)', t || '_' || b, t, buckets, b);
    END LOOP;
    EXECUTE format('INSERT INTO public.%I SELECT i, i FROM generate_series(1, 150) AS i', t);
    EXECUTE format('CREATE INDEX ON public.%I (%s)', t, CASE WHEN slow THEN 'rd_slow(v)' ELSE 'v' END);
    EXECUTE format('CREATE TABLE public.%I (LIKE public.%I INCLUDING ALL)', t || '_' || buckets, t);
    FOR b IN -1 .. buckets LOOP
        EXECUTE format('ALTER TABLE public.%I OWNER TO reshard_dbsettings_owner', t || CASE WHEN b >= 0 THEN '_' || b ELSE '' END);
    END LOOP;
    EXECUTE format('CREATE TABLE public.%I AS TABLE public.%I', t || '_before', t);
END $$;
-- The partitions of t: bound, tablespace, access method.
CREATE FUNCTION rd_partitions(t regclass) RETURNS TABLE (partition name, bound text, tablespace name, access_method name)
LANGUAGE sql SET search_path = pg_catalog AS $$
    SELECT c.relname, pg_get_expr(c.relpartbound, c.oid), coalesce(s.spcname, 'default'), a.amname
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_am a ON a.oid = c.relam
    LEFT JOIN pg_tablespace s ON s.oid = c.reltablespace
    WHERE i.inhparent = t ORDER BY c.relname
$$;
-- Of t: the rows that differ from t_before's (either way); those not in
-- the partition of their bucket; its relations (indexes included) not in
-- the database's tablespace or, tables, not of the heap; the phase of its
-- resharding; and what the engine makes and must not leave (relations,
-- triggers, constraints and functions named reshard_*, but the
-- extension's own), anywhere.
CREATE FUNCTION rd_state(t text) RETURNS TABLE (rows_differ bigint, misplaced bigint, elsewhere bigint, phase text, engine_leftovers text)
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    buckets int := (SELECT count(*) FROM pg_inherits WHERE inhparent = t::regclass);
BEGIN
    EXECUTE format('SELECT (SELECT count(*) FROM (TABLE %1$I EXCEPT ALL TABLE %2$I) AS a)
                         + (SELECT count(*) FROM (TABLE %2$I EXCEPT ALL TABLE %1$I) AS b)', t, t || '_before')
    INTO rows_differ;
    EXECUTE format('SELECT count(*) FROM %I WHERE tableoid <> format(''%%I'', %L || jumpbackhash(id, %s))::regclass',
                   t, t || '_', buckets)
    INTO misplaced;
    SELECT count(*) INTO elsewhere
    FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
    WHERE (c.oid = t::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = t::regclass)
           OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT inhrelid FROM pg_inherits
                                                                            WHERE inhparent = t::regclass)))
      AND (c.reltablespace <> 0 OR c.relkind = 'r' AND a.amname <> 'heap');
    SELECT p.phase INTO phase FROM reshard_progress p WHERE p."table" = 'public.' || t;
    SELECT coalesce(string_agg(x, ', ' ORDER BY x), 'none') INTO engine_leftovers FROM (
        SELECT relname::text AS x FROM pg_class
        WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%' AND relname <> 'reshard_progress'
        UNION ALL
        SELECT format('function %s', p.oid::regprocedure) FROM pg_proc p
        WHERE p.proname LIKE 'reshard\_%'
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        UNION ALL
        SELECT format('trigger %s on %s', tgname, tgrelid::regclass) FROM pg_trigger WHERE tgname LIKE 'reshard\_%'
        UNION ALL
        SELECT format('constraint %s on %s', conname, conrelid::regclass) FROM pg_constraint
        WHERE conname LIKE 'reshard\_%' AND conrelid <> 'reshard_state'::regclass) AS l;
    RETURN NEXT;
END $$;

-- The tables of the checks below, made before the database has any setting.
CALL rd_make('rd_ro', 2, false);
CALL rd_make('rd_timeouts', 2, true);
CALL rd_make('rd_lookalikes', 3, false);
CALL rd_make('rd_lookalikes_timeout', 2, true);
CALL rd_make('rd_am', 2, false);
CALL rd_make('rd_replica', 3, false);
CALL rd_make('rd_own_am', 2, false);
ALTER TABLE rd_own_am_0 SET ACCESS METHOD reshard_dbsettings_heap;
ALTER TABLE rd_own_am_1 SET ACCESS METHOD reshard_dbsettings_heap;

-- A read-only database: the call is refused at once, saying why; nothing
-- is made, nothing recorded.
ALTER DATABASE :"db" SET default_transaction_read_only = on;
\c - reshard_dbsettings_owner
SELECT setting, source FROM pg_settings WHERE name = 'default_transaction_read_only';
CALL reshard_add_partition('rd_ro', 'rd_ro_2');
\c - :superuser
SET default_transaction_read_only = off;
ALTER DATABASE :"db" RESET default_transaction_read_only;
SELECT * FROM rd_partitions('rd_ro');
SELECT * FROM rd_state('rd_ro');

-- A statement_timeout shorter than the call, a lock_timeout of 1 ms and a
-- default_tablespace: the call ends; nothing of the table is in the other
-- tablespace.  (No other session holds a lock here: TAP 024 moves under
-- the databases' settings while a reader holds the table.)
ALTER DATABASE :"db" SET statement_timeout = '1s';
ALTER DATABASE :"db" SET lock_timeout = '1ms';
ALTER DATABASE :"db" SET default_tablespace = 'reshard_dbsettings_elsewhere';
\c - reshard_dbsettings_owner
SELECT name, setting, source FROM pg_settings
WHERE name IN ('statement_timeout', 'lock_timeout', 'default_tablespace') ORDER BY name;
\set moved_rows NULL
CALL reshard_add_partition('rd_timeouts', 'rd_timeouts_2') \gset
\c - :superuser
ALTER DATABASE :"db" RESET statement_timeout;
ALTER DATABASE :"db" RESET lock_timeout;
ALTER DATABASE :"db" RESET default_tablespace;
SELECT * FROM rd_partitions('rd_timeouts');
SELECT * FROM rd_state('rd_timeouts');
SELECT :moved_rows = (SELECT count(*) FROM rd_timeouts_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed;

-- A search_path with the look-alikes first (pg_catalog after them): the
-- last bucket is removed, each row in its bucket.
ALTER DATABASE :"db" SET search_path = rd_lookalikes, pg_catalog, public;
\c - reshard_dbsettings_owner
SHOW search_path;
\set moved_rows NULL
CALL reshard_remove_partition('rd_lookalikes') \gset
\c - :superuser
SET search_path = pg_catalog, public;
ALTER DATABASE :"db" RESET search_path;
SELECT * FROM rd_partitions('rd_lookalikes');
SELECT * FROM rd_state('rd_lookalikes');
SELECT :moved_rows = (SELECT count(*) FROM rd_lookalikes_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed,
       (SELECT count(*) FROM rd_lookalikes_2) AS left_in_the_removed_partition;

-- The same search_path, and a statement_timeout: the call tells one the
-- session set itself from one of the database by a query of pg_settings,
-- which the look-alike equality must not answer.  The call ends.
ALTER DATABASE :"db" SET search_path = rd_lookalikes, pg_catalog, public;
ALTER DATABASE :"db" SET statement_timeout = '1s';
\c - reshard_dbsettings_owner
SHOW statement_timeout;
\set moved_rows NULL
CALL reshard_add_partition('rd_lookalikes_timeout', 'rd_lookalikes_timeout_2') \gset
\c - :superuser
SET search_path = pg_catalog, public;
ALTER DATABASE :"db" RESET search_path;
ALTER DATABASE :"db" RESET statement_timeout;
SELECT * FROM rd_partitions('rd_lookalikes_timeout');
SELECT * FROM rd_state('rd_lookalikes_timeout');
SELECT :moved_rows = (SELECT count(*) FROM rd_lookalikes_timeout_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed;

-- A default_table_access_method: the partitions that take the old ones'
-- places are of the heap, as those were.
ALTER DATABASE :"db" SET default_table_access_method = reshard_dbsettings_heap;
\c - reshard_dbsettings_owner
SHOW default_table_access_method;
\set moved_rows NULL
CALL reshard_add_partition('rd_am', 'rd_am_2') \gset
\c - :superuser
ALTER DATABASE :"db" RESET default_table_access_method;
SELECT * FROM rd_partitions('rd_am');
SELECT * FROM rd_state('rd_am');
SELECT :moved_rows = (SELECT count(*) FROM rd_am_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed;

-- Without a setting, partitions of another access method than the
-- default: the partitions that take their places are of theirs (the new
-- partition, made LIKE the table, is of the heap).
\c - reshard_dbsettings_owner
\set moved_rows NULL
CALL reshard_add_partition('rd_own_am', 'rd_own_am_2') \gset
\c - :superuser
SELECT * FROM rd_partitions('rd_own_am');
SELECT rows_differ, misplaced, phase, engine_leftovers FROM rd_state('rd_own_am');
SELECT :moved_rows = (SELECT count(*) FROM rd_own_am_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed;

-- session_replication_role = replica (a subscriber's database): the last
-- bucket is removed, each row in its bucket.
ALTER DATABASE :"db" SET session_replication_role = replica;
\c - reshard_dbsettings_owner
SHOW session_replication_role;
\set moved_rows NULL
CALL reshard_remove_partition('rd_replica') \gset
\c - :superuser
ALTER DATABASE :"db" RESET session_replication_role;
SELECT * FROM rd_partitions('rd_replica');
SELECT * FROM rd_state('rd_replica');
-- (the engine's records followed its state row and went with it, though no
-- foreign key's cascade fires in this mode)
SELECT count(*) AS records_left FROM reshard_state_cleanup;
SELECT :moved_rows = (SELECT count(*) FROM rd_replica_before WHERE jumpbackhash(id, 3) = 2) AS moved_as_computed,
       (SELECT count(*) FROM rd_replica_2) AS left_in_the_removed_partition;

-- The database has the settings it had (pg_regress's), and no other.
\c - :superuser
SELECT coalesce((SELECT setconfig::text FROM pg_db_role_setting
                 WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) AND setrole = 0),
                '') = :'database_settings' AS database_settings_as_they_were;

SET client_min_messages = warning;
DROP TABLE rd_ro, rd_ro_2, rd_ro_before, rd_timeouts, rd_timeouts_2, rd_timeouts_before,
           rd_lookalikes, rd_lookalikes_2, rd_lookalikes_3, rd_lookalikes_before, rd_lookalikes_timeout, rd_lookalikes_timeout_2,
           rd_lookalikes_timeout_before, rd_am, rd_am_2, rd_am_before, rd_own_am, rd_own_am_2, rd_own_am_before, rd_replica, rd_replica_2, rd_replica_3, rd_replica_before;
DROP PROCEDURE rd_make(text, int, boolean);
DROP FUNCTION rd_partitions(regclass), rd_state(text), rd_slow(int);
DROP SCHEMA rd_lookalikes CASCADE;
DELETE FROM reshard_state;
REVOKE CREATE ON SCHEMA public FROM reshard_dbsettings_owner;
DROP OWNED BY reshard_dbsettings_owner;
DROP ROLE reshard_dbsettings_owner;
DROP ACCESS METHOD reshard_dbsettings_heap;
DROP TABLESPACE reshard_dbsettings_elsewhere;
