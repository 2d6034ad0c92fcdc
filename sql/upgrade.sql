--
-- Updating gives what a fresh install gives.  A database created at 1.0 and
-- walked through every version with ALTER EXTENSION UPDATE, and one created
-- at 1.1 and updated, hold exactly the objects of a fresh install of the
-- default version: every member of the extension with its whole definition
-- (pg_get_functiondef of every routine, argument defaults and all), its
-- comment and its privileges; types, operator classes and families with
-- their operators and support functions, casts, views and tables.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
RESET client_min_messages;

-- Every property of every member of the extension, one row each, with OIDs
-- written as names so that two installs compare.
CREATE FUNCTION pg_temp.extension_contents()
RETURNS TABLE (object text, property text, value text)
LANGUAGE sql STABLE
AS $$
WITH member AS (
    SELECT d.classid, d.objid, pg_describe_object(d.classid, d.objid, 0) AS object
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting'
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
)
SELECT m.object, 'member', c.relname::text
FROM member m JOIN pg_class c ON c.oid = m.classid
UNION ALL
SELECT m.object, 'comment', obj_description(m.objid, c.relname)
FROM member m JOIN pg_class c ON c.oid = m.classid
UNION ALL
-- routines: the whole CREATE statement, and who may run them
SELECT m.object, 'definition', pg_get_functiondef(p.oid)
FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
UNION ALL
SELECT m.object, 'privileges', coalesce(p.proacl::text, 'default')
FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
UNION ALL
-- types
SELECT m.object, 'type',
       concat_ws(' ', t.typtype, t.typlen, t.typbyval, t.typalign, t.typstorage, t.typcategory,
                 t.typinput::regprocedure, t.typoutput::regprocedure, t.typreceive::regprocedure,
                 t.typsend::regprocedure, t.typmodin::regprocedure, t.typmodout::regprocedure,
                 t.typanalyze::regprocedure, t.typelem::regtype, t.typdefault,
                 coalesce(t.typacl::text, 'default'))
FROM member m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
UNION ALL
-- operator classes and families, with every operator and support function
SELECT m.object, 'operator class',
       concat_ws(' ', o.opcmethod::regclass, o.opcintype::regtype, o.opcdefault, o.opckeytype::regtype,
                 pg_describe_object('pg_opfamily'::regclass, o.opcfamily, 0))
FROM member m JOIN pg_opclass o ON m.classid = 'pg_opclass'::regclass AND o.oid = m.objid
UNION ALL
SELECT m.object, 'operator ' || a.amopstrategy || ' ' || a.amoplefttype::regtype || ' ' || a.amoprighttype::regtype,
       concat_ws(' ', a.amopopr::regoperator, a.amoppurpose, a.amopsortfamily)
FROM member m JOIN pg_amop a ON m.classid = 'pg_opfamily'::regclass AND a.amopfamily = m.objid
UNION ALL
SELECT m.object, 'function ' || a.amprocnum || ' ' || a.amproclefttype::regtype || ' ' || a.amprocrighttype::regtype,
       a.amproc::regprocedure::text
FROM member m JOIN pg_amproc a ON m.classid = 'pg_opfamily'::regclass AND a.amprocfamily = m.objid
UNION ALL
-- operators and casts
SELECT m.object, 'operator', concat_ws(' ', o.oprcode::regprocedure, o.oprresult::regtype, o.oprcom::regoperator,
                                       o.oprnegate::regoperator, o.oprcanhash, o.oprcanmerge)
FROM member m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
UNION ALL
SELECT m.object, 'cast', concat_ws(' ', c.castfunc::regprocedure, c.castcontext, c.castmethod)
FROM member m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
UNION ALL
-- schemas: their owner (as superuser or not) and privileges
SELECT m.object, 'schema', concat_ws(' ', (SELECT rolsuper FROM pg_roles WHERE oid = n.nspowner),
                                     coalesce(n.nspacl::text, 'default'))
FROM member m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
UNION ALL
-- views and tables: their definition, columns and privileges
SELECT m.object, 'relation', concat_ws(' ', c.relkind, c.relpersistence, coalesce(c.relacl::text, 'default'),
                                       CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END)
