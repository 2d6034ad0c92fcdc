--
-- The extension is trusted: a user who is not a superuser but may create in
-- the database installs it, and uses it.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
DROP ROLE IF EXISTS regress_subsetting_owner;
RESET client_min_messages;

CREATE ROLE regress_subsetting_owner LOGIN NOSUPERUSER;
SELECT format('GRANT CREATE ON DATABASE %I TO regress_subsetting_owner', current_database()) \gexec
CREATE SCHEMA placement AUTHORIZATION regress_subsetting_owner;

SET ROLE regress_subsetting_owner;
CREATE EXTENSION subsetting SCHEMA placement;
SELECT placement.jumpbackhash(1, 10) AS bucket;
SELECT extname, extowner::regrole, extnamespace::regnamespace, extrelocatable
FROM pg_extension WHERE extname = 'subsetting';
RESET ROLE;

-- Its objects belong to the bootstrap superuser, so the owner cannot drop
-- the operator classes a few at a time (a superuser can); it drops the
-- whole extension.
\i test/regress_helpers.sql
SET ROLE regress_subsetting_owner;
SELECT pg_temp.error_of('CALL placement.jumpbackhash_drop_operator_classes()');
RESET ROLE;

-- Not relocatable (the operator classes' support functions are in a schema
-- of their own, subsetting_partition_hash): ALTER EXTENSION SET SCHEMA is
-- refused; the owner drops it and creates it in the other schema, where
-- only the schema's owner creates objects.
CREATE SCHEMA sharding AUTHORIZATION regress_subsetting_owner;
SELECT pg_temp.error_of('ALTER EXTENSION subsetting SET SCHEMA sharding');
SET ROLE regress_subsetting_owner;
DROP EXTENSION subsetting;
CREATE EXTENSION subsetting SCHEMA sharding;
SELECT sharding.jumpbackhash(1, 10) AS bucket;
SELECT pg_temp.error_of('CREATE FUNCTION subsetting_partition_hash.f() RETURNS int LANGUAGE sql AS ''SELECT 1''');
DROP EXTENSION subsetting;
RESET ROLE;

DROP SCHEMA placement, sharding;
SELECT format('REVOKE CREATE ON DATABASE %I FROM regress_subsetting_owner', current_database()) \gexec
DROP ROLE regress_subsetting_owner;
