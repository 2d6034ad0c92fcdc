-- src/sql/resharding/reshard_takeover_sql.sql
--	reshard_takeover_sql: the statements that put a shadow table in the place of the table it replaces (internal)

-- The cutover of 1.2's engine (docs/resharding-engine.md) drops each old
-- local partition and puts its shadow in its place, and the old parent and
-- puts the new one in its place (two partitioned tables: their partitions
-- are the engine's business).  The shadow was created
-- CREATE TABLE shadow (LIKE old INCLUDING ALL) in old's tablespace, with
-- old's persistence and access method, by old's owner.  This reads, from
-- the catalogs, what LIKE did not give the shadow and returns the
-- statements that give it, to be executed in order after DROP TABLE old in
-- the same transaction (so call it before the drop):
--   - old's schema and name;
--   - owner;
--   - indexes: each of old's is paired with the shadow's of the same
--     definition, which takes its name (and so does the constraint the index
--     belongs to), comment, storage parameters and statistics targets; the
--     tablespace must be old's already (moving an index copies it);
--   - CHECK constraints (and, on PostgreSQL 18, NOT NULL constraints):
--     names, NOT VALID state (dropped and added again NOT VALID, which reads
--     no row); comments of every constraint;
--   - columns: statistics targets, options (n_distinct, ...), storage,
--     compression, comments;
--   - storage parameters of the table and of its TOAST table, comment,
--     replica identity, the index it is clustered on, row-level security
--     flags;
--   - extended statistics objects: schema, name, owner, target, comment;
--   - privileges of the table and of its columns, exactly, the grantor being
--     the owner (WITH GRANT OPTION, the owner's own revoked privileges,
--     MAINTAIN on PostgreSQL 17 and later);
--   - membership in publications FOR TABLE, with column list and row filter.
-- Everything is read from the catalogs and written schema-qualified and
-- quoted; the cost grows with the number of catalog objects, never with
-- rows, and no code of the table's runs (nor any but built-in functions).
-- Refused with an error, as what no statement gives without reading rows
-- or would be lost: a shadow that is not LIKE old (columns, an index or
-- constraint missing, another tablespace, persistence or access method, an
-- index in another tablespace than its counterpart), and an old table that
-- owns a sequence, a table that has foreign keys of its own, rules,
-- policies, security labels or inheritance other than partitioning (the
-- engine refuses them before it starts).  Not carried over: triggers (the
-- engine's own is on old), foreign keys and other constraints a partition
-- inherits (they come back when the shadow is attached), a partitioned
-- table's own foreign keys (the engine adds them to the partitions and to
-- the new parent after the cutover), planner statistics (until the next
-- ANALYZE), pg_stat counters, OIDs.  An index or constraint of the shadow
-- that old does not have (the engine's own) is left alone.
CREATE FUNCTION reshard_takeover_sql(old regclass, shadow regclass) RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a partition, its catalog queries planned once: at 128
-- partitions, planning them again each call took a third of its time)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    srel pg_class;
    nsp name;                   -- old's schema: the shadow's in the end
    tbl text;                   -- the shadow under old's name, qualified
    sql text[] := '{}';
    o_idx oid[];                -- indexes paired: old's, the shadow's
    s_idx oid[];
    o_con oid[];                -- CHECK and NOT NULL constraints paired
    s_con oid[];
    o_stx oid[];                -- extended statistics objects paired
    s_stx oid[];
    readded oid[];              -- constraints added again NOT VALID
    two_phase boolean;
    -- (of the names objects go through: random, so that no other role can
    -- take one first in the schema)
    temp_suffix text := '_' || left(replace(gen_random_uuid()::text, '-', ''), 16);
    bad text;
    r record;
BEGIN
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    SELECT * INTO srel FROM pg_class WHERE oid = shadow;
    IF orel.oid IS NULL OR srel.oid IS NULL OR orel.oid = srel.oid OR orel.relkind NOT IN ('r', 'p')
       OR srel.relkind <> orel.relkind THEN
        RAISE EXCEPTION 'reshard_takeover_sql takes two different tables, or two partitioned tables, not % and %', old, shadow
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    nsp := (SELECT nspname FROM pg_namespace WHERE oid = orel.relnamespace);
    tbl := format('%I.%I', nsp, orel.relname);

    -- What no statement can change without copying the rows, or what LIKE
    -- would have given: the shadow must have it already.
    SELECT string_agg(x, ', ') INTO bad FROM (
        SELECT 'persistence' AS x WHERE orel.relpersistence <> srel.relpersistence
        UNION ALL SELECT 'access method' WHERE orel.relam <> srel.relam
        UNION ALL SELECT 'tablespace' WHERE orel.reltablespace <> srel.reltablespace
        UNION ALL
        SELECT format('column %I', attname)
        FROM (SELECT * FROM pg_attribute WHERE attrelid = old AND attnum > 0 AND NOT attisdropped) a
        FULL JOIN (SELECT * FROM pg_attribute WHERE attrelid = shadow AND attnum > 0 AND NOT attisdropped) b USING (attname)
        WHERE a.attrelid IS NULL OR b.attrelid IS NULL
           OR (a.atttypid, a.atttypmod, a.attcollation, a.attnotnull, a.attgenerated, a.attidentity)
              IS DISTINCT FROM (b.atttypid, b.atttypmod, b.attcollation, b.attnotnull, b.attgenerated, b.attidentity)) AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % is not a copy of %, they differ in %', shadow, old, bad
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the shadow with CREATE TABLE ... (LIKE old INCLUDING ALL), in the same tablespace, with the same persistence and access method.';
    END IF;
    SELECT string_agg(x, ', ') INTO bad FROM (
        SELECT format('sequence %s', d.objid::regclass) AS x
        FROM pg_depend d JOIN pg_class q ON q.oid = d.objid AND q.relkind = 'S'
        WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = old
          AND d.deptype IN ('a', 'i')
        UNION ALL
        SELECT format('foreign key %I', conname) FROM pg_constraint
        WHERE conrelid = old AND contype = 'f' AND conparentid = 0 AND orel.relkind = 'r'
        UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = old
        UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = old
        UNION ALL
        SELECT format('security label of %s', provider) FROM pg_seclabel
        WHERE classoid = 'pg_class'::regclass AND objoid = old
        UNION ALL
        SELECT format('inheritance from %s', inhparent::regclass) FROM pg_inherits
        WHERE inhrelid = old AND NOT orel.relispartition
        UNION ALL
        SELECT format('inheritance by %s', inhrelid::regclass) FROM pg_inherits
        WHERE inhparent = old AND orel.relkind <> 'p') AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot put % in the place of %, it has %', shadow, old, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'These cannot be carried over to another table without copying or checking its rows.';
    END IF;

    -- Indexes, paired by definition (access method, kind, columns and
    -- expressions by name, operator classes, collations, options,
    -- predicate, the constraint that owns it); LIKE names the shadow's anew.
    WITH i AS (
        SELECT x.indrelid AS rel, x.indexrelid AS idx,
               ROW(c.relam, x.indnatts, x.indnkeyatts, x.indisunique, x.indnullsnotdistinct, x.indisprimary,
                   x.indisexclusion, x.indimmediate, x.indclass::text, x.indcollation::text, x.indoption::text,
                   (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, false), ', ' ORDER BY k)
                    FROM generate_series(1, x.indnatts) AS k),
                   pg_get_expr(x.indpred, x.indrelid),
                   (SELECT ROW(n.contype, n.condeferrable, n.condeferred, n.conexclop::text)::text
                    FROM pg_constraint n WHERE n.conrelid = x.indrelid AND n.conindid = x.indexrelid
                      AND n.contype IN ('p', 'u', 'x')))::text AS sig
        FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        WHERE x.indrelid IN (old, shadow)),
    numbered AS (SELECT i.*, row_number() OVER (PARTITION BY rel, sig ORDER BY idx) AS n FROM i)
    SELECT array_agg(a.idx ORDER BY a.idx), array_agg(b.idx ORDER BY a.idx),
           string_agg(CASE WHEN b.idx IS NULL THEN format('%I', (SELECT relname FROM pg_class WHERE oid = a.idx)) END, ', ')
    INTO o_idx, s_idx, bad
    FROM numbered a LEFT JOIN numbered b ON b.rel = shadow AND b.sig = a.sig AND b.n = a.n
    WHERE a.rel = old;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'index % of % has no counterpart in the table that takes its place', bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('%s has no index like it.', shadow),
                  HINT = 'An index made on a partition during a resharding is not in its copy: make it after the call.';
    END IF;
    SELECT string_agg(format('%I', oc.relname), ', ') INTO bad
    FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
    WHERE oc.reltablespace <> sc.reltablespace;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'indexes of % are not in the tablespaces of their counterparts % of %', shadow, bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Moving an index copies it.',
                  HINT = 'Move the shadow''s index while it is empty (ALTER INDEX ... SET TABLESPACE).';
    END IF;
    -- An index of the shadow that is not old's cannot take a name of old's.
    SELECT string_agg(format('%I', sc.relname), ', ') INTO bad
    FROM pg_index x JOIN pg_class sc ON sc.oid = x.indexrelid
    WHERE x.indrelid = shadow AND x.indexrelid <> ALL (coalesce(s_idx, '{}'))
      AND sc.relname IN (SELECT relname FROM pg_class WHERE oid = ANY (coalesce(o_idx, '{}')));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % has an index named like one of %: %', shadow, old, bad
            USING ERRCODE = 'duplicate_object';
    END IF;

    -- CHECK and NOT NULL constraints, paired by definition, the same name first.
    WITH c AS (
        SELECT x.conrelid AS rel, x.oid, x.conname,
               ROW(x.contype, x.connoinherit, to_jsonb(x) ->> 'conenforced',
                   CASE x.contype WHEN 'c' THEN pg_get_expr(x.conbin, x.conrelid)
                   ELSE (SELECT string_agg(quote_ident(attname), ', ') FROM pg_attribute
                         WHERE attrelid = x.conrelid AND attnum = ANY (x.conkey)) END)::text AS sig
        FROM pg_constraint x WHERE x.conrelid IN (old, shadow) AND x.contype IN ('c', 'n')),
    by_name AS (SELECT a.oid AS o, b.oid AS s FROM c a JOIN c b ON b.rel = shadow AND b.sig = a.sig AND b.conname = a.conname
                WHERE a.rel = old),
    rest AS (SELECT c.*, row_number() OVER (PARTITION BY rel, sig ORDER BY conname) AS n FROM c
             WHERE c.oid NOT IN (SELECT o FROM by_name) AND c.oid NOT IN (SELECT s FROM by_name)),
    pairs AS (SELECT o, s, (SELECT conname FROM c WHERE oid = o) AS conname FROM by_name
              UNION ALL
              SELECT a.oid, b.oid, a.conname FROM rest a LEFT JOIN rest b ON b.rel = shadow AND b.sig = a.sig AND b.n = a.n
              WHERE a.rel = old)
    SELECT array_agg(o ORDER BY o), array_agg(s ORDER BY o),
           string_agg(CASE WHEN s IS NULL THEN format('%I', conname) END, ', ')
    INTO o_con, s_con, bad FROM pairs;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no constraint like % of %', shadow, bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the shadow with CREATE TABLE ... (LIKE old INCLUDING ALL).';
    END IF;
    SELECT string_agg(format('%I', oc.conname), ', ') INTO bad
    FROM unnest(o_con, s_con) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
    WHERE oc.convalidated AND NOT sc.convalidated;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'the constraints % of % are valid, those of % are not', bad, old, shadow
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Validating a constraint reads the rows.';
    END IF;

    -- Extended statistics objects, paired by kinds and columns.
    WITH x AS (
        SELECT stxrelid AS rel, oid, ROW(stxkind::text, pg_get_statisticsobjdef_columns(oid))::text AS sig
        FROM pg_statistic_ext WHERE stxrelid IN (old, shadow)),
    numbered AS (SELECT x.*, row_number() OVER (PARTITION BY rel, sig ORDER BY oid) AS n FROM x)
    SELECT array_agg(a.oid ORDER BY a.oid), array_agg(b.oid ORDER BY a.oid),
           string_agg(CASE WHEN b.oid IS NULL THEN (SELECT format('%I.%I', n.nspname, x.stxname)
                                                    FROM pg_statistic_ext x JOIN pg_namespace n ON n.oid = x.stxnamespace
                                                    WHERE x.oid = a.oid) END, ', ')
    INTO o_stx, s_stx, bad
    FROM numbered a LEFT JOIN numbered b ON b.rel = shadow AND b.sig = a.sig AND b.n = a.n
    WHERE a.rel = old;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no statistics object like % of %', shadow, bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the shadow with CREATE TABLE ... (LIKE old INCLUDING ALL).';
    END IF;
    o_idx := coalesce(o_idx, '{}'); s_idx := coalesce(s_idx, '{}');
    o_con := coalesce(o_con, '{}'); s_con := coalesce(s_con, '{}');
    o_stx := coalesce(o_stx, '{}'); s_stx := coalesce(s_stx, '{}');

    -- The table: old's schema and name, old's owner.
    IF srel.relnamespace <> orel.relnamespace THEN
        sql := sql || format('ALTER TABLE %I.%I SET SCHEMA %I',
                             (SELECT nspname FROM pg_namespace WHERE oid = srel.relnamespace), srel.relname, nsp);
    END IF;
    IF srel.relname <> orel.relname THEN
        sql := sql || format('ALTER TABLE %I.%I RENAME TO %I', nsp, srel.relname, orel.relname);
    END IF;
    IF srel.relowner <> orel.relowner THEN
        sql := sql || format('ALTER TABLE %s OWNER TO %I', tbl, pg_get_userbyid(orel.relowner));
    END IF;

    -- Index names (and the names of the constraints they belong to).  If
    -- an old name is a name of one of the shadow's now, every index goes
    -- through a name of its own first.
    two_phase := EXISTS (SELECT FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o
                         JOIN pg_index x ON x.indrelid = shadow JOIN pg_class sc ON sc.oid = x.indexrelid
                         WHERE sc.relname = oc.relname AND sc.oid <> p.s);
    IF two_phase THEN
        SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I RENAME TO %I', nsp, sc.relname,
                                                'reshard_takeover_' || sc.oid || temp_suffix)
                                         ORDER BY sc.oid), '{}')
        INTO sql
        FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
        WHERE sc.relname <> oc.relname;
    END IF;
    SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I RENAME TO %I', nsp,
                                            CASE WHEN two_phase THEN 'reshard_takeover_' || sc.oid || temp_suffix ELSE sc.relname END,
                                            oc.relname) ORDER BY sc.oid), '{}')
    INTO sql
    FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
    WHERE sc.relname <> oc.relname;
    -- Each index's storage parameters, statistics targets and comment.
    FOR r IN SELECT oc.relname, oc.reloptions AS o_opts, sc.reloptions AS s_opts,
                    obj_description(p.o, 'pg_class') AS o_comment, obj_description(p.s, 'pg_class') AS s_comment
             FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
             ORDER BY oc.relname LOOP
        SELECT sql || coalesce(array_agg(x ORDER BY k), '{}') INTO sql FROM (
            SELECT 1 AS k, format('ALTER INDEX %I.%I RESET (%s)', nsp, r.relname,
                                  string_agg(quote_ident(name), ', ' ORDER BY name)) AS x
            FROM (SELECT split_part(opt, '=', 1) AS name FROM unnest(r.s_opts) AS opt
                  EXCEPT SELECT split_part(opt, '=', 1) FROM unnest(r.o_opts) AS opt) AS t
            HAVING count(*) > 0
            UNION ALL
            SELECT 2, format('ALTER INDEX %I.%I SET (%s)', nsp, r.relname,
                             string_agg(format('%I = %L', split_part(opt, '=', 1), substr(opt, strpos(opt, '=') + 1)),
                                        ', ' ORDER BY opt))
            FROM (SELECT opt FROM unnest(r.o_opts) AS opt EXCEPT SELECT opt FROM unnest(r.s_opts) AS opt) AS t
            HAVING count(*) > 0) AS t;
        IF r.o_comment IS DISTINCT FROM r.s_comment THEN
            sql := sql || format('COMMENT ON INDEX %I.%I IS %L', nsp, r.relname, r.o_comment);
        END IF;
    END LOOP;
    SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I ALTER COLUMN %s SET STATISTICS %s', nsp, oc.relname,
                                            oa.attnum, coalesce(oa.attstattarget, -1))
                                     ORDER BY oc.relname, oa.attnum), '{}')
    INTO sql
    FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o
    JOIN pg_attribute oa ON oa.attrelid = p.o JOIN pg_attribute sa ON sa.attrelid = p.s AND sa.attnum = oa.attnum
    WHERE coalesce(oa.attstattarget, -1) <> coalesce(sa.attstattarget, -1);

    -- CHECK and NOT NULL constraints: names (through names of their own
    -- first if needed, as indexes), NOT VALID.
    two_phase := EXISTS (SELECT FROM unnest(o_con, s_con) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o
                         JOIN pg_constraint sc ON sc.conrelid = shadow AND sc.contype IN ('c', 'n')
                         WHERE sc.conname = oc.conname AND sc.oid <> p.s);
    IF two_phase THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', tbl, sc.conname,
                                                'reshard_takeover_' || sc.oid || temp_suffix) ORDER BY sc.oid), '{}')
        INTO sql
        FROM unnest(o_con, s_con) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
        WHERE sc.conname <> oc.conname;
    END IF;
    SELECT sql || coalesce(array_agg(format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', tbl,
                                            CASE WHEN two_phase THEN 'reshard_takeover_' || sc.oid || temp_suffix ELSE sc.conname END,
                                            oc.conname) ORDER BY sc.oid), '{}')
    INTO sql
    FROM unnest(o_con, s_con) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
    WHERE sc.conname <> oc.conname;
    -- LIKE validates them (the shadow was empty); adding one again NOT
    -- VALID reads no row.
    SELECT coalesce(array_agg(oc.oid ORDER BY oc.conname), '{}') INTO readded
    FROM unnest(o_con, s_con) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
    WHERE NOT oc.convalidated AND sc.convalidated AND coalesce((to_jsonb(oc) ->> 'conenforced')::boolean, true);
    SELECT sql || coalesce(array_agg(x ORDER BY conname, k), '{}') INTO sql FROM (
        SELECT oc.conname, 1 AS k, format('ALTER TABLE %s DROP CONSTRAINT %I', tbl, oc.conname) AS x
        FROM pg_constraint oc WHERE oc.oid = ANY (readded)
        UNION ALL
        SELECT oc.conname, 2, format('ALTER TABLE %s ADD CONSTRAINT %I %s', tbl, oc.conname, pg_get_constraintdef(oc.oid))
        FROM pg_constraint oc WHERE oc.oid = ANY (readded)) AS t;
    -- Comments of every constraint but foreign keys (the shadow's
    -- constraints that own indexes paired by their indexes).
    SELECT sql || coalesce(array_agg(format('COMMENT ON CONSTRAINT %I ON %s IS %L', oc.conname, tbl,
                                            obj_description(oc.oid, 'pg_constraint')) ORDER BY oc.conname), '{}')
    INTO sql
    FROM (SELECT p.o, p.s FROM unnest(o_con, s_con) AS p(o, s)
          UNION ALL
          SELECT oc.oid, sc.oid FROM unnest(o_idx, s_idx) AS p(o, s)
          JOIN pg_constraint oc ON oc.conrelid = old AND oc.conindid = p.o AND oc.contype IN ('p', 'u', 'x')
          JOIN pg_constraint sc ON sc.conrelid = shadow AND sc.conindid = p.s AND sc.contype IN ('p', 'u', 'x')) AS p
    JOIN pg_constraint oc ON oc.oid = p.o
    WHERE obj_description(oc.oid, 'pg_constraint') IS DISTINCT FROM
          CASE WHEN oc.oid = ANY (readded) THEN NULL ELSE obj_description(p.s, 'pg_constraint') END;

    -- Columns: statistics targets, options, storage, compression, comments.
    FOR r IN SELECT a.attname, coalesce(a.attstattarget, -1) AS o_target, coalesce(b.attstattarget, -1) AS s_target,
                    ARRAY(SELECT x FROM unnest(a.attoptions) AS x WHERE x NOT LIKE 'pg\_attver=%') AS o_opts,
                    ARRAY(SELECT x FROM unnest(b.attoptions) AS x WHERE x NOT LIKE 'pg\_attver=%') AS s_opts,
                    a.attstorage AS o_storage, b.attstorage AS s_storage,
                    a.attcompression AS o_compression, b.attcompression AS s_compression,
                    col_description(old, a.attnum) AS o_comment, col_description(shadow, b.attnum) AS s_comment
             FROM pg_attribute a JOIN pg_attribute b ON b.attrelid = shadow AND b.attname = a.attname
             WHERE a.attrelid = old AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum LOOP
        IF r.o_target <> r.s_target THEN
            sql := sql || format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', tbl, r.attname, r.o_target);
        END IF;
        SELECT sql || coalesce(array_agg(x ORDER BY k), '{}') INTO sql FROM (
            SELECT 1 AS k, format('ALTER TABLE %s ALTER COLUMN %I RESET (%s)', tbl, r.attname,
                                  string_agg(quote_ident(name), ', ' ORDER BY name)) AS x
            FROM (SELECT split_part(opt, '=', 1) AS name FROM unnest(r.s_opts) AS opt
                  EXCEPT SELECT split_part(opt, '=', 1) FROM unnest(r.o_opts) AS opt) AS t
            HAVING count(*) > 0
            UNION ALL
            SELECT 2, format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', tbl, r.attname,
                             string_agg(format('%I = %L', split_part(opt, '=', 1), substr(opt, strpos(opt, '=') + 1)),
                                        ', ' ORDER BY opt))
            FROM (SELECT opt FROM unnest(r.o_opts) AS opt EXCEPT SELECT opt FROM unnest(r.s_opts) AS opt) AS t
            HAVING count(*) > 0) AS t;
        IF r.o_storage <> r.s_storage THEN
            sql := sql || format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE %s', tbl, r.attname,
                                 CASE r.o_storage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL'
                                                  WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END);
        END IF;
        IF r.o_compression <> r.s_compression THEN
            sql := sql || format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION %s', tbl, r.attname,
                                 CASE r.o_compression WHEN 'p' THEN 'pglz' WHEN 'l' THEN 'lz4' ELSE 'DEFAULT' END);
        END IF;
        IF r.o_comment IS DISTINCT FROM r.s_comment THEN
            sql := sql || format('COMMENT ON COLUMN %s.%I IS %L', tbl, r.attname, r.o_comment);
        END IF;
    END LOOP;

    -- The table's storage parameters (its TOAST table's as toast.*), comment,
    -- replica identity, clustering index, row-level security.
    FOR r IN SELECT (SELECT array_agg(x) FROM (SELECT unnest(orel.reloptions) AS x
                                             UNION ALL SELECT 'toast.' || unnest(reloptions) FROM pg_class
                                             WHERE oid = orel.reltoastrelid) AS t) AS o_opts,
                    (SELECT array_agg(x) FROM (SELECT unnest(srel.reloptions) AS x
                                             UNION ALL SELECT 'toast.' || unnest(reloptions) FROM pg_class
                                             WHERE oid = srel.reltoastrelid) AS t) AS s_opts LOOP
        SELECT sql || coalesce(array_agg(x ORDER BY k), '{}') INTO sql FROM (
            SELECT 1 AS k, format('ALTER TABLE %s RESET (%s)', tbl,
                                  string_agg(CASE WHEN name LIKE 'toast.%' THEN 'toast.' || quote_ident(substr(name, 7))
                                                  ELSE quote_ident(name) END, ', ' ORDER BY name)) AS x
            FROM (SELECT split_part(opt, '=', 1) AS name FROM unnest(r.s_opts) AS opt
                  EXCEPT SELECT split_part(opt, '=', 1) FROM unnest(r.o_opts) AS opt) AS t
            HAVING count(*) > 0
            UNION ALL
            SELECT 2, format('ALTER TABLE %s SET (%s)', tbl,
                             string_agg(format('%s = %L',
                                               CASE WHEN opt LIKE 'toast.%' THEN 'toast.' || quote_ident(split_part(substr(opt, 7), '=', 1))
                                                    ELSE quote_ident(split_part(opt, '=', 1)) END,
                                               substr(opt, strpos(opt, '=') + 1)), ', ' ORDER BY opt))
            FROM (SELECT opt FROM unnest(r.o_opts) AS opt EXCEPT SELECT opt FROM unnest(r.s_opts) AS opt) AS t
            HAVING count(*) > 0) AS t;
    END LOOP;
    IF obj_description(old, 'pg_class') IS DISTINCT FROM obj_description(shadow, 'pg_class') THEN
        sql := sql || format('COMMENT ON TABLE %s IS %L', tbl, obj_description(old, 'pg_class'));
    END IF;
    IF orel.relreplident = 'i' THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', tbl, oc.relname)), '{}')
        INTO sql
        FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_index ox ON ox.indexrelid = p.o JOIN pg_class oc ON oc.oid = p.o
        JOIN pg_index sx ON sx.indexrelid = p.s
        WHERE ox.indisreplident AND NOT (srel.relreplident = 'i' AND sx.indisreplident);
    ELSIF orel.relreplident <> srel.relreplident THEN
        sql := sql || format('ALTER TABLE %s REPLICA IDENTITY %s', tbl,
                             CASE orel.relreplident WHEN 'f' THEN 'FULL' WHEN 'n' THEN 'NOTHING' ELSE 'DEFAULT' END);
    END IF;
    IF EXISTS (SELECT FROM pg_index WHERE indrelid = old AND indisclustered) THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s CLUSTER ON %I', tbl, oc.relname)), '{}')
        INTO sql
        FROM unnest(o_idx, s_idx) AS p(o, s) JOIN pg_index ox ON ox.indexrelid = p.o JOIN pg_class oc ON oc.oid = p.o
        JOIN pg_index sx ON sx.indexrelid = p.s
        WHERE ox.indisclustered AND NOT sx.indisclustered;
    ELSIF EXISTS (SELECT FROM pg_index WHERE indrelid = shadow AND indisclustered) THEN
        sql := sql || format('ALTER TABLE %s SET WITHOUT CLUSTER', tbl);
    END IF;
    IF orel.relrowsecurity <> srel.relrowsecurity THEN
        sql := sql || format('ALTER TABLE %s %s ROW LEVEL SECURITY', tbl,
                             CASE WHEN orel.relrowsecurity THEN 'ENABLE' ELSE 'DISABLE' END);
    END IF;
    IF orel.relforcerowsecurity <> srel.relforcerowsecurity THEN
        sql := sql || format('ALTER TABLE %s %s ROW LEVEL SECURITY', tbl,
                             CASE WHEN orel.relforcerowsecurity THEN 'FORCE' ELSE 'NO FORCE' END);
    END IF;

    -- Extended statistics objects: schema, name (through names of their
    -- own first if one is a name of another's), owner, target, comment.
    two_phase := EXISTS (SELECT FROM unnest(o_stx, s_stx) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o
                         JOIN pg_statistic_ext sx ON sx.stxrelid = shadow
                         WHERE sx.stxname = ox.stxname AND sx.oid <> p.s);
    FOR r IN SELECT sn.nspname AS s_schema, sx.stxname AS s_name, on_.nspname AS o_schema, ox.stxname AS o_name,
                    'reshard_takeover_' || sx.oid || temp_suffix AS temp_name
             FROM unnest(o_stx, s_stx) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o
             JOIN pg_statistic_ext sx ON sx.oid = p.s
             JOIN pg_namespace on_ ON on_.oid = ox.stxnamespace JOIN pg_namespace sn ON sn.oid = sx.stxnamespace
             WHERE sx.stxnamespace <> ox.stxnamespace OR sx.stxname <> ox.stxname
             ORDER BY sx.oid LOOP
        IF two_phase AND r.s_name <> r.o_name THEN
            sql := sql || format('ALTER STATISTICS %I.%I RENAME TO %I', r.s_schema, r.s_name, r.temp_name);
            r.s_name := r.temp_name;
        END IF;
        IF r.s_schema <> r.o_schema THEN
            sql := sql || format('ALTER STATISTICS %I.%I SET SCHEMA %I', r.s_schema, r.s_name, r.o_schema);
        END IF;
        IF NOT two_phase AND r.s_name <> r.o_name THEN
            sql := sql || format('ALTER STATISTICS %I.%I RENAME TO %I', r.o_schema, r.s_name, r.o_name);
        END IF;
    END LOOP;
    IF two_phase THEN
        SELECT sql || coalesce(array_agg(format('ALTER STATISTICS %I.%I RENAME TO %I', on_.nspname,
                                                'reshard_takeover_' || sx.oid || temp_suffix, ox.stxname) ORDER BY sx.oid), '{}')
        INTO sql
        FROM unnest(o_stx, s_stx) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o JOIN pg_statistic_ext sx ON sx.oid = p.s
        JOIN pg_namespace on_ ON on_.oid = ox.stxnamespace
        WHERE sx.stxname <> ox.stxname;
    END IF;
    SELECT sql || coalesce(array_agg(x ORDER BY ox_oid, k), '{}') INTO sql FROM (
        SELECT ox.oid AS ox_oid, k,
               CASE k WHEN 1 THEN format('ALTER STATISTICS %I.%I OWNER TO %I', on_.nspname, ox.stxname,
                                         pg_get_userbyid(ox.stxowner))
                      WHEN 2 THEN format('ALTER STATISTICS %I.%I SET STATISTICS %s', on_.nspname, ox.stxname,
                                         coalesce(ox.stxstattarget, -1))
                      ELSE format('COMMENT ON STATISTICS %I.%I IS %L', on_.nspname, ox.stxname,
                                  obj_description(ox.oid, 'pg_statistic_ext')) END AS x
        FROM unnest(o_stx, s_stx) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o JOIN pg_statistic_ext sx ON sx.oid = p.s
        JOIN pg_namespace on_ ON on_.oid = ox.stxnamespace
        CROSS JOIN generate_series(1, 3) AS k
        WHERE CASE k WHEN 1 THEN ox.stxowner <> sx.stxowner
                     WHEN 2 THEN coalesce(ox.stxstattarget, -1) <> coalesce(sx.stxstattarget, -1)
                     ELSE obj_description(ox.oid, 'pg_statistic_ext') IS DISTINCT FROM obj_description(sx.oid, 'pg_statistic_ext') END
        ) AS t;

    -- Privileges, exactly: the table's, then the columns' (revoking a
    -- table's privilege revokes it on the columns).  Grants are compared and
    -- made as the owner's, whoever granted them on old; the shadow's owner
    -- is old's by now.
    IF (SELECT string_agg(format('%s %s %s', g, p, go), ', ' ORDER BY g, p, go)
        FROM (SELECT a.grantee AS g, a.privilege_type AS p, bool_or(a.is_grantable) AS go
              FROM aclexplode(coalesce(orel.relacl, acldefault('r', orel.relowner))) AS a GROUP BY 1, 2) AS t)
       IS DISTINCT FROM
       (SELECT string_agg(format('%s %s %s', g, p, go), ', ' ORDER BY g, p, go)
        FROM (SELECT CASE WHEN a.grantee = srel.relowner THEN orel.relowner ELSE a.grantee END AS g, a.privilege_type AS p,
                     bool_or(a.is_grantable) AS go
              FROM aclexplode(coalesce(srel.relacl, acldefault('r', srel.relowner))) AS a GROUP BY 1, 2) AS t) THEN
        sql := sql || format('REVOKE ALL ON TABLE %s FROM %s CASCADE', tbl,
            (SELECT string_agg(CASE WHEN g = 0 THEN 'PUBLIC' ELSE format('%I', pg_get_userbyid(g)) END, ', ' ORDER BY g)
             FROM (SELECT orel.relowner AS g
                   UNION SELECT CASE WHEN a.grantee = srel.relowner THEN orel.relowner ELSE a.grantee END
                   FROM aclexplode(coalesce(srel.relacl, acldefault('r', srel.relowner))) AS a) AS t));
        SELECT sql || coalesce(array_agg(format('GRANT %s ON TABLE %s TO %s%s', privileges, tbl,
                                                CASE WHEN g = 0 THEN 'PUBLIC' ELSE format('%I', pg_get_userbyid(g)) END,
                                                CASE WHEN grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                                         ORDER BY g, grantable), '{}')
        INTO sql
        FROM (SELECT g, grantable, string_agg(p, ', ' ORDER BY p) AS privileges
              FROM (SELECT a.grantee AS g, a.privilege_type AS p, bool_or(a.is_grantable) AS grantable
                    FROM aclexplode(coalesce(orel.relacl, acldefault('r', orel.relowner))) AS a GROUP BY 1, 2) AS t
              GROUP BY 1, 2) AS t;
    END IF;
    FOR r IN SELECT a.attname, a.attacl AS o_acl, b.attacl AS s_acl
             FROM pg_attribute a JOIN pg_attribute b ON b.attrelid = shadow AND b.attname = a.attname
             WHERE a.attrelid = old AND a.attnum > 0 AND NOT a.attisdropped
               AND (SELECT string_agg(format('%s %s %s', g, p, go), ', ' ORDER BY g, p, go)
                    FROM (SELECT x.grantee AS g, x.privilege_type AS p, bool_or(x.is_grantable) AS go
                          FROM aclexplode(a.attacl) AS x GROUP BY 1, 2) AS t)
                   IS DISTINCT FROM
                   (SELECT string_agg(format('%s %s %s', g, p, go), ', ' ORDER BY g, p, go)
                    FROM (SELECT CASE WHEN x.grantee = srel.relowner THEN orel.relowner ELSE x.grantee END AS g,
                                 x.privilege_type AS p, bool_or(x.is_grantable) AS go
                          FROM aclexplode(b.attacl) AS x GROUP BY 1, 2) AS t)
             ORDER BY a.attnum LOOP
        IF r.s_acl IS NOT NULL THEN
            sql := sql || format('REVOKE ALL (%I) ON TABLE %s FROM %s CASCADE', r.attname, tbl,
                (SELECT string_agg(CASE WHEN g = 0 THEN 'PUBLIC' ELSE format('%I', pg_get_userbyid(g)) END, ', ' ORDER BY g)
                 FROM (SELECT DISTINCT CASE WHEN x.grantee = srel.relowner THEN orel.relowner ELSE x.grantee END AS g
                       FROM aclexplode(r.s_acl) AS x) AS t));
        END IF;
        SELECT sql || coalesce(array_agg(format('GRANT %s ON TABLE %s TO %s%s', privileges, tbl,
                                                CASE WHEN g = 0 THEN 'PUBLIC' ELSE format('%I', pg_get_userbyid(g)) END,
                                                CASE WHEN grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                                         ORDER BY g, grantable), '{}')
        INTO sql
        FROM (SELECT g, grantable, string_agg(format('%s (%I)', p, r.attname), ', ' ORDER BY p) AS privileges
              FROM (SELECT x.grantee AS g, x.privilege_type AS p, bool_or(x.is_grantable) AS grantable
                    FROM aclexplode(r.o_acl) AS x GROUP BY 1, 2) AS t
              GROUP BY 1, 2) AS t;
    END LOOP;

    -- Publications FOR TABLE old, with its column list and row filter.
    SELECT sql || coalesce(array_agg(format('ALTER PUBLICATION %I ADD TABLE %s%s%s', pb.pubname, tbl,
               CASE WHEN pr.prattrs IS NULL THEN ''
                    ELSE ' (' || (SELECT string_agg(format('%I', attname), ', ' ORDER BY attnum) FROM pg_attribute
                                  WHERE attrelid = old AND attnum = ANY (pr.prattrs::int2[])) || ')' END,
               CASE WHEN pr.prqual IS NULL THEN '' ELSE format(' WHERE (%s)', pg_get_expr(pr.prqual, pr.prrelid)) END)
                                     ORDER BY pb.pubname), '{}')
    INTO sql
    FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    WHERE pr.prrelid = old
      AND NOT EXISTS (SELECT FROM pg_publication_rel sr WHERE sr.prpubid = pr.prpubid AND sr.prrelid = shadow);
    RETURN sql;
END
$function$;

COMMENT ON FUNCTION reshard_takeover_sql(regclass, regclass) IS
'the statements that, run in order after DROP TABLE old in the same transaction, give shadow (created LIKE old) old''s name, owner, privileges, options, comments, statistics targets, index and constraint names, replica identity and publications: resharding''s cutover (internal)';

REVOKE ALL ON FUNCTION reshard_takeover_sql(regclass, regclass) FROM PUBLIC;
