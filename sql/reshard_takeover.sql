--
-- reshard_takeover_sql(old, shadow): the statements that, run after DROP
-- TABLE old in the same transaction, make a shadow created
-- CREATE TABLE shadow (LIKE old INCLUDING ALL) indistinguishable from old
-- (the cutover of 1.2's engine, docs/resharding-engine.md).  Each case
-- describes the old table from the catalogs, builds and fills the shadow,
-- runs the statements and compares: no difference may be left.  The
-- description lists every property the function carries over, so a
-- property it misses shows as a difference.  Names need quoting throughout.
--
SET client_min_messages = error;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE regress_takeover_owner;
CREATE ROLE "regress_takeover ""Reader""";
CREATE ROLE regress_takeover_writer;
CREATE SCHEMA "Take ""Over"" Schema";
CREATE SCHEMA "Shadow Schema";
GRANT USAGE, CREATE ON SCHEMA "Take ""Over"" Schema", "Shadow Schema", public TO regress_takeover_owner;
GRANT USAGE ON SCHEMA "Take ""Over"" Schema" TO regress_takeover_writer;
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE regress_takeover_space LOCATION '';
GRANT CREATE ON TABLESPACE regress_takeover_space TO regress_takeover_owner;

-- Everything about a table a user can tell, by name, from the catalogs:
-- (property, object, value) rows.  Privileges without their grantor (the
-- owner grants them all on the new table; checked apart).
CREATE FUNCTION pg_temp.describe(t regclass) RETURNS TABLE (property text, object text, value text)
LANGUAGE plpgsql AS $$
DECLARE
    rows text;
BEGIN
    EXECUTE format('SELECT count(*) || '' rows, '' || md5(string_agg(x::text, '','' ORDER BY x::text)) FROM %s AS x', t)
        INTO rows;
    RETURN QUERY
    SELECT 'name', '', format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = t
    UNION ALL
    SELECT 'kind', '', format('relkind %s, persistence %s, access method %s, tablespace %s', c.relkind, c.relpersistence,
                              (SELECT amname FROM pg_am WHERE oid = c.relam),
                              coalesce((SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace), 'default'))
    FROM pg_class c WHERE c.oid = t
    UNION ALL SELECT 'rows', '', rows
    UNION ALL
    SELECT 'partition of', i.inhparent::regclass::text, pg_get_expr(c.relpartbound, c.oid)
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhrelid = t
    UNION ALL SELECT 'owner', '', pg_get_userbyid(relowner) FROM pg_class WHERE oid = t
    UNION ALL SELECT 'comment', '', obj_description(t, 'pg_class') WHERE obj_description(t, 'pg_class') IS NOT NULL
    UNION ALL SELECT 'storage parameter', '', o FROM pg_class, unnest(reloptions) AS o WHERE oid = t
    UNION ALL
    SELECT 'storage parameter', '', 'toast.' || o
    FROM pg_class c JOIN pg_class tc ON tc.oid = c.reltoastrelid, unnest(tc.reloptions) AS o WHERE c.oid = t
    UNION ALL
    SELECT 'replica identity', '', c.relreplident::text || coalesce(' ' || (SELECT ic.relname FROM pg_index x
                                                                      JOIN pg_class ic ON ic.oid = x.indexrelid
                                                                      WHERE x.indrelid = t AND x.indisreplident), '')
    FROM pg_class c WHERE c.oid = t
    UNION ALL
    SELECT 'row level security', '', format('enabled %s, forced %s', relrowsecurity, relforcerowsecurity)
    FROM pg_class WHERE oid = t
    UNION ALL
    SELECT 'privilege', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END,
           a.privilege_type || CASE WHEN bool_or(a.is_grantable) THEN ' with grant option' ELSE '' END
    FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) AS a WHERE c.oid = t
    GROUP BY a.grantee, a.privilege_type
    UNION ALL
    SELECT 'column privilege', format('%I %s', att.attname, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END),
           a.privilege_type || CASE WHEN bool_or(a.is_grantable) THEN ' with grant option' ELSE '' END
    FROM pg_attribute att, aclexplode(att.attacl) AS a WHERE att.attrelid = t
    GROUP BY att.attname, a.grantee, a.privilege_type
    UNION ALL
    SELECT 'column', quote_ident(a.attname),
           format('position %s, type %s, collation %s, not null %s, default %s, generated %s, identity %s, local %s, inherited %s',
                  row_number() OVER (ORDER BY a.attnum), format_type(a.atttypid, a.atttypmod), a.attcollation::regcollation,
                  a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attgenerated, a.attidentity, a.attislocal, a.attinhcount)
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = t AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'column statistics target', quote_ident(attname), attstattarget::text FROM pg_attribute
    WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND coalesce(attstattarget, -1) <> -1
    UNION ALL
    SELECT 'column option', quote_ident(attname), o FROM pg_attribute, unnest(attoptions) AS o
    WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND o NOT LIKE 'pg\_attver=%'
    UNION ALL
    SELECT 'column storage', quote_ident(attname), attstorage::text FROM pg_attribute
    WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND attstorage <> (SELECT typstorage FROM pg_type WHERE oid = atttypid)
    UNION ALL
    SELECT 'column compression', quote_ident(attname), attcompression::text FROM pg_attribute
    WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND attcompression <> ''
    UNION ALL
    SELECT 'column comment', quote_ident(attname), col_description(t, attnum) FROM pg_attribute
    WHERE attrelid = t AND attnum > 0 AND NOT attisdropped AND col_description(t, attnum) IS NOT NULL
    UNION ALL
    SELECT 'index', quote_ident(ic.relname),
           format('%s, tablespace %s, valid %s, clustered %s', pg_get_indexdef(x.indexrelid),
                  coalesce((SELECT spcname FROM pg_tablespace WHERE oid = ic.reltablespace), 'default'),
                  x.indisvalid, x.indisclustered)
    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid WHERE x.indrelid = t
    UNION ALL
    SELECT 'index storage parameter', quote_ident(ic.relname), o
    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid, unnest(ic.reloptions) AS o WHERE x.indrelid = t
    UNION ALL
    SELECT 'index comment', quote_ident(ic.relname), obj_description(ic.oid, 'pg_class')
    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
    WHERE x.indrelid = t AND obj_description(ic.oid, 'pg_class') IS NOT NULL
    UNION ALL
    SELECT 'index statistics target', quote_ident(ic.relname) || ' column ' || a.attnum, a.attstattarget::text
    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_attribute a ON a.attrelid = ic.oid
    WHERE x.indrelid = t AND coalesce(a.attstattarget, -1) <> -1
    UNION ALL
    SELECT 'index attached to', quote_ident(ic.relname), i.inhparent::regclass::text
    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_inherits i ON i.inhrelid = ic.oid
    WHERE x.indrelid = t
    UNION ALL
    SELECT 'constraint', quote_ident(c.conname),
           format('%s, validated %s, deferrable %s, deferred %s, local %s, inherited %s, index %s, parent %s',
                  pg_get_constraintdef(c.oid), c.convalidated, c.condeferrable, c.condeferred, c.conislocal, c.coninhcount,
                  (SELECT relname FROM pg_class WHERE oid = c.conindid),
                  (SELECT p.conname FROM pg_constraint p WHERE p.oid = c.conparentid))
    FROM pg_constraint c WHERE c.conrelid = t
    UNION ALL
    SELECT 'constraint comment', quote_ident(conname), obj_description(oid, 'pg_constraint') FROM pg_constraint
    WHERE conrelid = t AND obj_description(oid, 'pg_constraint') IS NOT NULL
    UNION ALL
    SELECT 'statistics object', format('%I.%I', (SELECT nspname FROM pg_namespace WHERE oid = stxnamespace), stxname),
           format('%s, owner %s, target %s', pg_get_statisticsobjdef(oid), pg_get_userbyid(stxowner), stxstattarget)
    FROM pg_statistic_ext WHERE stxrelid = t
    UNION ALL
    SELECT 'statistics object comment', format('%I.%I', (SELECT nspname FROM pg_namespace WHERE oid = stxnamespace), stxname),
           obj_description(oid, 'pg_statistic_ext')
    FROM pg_statistic_ext WHERE stxrelid = t AND obj_description(oid, 'pg_statistic_ext') IS NOT NULL
    UNION ALL
    SELECT 'publication', quote_ident(pb.pubname),
           format('columns %s, row filter %s',
                  (SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
                   WHERE attrelid = t AND attnum = ANY (pr.prattrs::int2[])),
                  pg_get_expr(pr.prqual, pr.prrelid))
    FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid WHERE pr.prrelid = t;
