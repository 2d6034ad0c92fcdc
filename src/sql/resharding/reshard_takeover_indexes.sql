-- src/sql/resharding/reshard_takeover_indexes.sql
--	reshard_takeover_indexes: what gives a shadow table's indexes and constraints those of the table it replaces (internal)

-- Part of reshard_takeover_sql's statements, to be run after DROP TABLE
-- old (reshard_takeover_sql.sql): for old's indexes and CHECK and NOT
-- NULL constraints paired with the shadow's (reshard_takeover_pairs),
-- their names (through names of their own first, reshard_takeover_OID
-- and temp_suffix, if one is a name of another's now), the indexes'
-- storage parameters, statistics targets and comments, the constraints'
-- NOT VALID state and comments (with those of the constraints that own
-- indexes).  Not revoked from PUBLIC: reshard_takeover_sql runs as the
-- table's owner, any role, and calls it in SQL (a privilege checked); it
-- reads the catalog and returns statements, which it does not run.
CREATE FUNCTION reshard_takeover_indexes(old regclass, shadow regclass, old_indexes oid[], shadow_indexes oid[],
                                         old_constraints oid[], shadow_constraints oid[], temp_suffix text)
RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a table, as reshard_takeover_sql: its queries planned once)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    nsp name;                   -- old's schema: the shadow's in the end
    tbl text;                   -- the shadow under old's name, qualified
    sql text[] := '{}';
    readded oid[];              -- constraints added again NOT VALID
    two_phase boolean;
    r record;
BEGIN
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    nsp := (SELECT nspname FROM pg_namespace WHERE oid = orel.relnamespace);
    tbl := format('%I.%I', nsp, orel.relname);

    -- Index names (and the names of the constraints they belong to).  If
    -- an old name is a name of one of the shadow's now, every index goes
    -- through a name of its own first.
    two_phase := EXISTS (SELECT FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o
                         JOIN pg_index x ON x.indrelid = shadow JOIN pg_class sc ON sc.oid = x.indexrelid
                         WHERE sc.relname = oc.relname AND sc.oid <> p.s);
    IF two_phase THEN
        SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I RENAME TO %I', nsp, sc.relname,
                                                'reshard_takeover_' || sc.oid || temp_suffix)
                                         ORDER BY sc.oid), '{}')
        INTO sql
        FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
        WHERE sc.relname <> oc.relname;
    END IF;
    SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I RENAME TO %I', nsp,
                                            CASE WHEN two_phase THEN 'reshard_takeover_' || sc.oid || temp_suffix ELSE sc.relname END,
                                            oc.relname) ORDER BY sc.oid), '{}')
    INTO sql
    FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
    WHERE sc.relname <> oc.relname;
    -- Each index's storage parameters, statistics targets and comment.
    FOR r IN SELECT oc.relname, oc.reloptions AS o_opts, sc.reloptions AS s_opts,
                    obj_description(p.o, 'pg_class') AS o_comment, obj_description(p.s, 'pg_class') AS s_comment
             FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o JOIN pg_class sc ON sc.oid = p.s
             ORDER BY oc.relname LOOP
        sql := sql || @extschema@.reshard_option_changes(format('ALTER INDEX %I.%I', nsp, r.relname), r.o_opts, r.s_opts);
        IF r.o_comment IS DISTINCT FROM r.s_comment THEN
            sql := sql || format('COMMENT ON INDEX %I.%I IS %L', nsp, r.relname, r.o_comment);
        END IF;
    END LOOP;
    SELECT sql || coalesce(array_agg(format('ALTER INDEX %I.%I ALTER COLUMN %s SET STATISTICS %s', nsp, oc.relname,
                                            oa.attnum, coalesce(oa.attstattarget, -1))
                                     ORDER BY oc.relname, oa.attnum), '{}')
    INTO sql
    FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_class oc ON oc.oid = p.o
    JOIN pg_attribute oa ON oa.attrelid = p.o JOIN pg_attribute sa ON sa.attrelid = p.s AND sa.attnum = oa.attnum
    WHERE coalesce(oa.attstattarget, -1) <> coalesce(sa.attstattarget, -1);

    -- CHECK and NOT NULL constraints: names (through names of their own
    -- first if needed, as indexes), NOT VALID.
    two_phase := EXISTS (SELECT FROM unnest(old_constraints, shadow_constraints) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o
                         JOIN pg_constraint sc ON sc.conrelid = shadow AND sc.contype IN ('c', 'n')
                         WHERE sc.conname = oc.conname AND sc.oid <> p.s);
    IF two_phase THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', tbl, sc.conname,
                                                'reshard_takeover_' || sc.oid || temp_suffix) ORDER BY sc.oid), '{}')
        INTO sql
        FROM unnest(old_constraints, shadow_constraints) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
        WHERE sc.conname <> oc.conname;
    END IF;
    SELECT sql || coalesce(array_agg(format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', tbl,
                                            CASE WHEN two_phase THEN 'reshard_takeover_' || sc.oid || temp_suffix ELSE sc.conname END,
                                            oc.conname) ORDER BY sc.oid), '{}')
    INTO sql
    FROM unnest(old_constraints, shadow_constraints) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
    WHERE sc.conname <> oc.conname;
    -- LIKE validates them (the shadow was empty); adding one again NOT
    -- VALID reads no row.
    SELECT coalesce(array_agg(oc.oid ORDER BY oc.conname), '{}') INTO readded
    FROM unnest(old_constraints, shadow_constraints) AS p(o, s) JOIN pg_constraint oc ON oc.oid = p.o JOIN pg_constraint sc ON sc.oid = p.s
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
    FROM (SELECT p.o, p.s FROM unnest(old_constraints, shadow_constraints) AS p(o, s)
          UNION ALL
          SELECT oc.oid, sc.oid FROM unnest(old_indexes, shadow_indexes) AS p(o, s)
          JOIN pg_constraint oc ON oc.conrelid = old AND oc.conindid = p.o AND oc.contype IN ('p', 'u', 'x')
          JOIN pg_constraint sc ON sc.conrelid = shadow AND sc.conindid = p.s AND sc.contype IN ('p', 'u', 'x')) AS p
    JOIN pg_constraint oc ON oc.oid = p.o
    WHERE obj_description(oc.oid, 'pg_constraint') IS DISTINCT FROM
          CASE WHEN oc.oid = ANY (readded) THEN NULL ELSE obj_description(p.s, 'pg_constraint') END;
    RETURN sql;
END
$function$;

COMMENT ON FUNCTION reshard_takeover_indexes(regclass, regclass, oid[], oid[], oid[], oid[], text) IS
'resharding''s cutover: the statements that give a shadow the names, options and comments of the indexes and constraints of the table it replaces (internal)';
