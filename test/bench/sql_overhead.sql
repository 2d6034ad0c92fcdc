-- test/bench/sql_overhead.sql
--	Each function against the closest built-in over the rows of
--	generate_series, run alternately in one session, reported as the ratio of
--	median times.  Parallel query and JIT are off so that both sides do the
--	same, single-process work.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT set_config('bench.runs', :'runs', false) \gset

CREATE TEMP TABLE bench_case (name text, query text, baseline_name text, baseline text);
INSERT INTO bench_case VALUES
    ('jumpbackhash(i, 1000)',
     'SELECT count(jumpbackhash(i, 1000)) FROM generate_series(1, 5000000) AS i',
     'hashint8(i)',
     'SELECT count(hashint8(i)) FROM generate_series(1, 5000000) AS i'),
    ('jumphash(i, 1000)',
     'SELECT count(jumphash(i, 1000)) FROM generate_series(1, 5000000) AS i',
     'hashint8(i)',
     'SELECT count(hashint8(i)) FROM generate_series(1, 5000000) AS i'),
    -- Text keys: the built-in hashtext (not computable outside PostgreSQL),
    -- and the portable hash users otherwise write, 64 bits of md5.
    ('xxh3_64(t)',
     'SELECT count(xxh3_64(''user'' || i || ''@example.com'')) FROM generate_series(1, 5000000) AS i',
     'hashtext(t)',
     'SELECT count(hashtext(''user'' || i || ''@example.com'')) FROM generate_series(1, 5000000) AS i'),
    ('jumpbackhash(t, 1000)',
     'SELECT count(jumpbackhash(''user'' || i || ''@example.com'', 1000)) FROM generate_series(1, 5000000) AS i',
     'md5 to bigint',
     'SELECT count((''x'' || left(md5(''user'' || i || ''@example.com''), 16))::bit(64)::bigint % 1000)
      FROM generate_series(1, 5000000) AS i');

CREATE TEMP TABLE bench_time (name text, baseline_name text, side text, run int, ms float8);

\i test/bench/time_query.sql

DO $$
DECLARE
    c record;
BEGIN
    FOR run IN 1 .. current_setting('bench.runs')::int LOOP
        FOR c IN SELECT * FROM bench_case LOOP
            INSERT INTO bench_time VALUES (c.name, c.baseline_name, 'function', run, pg_temp.time_query(c.query));
            INSERT INTO bench_time VALUES (c.name, c.baseline_name, 'baseline', run, pg_temp.time_query(c.baseline));
        END LOOP;
    END LOOP;
END $$;

SELECT name AS "function (5M rows)",
       baseline_name AS baseline,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'function')::numeric, 1) AS function_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'baseline')::numeric, 1) AS baseline_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'function') /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'baseline'))::numeric, 3) AS ratio
FROM bench_time GROUP BY name, baseline_name ORDER BY name;
