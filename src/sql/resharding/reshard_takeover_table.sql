-- src/sql/resharding/reshard_takeover_table.sql
--	reshard_takeover_table: what gives a shadow table the columns' and the table's properties, and the statistics objects, of the table it replaces (internal)

-- Part of reshard_takeover_sql's statements, to be run after DROP TABLE
-- old (reshard_takeover_sql.sql): the columns' statistics targets,
-- options, storage, compression and comments; the table's storage
-- parameters and its TOAST table's, comment, replica identity (an index:
-- the shadow's paired with old's, reshard_takeover_pairs), the index it
-- is clustered on and row-level security; the extended statistics
-- objects paired with old's: schema, name (through names of their own
-- first, reshard_takeover_OID and temp_suffix, if one is a name of
-- another's), owner, target, comment.  Not revoked from PUBLIC:
-- reshard_takeover_sql runs as the table's owner, any role, and calls it
-- in SQL (a privilege checked); it reads the catalog and returns
-- statements, which it does not run.
CREATE FUNCTION reshard_takeover_table(old regclass, shadow regclass, old_indexes oid[], shadow_indexes oid[],
                                       old_statistics oid[], shadow_statistics oid[], temp_suffix text)
RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a table, as reshard_takeover_sql: its queries planned once)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    srel pg_class;
    nsp name;                   -- old's schema: the shadow's in the end
    tbl text;                   -- the shadow under old's name, qualified
    sql text[] := '{}';
    two_phase boolean;
    r record;
BEGIN
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    SELECT * INTO srel FROM pg_class WHERE oid = shadow;
    nsp := (SELECT nspname FROM pg_namespace WHERE oid = orel.relnamespace);
    tbl := format('%I.%I', nsp, orel.relname);

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
        sql := sql || @extschema@.reshard_option_changes(format('ALTER TABLE %s ALTER COLUMN %I', tbl, r.attname),
                                                        r.o_opts, r.s_opts);
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
        sql := sql || @extschema@.reshard_option_changes(format('ALTER TABLE %s', tbl), r.o_opts, r.s_opts);
    END LOOP;
    IF obj_description(old, 'pg_class') IS DISTINCT FROM obj_description(shadow, 'pg_class') THEN
        sql := sql || format('COMMENT ON TABLE %s IS %L', tbl, obj_description(old, 'pg_class'));
    END IF;
    IF orel.relreplident = 'i' THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', tbl, oc.relname)), '{}')
        INTO sql
        FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_index ox ON ox.indexrelid = p.o JOIN pg_class oc ON oc.oid = p.o
        JOIN pg_index sx ON sx.indexrelid = p.s
        WHERE ox.indisreplident AND NOT (srel.relreplident = 'i' AND sx.indisreplident);
    ELSIF orel.relreplident <> srel.relreplident THEN
        sql := sql || format('ALTER TABLE %s REPLICA IDENTITY %s', tbl,
                             CASE orel.relreplident WHEN 'f' THEN 'FULL' WHEN 'n' THEN 'NOTHING' ELSE 'DEFAULT' END);
    END IF;
    IF EXISTS (SELECT FROM pg_index WHERE indrelid = old AND indisclustered) THEN
        SELECT sql || coalesce(array_agg(format('ALTER TABLE %s CLUSTER ON %I', tbl, oc.relname)), '{}')
        INTO sql
        FROM unnest(old_indexes, shadow_indexes) AS p(o, s) JOIN pg_index ox ON ox.indexrelid = p.o JOIN pg_class oc ON oc.oid = p.o
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
    two_phase := EXISTS (SELECT FROM unnest(old_statistics, shadow_statistics) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o
                         JOIN pg_statistic_ext sx ON sx.stxrelid = shadow
                         WHERE sx.stxname = ox.stxname AND sx.oid <> p.s);
    FOR r IN SELECT sn.nspname AS s_schema, sx.stxname AS s_name, on_.nspname AS o_schema, ox.stxname AS o_name,
                    'reshard_takeover_' || sx.oid || temp_suffix AS temp_name
             FROM unnest(old_statistics, shadow_statistics) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o
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
        FROM unnest(old_statistics, shadow_statistics) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o JOIN pg_statistic_ext sx ON sx.oid = p.s
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
        FROM unnest(old_statistics, shadow_statistics) AS p(o, s) JOIN pg_statistic_ext ox ON ox.oid = p.o JOIN pg_statistic_ext sx ON sx.oid = p.s
        JOIN pg_namespace on_ ON on_.oid = ox.stxnamespace
        CROSS JOIN generate_series(1, 3) AS k
        WHERE CASE k WHEN 1 THEN ox.stxowner <> sx.stxowner
                     WHEN 2 THEN coalesce(ox.stxstattarget, -1) <> coalesce(sx.stxstattarget, -1)
                     ELSE obj_description(ox.oid, 'pg_statistic_ext') IS DISTINCT FROM obj_description(sx.oid, 'pg_statistic_ext') END
        ) AS t;
    RETURN sql;
END
$function$;

COMMENT ON FUNCTION reshard_takeover_table(regclass, regclass, oid[], oid[], oid[], oid[], text) IS
'resharding''s cutover: the statements that give a shadow the column and table properties and the statistics objects of the table it replaces (internal)';