FROM member m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
UNION ALL
SELECT m.object, 'column ' || a.attnum,
       concat_ws(' ', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                 pg_get_expr(ad.adbin, ad.adrelid), coalesce(a.attacl::text, 'default'),
                 col_description(a.attrelid, a.attnum))
FROM member m
JOIN pg_attribute a ON m.classid = 'pg_class'::regclass AND a.attrelid = m.objid AND a.attnum > 0
                       AND NOT a.attisdropped
LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
UNION ALL
SELECT m.object, 'constraint ' || k.conname, pg_get_constraintdef(k.oid)
FROM member m JOIN pg_constraint k ON m.classid = 'pg_class'::regclass AND k.conrelid = m.objid
UNION ALL
SELECT m.object, 'index ' || i.indexrelid::regclass, pg_get_indexdef(i.indexrelid)
FROM member m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
UNION ALL
-- the extension itself: version, configuration tables, schema
SELECT 'extension subsetting', 'extension',
       concat_ws(' ', e.extversion, e.extrelocatable, e.extnamespace::regnamespace,
                 (SELECT array_agg(c::regclass ORDER BY c::regclass::text) FROM unnest(e.extconfig) AS c),
                 e.extcondition)
FROM pg_extension e WHERE e.extname = 'subsetting'
$$;

-- differences(A, B): the properties where two snapshots differ, and how.
CREATE FUNCTION pg_temp.differences(a regclass, b regclass)
RETURNS TABLE (side text, object text, property text, value text)
LANGUAGE plpgsql
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        '(SELECT %1$L, * FROM %1$s EXCEPT ALL SELECT %1$L, * FROM %2$s)
         UNION ALL
         (SELECT %2$L, * FROM %2$s EXCEPT ALL SELECT %2$L, * FROM %1$s)
         ORDER BY 2, 3, 1', a, b);
END
$$;

-- A fresh install of the default version: one script, no update.
CREATE EXTENSION subsetting;
SELECT e.extversion = a.default_version AS at_default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'subsetting';
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.extension_contents();
DROP EXTENSION subsetting;

-- From 1.0, through every version to the default one.
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
CREATE TEMP TABLE from_1_0 AS SELECT * FROM pg_temp.extension_contents();
DROP EXTENSION subsetting;

