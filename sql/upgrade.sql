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

-- An updated installation has the same objects as a fresh one: every member
-- of the extension (functions with their volatility, strictness and
-- parallel safety, types, operator classes and families, views...).
CREATE TEMP VIEW extension_objects AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       p.provolatile, p.proisstrict, p.proparallel
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e';
CREATE TEMP TABLE updated_objects AS TABLE extension_objects;
DROP EXTENSION subsetting;
CREATE EXTENSION subsetting;
SELECT count(*) AS differences
FROM ((TABLE extension_objects EXCEPT TABLE updated_objects)
      UNION ALL
      (TABLE updated_objects EXCEPT TABLE extension_objects)) AS difference;
SELECT count(*) > 0 AS has_objects FROM updated_objects;