END
$$;

-- describe_differences(before, t): the rows of the description saved in the
-- table before that t's description lacks, and those it has in excess.
CREATE FUNCTION pg_temp.describe_differences(before regclass, t regclass)
RETURNS TABLE (side text, property text, object text, value text) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        '(SELECT ''lacks'', * FROM %1$s EXCEPT ALL SELECT ''lacks'', * FROM pg_temp.describe(%2$L))
         UNION ALL
         (SELECT ''in excess'', * FROM pg_temp.describe(%2$L) EXCEPT ALL SELECT ''in excess'', * FROM %1$s)
         ORDER BY 2, 3, 4, 1', before, t);
END
$$;

-- The statements of reshard_takeover_sql(old, shadow), run after DROP TABLE
-- old in one transaction (the caller reads them first).
CREATE TEMP TABLE takeover (n bigint, stmt text);

--
-- 1. A partition of a parent: the engine's case.
--
CREATE TABLE regress_takeover_ref (id int PRIMARY KEY);
INSERT INTO regress_takeover_ref SELECT generate_series(0, 9);
CREATE TABLE "Take ""Over"" Schema"."Parent Table" (
    bucket int NOT NULL,
    id bigint NOT NULL,
    "Value" text COLLATE "C",
    amount numeric CONSTRAINT "Positive amount" CHECK (amount > 0),
    doubled numeric GENERATED ALWAYS AS (amount * 2) STORED,
    note text DEFAULT 'none',
    ref int CONSTRAINT "Parent's foreign key" REFERENCES regress_takeover_ref,
    PRIMARY KEY (bucket, id))
    PARTITION BY LIST (bucket);
