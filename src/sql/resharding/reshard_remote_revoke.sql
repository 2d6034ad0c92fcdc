-- src/sql/resharding/reshard_remote_revoke.sql
--	reshard_remote_revoke: what takes back, on a server, the rights others got on the engine's objects there (internal)

-- The engine makes tables, views and functions on servers through dblink,
-- as the table's owner, in schemas where the default privileges of the
-- schema (or of the owner), or an event trigger there, may grant them to
-- other roles.  This returns a DO statement to run there in the
-- transaction that makes them, after them and before any grant of the
-- engine's own: it revokes every right of every role but the owner on each
-- of tables (each a relation's name as the server reads it; their columns'
-- rights with them) and functions (each a name with its argument types).
-- Safe to run again.  Not revoked from PUBLIC: the routines that
-- run as the table's owner call it in SQL; it reads nothing.
CREATE FUNCTION reshard_remote_revoke(tables text[], functions text[] DEFAULT '{}') RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    RETURN format('DO %L', format($do$DECLARE x record;
        BEGIN
            FOR x IN SELECT DISTINCT o.what, a.grantee
                     FROM (SELECT 'TABLE ' || t AS what, c.relacl AS acl, c.relowner AS owner
                           FROM pg_catalog.unnest(%1$L::pg_catalog.text[]) AS t
                           JOIN pg_catalog.pg_class c ON c.oid = t::pg_catalog.regclass
                           UNION ALL
                           SELECT 'TABLE ' || t, a.attacl, c.relowner
                           FROM pg_catalog.unnest(%1$L::pg_catalog.text[]) AS t
                           JOIN pg_catalog.pg_class c ON c.oid = t::pg_catalog.regclass
                           JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid
                           UNION ALL
                           SELECT 'FUNCTION ' || f, p.proacl, p.proowner
                           FROM pg_catalog.unnest(%2$L::pg_catalog.text[]) AS f
                           JOIN pg_catalog.pg_proc p ON p.oid = f::pg_catalog.regprocedure) AS o,
                          pg_catalog.aclexplode(o.acl) AS a
                     WHERE a.grantee <> o.owner LOOP
                EXECUTE pg_catalog.format('REVOKE ALL ON %%s FROM %%s', x.what,
                                          CASE x.grantee WHEN 0 THEN 'PUBLIC'
                                               ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(x.grantee)) END);
            END LOOP;
        END$do$, tables, functions));
END
$function$;

COMMENT ON FUNCTION reshard_remote_revoke(text[], text[]) IS
'resharding and moves: a DO statement that revokes, on a server, what others were granted on the engine''s objects there (internal)';
