-- src/sql/partition_hash/support_schema.sql
--	subsetting_partition_hash: the schema of the operator classes' support
--	functions

-- The support functions are called by PostgreSQL, never by users: a schema
-- of their own keeps their 1,536 names out of \df and the search_path.
-- Anyone may look in it, as in any schema of functions; nobody but its
-- owner creates anything there.  (It makes the extension not relocatable:
-- ALTER EXTENSION SET SCHEMA moves only an extension whose objects are all
-- in one schema.)
CREATE SCHEMA subsetting_partition_hash;
GRANT USAGE ON SCHEMA subsetting_partition_hash TO PUBLIC;
COMMENT ON SCHEMA subsetting_partition_hash IS
'the support functions jumpbackhash<N>_<type>_partition_hash of the hash operator classes jumpbackhash<N>_<type>_ops of extension subsetting (PostgreSQL calls them, users do not)';
