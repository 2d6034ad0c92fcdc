-- test/bench/ring_lookup.sql
--	ring_nodes lookups through SQL with a ring stored in a table and read by
--	a scalar subquery, for a part power 10 ring (6 kB) and a part power 22
--	ring (24 MiB), run alternately in one session and reported as median
--	times and their ratio (the target: the same rate, within 1.2x).
--	Keys are spread over the whole 64-bit space; the baseline computes the
--	same keys without a lookup.
--	Also: the time to build the part power 22 ring in SQL.
--	Run with psql -v runs=N.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT set_config('bench.runs', :'runs', false) \gset

CREATE TEMP TABLE bench_nodes AS
SELECT i AS id, (1 + i % 7)::float8 AS weight, i % 5 AS zone FROM generate_series(1, 1000) AS i;

\timing on
CREATE TEMP TABLE bench_rings AS
SELECT 10 AS part_power, ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                                    part_power => 10, replicas => 3) AS ring
FROM bench_nodes;
INSERT INTO bench_rings
SELECT 22, ring_build(array_agg(id), array_agg(weight), array_agg(zone), part_power => 22, replicas => 3)
FROM bench_nodes;
\timing off

SELECT part_power, pg_column_size(ring) AS stored_bytes FROM bench_rings ORDER BY 1;

CREATE TEMP TABLE bench_case (name text, query text);
INSERT INTO bench_case VALUES
    ('p = 10',
     'SELECT count(ring_nodes((SELECT ring FROM bench_rings WHERE part_power = 10), (hashint8(i)::bigint << 32) # hashint8(-i))) FROM generate_series(1, 1000000) AS i'),
    ('p = 22',
     'SELECT count(ring_nodes((SELECT ring FROM bench_rings WHERE part_power = 22), (hashint8(i)::bigint << 32) # hashint8(-i))) FROM generate_series(1, 1000000) AS i'),
    ('baseline hashint8',
     'SELECT count((hashint8(i)::bigint << 32) # hashint8(-i)) FROM generate_series(1, 1000000) AS i');

CREATE TEMP TABLE bench_time (name text, run int, ms float8);

\i test/bench/time_query.sql

DO $$
DECLARE
    c record;
BEGIN
    FOR run IN 1 .. current_setting('bench.runs')::int LOOP
        FOR c IN SELECT * FROM bench_case LOOP
            INSERT INTO bench_time VALUES (c.name, run, pg_temp.time_query(c.query));
        END LOOP;
    END LOOP;
END $$;

SELECT name AS "ring_nodes over 1M rows",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS median_ms,
       round((1000000 / (percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) / 1000))::numeric) AS rows_per_second
FROM bench_time GROUP BY name ORDER BY name;

SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE name = 'p = 22') /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE name = 'p = 10'))::numeric, 3)
       AS "time ratio p = 22 / p = 10"
FROM bench_time;