-- From 1.1, updated at once, with a table partitioned by a class the
-- extension installs and one by a class that jumpbackhash_create_operator_classes
-- added under 1.1: after the update, both keep their rows where they were,
-- place new rows in the partition of their bucket and prune a point query.
CREATE EXTENSION subsetting VERSION '1.1';
SELECT count(*) AS classes_added FROM jumpbackhash_create_operator_classes(300);
CREATE TABLE upgraded (id bigint PRIMARY KEY) PARTITION BY HASH (id jumpbackhash16_int8_ops);
CREATE TABLE upgraded_wide (id int) PARTITION BY HASH (id jumpbackhash300_int4_ops);
DO $$
BEGIN
    FOR b IN 0 .. 15 LOOP
        EXECUTE format('CREATE TABLE upgraded_%s PARTITION OF upgraded FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b);
    END LOOP;
    FOR b IN 0 .. 299 LOOP
        EXECUTE format('CREATE TABLE upgraded_wide_%s PARTITION OF upgraded_wide
                        FOR VALUES WITH (MODULUS 300, REMAINDER %s)', b, b);
    END LOOP;
END $$;
INSERT INTO upgraded SELECT generate_series(1, 1000);
INSERT INTO upgraded_wide SELECT generate_series(1, 1000);
CREATE TEMP TABLE placed_under_1_1 AS
SELECT 'upgraded' AS parent, tableoid::regclass::text AS partition, id FROM upgraded
UNION ALL SELECT 'upgraded_wide', tableoid::regclass::text, id FROM upgraded_wide;
ALTER EXTENSION subsetting UPDATE;
CREATE TEMP TABLE from_1_1 AS SELECT * FROM pg_temp.extension_contents();
INSERT INTO upgraded SELECT generate_series(1001, 2000);
INSERT INTO upgraded_wide SELECT generate_series(1001, 2000);
SELECT p.parent, count(*) AS rows,
       count(*) FILTER (WHERE p.partition <> p.parent || '_' || jumpbackhash(p.id, p.buckets)) AS misplaced,
       count(*) FILTER (WHERE p.id <= 1000) AS placed_under_1_1,
       count(*) FILTER (WHERE p.id <= 1000 AND (p.parent, p.partition, p.id) NOT IN (SELECT * FROM placed_under_1_1))
           AS moved
FROM (SELECT 'upgraded' AS parent, 16 AS buckets, tableoid::regclass::text AS partition, id FROM upgraded
      UNION ALL SELECT 'upgraded_wide', 300, tableoid::regclass::text, id FROM upgraded_wide) AS p
GROUP BY p.parent ORDER BY 1;
-- jumpbackhash(42, 16) = 3 and jumpbackhash(42, 300) = 166 (computed by the
-- independent JumpBackHash of test/data/partition_hash_golden.py).
EXPLAIN (COSTS OFF) SELECT * FROM upgraded WHERE id = 42;
EXPLAIN (COSTS OFF) SELECT * FROM upgraded_wide WHERE id = 42;
-- The installed classes' support functions moved; the added ones' stayed.
SELECT p.pronamespace::regnamespace AS schema, substring(p.proname FROM '^jumpbackhash[0-9]+') AS classes,
       count(*) AS support_functions
FROM pg_proc p WHERE p.proname ~ '^jumpbackhash(16|300)_.*_partition_hash$' GROUP BY 1, 2 ORDER BY 1, 2;
DROP TABLE upgraded, upgraded_wide;
DROP OPERATOR FAMILY jumpbackhash300_ops USING hash;
DO $$
BEGIN
    EXECUTE (SELECT string_agg(format('DROP FUNCTION %s', oid::regprocedure), '; ')
             FROM pg_proc WHERE proname ~ '^jumpbackhash300_');
END $$;

-- Every version is reachable from 1.0 and from 1.1.
SELECT source, target FROM pg_extension_update_paths('subsetting')
WHERE source IN ('1.0', '1.1') AND path IS NULL
  AND string_to_array(target, '.')::int[] > string_to_array(source, '.')::int[]
ORDER BY 1, 2;

-- The snapshots hold what they should: every kind of member, with its
-- definition (a comparison of empty snapshots would prove nothing).
-- (Types counted are base types: PostgreSQL 18 also records the row types
-- of views and array types as members.)
SELECT count(*) FILTER (WHERE property = 'member' AND value <> 'pg_type') AS members_but_types,
       count(*) FILTER (WHERE property = 'definition') AS routines,
       count(*) FILTER (WHERE property = 'definition' AND value LIKE '%DEFAULT%') AS routines_with_defaults,
       count(*) FILTER (WHERE property = 'comment' AND value IS NOT NULL) AS comments,
       count(*) FILTER (WHERE property = 'privileges' AND value <> 'default') AS routines_not_for_everyone,
       count(*) FILTER (WHERE property = 'type' AND split_part(value, ' ', 1) = 'b'
                              AND split_part(value, ' ', 6) <> 'A') AS base_types,
       count(*) FILTER (WHERE property = 'operator class') AS operator_classes,
       count(*) FILTER (WHERE property LIKE 'function %') AS support_functions,
       count(*) FILTER (WHERE property = 'relation') AS views_and_tables
FROM fresh;

-- No difference, either way.
SELECT * FROM pg_temp.differences('fresh', 'from_1_0');
SELECT * FROM pg_temp.differences('fresh', 'from_1_1');

-- And the comparison sees a difference where there is one: a routine whose
-- body, default, comment or privileges differ in an updated database.
BEGIN;
CREATE OR REPLACE FUNCTION reshard_bucket_sql(hash_function text, key text, buckets int, removed int[] DEFAULT '{}')
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'changed' $$;
COMMENT ON FUNCTION ringsteady_subset(int, int, int, boolean) IS 'changed';
GRANT EXECUTE ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) TO PUBLIC;
CREATE TEMP TABLE altered ON COMMIT DROP AS SELECT * FROM pg_temp.extension_contents();
SELECT side, object, property FROM pg_temp.differences('fresh', 'altered');
ROLLBACK;
