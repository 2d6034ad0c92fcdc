-- src/sql/resharding/reshard_takeover_privileges.sql
--	reshard_takeover_privileges: what gives a shadow table the privileges of the table it replaces (internal)

-- Part of reshard_takeover_sql's statements, to be run after DROP TABLE
-- old (reshard_takeover_sql.sql), old's owner being the shadow's by then:
-- the privileges of the table and of its columns, exactly.  Not revoked
-- from PUBLIC: reshard_takeover_sql runs as the table's owner, any role,
-- and calls it in SQL (a privilege checked); it reads the catalog and
-- returns statements, which it does not run.
CREATE FUNCTION reshard_takeover_privileges(old regclass, shadow regclass) RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a table, as reshard_takeover_sql: its queries planned once)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    srel pg_class;
    tbl text;                   -- the shadow under old's name, qualified
    sql text[] := '{}';
    r record;
BEGIN
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    SELECT * INTO srel FROM pg_class WHERE oid = shadow;
    tbl := format('%I.%I', (SELECT nspname FROM pg_namespace WHERE oid = orel.relnamespace), orel.relname);

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
    RETURN sql;
END
$function$;

COMMENT ON FUNCTION reshard_takeover_privileges(regclass, regclass) IS
'resharding''s cutover: the statements that give a shadow the privileges of the table it replaces, and of its columns (internal)';
