-- src/sql/placement/move_column_definitions.sql
--	move_column_definitions: the columns of the table a partition moves into (internal)

-- The partition's columns as CREATE TABLE lists them: types, collations,
-- NOT NULL, stored generated columns.  here: for a table or foreign table
-- here, with the columns' defaults and, on PostgreSQL 18, NOT NULL
-- constraints named as the partition's; else for its table on a server,
-- where postgres_fdw sends a default as DEFAULT and a generated column is
-- computed there (the plan refused an expression of functions, operators
-- or types that are not built in), every collatable column with its
-- collation named (move_collation_name: the database's default one too,
-- which the server's database would otherwise replace with its own), and
-- after the columns the partition's CHECK constraints, its own and the
-- parent's, under their names (the plan checked that what they use exists
-- there: move_remote_checks).  Not revoked from PUBLIC: the routines that
-- run as the table's owner call it; it reads the catalog only.
CREATE FUNCTION move_column_definitions(partition regclass, here boolean) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT string_agg(format('%I %s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN NOT here AND a.attcollation <> 0
                                  THEN coalesce(' COLLATE ' || @extschema@.move_collation_name(a.attcollation), '')
                                  WHEN a.attcollation <> t.typcollation
                                  THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END,
                             CASE WHEN NOT a.attnotnull THEN ''
                                  WHEN here
                                  THEN coalesce(' CONSTRAINT ' || (SELECT quote_ident(c.conname) FROM pg_constraint c
                                                                   WHERE c.conrelid = a.attrelid AND c.contype = 'n'
                                                                     AND c.conkey = ARRAY[a.attnum]), '') || ' NOT NULL'
                                  ELSE ' NOT NULL' END,
                             CASE WHEN a.attgenerated = 's' THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                                  WHEN here AND d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                                  ELSE '' END),
                      ', ' ORDER BY a.attnum)
           || CASE WHEN here THEN ''
                   ELSE coalesce((SELECT string_agg(format(', CONSTRAINT %I %s', c.conname, pg_get_constraintdef(c.oid)),
                                                    '' ORDER BY c.conname)
                                  FROM pg_constraint c WHERE c.conrelid = partition AND c.contype = 'c'), '') END
    FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = partition AND a.attnum > 0 AND NOT a.attisdropped;
END;

COMMENT ON FUNCTION move_column_definitions(regclass, boolean) IS
'partition move: the columns of the table a partition moves into, here or on a server (internal)';