CREATE TABLE "Take ""Over"" Schema"."Part ""0"""
    PARTITION OF "Take ""Over"" Schema"."Parent Table" FOR VALUES IN (0) TABLESPACE regress_takeover_space;
CREATE TABLE "Take ""Over"" Schema"."Part 1"
    PARTITION OF "Take ""Over"" Schema"."Parent Table" FOR VALUES IN (1);
CREATE INDEX "Parent's index" ON "Take ""Over"" Schema"."Parent Table" (note);
INSERT INTO "Take ""Over"" Schema"."Parent Table" (bucket, id, "Value", amount, note, ref)
SELECT i % 2, i, 'value ' || i, i, 'note ' || i, i % 10 FROM generate_series(1, 1000) AS i;
ALTER TABLE "Take ""Over"" Schema"."Parent Table" OWNER TO regress_takeover_owner;
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" OWNER TO regress_takeover_owner;
ALTER TABLE "Take ""Over"" Schema"."Part 1" OWNER TO regress_takeover_owner;
-- The partition's own: comment, privileges (one granted by another role than
-- the owner, the owner's own TRUNCATE revoked, MAINTAIN from PostgreSQL 17),
-- column privileges, storage parameters (the TOAST table's too), column
-- statistics targets, options, storage, compression, comments, indexes with
-- names, comments, storage parameters, tablespaces and a statistics target,
-- the clustering index, constraints (unique, deferrable; NOT VALID) with
-- names and comments, replica identity, an extended statistics object of
-- another owner, publications with a column list and a row filter.
SET SESSION AUTHORIZATION regress_takeover_owner;
COMMENT ON TABLE "Take ""Over"" Schema"."Part ""0""" IS 'bucket 0''s rows';
GRANT SELECT, INSERT ON "Take ""Over"" Schema"."Part ""0""" TO "regress_takeover ""Reader""";
GRANT UPDATE, DELETE ON "Take ""Over"" Schema"."Part ""0""" TO regress_takeover_writer WITH GRANT OPTION;
GRANT SELECT ("Value", note), UPDATE (note) ON "Take ""Over"" Schema"."Part ""0""" TO PUBLIC;
GRANT REFERENCES (id) ON "Take ""Over"" Schema"."Part ""0""" TO regress_takeover_writer WITH GRANT OPTION;
REVOKE TRUNCATE ON "Take ""Over"" Schema"."Part ""0""" FROM regress_takeover_owner;
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 170000 THEN
        EXECUTE 'GRANT MAINTAIN ON "Take ""Over"" Schema"."Part ""0""" TO "regress_takeover ""Reader"""';
    END IF;
END
$$;
SET SESSION AUTHORIZATION regress_takeover_writer;
GRANT DELETE ON "Take ""Over"" Schema"."Part ""0""" TO PUBLIC;
SET SESSION AUTHORIZATION regress_takeover_owner;
ALTER TABLE "Take ""Over"" Schema"."Part ""0"""
    SET (fillfactor = 70, autovacuum_enabled = false, autovacuum_vacuum_scale_factor = 0.05,
         toast.autovacuum_enabled = false, toast.autovacuum_vacuum_threshold = 123),
    ALTER COLUMN "Value" SET STATISTICS 500,
    ALTER COLUMN "Value" SET (n_distinct = -0.5),
    ALTER COLUMN id SET (n_distinct = 100, n_distinct_inherited = 200),
    ALTER COLUMN amount SET STATISTICS 50,
    ALTER COLUMN "Value" SET STORAGE MAIN,
    ALTER COLUMN note SET COMPRESSION pglz;
COMMENT ON COLUMN "Take ""Over"" Schema"."Part ""0""".note IS 'a note';
CREATE UNIQUE INDEX "Part ""0"" by id" ON "Take ""Over"" Schema"."Part ""0""" (id) WITH (fillfactor = 60)
    TABLESPACE pg_default;
CREATE INDEX "Lower value" ON "Take ""Over"" Schema"."Part ""0""" (lower("Value")) WHERE amount > 10;
ALTER INDEX "Take ""Over"" Schema"."Lower value" ALTER COLUMN 1 SET STATISTICS 300;
ALTER INDEX "Take ""Over"" Schema"."Lower value" SET (fillfactor = 80);
COMMENT ON INDEX "Take ""Over"" Schema"."Part ""0"" by id" IS 'the replica identity';
COMMENT ON INDEX "Take ""Over"" Schema"."Part ""0""_pkey" IS 'the primary key''s index';
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" ADD CONSTRAINT "Unique ""note""" UNIQUE (note) DEFERRABLE;
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" ADD CONSTRAINT "Not yet valid" CHECK (id < 100000) NOT VALID;
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" ADD CONSTRAINT "Part check" CHECK (bucket = 0);
COMMENT ON CONSTRAINT "Unique ""note""" ON "Take ""Over"" Schema"."Part ""0""" IS 'one row per note';
COMMENT ON CONSTRAINT "Not yet valid" ON "Take ""Over"" Schema"."Part ""0""" IS 'not checked on old rows';
COMMENT ON CONSTRAINT "Positive amount" ON "Take ""Over"" Schema"."Part ""0""" IS 'the parent''s, commented here';
COMMENT ON CONSTRAINT "Part ""0""_pkey" ON "Take ""Over"" Schema"."Part ""0""" IS 'the primary key';
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" REPLICA IDENTITY USING INDEX "Part ""0"" by id";
ALTER TABLE "Take ""Over"" Schema"."Part ""0""" CLUSTER ON "Unique ""note""";
-- NOT NULL constraints are rows of pg_constraint from PostgreSQL 18 on: one
-- of them NOT VALID.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 180000 THEN
        EXECUTE 'ALTER TABLE "Take ""Over"" Schema"."Part ""0""" ADD CONSTRAINT "Note not null" NOT NULL note NOT VALID';
    END IF;
END
$$;
RESET SESSION AUTHORIZATION;
CREATE STATISTICS "Take ""Over"" Schema"."Part stats" (ndistinct, dependencies) ON id, amount
    FROM "Take ""Over"" Schema"."Part ""0""";
ALTER STATISTICS "Take ""Over"" Schema"."Part stats" SET STATISTICS 400;
COMMENT ON STATISTICS "Take ""Over"" Schema"."Part stats" IS 'id and amount';
CREATE PUBLICATION "Publication ""one""" FOR TABLE "Take ""Over"" Schema"."Part ""0""" ("Value", id, bucket, amount)
    WHERE (amount > 10 AND "Value" <> 'x');
CREATE PUBLICATION "publication two" FOR TABLE "Take ""Over"" Schema"."Part ""0""";

CREATE TEMP TABLE part_before AS SELECT * FROM pg_temp.describe('"Take ""Over"" Schema"."Part ""0"""');
-- The description holds every property the takeover carries over.
SELECT DISTINCT property FROM part_before ORDER BY 1;

-- The shadow, as the engine builds it: by the owner, LIKE the partition, in
-- its tablespace, with an index of the engine's own; filled.  Its column
-- storage and compression, index comments and storage parameters and its
-- statistics object's comment are changed, as if LIKE had not copied them.
SET SESSION AUTHORIZATION regress_takeover_owner;
CREATE TABLE "Take ""Over"" Schema"."Shadow of ""0"""
    (LIKE "Take ""Over"" Schema"."Part ""0""" INCLUDING ALL) TABLESPACE regress_takeover_space;
CREATE INDEX "reshard key" ON "Take ""Over"" Schema"."Shadow of ""0""" (id, bucket);
INSERT INTO "Take ""Over"" Schema"."Shadow of ""0""" (bucket, id, "Value", amount, note, ref)
SELECT bucket, id, "Value", amount, note, ref FROM "Take ""Over"" Schema"."Part ""0""";
ALTER TABLE "Take ""Over"" Schema"."Shadow of ""0"""
    ALTER COLUMN "Value" SET STORAGE EXTENDED, ALTER COLUMN note SET COMPRESSION DEFAULT;
COMMENT ON INDEX "Take ""Over"" Schema"."Shadow of ""0""_id_idx" IS NULL;
ALTER INDEX "Take ""Over"" Schema"."Shadow of ""0""_lower_idx" RESET (fillfactor);
ALTER INDEX "Take ""Over"" Schema"."Shadow of ""0""_pkey" SET (fillfactor = 50);
COMMENT ON STATISTICS "Take ""Over"" Schema"."Shadow of ""0""_id_amount_stat" IS NULL;
RESET SESSION AUTHORIZATION;
-- What the shadow does not have yet, by property (its columns' and
-- constraints' inheritance and "partition of" come with the attachment).
SELECT DISTINCT property FROM pg_temp.describe_differences('part_before', '"Take ""Over"" Schema"."Shadow of ""0"""')
ORDER BY 1;

-- The cutover: the statements read, the partition dropped, the statements
-- run, the engine's index dropped, the shadow attached.
INSERT INTO takeover
SELECT n, stmt FROM unnest(reshard_takeover_sql('"Take ""Over"" Schema"."Part ""0"""',
                                                '"Take ""Over"" Schema"."Shadow of ""0"""')) WITH ORDINALITY AS t(stmt, n);
BEGIN;
DROP TABLE "Take ""Over"" Schema"."Part ""0""";
\set ECHO none
SELECT stmt FROM takeover ORDER BY n \gexec
\set ECHO all
DROP INDEX "Take ""Over"" Schema"."reshard key";
ALTER TABLE "Take ""Over"" Schema"."Parent Table" ATTACH PARTITION "Take ""Over"" Schema"."Part ""0""" FOR VALUES IN (0);
COMMIT;
-- No difference left.
SELECT * FROM pg_temp.describe_differences('part_before', '"Take ""Over"" Schema"."Part ""0"""');
-- The owner granted every privilege.
SELECT DISTINCT pg_get_userbyid(a.grantor) AS grantor
FROM pg_class c, aclexplode(c.relacl) AS a WHERE c.oid = '"Take ""Over"" Schema"."Part ""0"""'::regclass
UNION
SELECT DISTINCT pg_get_userbyid(a.grantor) FROM pg_attribute att, aclexplode(att.attacl) AS a
WHERE att.attrelid = '"Take ""Over"" Schema"."Part ""0"""'::regclass;
-- The table works as the partition did.
SELECT count(*), sum(amount) FROM "Take ""Over"" Schema"."Parent Table" WHERE bucket = 0;
INSERT INTO "Take ""Over"" Schema"."Parent Table" (bucket, id, "Value", amount, note, ref) VALUES (0, 2000, 'new', 1, 'new', 1);
INSERT INTO "Take ""Over"" Schema"."Parent Table" (bucket, id, "Value", amount, note, ref) VALUES (0, 2000, 'again', 1, 'again', 1);

--
-- 2. A table that is no partition, of another owner than its shadow, whose
-- shadow is in another schema: replica identity FULL, row-level security,
-- the owner's privileges only, an extended statistics object in another
-- schema than the table.  The shadow gets privileges by default, a column
-- privilege, a storage parameter, a column option and a column comment
-- that the table does not have: the takeover removes them.
--
CREATE TABLE "Take ""Over"" Schema"."Plain ""Table""" (a int NOT NULL, "B" text, c bigint CONSTRAINT "c positive" CHECK (c > 0))
    WITH (fillfactor = 50, toast.vacuum_truncate = false);
INSERT INTO "Take ""Over"" Schema"."Plain ""Table""" SELECT i, 'b' || i, i * 10 FROM generate_series(1, 100) AS i;
ALTER TABLE "Take ""Over"" Schema"."Plain ""Table""" OWNER TO regress_takeover_owner;
SET SESSION AUTHORIZATION regress_takeover_owner;
REVOKE DELETE ON "Take ""Over"" Schema"."Plain ""Table""" FROM regress_takeover_owner;
ALTER TABLE "Take ""Over"" Schema"."Plain ""Table""" REPLICA IDENTITY FULL, ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ALTER COLUMN "B" SET (n_distinct = 5);
COMMENT ON TABLE "Take ""Over"" Schema"."Plain ""Table""" IS 'no partition';
COMMENT ON COLUMN "Take ""Over"" Schema"."Plain ""Table""".a IS 'column a';
CREATE INDEX "Plain index" ON "Take ""Over"" Schema"."Plain ""Table""" (c DESC NULLS LAST) INCLUDE ("B");
CREATE STATISTICS public."Plain stats" (mcv) ON a, c FROM "Take ""Over"" Schema"."Plain ""Table""";
RESET SESSION AUTHORIZATION;
CREATE PUBLICATION "publication three" FOR TABLE "Take ""Over"" Schema"."Plain ""Table""" (a, "B");
CREATE TEMP TABLE plain_before AS SELECT * FROM pg_temp.describe('"Take ""Over"" Schema"."Plain ""Table"""');
SELECT DISTINCT property FROM plain_before ORDER BY 1;

ALTER DEFAULT PRIVILEGES IN SCHEMA "Shadow Schema" GRANT SELECT, UPDATE ON TABLES TO "regress_takeover ""Reader""";
CREATE TABLE "Shadow Schema"."Plain ""Table"" shadow" (LIKE "Take ""Over"" Schema"."Plain ""Table""" INCLUDING ALL);
ALTER DEFAULT PRIVILEGES IN SCHEMA "Shadow Schema" REVOKE SELECT, UPDATE ON TABLES FROM "regress_takeover ""Reader""";
INSERT INTO "Shadow Schema"."Plain ""Table"" shadow" SELECT * FROM "Take ""Over"" Schema"."Plain ""Table""";
GRANT SELECT (c) ON "Shadow Schema"."Plain ""Table"" shadow" TO regress_takeover_writer;
ALTER TABLE "Shadow Schema"."Plain ""Table"" shadow" SET (parallel_workers = 2), ALTER COLUMN c SET (n_distinct = 7);
COMMENT ON COLUMN "Shadow Schema"."Plain ""Table"" shadow".a IS 'not the same comment';
SELECT DISTINCT property
FROM pg_temp.describe_differences('plain_before', '"Shadow Schema"."Plain ""Table"" shadow"') ORDER BY 1;

TRUNCATE takeover;
INSERT INTO takeover
SELECT n, stmt FROM unnest(reshard_takeover_sql('"Take ""Over"" Schema"."Plain ""Table"""',
                                                '"Shadow Schema"."Plain ""Table"" shadow"')) WITH ORDINALITY AS t(stmt, n);
BEGIN;
DROP TABLE "Take ""Over"" Schema"."Plain ""Table""";
\set ECHO none
SELECT stmt FROM takeover ORDER BY n \gexec
\set ECHO all
COMMIT;
SELECT * FROM pg_temp.describe_differences('plain_before', '"Take ""Over"" Schema"."Plain ""Table"""');
SELECT DISTINCT pg_get_userbyid(a.grantor) AS grantor
FROM pg_class c, aclexplode(c.relacl) AS a WHERE c.oid = '"Take ""Over"" Schema"."Plain ""Table"""'::regclass;

--
-- 3. Names in the way: the shadow, in another schema, has the table's
-- index and statistics object names, each on another index or object (LIKE
-- names them after the shadow), and its CHECK constraints have each other's
-- names; replica identity NOTHING.  The statements are shown, and run as
-- the owner, as the engine runs them.
--
CREATE TABLE "Take ""Over"" Schema".swap (a int, b int, CONSTRAINT "a check" CHECK (a > 0), CONSTRAINT "b check" CHECK (b > 0));
ALTER TABLE "Take ""Over"" Schema".swap OWNER TO regress_takeover_owner;
SET SESSION AUTHORIZATION regress_takeover_owner;
CREATE INDEX "swap shadow_b_idx" ON "Take ""Over"" Schema".swap (a);
CREATE INDEX "swap shadow_a_idx" ON "Take ""Over"" Schema".swap (b);
CREATE STATISTICS "Take ""Over"" Schema"."swap shadow_a_b_stat1" (ndistinct) ON a, b FROM "Take ""Over"" Schema".swap;
CREATE STATISTICS "Take ""Over"" Schema"."swap shadow_a_b_stat" (mcv) ON a, b FROM "Take ""Over"" Schema".swap;
ALTER TABLE "Take ""Over"" Schema".swap REPLICA IDENTITY NOTHING;
INSERT INTO "Take ""Over"" Schema".swap VALUES (1, 2), (3, 4);
CREATE TEMP TABLE swap_before AS SELECT * FROM pg_temp.describe('"Take ""Over"" Schema".swap');
CREATE TABLE "Shadow Schema"."swap shadow" (LIKE "Take ""Over"" Schema".swap INCLUDING ALL);
-- (LIKE keeps CHECK constraints' names: swap them in the shadow.)
ALTER TABLE "Shadow Schema"."swap shadow" RENAME CONSTRAINT "a check" TO "x";
ALTER TABLE "Shadow Schema"."swap shadow" RENAME CONSTRAINT "b check" TO "a check";
ALTER TABLE "Shadow Schema"."swap shadow" RENAME CONSTRAINT "x" TO "b check";
INSERT INTO "Shadow Schema"."swap shadow" SELECT * FROM "Take ""Over"" Schema".swap;
SELECT c.relname AS shadow_index, pg_get_indexdef(c.oid) FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
WHERE x.indrelid = '"Shadow Schema"."swap shadow"'::regclass ORDER BY 1;
SELECT stxname AS shadow_statistics, stxkind FROM pg_statistic_ext
WHERE stxrelid = '"Shadow Schema"."swap shadow"'::regclass ORDER BY 1;
-- The caller reads the statements, the owner runs them.
RESET SESSION AUTHORIZATION;
TRUNCATE takeover;
INSERT INTO takeover
SELECT n, stmt FROM unnest(reshard_takeover_sql('"Take ""Over"" Schema".swap', '"Shadow Schema"."swap shadow"'))
WITH ORDINALITY AS t(stmt, n);
SELECT regexp_replace(stmt, 'reshard_takeover_[0-9]+_[0-9a-f]{16}', 'reshard_takeover_OID', 'g') AS stmt FROM takeover ORDER BY n;
GRANT SELECT ON takeover TO regress_takeover_owner;
SET SESSION AUTHORIZATION regress_takeover_owner;
BEGIN;
DROP TABLE "Take ""Over"" Schema".swap;
\set ECHO none
SELECT stmt FROM takeover ORDER BY n \gexec
\set ECHO all
COMMIT;
RESET SESSION AUTHORIZATION;
SELECT * FROM pg_temp.describe_differences('swap_before', '"Take ""Over"" Schema".swap');

--
-- 4. Refused: a shadow without one of the table's indexes, with an index in
-- another tablespace, with other columns; a table that owns a sequence; the
-- same table twice.  Nothing is read but the catalogs.
--
CREATE TABLE "Take ""Over"" Schema".refused (a int NOT NULL, b text);
CREATE INDEX refused_b ON "Take ""Over"" Schema".refused (b) TABLESPACE regress_takeover_space;
CREATE TABLE "Take ""Over"" Schema".no_index (LIKE "Take ""Over"" Schema".refused INCLUDING ALL EXCLUDING INDEXES);
SELECT reshard_takeover_sql('"Take ""Over"" Schema".refused', '"Take ""Over"" Schema".no_index');
CREATE TABLE "Take ""Over"" Schema".moved_index (LIKE "Take ""Over"" Schema".refused INCLUDING ALL);
ALTER INDEX "Take ""Over"" Schema".moved_index_b_idx SET TABLESPACE pg_default;
SELECT reshard_takeover_sql('"Take ""Over"" Schema".refused', '"Take ""Over"" Schema".moved_index');
CREATE TABLE "Take ""Over"" Schema".other_columns (a int NOT NULL, b varchar);
SELECT reshard_takeover_sql('"Take ""Over"" Schema".refused', '"Take ""Over"" Schema".other_columns');
CREATE TABLE "Take ""Over"" Schema".serial (a serial);
CREATE TABLE "Take ""Over"" Schema".serial_shadow (LIKE "Take ""Over"" Schema".serial INCLUDING ALL);
SELECT reshard_takeover_sql('"Take ""Over"" Schema".serial', '"Take ""Over"" Schema".serial_shadow');
SELECT reshard_takeover_sql('"Take ""Over"" Schema".refused', '"Take ""Over"" Schema".refused');
SELECT reshard_takeover_sql('"Take ""Over"" Schema".refused', NULL) AS strict;

-- It only reads the catalogs, with a safe search_path, its plans made once.
SELECT provolatile, proisstrict, proconfig FROM pg_proc WHERE oid = 'reshard_takeover_sql(regclass, regclass)'::regprocedure;

DROP PUBLICATION "Publication ""one""", "publication two", "publication three";
DROP SCHEMA "Take ""Over"" Schema", "Shadow Schema" CASCADE;
DROP STATISTICS IF EXISTS public."Plain stats";
DROP TABLE regress_takeover_ref;
DROP TABLESPACE regress_takeover_space;
DROP OWNED BY regress_takeover_owner, "regress_takeover ""Reader""", regress_takeover_writer;
DROP ROLE regress_takeover_owner, "regress_takeover ""Reader""", regress_takeover_writer;
