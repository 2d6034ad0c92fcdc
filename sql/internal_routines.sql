--
-- Internal routines are not for everyone: a role that is not superuser
-- cannot run them (docs/reference.md documents every routine it can run).
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
DROP ROLE IF EXISTS regress_subsetting_user;
RESET client_min_messages;
CREATE EXTENSION subsetting;
CREATE ROLE regress_subsetting_user;

SET ROLE regress_subsetting_user;
SELECT jumpbackhash_operator_classes_ddl(3, 'public', '$libdir/subsetting');
SELECT reshard_takeover_sql('pg_class', 'pg_type');
CALL reshard_engine_run('pg_class', 'add', 'pg_type', '1 s', 1);
CALL reshard_begin('pg_class', 'add', 'pg_type');
CALL reshard_step('pg_class');
SELECT reshard_catalog_check(NULL::reshard_state);
SELECT * FROM reshard_state;
-- what it may run, it runs
SELECT jumpbackhash(42, 16);
RESET ROLE;

-- The routines PUBLIC may not run.
SELECT p.oid::regprocedure AS not_for_public
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting'
JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE d.deptype = 'e'
  AND NOT EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) AS a
                  WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')
ORDER BY p.oid::regprocedure::text;

DROP ROLE regress_subsetting_user;
