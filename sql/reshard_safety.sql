--
-- Resharding is safe against the tables it is given: a superuser who
-- reshards a table of another role runs no code of that role with
-- superuser rights (each way to attach code to a partition is refused up
-- front, before any row is copied), the moves run as the table's owner, and
-- every precondition is checked before anything is copied, with a message
-- that names the problem.
--
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;
\i test/regress_helpers.sql

-- regress_alice owns a sharded table and plants code that would make her a
-- superuser if a superuser ran it.
CREATE ROLE regress_alice;
CREATE ROLE regress_mallory;
GRANT CREATE ON SCHEMA public TO regress_alice;
SET ROLE regress_alice;
CREATE FUNCTION escalate() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'ALTER ROLE regress_alice SUPERUSER';
    RETURN true;
EXCEPTION WHEN insufficient_privilege THEN
    RETURN true;
END $$;
CREATE FUNCTION escalate_int(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM escalate();
    RETURN x;
END $$;
CREATE FUNCTION escalate_text() RETURNS text LANGUAGE plpgsql AS $$ BEGIN PERFORM escalate(); RETURN 'x'; END $$;
CREATE FUNCTION escalate_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM escalate(); RETURN NEW; END $$;
-- Who runs the code the parent itself has: recorded by its CHECK constraint.
CREATE TABLE whoami (role name);
CREATE FUNCTION record_role() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.whoami VALUES (current_user);
    RETURN true;
END $$;
CREATE TABLE accounts (id bigint NOT NULL, note text DEFAULT 'n', g int GENERATED ALWAYS AS (1) STORED,
                       CHECK (record_role()))
    PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE accounts_0 PARTITION OF accounts FOR VALUES IN (0);
CREATE TABLE accounts_1 PARTITION OF accounts FOR VALUES IN (1);
INSERT INTO accounts (id) SELECT i FROM generate_series(1, 2000) AS i;
TRUNCATE whoami;
-- One candidate new partition per way of attaching code.
CREATE TABLE with_trigger (LIKE accounts INCLUDING ALL);
CREATE TRIGGER t BEFORE INSERT ON with_trigger FOR EACH ROW EXECUTE FUNCTION escalate_trigger();
CREATE TABLE with_rule (LIKE accounts INCLUDING ALL);
CREATE RULE r AS ON INSERT TO with_rule DO ALSO SELECT escalate();
CREATE TABLE with_check (LIKE accounts INCLUDING ALL);
ALTER TABLE with_check ADD CHECK (escalate());
CREATE TABLE with_index (LIKE accounts INCLUDING ALL);
CREATE INDEX ON with_index (escalate_int(id::int));
CREATE TABLE with_partial_index (LIKE accounts INCLUDING ALL);
CREATE INDEX ON with_partial_index (id) WHERE escalate_int(id::int) = 1;
CREATE TABLE with_default (LIKE accounts INCLUDING ALL);
ALTER TABLE with_default ALTER COLUMN note SET DEFAULT escalate_text();
CREATE TABLE with_generated (id bigint NOT NULL, note text DEFAULT 'n',
                             g int GENERATED ALWAYS AS (escalate_int(1)) STORED, CHECK (record_role()));
CREATE TABLE with_policy (LIKE accounts INCLUDING ALL);
CREATE POLICY p ON with_policy USING (escalate());
ALTER TABLE with_policy ENABLE ROW LEVEL SECURITY;
CREATE TABLE clean (LIKE accounts INCLUDING ALL);
RESET ROLE;
-- A partition that belongs to someone else.
CREATE TABLE not_hers (LIKE accounts INCLUDING ALL);
ALTER TABLE not_hers OWNER TO regress_mallory;

-- A superuser reshards into each of them: every one refused before a row
-- is copied; regress_alice is no superuser; the table is as it was.
SELECT q AS new_partition, pg_temp.error_of(format('CALL reshard_add_partition(''accounts'', %L)', q)) AS error
FROM unnest(ARRAY['with_trigger', 'with_rule', 'with_check', 'with_index', 'with_partial_index', 'with_default',
                  'with_generated', 'with_policy', 'not_hers']) AS q;
SELECT rolsuper AS alice_is_superuser FROM pg_roles WHERE rolname = 'regress_alice';
SELECT pg_get_partkeydef('accounts'::regclass) AS partition_key,
       (SELECT count(*) FROM with_trigger) + (SELECT count(*) FROM with_rule) + (SELECT count(*) FROM with_check)
       + (SELECT count(*) FROM with_index) + (SELECT count(*) FROM with_default) + (SELECT count(*) FROM with_generated)
       + (SELECT count(*) FROM with_policy) + (SELECT count(*) FROM not_hers) + (SELECT count(*) FROM with_partial_index)
           AS rows_copied,
       (SELECT count(*) FROM whoami) AS code_runs;

-- The same code on an existing partition (its rows are deleted), or on the
-- parent (which is created again): refused too.
SET ROLE regress_alice;
CREATE TRIGGER t BEFORE DELETE ON accounts_1 FOR EACH ROW EXECUTE FUNCTION escalate_trigger();
RESET ROLE;
SELECT pg_temp.error_of('CALL reshard_add_partition(''accounts'', ''clean'')') AS trigger_on_a_partition;
SET ROLE regress_alice;
DROP TRIGGER t ON accounts_1;
CREATE RULE r AS ON DELETE TO accounts_0 DO ALSO SELECT escalate();
RESET ROLE;
SELECT pg_temp.error_of('CALL reshard_add_partition(''accounts'', ''clean'')') AS rule_on_a_partition;
SET ROLE regress_alice;
DROP RULE r ON accounts_0;
CREATE POLICY p ON accounts USING (escalate());
RESET ROLE;
SELECT pg_temp.error_of('CALL reshard_add_partition(''accounts'', ''clean'')') AS policy_on_the_parent;
SET ROLE regress_alice;
DROP POLICY p ON accounts;
RESET ROLE;
ALTER TABLE accounts_1 OWNER TO regress_mallory;
SELECT pg_temp.error_of('CALL reshard_add_partition(''accounts'', ''clean'')') AS partition_of_another_owner;
ALTER TABLE accounts_1 OWNER TO regress_alice;
SELECT rolsuper AS alice_is_superuser FROM pg_roles WHERE rolname = 'regress_alice';

-- With nothing of her own, the superuser's call goes through, and the code
-- the table has (its CHECK) runs as regress_alice, never as the superuser.
CALL reshard_add_partition('accounts', 'clean') \gset
SELECT :moved_rows = (SELECT count(*) FROM clean) AS moved_as_reported,
       (SELECT count(*) FROM accounts
        WHERE tableoid <> (CASE jumpbackhash(id, 3) WHEN 2 THEN 'clean' ELSE 'accounts_' || jumpbackhash(id, 3) END)::regclass)
           AS misplaced,
       (SELECT count(*) FROM accounts) AS rows,
       pg_get_userbyid((SELECT relowner FROM pg_class WHERE oid = 'accounts'::regclass)) AS owner;
SELECT role, count(*) > 0 AS ran FROM whoami GROUP BY role;
SELECT rolsuper AS alice_is_superuser FROM pg_roles WHERE rolname = 'regress_alice';

-- A caller who does not own the table is refused before anything else.
CREATE TABLE mallory_3 (id bigint NOT NULL, note text, g int);
ALTER TABLE mallory_3 OWNER TO regress_mallory;
SET ROLE regress_mallory;
SELECT pg_temp.error_of('CALL reshard_add_partition(''accounts'', ''mallory_3'')') AS not_the_owner;
SELECT pg_temp.error_of('CALL reshard_remove_partition(''accounts'')') AS not_the_owner;
DROP TABLE mallory_3;
RESET ROLE;

-- Preconditions, each found before any row is copied, each with a message
-- that names it.
CREATE TABLE plain (id bigint);
CREATE TABLE by_hash (id bigint) PARTITION BY HASH (id);
CREATE TABLE by_other (id bigint) PARTITION BY LIST ((id % 3));
CREATE FUNCTION public.jumpbackhash(x bigint, n int, salt int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN 0; END';
CREATE TABLE lookalike (id bigint) PARTITION BY LIST (jumpbackhash(id, 1, 7));
CREATE TABLE lookalike_0 PARTITION OF lookalike FOR VALUES IN (0);
CREATE TABLE gap (id bigint) PARTITION BY LIST (jumpbackhash(id, 3));
CREATE TABLE gap_0 PARTITION OF gap FOR VALUES IN (0);
CREATE TABLE gap_2 PARTITION OF gap FOR VALUES IN (2);
CREATE TABLE two_values (id bigint) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE two_values_01 PARTITION OF two_values FOR VALUES IN (0, 1);
CREATE TABLE with_default_part (id bigint) PARTITION BY LIST (jumpbackhash(id, 1));
CREATE TABLE with_default_part_0 PARTITION OF with_default_part FOR VALUES IN (0);
CREATE TABLE with_default_part_d PARTITION OF with_default_part DEFAULT;
CREATE TABLE with_serial (id bigserial) PARTITION BY LIST (jumpbackhash(id, 1));
CREATE TABLE with_serial_0 PARTITION OF with_serial FOR VALUES IN (0);
CREATE TABLE items (id bigint NOT NULL, label text) PARTITION BY LIST (jumphash(id, 2));
CREATE TABLE items_0 PARTITION OF items FOR VALUES IN (0);
CREATE TABLE items_1 PARTITION OF items FOR VALUES IN (1);
INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 1000) AS i;
CREATE TABLE items_full (LIKE items);
INSERT INTO items_full VALUES (1, 'x');
CREATE TABLE items_other_columns (id int NOT NULL, label text);
CREATE TABLE items_nullable (id bigint, label text);
CREATE TABLE items_2 (LIKE items);
CREATE TABLE sub (id bigint NOT NULL, label text) PARTITION BY LIST (label);
CREATE FUNCTION public.key_fn(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1';
CREATE TABLE odd_key (id bigint NOT NULL) PARTITION BY LIST (jumphash(public.key_fn(id), 1));
CREATE TABLE odd_key_0 PARTITION OF odd_key FOR VALUES IN (0);
CREATE TABLE odd_key_1 (LIKE odd_key);
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'CALL reshard_add_partition(''plain'', ''items_2'')',
    'CALL reshard_add_partition(''by_hash'', ''items_2'')',
    'CALL reshard_add_partition(''by_other'', ''items_2'')',
    'CALL reshard_add_partition(''lookalike'', ''items_2'')',
    'CALL reshard_add_partition(''gap'', ''items_2'')',
    'CALL reshard_add_partition(''two_values'', ''items_2'')',
    'CALL reshard_add_partition(''with_default_part'', ''items_2'')',
    'CALL reshard_add_partition(''with_serial'', ''items_2'')',
    'CALL reshard_add_partition(''odd_key'', ''odd_key_1'')',
    'CALL reshard_add_partition(''items'', ''items_0'')',
    'CALL reshard_add_partition(''items'', ''items_full'')',
    'CALL reshard_add_partition(''items'', ''items_other_columns'')',
    'CALL reshard_add_partition(''items'', ''items_nullable'')',
    'CALL reshard_add_partition(''items'', ''sub'')',
    'CALL reshard_add_partition(''items'', ''items_2'', cutover_budget => ''0'')',
    'CALL reshard_add_partition(''items'', NULL)',
    'CALL reshard_add_partition(NULL, ''items_2'')',
    'CALL reshard_add_partition(''items'', ''items_2'', shard_views => true)',
    'CALL reshard_remove_partition(''items'', ''items_0'')',
    'CALL reshard_remove_partition(''odd_key'')',
    'CALL reshard_remove_partition(NULL)']) AS q;

