-- test/regress_helpers.sql
--	Functions the pg_regress tests share; a test reads them with
--	\i test/regress_helpers.sql (pg_regress runs from the project's root).

-- The error a query raises, as 'SQLSTATE: message', or 'no error'.
CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
