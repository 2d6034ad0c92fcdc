-- A change of the table's definition committed during a resharding is
-- refused by name at the next step (and at the latest at the cutover, under
-- its lock), and the resharding is undone: the cutover never brings back
-- what the table was before the change (a default, a column, a type, a
-- statistics object).  Each change is made between two steps (after the
-- capture); the step that follows fails naming it, reshard_abort undoes
-- the resharding, and the change is still there.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE TABLE dc (id bigint NOT NULL, v text DEFAULT 'first', w int) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE dc_0 PARTITION OF dc FOR VALUES IN (0);
CREATE TABLE dc_1 PARTITION OF dc FOR VALUES IN (1);
INSERT INTO dc (id, w) SELECT i, i FROM generate_series(1, 500) AS i;
CREATE FUNCTION dc_definition() RETURNS text LANGUAGE sql AS $$
    SELECT format('%s; defaults %s; statistics %s', pg_get_partkeydef('dc'::regclass),
                  (SELECT string_agg(format('%s=%s', a.attname, coalesce(pg_get_expr(d.adbin, d.adrelid), '-')), ', '
                                     ORDER BY a.attnum)
                   FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                   WHERE a.attrelid = 'dc'::regclass AND a.attnum > 0 AND NOT a.attisdropped),
                  (SELECT count(*) FROM pg_statistic_ext WHERE stxrelid = 'dc'::regclass))
$$;
-- a new partition like the table as it is now; a resharding to its copy
CREATE PROCEDURE dc_to_copy() LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS dc_2;
    CREATE TABLE dc_2 (LIKE dc INCLUDING ALL);
    COMMIT;
    CALL reshard_begin('dc', 'add', 'dc_2');
    CALL reshard_step('dc');    -- setup
    CALL reshard_step('dc');    -- capture
END
$$;
\set VERBOSITY default
\set SHOW_CONTEXT never

-- A default set.
CALL dc_to_copy();
ALTER TABLE dc ALTER COLUMN v SET DEFAULT 'second';
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase;

-- A default dropped.
CALL dc_to_copy();
ALTER TABLE dc ALTER COLUMN v DROP DEFAULT;
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase;

-- A column added.
CALL dc_to_copy();
ALTER TABLE dc ADD COLUMN x int DEFAULT 7;
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase;

-- A column's type changed: the change log's rows are not of the table's
-- row type, so PostgreSQL lets the change through; a write after it is
-- not refused; the next step names the change.
CALL dc_to_copy();
ALTER TABLE dc ALTER COLUMN w TYPE bigint;
INSERT INTO dc (id, w) VALUES (1001, 1001);
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase,
       (SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'dc'::regclass AND attname = 'w') AS w;

-- The rows rewritten, the type the same (USING): no write the capture
-- sees, no definition changed; the next step names the rewrite.
CALL dc_to_copy();
ALTER TABLE dc ALTER COLUMN w TYPE bigint USING w + 1;
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase,
       (SELECT count(*) FILTER (WHERE w = id + 1) FROM dc) AS rewritten;

-- A column's collation changed (no rewrite): named too.
CALL dc_to_copy();
ALTER TABLE dc ALTER COLUMN v TYPE text COLLATE "C";
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase,
       (SELECT collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
        WHERE a.attrelid = 'dc'::regclass AND a.attname = 'v') AS v_collation;
ALTER TABLE dc ALTER COLUMN v TYPE text COLLATE "default";

-- A type changed and changed back without a rewrite (text, varchar, text),
-- a row written in between, after the copies were made: the definition is
-- the same again, but the change log cannot hold that write, and applying
-- it fails.
CALL dc_to_copy();
CALL reshard_step('dc');    -- the copy of dc_0
CALL reshard_step('dc');    -- the copy of dc_1
SELECT phase FROM reshard_progress;
ALTER TABLE dc ALTER COLUMN v TYPE varchar;
UPDATE dc SET v = 'changed' WHERE id = 1;
ALTER TABLE dc ALTER COLUMN v TYPE text;
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('done', 'aborted') LOOP
        CALL reshard_step('dc');
    END LOOP;
END
$$;
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase,
       (SELECT v FROM dc WHERE id = 1) AS v;

-- A statistics object created.
CALL dc_to_copy();
CREATE STATISTICS dc_stats ON id, w FROM dc;
CALL reshard_step('dc');
CALL reshard_abort('dc');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase;

-- Unchanged, it goes through, and keeps all of the above.
DROP TABLE dc_2;
CREATE TABLE dc_2 (LIKE dc INCLUDING ALL);
CALL reshard_add_partition('dc', 'dc_2');
SELECT dc_definition(), (SELECT phase FROM reshard_progress) AS phase,
       (SELECT count(*) FROM dc) AS rows, (SELECT count(*) FROM dc WHERE x = 7) AS with_new_default;

DROP TABLE dc;
DROP FUNCTION dc_definition();
DROP PROCEDURE dc_to_copy();
DELETE FROM reshard_state;
