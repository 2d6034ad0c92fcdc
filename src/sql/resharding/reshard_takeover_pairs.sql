-- src/sql/resharding/reshard_takeover_pairs.sql
--	reshard_takeover_pairs: a shadow table checked against the table it replaces, and their indexes, constraints and statistics objects paired (internal)

-- reshard_takeover_sql's checks, and what its statements are made of
-- (reshard_takeover_sql.sql says what they give and refuse): old and
-- shadow are two different tables, or two partitioned tables; the shadow
-- has what no statement gives without copying or checking rows (columns,
-- persistence, access method, tablespace), and old has nothing that
-- cannot be carried over; old's indexes, CHECK and NOT NULL constraints
-- and extended statistics objects each paired with the shadow's of the
-- same definition (returned: old's and the shadow's, in the same order),
-- the indexes in the same tablespaces, and no index of the shadow's of
-- its own that has the name of one of old's.  Not revoked from PUBLIC:
-- reshard_takeover_sql runs as the table's owner, any role, and calls it
-- in SQL (a privilege checked); it reads the catalog and raises errors.
CREATE FUNCTION reshard_takeover_pairs(old regclass, shadow regclass,
                                       OUT old_indexes oid[], OUT shadow_indexes oid[],
                                       OUT old_constraints oid[], OUT shadow_constraints oid[],
                                       OUT old_statistics oid[], OUT shadow_statistics oid[])
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a table, as reshard_takeover_sql: its queries planned once)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    srel pg_class;
    bad text;
BEGIN
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    SELECT * INTO srel FROM pg_class WHERE oid = shadow;
    IF orel.oid IS NULL OR srel.oid IS NULL OR orel.oid = srel.oid OR orel.relkind NOT IN ('r', 'p')
       OR srel.relkind <> orel.relkind THEN
        RAISE EXCEPTION 'reshard_takeover_sql takes two different tables, or two partitioned tables, not % and %', old, shadow
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

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
    INTO old_indexes, shadow_indexes, bad
    FROM numbered a LEFT JOIN numbered b ON b.rel = shadow AND b.sig = a.sig AND b.n = a.n
    WHERE a.rel = old;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'index % of % has no counterpart in the table that takes its place', bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('%s has no index like it.', shadow),
                  HINT = 'An index made on a partition during a resharding is not in its copy: make it after the call.';
    END IF;
    SELECT string_agg(format('%I', oc.relname), ', ') INTO bad
    FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
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
    WHERE x.indrelid = shadow AND x.indexrelid <> ALL (coalesce(shadow_indexes, '{}'))
      AND sc.relname IN (SELECT relname FROM pg_class WHERE oid = ANY (coalesce(old_indexes, '{}')));
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
    INTO old_constraints, shadow_constraints, bad FROM pairs;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no constraint like % of %', shadow, bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the shadow with CREATE TABLE ... (LIKE old INCLUDING ALL).';
    END IF;
    SELECT string_agg(format('%I', oc.conname), ', ') INTO bad
    FROM unnest(old_constraints, shadow_constraints) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
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
    INTO old_statistics, shadow_statistics, bad
    FROM numbered a LEFT JOIN numbered b ON b.rel = shadow AND b.sig = a.sig AND b.n = a.n
    WHERE a.rel = old;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no statistics object like % of %', shadow, bad, old
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create the shadow with CREATE TABLE ... (LIKE old INCLUDING ALL).';
    END IF;
    old_indexes := coalesce(old_indexes, '{}'); shadow_indexes := coalesce(shadow_indexes, '{}');
    old_constraints := coalesce(old_constraints, '{}'); shadow_constraints := coalesce(shadow_constraints, '{}');
    old_statistics := coalesce(old_statistics, '{}'); shadow_statistics := coalesce(shadow_statistics, '{}');
END
$function$;

COMMENT ON FUNCTION reshard_takeover_pairs(regclass, regclass) IS
'resharding''s cutover: a shadow checked against the table it replaces, their indexes, constraints and statistics objects paired (internal)';
