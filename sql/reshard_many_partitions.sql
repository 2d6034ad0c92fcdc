--
-- A resharding of 255 partitions to 256 (the largest the operator classes
-- go to) with the default cutover_budget (500 ms) and cutover_attempts
-- (10): the cutover's work under its lock must not grow with the
-- partitions (docs/resharding-engine.md, "The cutover and the number of
-- partitions").  Asserts that the call succeeds and what it leaves, never
-- a time; the attempts it took are reported as within the default.  The
-- longest write through the parent at 8, 64 and 256 partitions:
-- test/bench/reshard_stall --partitions.
--
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE regress_many_reader;

CREATE TABLE many (id bigint PRIMARY KEY, payload text, counter int DEFAULT 0)
    PARTITION BY HASH (id jumpbackhash255_int8_ops);
SELECT format('CREATE TABLE many_%s PARTITION OF many FOR VALUES WITH (MODULUS 255, REMAINDER %s)', r, r)
FROM generate_series(0, 254) AS r \gexec
CREATE INDEX many_payload ON many (payload);
INSERT INTO many (id, payload) SELECT i, md5(i::text) FROM generate_series(1, 10000) AS i;
-- Properties of partitions that the shadows take over: a grant, a
-- comment, a storage parameter, a column's statistics target.
GRANT SELECT ON many_7 TO regress_many_reader;
COMMENT ON TABLE many_200 IS 'the two hundredth';
ALTER TABLE many_254 SET (fillfactor = 90);
ALTER TABLE many_3 ALTER COLUMN payload SET STATISTICS 500;
CREATE TEMP TABLE before AS SELECT * FROM many;
CREATE TABLE many_255 (LIKE many INCLUDING ALL);
CREATE TEMP TABLE engine_relations_before AS SELECT oid FROM pg_class WHERE relname ~ '^reshard_[a-z_]+_[0-9]+';

CALL reshard_add_partition('many', 'many_255');
SELECT phase, rows_verified = 10000 AS all_verified, cutover_attempts BETWEEN 1 AND 10 AS within_default_attempts
FROM reshard_progress WHERE "table"::regclass = 'many'::regclass;

-- Every row exactly once, each in its bucket's partition.
SELECT (SELECT count(*) FROM many) AS rows,
       (SELECT count(*) FROM (SELECT * FROM many EXCEPT ALL SELECT * FROM before) AS t) AS added,
       (SELECT count(*) FROM (SELECT * FROM before EXCEPT ALL SELECT * FROM many) AS t) AS lost;
SELECT count(*) AS misplaced FROM many
WHERE tableoid <> format('many_%s', jumpbackhash(id, 256))::regclass;
SELECT count(*) AS partitions, count(*) FILTER (WHERE bound = format('FOR VALUES WITH (modulus 256, remainder %s)', substr(relname, 6)))
           AS bound_to_their_bucket
FROM (SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'many'::regclass) AS p;
SELECT count(*) AS partitions, sum(rows) AS rows, sum(misplaced_rows) AS misplaced FROM reshard_check('many');
-- Nothing of the engine's is left: on the partitions no index or
-- constraint named reshard_, no trigger (the guards, the capture); no
-- relation named reshard_..._<oid> (the shadows, the new parent, the log,
-- the old parent and partitions renamed away by the cutover, which the
-- finish drops).
SELECT (SELECT count(*) FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        WHERE x.indrelid = ANY (p.parts) AND c.relname LIKE 'reshard\_%') AS engine_indexes,
       (SELECT count(*) FROM pg_constraint WHERE conrelid = ANY (p.parts) AND conname LIKE 'reshard\_%') AS engine_constraints,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid = ANY (p.parts)) AS triggers,
       (SELECT count(*) FROM pg_class WHERE relname ~ '^reshard_[a-z_]+_[0-9]+'
          AND oid NOT IN (SELECT oid FROM engine_relations_before)) AS engine_relations
FROM (SELECT array_agg(inhrelid) AS parts FROM pg_inherits WHERE inhparent = 'many'::regclass) AS p;
-- The properties were carried over.
SELECT has_table_privilege('regress_many_reader', 'many_7', 'SELECT') AS reader_reads_7,
       has_table_privilege('regress_many_reader', 'many_8', 'SELECT') AS reader_reads_8,
       obj_description('many_200'::regclass, 'pg_class') AS comment_200,
       (SELECT reloptions FROM pg_class WHERE oid = 'many_254'::regclass) AS options_254,
       (SELECT attstattarget FROM pg_attribute WHERE attrelid = 'many_3'::regclass AND attname = 'payload') AS target_3;
SELECT count(*) AS partitions_with_both_indexes FROM pg_inherits i
WHERE i.inhparent = 'many'::regclass
  AND (SELECT count(*) FROM pg_index x WHERE x.indrelid = i.inhrelid) = 2;

-- (if the call failed, what it left undone first)
SET client_min_messages = error;
DO $$
BEGIN
    IF (SELECT phase FROM reshard_progress WHERE "table"::regclass = 'many'::regclass) NOT IN ('done', 'aborted') THEN
        CALL reshard_abort('many');
    END IF;
END
$$;
SET client_min_messages = warning;
DROP TABLE many, many_255, before, engine_relations_before;
DROP ROLE regress_many_reader;