-- Objects that would be dropped with the old parent: refused, named, with
-- a hint.
CREATE VIEW item_labels AS SELECT label FROM items;
CALL reshard_add_partition('items', 'items_2');
DROP VIEW item_labels;
CREATE FUNCTION item_count() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM items; END;
CALL reshard_add_partition('items', 'items_2');
DROP FUNCTION item_count();
CREATE TABLE holder (item items);
CALL reshard_add_partition('items', 'items_2');
DROP TABLE holder;

-- Inside a transaction block: refused before anything is copied.
BEGIN;
CALL reshard_add_partition('items', 'items_2');
ROLLBACK;
SELECT pg_get_partkeydef('items'::regclass) AS partition_key, (SELECT count(*) FROM items_2) AS items_2_rows;

-- The advisory lock is released after every refusal: a real call works.
CALL reshard_add_partition('items', 'items_2') \gset
SELECT :moved_rows = (SELECT count(*) FROM items_2) AS moved_as_reported,
       (SELECT count(*) FROM items WHERE tableoid <> format('items_%s', jumphash(id, 3))::regclass) AS misplaced;
SELECT count(*) AS advisory_locks_left FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();

DROP TABLE accounts, clean, with_trigger, with_rule, with_check, with_index, with_partial_index, with_default, with_generated,
    with_policy, not_hers, whoami, plain, by_hash, by_other, lookalike, gap, two_values, with_default_part,
    with_serial, items, items_full, items_other_columns, items_nullable, sub, odd_key, odd_key_1;
DROP FUNCTION public.jumpbackhash(bigint, int, int), public.key_fn(bigint);
DROP FUNCTION escalate_int(int), escalate_text(), escalate_trigger(), escalate(), record_role();
REVOKE CREATE ON SCHEMA public FROM regress_alice;
DROP ROLE regress_alice, regress_mallory;
DELETE FROM reshard_state;  -- the state of this test's reshardings (a row stays after the end)
