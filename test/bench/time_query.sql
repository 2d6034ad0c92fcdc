-- test/bench/time_query.sql
--	The SQL benchmarks' timer, read with \i test/bench/time_query.sql (they
--	run from the project's root): the milliseconds a query takes, server side.
CREATE FUNCTION pg_temp.time_query(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
BEGIN
    EXECUTE query;
    RETURN extract(epoch FROM clock_timestamp() - started) * 1000;
END $$;
