--
-- The upgrade chain: install the first release, 1.0, and walk
-- ALTER EXTENSION UPDATE through every later version to the default one.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
RESET client_min_messages;

CREATE EXTENSION subsetting VERSION '1.0';

DO $$
DECLARE
    next_version text;
BEGIN
    FOR next_version IN
        SELECT version FROM pg_available_extension_versions
        WHERE name = 'subsetting' AND version <> '1.0'
        ORDER BY string_to_array(version, '.')::int[]
    LOOP
        EXECUTE format('ALTER EXTENSION subsetting UPDATE TO %L', next_version);
    END LOOP;
END $$;

-- The walk ends at the default version, and every version is reachable from 1.0.
SELECT e.extversion = a.default_version AS at_default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'subsetting';
SELECT count(*) AS unreachable_versions
FROM pg_extension_update_paths('subsetting')
WHERE source = '1.0' AND path IS NULL AND target <> '1.0';

-- An updated installation has the same functions as a fresh one.
CREATE TEMP VIEW extension_functions AS
SELECT p.oid::regprocedure::text AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting';
CREATE TEMP TABLE updated_functions AS TABLE extension_functions;
DROP EXTENSION subsetting;
CREATE EXTENSION subsetting;
SELECT count(*) AS differences
FROM ((TABLE extension_functions EXCEPT TABLE updated_functions)
      UNION ALL
      (TABLE updated_functions EXCEPT TABLE extension_functions)) AS difference;
