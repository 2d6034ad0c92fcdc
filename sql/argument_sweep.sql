--
-- Every SQL-callable function of the extension, found in the catalog, called
-- with the extremes of every argument type (one argument at a time, the others
-- ordinary) and with thousands of random combinations of them.  Each call must
-- return or raise an error of class 22 (data exception) or 54 (program limit
-- exceeded); anything else, including a timeout, is listed below.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- Random combinations per function: 300, or argument_sweep.random_calls;
-- they draw int4 values up to argument_sweep.random_int4_max (all of them
-- when it is not set).  test/run-valgrind-tests sets 30 and 16777215: under
-- valgrind a call costs some thirty times more, and a combination such as a
-- subset of 2^24 out of 2^24 backends takes minutes, well past the time limit
-- of a call below.  The extremes, one argument at a time, try every value
-- whatever the settings.
CREATE TEMP TABLE sweep_setting AS
SELECT coalesce(nullif(current_setting('argument_sweep.random_calls', true), '')::int, 300) AS random_calls,
       coalesce(nullif(current_setting('argument_sweep.random_int4_max', true), '')::int8,
                2147483647) AS random_int4_max;

-- Values to try for each argument type: the first one is the ordinary value.
CREATE TEMP TABLE sweep_value (type regtype, ordinary boolean, literal text);
INSERT INTO sweep_value
SELECT 'int4'::regtype, v = '10', v FROM unnest(ARRAY['10', 'NULL', '0', '1', '-1', '2', '3', '24', '25', '1000',
    '16777216', '16777217', '2147483646', '2147483647', '-2147483648']) AS v
UNION ALL
SELECT 'int8'::regtype, v = '42', v FROM unnest(ARRAY['42', 'NULL', '0', '1', '-1', '4294967296',
    '9223372036854775807', '-9223372036854775808']) AS v
