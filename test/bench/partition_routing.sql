-- test/bench/partition_routing.sql
--	What the jumpbackhash operator classes cost where PostgreSQL computes a
--	row's partition, in one session and without the network: the partition
--	hash of ROWS keys through satisfies_hash_partition (the function of the
--	partition constraint), and bulk inserts of ROWS rows into 16 unlogged
--	partitions, each against PostgreSQL's native PARTITION BY HASH (id) and
--	PARTITION BY LIST (jumpbackhash(id, 16)), run alternately, RUNS times.
--	Run with psql --csv -v runs=RUNS -v rows=ROWS; prints CSV: what, case,
--	baseline, case_ms, baseline_ms, ratio (medians).
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT set_config('bench.runs', :'runs', false) \gset
SELECT set_config('bench.rows', :'rows', false) \gset

CREATE UNLOGGED TABLE route_opclass (id bigint NOT NULL) PARTITION BY HASH (id jumpbackhash16_int8_ops);
CREATE UNLOGGED TABLE route_native (id bigint NOT NULL) PARTITION BY HASH (id);
CREATE UNLOGGED TABLE route_list (id bigint NOT NULL) PARTITION BY LIST (jumpbackhash(id, 16));
SELECT format('CREATE UNLOGGED TABLE route_opclass_%s PARTITION OF route_opclass FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b),
       format('CREATE UNLOGGED TABLE route_native_%s PARTITION OF route_native FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b),
       format('CREATE UNLOGGED TABLE route_list_%s PARTITION OF route_list FOR VALUES IN (%s)', b, b)
FROM generate_series(0, 15) AS b \gexec

CREATE TEMP TABLE route_case (name text, query text);
INSERT INTO route_case VALUES
    ('hash opclass', 'SELECT count(*) FILTER (WHERE satisfies_hash_partition(''route_opclass''::regclass, 16, 0, i::bigint)) FROM generate_series(1, ROWS) AS i'),
    ('hash native', 'SELECT count(*) FILTER (WHERE satisfies_hash_partition(''route_native''::regclass, 16, 0, i::bigint)) FROM generate_series(1, ROWS) AS i'),
    ('insert opclass', 'INSERT INTO route_opclass SELECT hashint8(i)::bigint << 31 # i FROM generate_series(1, ROWS) AS i'),
    ('insert native', 'INSERT INTO route_native SELECT hashint8(i)::bigint << 31 # i FROM generate_series(1, ROWS) AS i'),
    ('insert list', 'INSERT INTO route_list SELECT hashint8(i)::bigint << 31 # i FROM generate_series(1, ROWS) AS i');
UPDATE route_case SET query = replace(query, 'ROWS', current_setting('bench.rows'));

CREATE TEMP TABLE route_time (name text, run int, ms float8);
\i test/bench/time_query.sql
-- Each query a statement of its own; the tables emptied before each run;
-- the order of the cases reversed every other run.
SELECT CASE WHEN c.name IS NULL THEN 'TRUNCATE route_opclass, route_native, route_list'
            ELSE format('INSERT INTO route_time VALUES (%L, %s, pg_temp.time_query(%L))', c.name, run, c.query) END
FROM generate_series(1, current_setting('bench.runs')::int) AS run
CROSS JOIN LATERAL (SELECT NULL::text AS name, NULL::text AS query, 0 AS position
                    UNION ALL
                    SELECT name, query, row_number() OVER (ORDER BY name) FROM route_case) AS c
ORDER BY run, c.position = 0 DESC, CASE WHEN run % 2 = 0 THEN c.position ELSE -c.position END \gexec

WITH medians AS (
    SELECT name, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms FROM route_time GROUP BY name
)
SELECT what, c.name AS "case", b.name AS baseline, round(c.ms::numeric, 1) AS case_ms,
       round(b.ms::numeric, 1) AS baseline_ms, round((c.ms / b.ms)::numeric, 3) AS ratio
FROM (VALUES ('partition hash of ' || current_setting('bench.rows') || ' keys (satisfies_hash_partition)', 'hash opclass', 'hash native'),
             ('insert ' || current_setting('bench.rows') || ' rows into 16 unlogged partitions', 'insert opclass', 'insert native'),
             ('insert ' || current_setting('bench.rows') || ' rows into 16 unlogged partitions', 'insert opclass', 'insert list'))
     AS pairs(what, case_name, baseline_name)
JOIN medians c ON c.name = case_name JOIN medians b ON b.name = baseline_name;
DROP TABLE route_opclass, route_native, route_list;
