-- test/engine_test_helpers.sql
--	What the tests of the engine's phases share whatever the operation, read
--	by test/engine_phase_helpers.sql (adding, removing) and
--	test/engine_move_helpers.sql (moving), each of which names its table in
--	one-line functions over these (state(), log_entries(), step_to(),
--	differences()).
--
--	pg_temp.differ(a, b)	rows of query a not in query b, and of b not in a
--	pg_temp.rows_in(table)	its rows
--	pg_temp.sqlstate_of(query)	the SQLSTATE it fails with, or 'no error'
--	pg_temp.state_of(table)	the table's row of reshard_state (by name)
--	pg_temp.log_entries_of(table)	the entries of its change log (rows as jsonb)
--	pg_temp.step_table_to(table, phase)	steps its call until it is in phase

CREATE FUNCTION pg_temp.differ(a text, b text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT (SELECT count(*) FROM (%1$s EXCEPT ALL %2$s) AS x) + (SELECT count(*) FROM (%2$s EXCEPT ALL %1$s) AS y)', a, b)
    INTO n;
    RETURN n;
END
$$;

CREATE FUNCTION pg_temp.rows_in(rel oid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s', rel::regclass) INTO n;
    RETURN n;
END
$$;

CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

CREATE FUNCTION pg_temp.state_of(tbl text) RETURNS reshard_state LANGUAGE sql AS $$
    SELECT s FROM reshard_state AS s WHERE s.parent_name = tbl
$$;

CREATE FUNCTION pg_temp.log_entries_of(tbl text)
RETURNS TABLE (seq bigint, partition oid, op text, old_row jsonb, new_row jsonb)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT seq, partition, op::text, to_jsonb(old_row), to_jsonb(new_row) FROM %s',
                                (pg_temp.state_of(tbl)).log::regclass);
END
$$;

CREATE PROCEDURE pg_temp.step_table_to(tbl text, target text) LANGUAGE plpgsql AS $$
DECLARE
    phase text;
BEGIN
    FOR i IN 1 .. 50 LOOP
        phase := (pg_temp.state_of(tbl)).phase;
        IF phase = target THEN
            RETURN;
        END IF;
        IF phase IS NULL OR phase IN ('done', 'aborted') THEN
            EXIT;
        END IF;
        CALL reshard_step(to_regclass(tbl));
    END LOOP;
    RAISE EXCEPTION 'the call on % did not reach phase % (it is in phase %)', tbl, target, phase;
END
$$;
