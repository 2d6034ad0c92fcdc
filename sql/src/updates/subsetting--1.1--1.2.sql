-- sql/src/updates/subsetting--1.1--1.2.sql
--	What ALTER EXTENSION subsetting UPDATE TO '1.2' does to a 1.1 database.
--	sql/src/assemble replaces each "\ir FILE" line by the file: the
--	definition of a new or changed object is written once, in its source.

-- Internal routines are not for PUBLIC.
REVOKE ALL ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) FROM PUBLIC;
