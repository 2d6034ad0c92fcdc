--
-- Constraints of the parent: carried over by resharding, or refused before
-- anything is copied.  The second part needs PostgreSQL 18 (NOT NULL NOT
-- VALID, named NOT NULL constraints, NOT ENFORCED, virtual generated
-- columns) and 17 (the MAINTAIN privilege); on older servers it is skipped
-- (expected/reshard_constraints_1.out).
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
CREATE EXTENSION subsetting;
DROP ROLE IF EXISTS regress_reshard_maintainer;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- The rows a partition holds before and after a call: nothing was copied
-- when the call is refused.
CREATE FUNCTION rows_of(VARIADIC parts regclass[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    p regclass;
    n bigint;
    result text := '';
BEGIN
    FOREACH p IN ARRAY parts LOOP
        EXECUTE format('SELECT count(*) FROM %s', p) INTO n;
        result := result || format('%s: %s ', p, n);
    END LOOP;
    RETURN rtrim(result);
END
$$;

-- A new partition without a CHECK constraint of the parent is refused
-- before the copy (PostgreSQL would refuse to attach it).
CREATE TABLE checked (id bigint NOT NULL, v int, CONSTRAINT v_small CHECK (v < 1000))
    PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE checked_0 PARTITION OF checked FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE checked_1 PARTITION OF checked FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO checked SELECT i, i FROM generate_series(1, 100) AS i;
CREATE TABLE checked_2 (LIKE checked);
CALL reshard_add_partition('checked', 'checked_2');
SELECT rows_of('checked_0', 'checked_1', 'checked_2');
DROP TABLE checked_2;
CREATE TABLE checked_2 (LIKE checked INCLUDING ALL);
SET client_min_messages = warning;
CALL reshard_add_partition('checked', 'checked_2');
RESET client_min_messages;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'checked'::regclass AND contype = 'c';

SELECT current_setting('server_version_num')::int >= 180000 AS pg18 \gset
\if :pg18
\else
\echo skipped: PostgreSQL 18 features
DROP TABLE checked;
DROP FUNCTION rows_of(regclass[]);
DELETE FROM reshard_state;  -- the state of this test's reshardings (a row stays after the end)
\quit
\endif

-- A NOT NULL constraint NOT VALID: refused before the copy, with the way out.
CREATE TABLE nulls (id bigint NOT NULL, v int) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE nulls_0 PARTITION OF nulls FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE nulls_1 PARTITION OF nulls FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO nulls SELECT i, NULLIF(i % 10, 0) FROM generate_series(1, 100) AS i;
ALTER TABLE nulls ADD CONSTRAINT v_set NOT NULL v NOT VALID;
CREATE TABLE nulls_2 (LIKE nulls INCLUDING ALL);
CALL reshard_add_partition('nulls', 'nulls_2');
SELECT rows_of('nulls_0', 'nulls_1', 'nulls_2');
DELETE FROM nulls WHERE v IS NULL;
ALTER TABLE nulls VALIDATE CONSTRAINT v_set;
SET client_min_messages = warning;
CALL reshard_add_partition('nulls', 'nulls_2');
RESET client_min_messages;
SELECT conname, convalidated, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = 'nulls'::regclass ORDER BY conname;

-- Named NOT NULL constraints, NOT ENFORCED checks and foreign keys, virtual
-- generated columns and the MAINTAIN privilege are carried over.
CREATE ROLE regress_reshard_maintainer;
CREATE TABLE referenced (id bigint PRIMARY KEY);
CREATE TABLE features (
    id bigint CONSTRAINT id_is_set NOT NULL,
    v int,
    doubled int GENERATED ALWAYS AS (v * 2) VIRTUAL,
    r bigint,
    CONSTRAINT v_positive CHECK (v > 0) NOT ENFORCED,
    CONSTRAINT r_known FOREIGN KEY (r) REFERENCES referenced NOT ENFORCED
) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE features_0 PARTITION OF features FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE features_1 PARTITION OF features FOR VALUES WITH (MODULUS 2, REMAINDER 1);
GRANT MAINTAIN ON features TO regress_reshard_maintainer;
INSERT INTO features (id, v, r) SELECT i, -i, i FROM generate_series(1, 100) AS i;
CREATE TEMP TABLE before AS
SELECT conname, contype, convalidated, conenforced, pg_get_constraintdef(oid) AS def
FROM pg_constraint WHERE conrelid = 'features'::regclass;
CREATE TABLE features_2 (LIKE features INCLUDING ALL);
SET client_min_messages = warning;
CALL reshard_add_partition('features', 'features_2');
RESET client_min_messages;
SELECT conname, contype, convalidated, conenforced, pg_get_constraintdef(oid) AS def
FROM pg_constraint WHERE conrelid = 'features'::regclass
EXCEPT SELECT * FROM before;
SELECT count(*) AS constraints_carried_over FROM before;
SELECT attname, attgenerated, pg_get_expr(d.adbin, d.adrelid) AS expression
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = 'features'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT has_table_privilege('regress_reshard_maintainer', 'features', 'MAINTAIN') AS maintain;
SELECT count(*), sum(doubled) FROM features;
SELECT * FROM reshard_check('features') ORDER BY bucket;

DROP TABLE checked, nulls, features, referenced;
DROP FUNCTION rows_of(regclass[]);
DROP ROLE regress_reshard_maintainer;
DELETE FROM reshard_state;  -- the state of this test's reshardings (a row stays after the end)
