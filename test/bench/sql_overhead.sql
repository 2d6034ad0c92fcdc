-- test/bench/sql_overhead.sql
--	Each family's functions against the closest built-in over the rows of
--	generate_series, run alternately in one session, reported as the ratio of
--	median times: the hashes against hashint8 and hashtext (and the portable
--	hash users otherwise write for text), the subset functions against
--	array_fill (a built-in that returns the same 20-element int[]), and
--	ring_nodes with a part power 22 ring (24 MiB) against a part power 10 ring
--	(6 kB), each read from a table by a scalar subquery as users do.
--	Parallel query and JIT are off so that both sides do the same,
--	single-process work.
--	Run with psql --csv -v runs=RUNS -v rows=ROWS; prints CSV: function,
--	baseline, function_ms, baseline_ms, ratio.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT set_config('bench.runs', :'runs', false) \gset

CREATE TEMP TABLE bench_rings AS
SELECT p AS part_power,
       ring_build(array_agg(i), array_agg((1 + i % 7)::float8), array_agg(i % 5),
                  part_power => p, replicas => 3) AS ring
FROM generate_series(1, 1000) AS i, (VALUES (10), (22)) AS parts(p)
GROUP BY p;

-- Each case's queries, with ROWS standing for the number of rows.
CREATE TEMP TABLE bench_case (position int, name text, query text, baseline_name text, baseline text);
INSERT INTO bench_case
SELECT position, name, replace(query, 'ROWS', :'rows'), baseline_name, replace(baseline, 'ROWS', :'rows')
FROM (VALUES
    (1, 'jumpbackhash(i, 1000)',
     'SELECT count(jumpbackhash(i, 1000)) FROM generate_series(1, ROWS) AS i',
     'hashint8(i)',
     'SELECT count(hashint8(i)) FROM generate_series(1, ROWS) AS i'),
    (2, 'jumphash(i, 1000)',
     'SELECT count(jumphash(i, 1000)) FROM generate_series(1, ROWS) AS i',
     'hashint8(i)',
     'SELECT count(hashint8(i)) FROM generate_series(1, ROWS) AS i'),
    -- Text keys: the built-in hashtext (not computable outside PostgreSQL),
    -- and the portable hash users otherwise write, 64 bits of md5.
    (3, 'xxh3_64(t)',
     'SELECT count(xxh3_64(''user'' || i || ''@example.com'')) FROM generate_series(1, ROWS) AS i',
     'hashtext(t)',
     'SELECT count(hashtext(''user'' || i || ''@example.com'')) FROM generate_series(1, ROWS) AS i'),
    (4, 'jumpbackhash(t, 1000)',
     'SELECT count(jumpbackhash(''user'' || i || ''@example.com'', 1000)) FROM generate_series(1, ROWS) AS i',
     'md5 of t to bigint % 1000',
     'SELECT count((''x'' || left(md5(''user'' || i || ''@example.com''), 16))::bit(64)::bigint % 1000)
      FROM generate_series(1, ROWS) AS i'),
    (5, 'ringsteady_subset(i, 1000, 20)',
     'SELECT count(ringsteady_subset(i, 1000, 20)) FROM generate_series(1, ROWS) AS i',
     'array_fill(i, ARRAY[20])',
     'SELECT count(array_fill(i, ARRAY[20])) FROM generate_series(1, ROWS) AS i'),
    (6, 'rocksteadier_subset(i, 1000, 20)',
     'SELECT count(rocksteadier_subset(i, 1000, 20)) FROM generate_series(1, ROWS) AS i',
     'array_fill(i, ARRAY[20])',
     'SELECT count(array_fill(i, ARRAY[20])) FROM generate_series(1, ROWS) AS i'),
    -- Keys spread over the whole 64-bit space, so that every partition is hit.
    (7, 'ring_nodes(ring, key), p = 22',
     'SELECT count(ring_nodes((SELECT ring FROM bench_rings WHERE part_power = 22),
                              (hashint8(i)::bigint << 32) # hashint8(-i))) FROM generate_series(1, ROWS) AS i',
     'ring_nodes(ring, key), p = 10',
     'SELECT count(ring_nodes((SELECT ring FROM bench_rings WHERE part_power = 10),
                              (hashint8(i)::bigint << 32) # hashint8(-i))) FROM generate_series(1, ROWS) AS i')
) AS cases(position, name, query, baseline_name, baseline);

-- JumpBackAnchorHash against jumpbackhash: nothing, 1, 10 and 1000 buckets
-- removed (constant arguments, decoded once per query), and the state form.
INSERT INTO bench_case
SELECT 100 + position, name, replace(replace(query, 'ROWS', :'rows'), 'REMOVED', removed), baseline_name,
       replace(baseline, 'ROWS', :'rows')
FROM (VALUES
    (1, 'jumpbackanchorhash(i, 1000)', 'SELECT count(jumpbackanchorhash(i, 1000)) FROM generate_series(1, ROWS) AS i',
     '', 1000),
    (2, 'jumpbackanchorhash(i, 1000, 1 removed)',
     'SELECT count(jumpbackanchorhash(i, 1000, ''REMOVED'')) FROM generate_series(1, ROWS) AS i', '', 1000),
    (3, 'jumpbackanchorhash(i, 1000, 10 removed)',
     'SELECT count(jumpbackanchorhash(i, 1000, ''REMOVED'')) FROM generate_series(1, ROWS) AS i', '', 1000),
    (4, 'jumpbackanchorhash(i, 100000, 1000 removed)',
     'SELECT count(jumpbackanchorhash(i, 100000, ''REMOVED'')) FROM generate_series(1, ROWS) AS i', '', 100000),
    (5, 'jumpbackanchorhash(i, state of 1000, 10 removed)',
     'SELECT count(jumpbackanchorhash(i, jumpbackanchorhash_state(1000, ''REMOVED''))) FROM generate_series(1, ROWS) AS i',
     '', 1000),
    (6, 'jumpbackanchorhash(i, 10, 1 removed)',
     'SELECT count(jumpbackanchorhash(i, 10, ''REMOVED'')) FROM generate_series(1, ROWS) AS i', '', 10),
    (7, 'jumpbackanchorhash(i, 1000000, 10 removed)',
     'SELECT count(jumpbackanchorhash(i, 1000000, ''REMOVED'')) FROM generate_series(1, ROWS) AS i', '', 1000000)
) AS c(position, name, query, unused, buckets),
LATERAL (SELECT coalesce(array_agg(DISTINCT (hashint4(k) & 2147483647) % c.buckets), '{}')::text AS removed
         FROM generate_series(1, CASE WHEN c.name LIKE '%1000 removed%' THEN 1000
                                      WHEN c.name LIKE '%10 removed%' THEN 10
                                      WHEN c.name LIKE '%1 removed%' THEN 1 ELSE 0 END) AS k) AS r,
LATERAL (SELECT format('jumpbackhash(i, %s)', c.buckets) AS baseline_name,
                format('SELECT count(jumpbackhash(i, %s)) FROM generate_series(1, ROWS) AS i', c.buckets) AS baseline) AS b;

CREATE TEMP TABLE bench_time (name text, baseline_name text, side text, run int, ms float8);

\i test/bench/time_query.sql

DO $$
DECLARE
    c record;
BEGIN
    FOR run IN 1 .. current_setting('bench.runs')::int LOOP
        FOR c IN SELECT * FROM bench_case ORDER BY position LOOP
            INSERT INTO bench_time VALUES (c.name, c.baseline_name, 'function', run, pg_temp.time_query(c.query));
            INSERT INTO bench_time VALUES (c.name, c.baseline_name, 'baseline', run, pg_temp.time_query(c.baseline));
        END LOOP;
    END LOOP;
END $$;

SELECT name AS function,
       baseline_name AS baseline,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'function')::numeric, 1) AS function_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'baseline')::numeric, 1) AS baseline_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'function') /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'baseline'))::numeric, 3) AS ratio
FROM bench_time JOIN bench_case USING (name, baseline_name)
GROUP BY position, name, baseline_name ORDER BY position;