UNION ALL
SELECT 'int2'::regtype, v = '7', v FROM unnest(ARRAY['7', 'NULL', '0', '-1', '32767', '-32768']) AS v
UNION ALL
SELECT 'bool'::regtype, v = 'true', v FROM unnest(ARRAY['true', 'false', 'NULL']) AS v
UNION ALL
SELECT 'name'::regtype, v = '''public''', v FROM unnest(ARRAY['''public''', 'NULL', '''''']) AS v
UNION ALL
SELECT 'regclass'::regtype, v = '''pg_class''', v FROM unnest(ARRAY['''pg_class''', 'NULL', '0']) AS v
UNION ALL
SELECT 'oid'::regtype, v = '100', v FROM unnest(ARRAY['100', 'NULL', '0', '4294967295', '''pg_catalog.default''::regcollation']) AS v
UNION ALL
SELECT 'record'::regtype, v = 'ROW(1, ''x'')', v
FROM unnest(ARRAY['ROW(1, ''x'')', 'NULL', 'ROW()', 'ROW(NULL::int, NULL::text)', 'ROW(repeat(''x'', 100000))']) AS v
UNION ALL
SELECT 'float8'::regtype, v = '1', v FROM unnest(ARRAY['1', 'NULL', '0', '-1', '1e-300', '1e308',
    '''NaN''', '''Infinity''', '''-Infinity''']) AS v
UNION ALL
SELECT 'text'::regtype, v = '''a''', v FROM unnest(ARRAY['''a''', 'NULL', '''''', '''ü€𝄞''',
    'repeat(''x'', 100000)', '''ringsteady''', '''random''', '''rocksteadier''', '''deterministic''',
    '''round_robin''', '''consistent''']) AS v
UNION ALL
SELECT 'bytea'::regtype, v = '''\x00ff''', v FROM unnest(ARRAY['''\x00ff''', 'NULL', '''\x''',
    -- jumpbackanchorhash states: 10 buckets; 10 with 3 then 1 removed; 2^31 - 1 with its last removed
    '''\x0a000000''', '''\x0a0000000300000001000000''', '''\xffffff7ffeffff7f''']) AS v
UNION ALL
SELECT 'uuid'::regtype, v = '''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11''', v
FROM unnest(ARRAY['''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11''', 'NULL',
    '''00000000-0000-0000-0000-000000000000''', '''ffffffff-ffff-ffff-ffff-ffffffffffff''']) AS v
UNION ALL
SELECT 'int4[]'::regtype, v = '''{1,2,3}''', v FROM unnest(ARRAY['''{1,2,3}''', 'NULL', '''{}''', '''{NULL}''',
    '''{1,NULL,3}''', '''{{1,2},{3,4}}''', '''{1,1,1}''', '''{-1,0,2147483647}''', '''[5:7]={1,2,3}''',
    'ARRAY(SELECT generate_series(1, 2000))']) AS v
UNION ALL
SELECT 'float8[]'::regtype, v = '''{1,1,1}''', v FROM unnest(ARRAY['''{1,1,1}''', 'NULL', '''{}''', '''{NULL}''',
    '''{0,0,0}''', '''{-1,1,1}''', '''{NaN,1,1}''', '''{Infinity,1,1}''', '''{{1,1},{1,1}}''',
    '''{1e308,1e308,1e308}''', '''{1,2}''']) AS v
UNION ALL
SELECT 'text[]'::regtype, v = '''{a,b,c}''', v FROM unnest(ARRAY['''{a,b,c}''', 'NULL', '''{}''', '''{NULL}''',
    '''{a,a,a}''', '''{{a,b},{c,d}}''', '''{"",b,c}''']) AS v
UNION ALL
SELECT 'name[]'::regtype, v = '''{NULL}''', v FROM unnest(ARRAY['''{NULL}''', 'NULL', '''{}''', '''{a,b}''',
    '''{NULL,NULL}''', '''{{a},{b}}''', 'ARRAY(SELECT NULL::name FROM generate_series(1, 2000))']) AS v
UNION ALL
SELECT 'int8[]'::regtype, v = '''{1,2,3}''', v FROM unnest(ARRAY['''{1,2,3}''', 'NULL', '''{}''', '''{NULL}''',
    '''{1,NULL,3}''', '''{{1,2},{3,4}}''', '''{-9223372036854775808,0,9223372036854775807}''',
    '''[5:7]={1,2,3}''', 'ARRAY(SELECT generate_series(1, 2000)::int8)']) AS v
UNION ALL
SELECT 'bytea[]'::regtype, v = '''{"\\x00ff"}''', v FROM unnest(ARRAY['''{"\\x00ff"}''', 'NULL', '''{}''',
    '''{NULL}''', '''{"\\x",NULL}''', '''{{"\\x01"},{"\\x02"}}''']) AS v
UNION ALL
SELECT 'uuid[]'::regtype, v = '''{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}''', v
FROM unnest(ARRAY['''{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}''', 'NULL', '''{}''', '''{NULL}''',
    '''{{00000000-0000-0000-0000-000000000000},{ffffffff-ffff-ffff-ffff-ffffffffffff}}''']) AS v
UNION ALL
SELECT 'regclass[]'::regtype, v = '''{pg_class,pg_index}''', v FROM unnest(ARRAY['''{pg_class,pg_index}''', 'NULL',
    '''{}''', '''{NULL}''', '''{pg_class}''', '''{0,0}''', '''{{pg_class},{pg_index}}''']) AS v
UNION ALL
-- (the ordinary one: the indexes of pg_class, which is the ordinary regclass)
SELECT 'oid[]'::regtype, v ~ '^ARRAY', v FROM unnest(ARRAY[
    'ARRAY(SELECT indexrelid FROM pg_index WHERE indrelid = ''pg_class''::regclass ORDER BY 1)', 'NULL', '''{}''',
    '''{NULL}''', '''{0,1,4294967295}''', '''{{1,2},{3,4}}''', '''[5:6]={1,2}''']) AS v;
INSERT INTO sweep_value VALUES
    ('partition_ring', true, $$ring_build('{1,2,3,4}', '{1,1,1,1}', '{1,2,3,4}', part_power => 4, replicas => 2)$$),
    ('partition_ring', false, 'NULL'),
    ('partition_ring', false, $$ring_build('{7}', '{1}', '{1}', part_power => 1, replicas => 1)$$),
    ('partition_ring', false, $$ring_build(ARRAY(SELECT generate_series(1, 60)),
        ARRAY(SELECT (i % 7 + 1)::float8 FROM generate_series(1, 60) AS i),
        ARRAY(SELECT i % 5 FROM generate_series(1, 60) AS i),
        ARRAY(SELECT i % 2 FROM generate_series(1, 60) AS i), part_power => 12, replicas => 3)$$);

-- The extension's functions that SQL can call with values (not aggregates, not
-- type support functions taking internal or cstring).
CREATE TEMP TABLE sweep_function AS
SELECT p.oid::regprocedure AS function, p.oid::regproc::text AS name, p.proretset AS returns_set,
       ARRAY(SELECT unnest(p.proargtypes::regtype[])) AS argument_types
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting'
WHERE p.prokind = 'f'
  -- creates operator classes (DDL), tested in sql/partition_hash.sql
  AND p.proname <> 'jumpbackhash_create_operator_classes'
  -- connects to a foreign server and makes a foreign table (DDL), tested in
  -- sql/atomic_commit.sql
  AND p.proname <> 'atomic_commit_add_server'
  -- the 1536 partition hash functions run the same six C functions: a sample
  AND (p.proname !~ '^jumpbackhash[0-9]+_' OR p.proname ~ '^jumpbackhash(1|2|16|256)_')
  AND NOT EXISTS (SELECT FROM unnest(p.proargtypes::regtype[]) AS t
                  WHERE t IN ('internal'::regtype, 'cstring'::regtype))
  -- trigger functions run only as triggers (the event trigger's: tested in
  -- sql/partition_bounds.sql); the resharding engine's phases take its state
  -- row (both tested in sql/reshard_engine.sql)
  AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
  AND NOT EXISTS (SELECT FROM unnest(p.proargtypes::regtype[]) AS t WHERE t::text = 'reshard_state');

-- Arguments of a type the sweep has no values for would be skipped silently:
-- list them, so that a new type gets values here.
SELECT DISTINCT t AS argument_type_without_values
FROM sweep_function, unnest(argument_types) AS t
WHERE t NOT IN (SELECT type FROM sweep_value);

CREATE TEMP TABLE sweep_call_list (n serial, function regprocedure, name text, returns_set boolean,
                                   arguments text[]);
CREATE TEMP TABLE sweep_result (function regprocedure, call text, sqlstate text, message text);

CREATE FUNCTION pg_temp.sweep_call(f regprocedure, name text, returns_set boolean, arguments text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    call text := format('%s(%s)', name, array_to_string(arguments, ', '));
BEGIN
    IF returns_set THEN
        EXECUTE format('SELECT count(*) FROM %s', call);
    ELSE
        EXECUTE format('SELECT %s', call);
    END IF;
    INSERT INTO sweep_result VALUES (f, call, '00000', NULL);
EXCEPTION WHEN OTHERS THEN
    INSERT INTO sweep_result VALUES (f, call, SQLSTATE, SQLERRM);
END $$;

-- The calls: one argument at a time through its extremes, then random combinations.
DO $$
DECLARE
    f record;
    arguments text[];
    ordinary text[];
    v text;
BEGIN
    PERFORM setseed(0.5);
    FOR f IN SELECT * FROM sweep_function ORDER BY function::text LOOP
        SELECT array_agg((SELECT literal || '::' || t FROM sweep_value
                          WHERE type = t AND sweep_value.ordinary) ORDER BY i)
        INTO ordinary
        FROM unnest(f.argument_types) WITH ORDINALITY AS a(t, i);
        -- one argument at a time through its extremes
        FOR i IN 1 .. coalesce(cardinality(f.argument_types), 0) LOOP
            FOR v IN SELECT literal FROM sweep_value WHERE type = f.argument_types[i] LOOP
                arguments := ordinary;
                arguments[i] := v || '::' || f.argument_types[i];
                INSERT INTO sweep_call_list (function, name, returns_set, arguments)
                VALUES (f.function, f.name, f.returns_set, arguments);
            END LOOP;
        END LOOP;
        -- random combinations
        FOR n IN 1 .. (SELECT random_calls FROM sweep_setting) LOOP
            SELECT array_agg((SELECT literal || '::' || t FROM sweep_value
                              WHERE type = t
                                AND CASE WHEN t = 'int4'::regtype AND literal ~ '^[0-9]+$'
                                         THEN literal::int8 <= (SELECT random_int4_max FROM sweep_setting)
                                         ELSE true END
                              ORDER BY random() + i * 0 LIMIT 1) ORDER BY i)
            INTO arguments
            FROM unnest(f.argument_types) WITH ORDINALITY AS a(t, i);
            INSERT INTO sweep_call_list (function, name, returns_set, arguments)
            VALUES (f.function, f.name, f.returns_set, arguments);
        END LOOP;
    END LOOP;
END $$;

-- Each call is a statement of its own, with a time limit: a call that hangs
-- is canceled, which WHEN OTHERS does not catch, so it shows as an error here.
SET statement_timeout = '20s';
\set ECHO none
\o /dev/null
SELECT format('SELECT pg_temp.sweep_call(%L, %L, %L, %L)', function, name, returns_set, arguments)
FROM sweep_call_list ORDER BY n \gexec
\o
\set ECHO all
RESET statement_timeout;

-- Every function was called; some calls of each returned a value, others were refused.
SELECT function, count(*) >= (SELECT random_calls FROM sweep_setting) AS swept,
       count(*) FILTER (WHERE sqlstate = '00000') > 0 AS returned,
       count(*) FILTER (WHERE left(sqlstate, 2) IN ('22', '54')) > 0 AS refused
FROM sweep_function LEFT JOIN sweep_result USING (function)
GROUP BY function ORDER BY function::text;

-- Calls answered with anything but a value or a class 22 or 54 error: none.
SELECT function, call, sqlstate, message
FROM sweep_result
WHERE sqlstate <> '00000' AND left(sqlstate, 2) NOT IN ('22', '54')
ORDER BY 1, 2;

-- Every error message is one line, lowercase first, without a final period.
SELECT DISTINCT message
FROM sweep_result
WHERE sqlstate <> '00000'
  AND (message ~ '\.$' OR message ~ '^[A-Z][a-z]' OR position(E'\n' IN message) > 0)
ORDER BY 1;
