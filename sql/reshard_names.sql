-- The names of what the resharding engine makes cannot be taken first by
-- another role (docs/resharding.md, "What the engine makes").
--
-- reshard_names_squatter may create in the table's schema and nothing else.
-- Before the call it creates a relation of every name the engine used to
-- give its objects, computed from the OIDs it reads in pg_class:
-- reshard_shadow_<old partition>, reshard_incoming_<old partition>,
-- reshard_key_<new partition>, reshard_parent_<table>, reshard_log_<table>,
-- reshard_log_seq_<table>.  Once the engine's objects exist (the call in its
-- catch-up: the shadows have their indexes), it reads their
-- names and tries every other kind with the same OID and hash, every kind
-- with every OID it sees (the engine's tables, their indexes, the table's
-- partitions), with and without that hash, and reshard_takeover_<OID>.
-- It cannot read reshard_state (where the random part is), and
-- reshard_progress shows it nothing; it can neither rename nor drop nor
-- alter nor read what the engine made.  The call (as the table's owner)
-- succeeds; what the squatter made is untouched (the same OIDs, owner and
-- rows), and nothing of the engine is left.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE reshard_names_owner;
CREATE ROLE reshard_names_squatter;
CREATE SCHEMA rn AUTHORIZATION reshard_names_owner;
GRANT USAGE, CREATE ON SCHEMA rn TO reshard_names_squatter;
SET ROLE reshard_names_owner;
CREATE TABLE rn.t (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE rn.t_0 PARTITION OF rn.t FOR VALUES IN (0);
CREATE TABLE rn.t_1 PARTITION OF rn.t FOR VALUES IN (1);
CREATE INDEX ON rn.t (id);
INSERT INTO rn.t SELECT i, 'v' || i FROM generate_series(1, 1000) AS i;
CREATE TABLE rn.t_2 (LIKE rn.t INCLUDING ALL);
RESET ROLE;
CREATE TEMP TABLE rows_before AS SELECT * FROM rn.t;

-- What the squatter made: each with one row, to be found as it was.
CREATE TABLE rn_squatted (name text PRIMARY KEY, oid oid);
GRANT SELECT, INSERT ON rn_squatted TO reshard_names_squatter;
CREATE FUNCTION rn_squat(name text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE rn.%I (squatted text)', name);
    EXECUTE format('INSERT INTO rn.%I VALUES (%L)', name, name);
    INSERT INTO rn_squatted VALUES (name, format('rn.%I', name)::regclass);
    RETURN 1;
EXCEPTION WHEN duplicate_table THEN
    RETURN 0;   -- (taken already, by the squatter or by the engine)
END
$$;
-- What reshard_names_squatter gets when it tries query: its SQLSTATE, or 'done'.
CREATE FUNCTION rn_try(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'done';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

-- Before the call: the names of the engine of before.
SET ROLE reshard_names_squatter;
SELECT sum(rn_squat(x)) AS squatted
FROM (SELECT k || c.oid FROM pg_class c, unnest(ARRAY['reshard_shadow_', 'reshard_incoming_']) AS k
      WHERE c.oid IN ('rn.t_0'::regclass, 'rn.t_1'::regclass)
      UNION ALL SELECT 'reshard_key_' || 'rn.t_2'::regclass::oid
      UNION ALL SELECT k || 'rn.t'::regclass::oid FROM unnest(ARRAY['reshard_parent_', 'reshard_log_', 'reshard_log_seq_']) AS k) AS n(x);
RESET ROLE;

-- (reshard_begin and reshard_step are a superuser's: they run as the owner)
CALL reshard_begin('rn.t', 'add', 'rn.t_2');
-- (to the catch-up: the copy has built the shadows' indexes)
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_progress WHERE "table" = 'rn.t') <> 'catch up' LOOP
        CALL reshard_step('rn.t');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress WHERE "table" = 'rn.t';

-- What the engine made (as the superuser sees it), and the names it must not have.
CREATE TEMP TABLE made AS
SELECT c.oid, c.relname::text AS name, c.relkind FROM pg_class c
WHERE c.relnamespace = 'rn'::regnamespace AND c.relname LIKE 'reshard\_%'
  AND c.relowner = 'reshard_names_owner'::regrole;
SELECT relkind, count(*) AS made,
       count(*) FILTER (WHERE name ~ '^reshard_[a-z_]+_[0-9]+_[0-9a-f]{16}($|_)') AS named_with_a_hash,
       max(octet_length(name)) < 64 AS within_namedatalen,
       count(*) FILTER (WHERE name IN (SELECT s.name FROM rn_squatted s)) AS squatted_names
FROM made GROUP BY relkind ORDER BY relkind;

-- The squatter reads the names, and tries what they tell.
SET ROLE reshard_names_squatter;
SELECT rn_try('SELECT name_key FROM reshard_state') AS read_state,
       (SELECT count(*) FROM reshard_progress) AS progress_rows;
CREATE TEMP TABLE seen AS
SELECT c.oid, c.relname::text AS name FROM pg_class c
WHERE c.relnamespace = 'rn'::regnamespace AND c.relname LIKE 'reshard\_%'
  AND c.relowner = 'reshard_names_owner'::regrole;
-- (every kind with every OID, with no hash and with the hash of one name
-- seen; and with each name's own OID and hash)
CREATE TEMP TABLE guesses AS
WITH kinds(k) AS (VALUES ('shadow'), ('incoming'), ('key'), ('bound'), ('parent'), ('log'), ('log_seq'), ('hidden'),
                         ('hidden_key'), ('mark'), ('refuse_direct'), ('all'), ('shown'), ('direct_writes'),
                         ('direct_truncate'), ('takeover')),
     named AS (SELECT substring(name from '^reshard_[a-z_]+_([0-9]+)_') AS o, substring(name from '_[0-9a-f]{16}$') AS h
               FROM seen),
     hashes(h) AS (SELECT '' UNION ALL (SELECT h FROM named WHERE h IS NOT NULL ORDER BY o, h LIMIT 1)),
     oids(o) AS (SELECT o::oid FROM named
                 UNION SELECT oid FROM seen
                 UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM seen)
                 UNION SELECT c.oid FROM pg_class c WHERE c.relnamespace = 'rn'::regnamespace
                                                     AND c.relname IN ('t', 't_0', 't_1', 't_2'))
SELECT name FROM (SELECT format('reshard_%s_%s%s', k, o, h) AS name FROM kinds, hashes, oids
                  UNION
                  SELECT format('reshard_%s_%s%s', k, o, h) FROM kinds, named WHERE o IS NOT NULL AND h IS NOT NULL) AS g
WHERE name NOT IN (SELECT name FROM seen UNION ALL SELECT name FROM rn_squatted);
SELECT count(*) > 400 AS many_guesses FROM guesses;
SELECT sum(rn_squat(name)) = count(*) AS all_squatted FROM guesses;
-- what the engine made stays its own
SELECT s.name ~ '^reshard_[a-z_]+_[0-9]+_' AS engine_object,
       rn_try(format('ALTER TABLE %s RENAME TO squatter_name', s.oid::regclass)) AS rename,
       rn_try(format('DROP TABLE %s', s.oid::regclass)) AS drop,
       rn_try(format('ALTER TABLE %s ADD COLUMN squatter int', s.oid::regclass)) AS alter,
       rn_try(format('SELECT FROM %s', s.oid::regclass)) AS read,
       count(*)
FROM seen s JOIN pg_class c ON c.oid = s.oid AND c.relkind IN ('r', 'p') GROUP BY 1, 2, 3, 4, 5;
RESET ROLE;

-- The call goes on to the end.
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_progress WHERE "table" = 'rn.t') NOT IN ('done', 'aborted') LOOP
        CALL reshard_step('rn.t');
    END LOOP;
END
$$;
SELECT phase, error FROM reshard_progress WHERE "table" = 'rn.t';
SELECT count(*) AS buckets FROM sharding_layout('rn.t');
SELECT (SELECT count(*) FROM (SELECT * FROM rn.t EXCEPT ALL SELECT * FROM rows_before) AS a)
     + (SELECT count(*) FROM (SELECT * FROM rows_before EXCEPT ALL SELECT * FROM rn.t) AS b) AS differences;
SELECT coalesce(sum(misplaced_rows), 0) AS misplaced FROM reshard_check('rn.t');
-- What the squatter made: all there, its own, as it was.
SELECT count(*) > 400 AS squatted,
       count(*) FILTER (WHERE c.oid IS NULL) AS gone,
       count(*) FILTER (WHERE c.relowner <> 'reshard_names_squatter'::regrole) AS not_its_own,
       count(*) FILTER (WHERE NOT EXISTS (SELECT FROM pg_class x WHERE x.oid = s.oid AND x.relname = s.name)) AS renamed
FROM rn_squatted s LEFT JOIN pg_class c ON c.oid = s.oid;
DO $$
DECLARE
    s record;
    v text;
    changed int := 0;
BEGIN
    FOR s IN SELECT * FROM rn_squatted LOOP
        EXECUTE format('SELECT string_agg(squatted, '','') FROM %s', s.oid::regclass) INTO v;
        changed := changed + (v IS DISTINCT FROM s.name)::int;
    END LOOP;
    RAISE WARNING 'squatted tables whose rows changed: %', changed;
END
$$;
-- Nothing of the engine is left (the squatter's tables aside).
SELECT count(*) AS left_of_the_engine FROM pg_class c
WHERE c.relnamespace = 'rn'::regnamespace AND c.relname LIKE 'reshard\_%'
  AND c.relowner <> 'reshard_names_squatter'::regrole;

SET client_min_messages = warning;
DROP SCHEMA rn CASCADE;
DROP TABLE rn_squatted, rows_before, made, seen, guesses;
DROP FUNCTION rn_squat(text), rn_try(text);
DELETE FROM reshard_state WHERE parent_name LIKE 'rn.%';
DROP ROLE reshard_names_squatter;
DROP ROLE reshard_names_owner;
