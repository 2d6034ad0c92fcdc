--
-- Resharding tables PARTITION BY LIST (jumpbackanchorhash(key, n, removed)):
-- any partition can go, its rows spread over the others and its bucket pushed
-- on the removed stack; adding takes back the most recently removed bucket
-- (hash4j's addBucket).  Only the rows of the removed bucket move, or only
-- those of the bucket added; checked against jumpbackanchorhash itself.
--
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;

CREATE TABLE a (k text NOT NULL, v int) PARTITION BY LIST (jumpbackanchorhash(k, 5));
DO $$ BEGIN FOR b IN 0 .. 4 LOOP
    EXECUTE format('CREATE TABLE a_%s PARTITION OF a FOR VALUES IN (%s)', b, b);
END LOOP; END $$;
INSERT INTO a SELECT md5(i::text), i FROM generate_series(1, 5000) AS i;
CREATE TEMP TABLE before AS SELECT x.*, tableoid::regclass::text AS part FROM a x;

-- Remove bucket 1, from the middle.
CALL reshard_remove_partition('a', 'a_1') \gset
SELECT pg_get_partkeydef('a'::regclass) AS partition_key,
       :moved_rows = (SELECT count(*) FROM before WHERE part = 'a_1') AS moved_as_reported,
       (SELECT count(*) FROM a_1) AS a_1_rows,
       (SELECT count(*) FROM pg_inherits WHERE inhrelid = 'a_1'::regclass) AS a_1_attached,
       count(*) FILTER (WHERE b.part <> x.tableoid::regclass::text AND b.part <> 'a_1') AS others_moved,
       count(*) FILTER (WHERE x.tableoid <> format('a_%s', jumpbackanchorhash(x.k, 5, '{1}'))::regclass) AS misplaced,
       count(*) AS rows
FROM a x JOIN before b USING (k, v);
SELECT method, buckets, removed, partitions FROM sharded_tables WHERE parent = 'a'::regclass;
-- Remove bucket 3, then add one back: bucket 3 returns (the most recent).
CALL reshard_remove_partition('a', 'a_3') \gset
CREATE TABLE a_new (LIKE a INCLUDING ALL);
CALL reshard_add_partition('a', 'a_new') \gset
SELECT pg_get_partkeydef('a'::regclass) AS partition_key,
       (SELECT bucket FROM sharding_layout('a') WHERE partition = 'a_new'::regclass) AS a_new_bucket,
       count(*) FILTER (WHERE x.tableoid <> (SELECT partition FROM sharding_layout('a')
                                            WHERE bucket = jumpbackanchorhash(x.k, 5, '{1}'))) AS misplaced,
       count(*) = 5000 AS same_count,
       (SELECT count(*) FROM (SELECT k, v FROM before EXCEPT ALL SELECT k, v FROM a) AS d) AS lost
FROM a x;
-- A jumpbackanchorhash table needs the partition to remove named.
\set VERBOSITY terse
CALL reshard_remove_partition('a');
\set VERBOSITY default

-- Random: a table of random size and bucket count, partitions removed from
-- anywhere and added back at random; after each call the rows are those of
-- before, each where jumpbackanchorhash says with the state computed by the
-- extension's own add/remove functions, and only rows of the bucket that
-- goes or comes moved.  Only the verdict is printed.
CREATE TABLE anchor_runs (ok boolean, detail text);
DO $$
DECLARE
    nb int;
    rem int[] := '{}';
    b int;
    moved bigint;
    changed bigint;
    bad bigint;
    part text;
    counter int := 0;
BEGIN
    nb := 2 + floor(random() * 6)::int;
    EXECUTE format('CREATE TABLE rnd (k bigint NOT NULL, v int) PARTITION BY LIST (jumpbackanchorhash(k, %s))', nb);
    FOR i IN 0 .. nb - 1 LOOP
        EXECUTE format('CREATE TABLE rnd_p%s PARTITION OF rnd FOR VALUES IN (%s)', i, i);
    END LOOP;
    INSERT INTO rnd SELECT (random() * 9e18)::bigint, i FROM generate_series(1, 2000) AS i;
    FOR step IN 1 .. 6 LOOP
        CREATE TEMP TABLE snap AS SELECT x.*, tableoid::regclass::text AS p FROM rnd x;
        IF cardinality(rem) < nb - 1 AND (random() < 0.6 OR cardinality(rem) = 0) THEN
            -- remove a random bucket that is there
            SELECT x INTO b FROM generate_series(0, nb - 1) AS x WHERE NOT x = ANY (rem) ORDER BY random() LIMIT 1;
            SELECT partition::text INTO part FROM sharding_layout('rnd') WHERE bucket = b;
            CALL reshard_remove_partition('rnd'::regclass, part::regclass, moved);
            SELECT x.buckets, x.removed INTO nb, rem FROM jumpbackanchorhash_remove_bucket(nb, rem, b) AS x;
            EXECUTE format('SELECT count(*) FROM snap WHERE p = %L', part) INTO changed;
        ELSE
            counter := counter + 1;
            part := 'rnd_new' || counter;
            EXECUTE format('CREATE TABLE %I (LIKE rnd INCLUDING ALL)', part);
            CALL reshard_add_partition('rnd'::regclass, part::regclass, moved);
            SELECT x.buckets, x.removed, x.bucket INTO nb, rem, b FROM jumpbackanchorhash_add_bucket(nb, rem) AS x;
            EXECUTE format('SELECT count(*) FROM %I', part) INTO changed;
        END IF;
        SELECT count(*) FILTER (WHERE x.tableoid <> (SELECT partition FROM sharding_layout('rnd')
                                                     WHERE bucket = jumpbackanchorhash(x.k, nb, rem)))
               + (SELECT count(*) FROM (SELECT k, v FROM snap EXCEPT ALL SELECT k, v FROM rnd) AS d)
               + (SELECT count(*) FROM (SELECT k, v FROM rnd EXCEPT ALL SELECT k, v FROM snap) AS d)
        INTO bad FROM rnd x;
        -- rows that changed partition: exactly the moved ones
        SELECT count(*) INTO changed FROM (SELECT k, v, tableoid::regclass::text FROM rnd EXCEPT ALL SELECT k, v, p FROM snap) AS c;
        INSERT INTO anchor_runs VALUES (bad = 0 AND changed = moved,
            format('step %s: %s buckets, rem %s, moved %s, changed %s, bad %s', step, nb, rem, moved, changed, bad));
        DROP TABLE snap;
        COMMIT;
    END LOOP;
END $$;
SELECT count(*) AS steps, count(*) FILTER (WHERE ok) AS passed FROM anchor_runs;
SELECT detail FROM anchor_runs WHERE NOT ok;

DROP TABLE anchor_runs, a, a_1, a_3, rnd;
DO $$ DECLARE t text; BEGIN FOR t IN SELECT relname FROM pg_class WHERE relname ~ '^rnd_(p|new)[0-9]+$' AND relkind = 'r' LOOP EXECUTE format('DROP TABLE %I', t); END LOOP; END $$;
DELETE FROM reshard_state;  -- the state of this test's reshardings (a row stays after the end)
