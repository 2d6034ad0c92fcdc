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

-- Relocatable (the functions of a trusted extension belong to the bootstrap
-- superuser, so a superuser moves them); the extension's owner drops it.
CREATE SCHEMA sharding AUTHORIZATION regress_subsetting_owner;
ALTER EXTENSION subsetting SET SCHEMA sharding;
SET ROLE regress_subsetting_owner;
SELECT sharding.jumpbackhash(1, 10) AS bucket;
DROP EXTENSION subsetting;
RESET ROLE;

DROP SCHEMA placement, sharding;
SELECT format('REVOKE CREATE ON DATABASE %I FROM regress_subsetting_owner', current_database()) \gexec
DROP ROLE regress_subsetting_owner;
