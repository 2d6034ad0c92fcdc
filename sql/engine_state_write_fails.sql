--
-- A write of the state row that fails between two steps (here a trigger a
-- superuser put on reshard_state refuses it once; a cancel at that moment
-- does the same): the call fails with that error and undoes itself, like an
-- error in a step, rather than failing to roll back ("invalid transaction
-- termination", "portal snapshots ... did not account for all active
-- snapshots") with the resharding left half-way.  Called again, it is done.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
DROP TABLE IF EXISTS st, st_2;
DROP SEQUENCE IF EXISTS refusals;
CREATE EXTENSION subsetting;
RESET client_min_messages;
\set SHOW_CONTEXT never
CREATE TABLE st (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE st_0 PARTITION OF st FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE st_1 PARTITION OF st FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO st SELECT i, 'v' || i FROM generate_series(1, 100) AS i;
CREATE TABLE st_2 (LIKE st INCLUDING ALL);
-- (a sequence counts the refusals: it is not rolled back with them)
CREATE SEQUENCE refusals;
CREATE FUNCTION refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.phase = 'verify' AND OLD.phase = 'catch up' AND nextval('public.refusals') = 1 THEN
        RAISE EXCEPTION 'the state row refuses phase verify once';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse_once BEFORE UPDATE ON reshard_state FOR EACH ROW EXECUTE FUNCTION refuse_once();

CALL reshard_add_partition('st', 'st_2');
-- undone: the old layout, every row, nothing of the call's left
SELECT phase, error FROM reshard_progress;
SELECT DISTINCT buckets FROM sharding_layout('st');
SELECT count(*), count(DISTINCT id) FROM st;
SELECT count(*) AS left_behind FROM pg_class WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%'
                                         AND relname <> 'reshard_progress';
-- called again: done
CALL reshard_add_partition('st', 'st_2');
SELECT phase, error FROM reshard_progress;
SELECT DISTINCT buckets FROM sharding_layout('st');
SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE jumpbackhash(id, 3) <> 2) AS not_of_st_2 FROM st_2;

DROP TRIGGER refuse_once ON reshard_state;
DROP FUNCTION refuse_once();
DROP TABLE st, st_2;
DROP SEQUENCE refusals;
