-- src/sql/placement/move_collation_name.sql
--	move_collation_name: the name a column's collation is given by on a server (internal)

-- The schema-qualified name of a collation, as the table a partition
-- moves into on a server names it; for the database's default collation
-- ("default", which another database takes for its own), the collation
-- here of the same provider and locale (libc: LC_COLLATE and LC_CTYPE,
-- their codesets written either way, UTF-8 or utf8; ICU and builtin: the
-- locale and, for ICU, its rules), of the database's encoding or of any,
-- deterministic, pg_catalog's first; NULL if none is (partition_move's
-- plan then refuses the move).  The catalog's columns read through jsonb:
-- their names changed in PostgreSQL 17.  Not revoked from PUBLIC: the
-- routines that run as the table's owner call it; it reads the catalog
-- only.
CREATE FUNCTION move_collation_name(collation_oid oid) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT format('%I.%I', n.nspname, c.collname)
    FROM pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace
    WHERE c.oid = collation_oid AND collation_oid <> 'pg_catalog.default'::regcollation
    UNION ALL
    (SELECT format('%I.%I', n.nspname, c.collname)
     FROM pg_database d, pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace
     WHERE collation_oid = 'pg_catalog.default'::regcollation AND d.datname = current_database()
       AND c.oid <> 'pg_catalog.default'::regcollation AND c.collprovider = d.datlocprovider
       AND c.collencoding IN (-1, d.encoding) AND c.collisdeterministic
       AND CASE WHEN d.datlocprovider = 'c'
                THEN lower(translate(c.collcollate, '-_', '')) = lower(translate(d.datcollate, '-_', ''))
                     AND lower(translate(c.collctype, '-_', '')) = lower(translate(d.datctype, '-_', ''))
                ELSE coalesce(to_jsonb(c) ->> 'colllocale', to_jsonb(c) ->> 'colliculocale')
                     = coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale')
                     AND coalesce(to_jsonb(c) ->> 'collicurules', '') = coalesce(to_jsonb(d) ->> 'daticurules', '') END
     ORDER BY n.nspname <> 'pg_catalog', c.collcollate IS DISTINCT FROM d.datcollate, c.collname
     LIMIT 1);
END;

COMMENT ON FUNCTION move_collation_name(oid) IS
'partition move: the name of a column''s collation on a server, the database''s default one by its own name (internal)';
