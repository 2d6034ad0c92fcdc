-- src/sql/resharding/reshard_transfer_table.sql
--	reshard_foreign_columns, reshard_transfer_table: the foreign table
--	through which the engine writes rows to a shard in bulk (internal)

-- The column definitions of a foreign table here on the shard's table of
-- the foreign table model: the parent's columns (names, types, stored
-- generation expressions, computed here as for model), each mapped to the
-- shard's column model maps it to (column_name).  (Not revoked from PUBLIC,
-- like reshard_transfer_table below: the routines that run as the table's
-- owner call it in SQL; it reads the catalog only.)
CREATE FUNCTION reshard_foreign_columns(parent regclass, model regclass) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    RETURN (
    SELECT string_agg(format('%I %s OPTIONS (column_name %L)%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             coalesce((SELECT substr(x, 13) FROM unnest(fa.attfdwoptions) AS x
                                       WHERE x LIKE 'column\_name=%'), a.attname),
                             CASE WHEN a.attgenerated = 's'
                                  THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                                  ELSE '' END),
                      ', ' ORDER BY a.attnum)
    FROM pg_attribute a
    JOIN pg_attribute fa ON fa.attrelid = model AND fa.attname = a.attname
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped);
END
$function$;

COMMENT ON FUNCTION reshard_foreign_columns(regclass, regclass) IS
'resharding: the column definitions of a foreign table on the shard''s table of another (internal)';

-- postgres_fdw sends the rows of an INSERT into a foreign table one
-- statement each, unless the table's (or its server's) batch_size says
-- otherwise and the table has no row trigger; the tables the engine fills
-- on shards have its guard.  And it fetches rows 100 at a time unless
-- fetch_size says otherwise.  So the engine writes many rows to a shard,
-- or reads them, through a foreign table of its own: target's server,
-- options and columns (reshard_foreign_columns), batch_size 1000
-- (postgres_fdw lowers it to what its 65,535 parameters allow), fetch_size
-- 10000, no trigger.  It is made in the
-- caller's transaction, which drops it before it ends: no other session
-- ever sees it.  Returns target itself when it is not a foreign table.
-- (It runs with its caller's rights and gives no others.)
CREATE FUNCTION reshard_transfer_table(s reshard_state, target oid) RETURNS regclass
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    transfer text;
    cols text;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = target) <> 'f' THEN
        RETURN target;
    END IF;
    transfer := @extschema@.reshard_object_name(s, 'transfer', target);
    cols := @extschema@.reshard_foreign_columns(s.parent::regclass, target::regclass);
    EXECUTE (SELECT format('CREATE FOREIGN TABLE %I.%I (%s) SERVER %I OPTIONS (%s)',
                           n.nspname, transfer, cols, v.srvname,
                           (SELECT string_agg(format('%I %L', o.option_name, o.option_value), ', ')
                            FROM (SELECT t.option_name, t.option_value
                                  FROM pg_options_to_table(f.ftoptions) AS t
                                  WHERE t.option_name NOT IN ('schema_name', 'table_name', 'batch_size', 'fetch_size')
                                  UNION ALL VALUES ('schema_name', coalesce((SELECT t.option_value FROM pg_options_to_table(f.ftoptions) AS t
                                                                             WHERE t.option_name = 'schema_name'), n.nspname)),
                                                   ('table_name', coalesce((SELECT t.option_value FROM pg_options_to_table(f.ftoptions) AS t
                                                                            WHERE t.option_name = 'table_name'), c.relname)),
                                                   ('batch_size', '1000'), ('fetch_size', '10000')) AS o))
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_foreign_table f ON f.ftrelid = c.oid JOIN pg_foreign_server v ON v.oid = f.ftserver
             WHERE c.oid = target);
    RETURN format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = target),
                  transfer)::regclass;
END
$function$;

COMMENT ON FUNCTION reshard_transfer_table(reshard_state, oid) IS
'resharding: a foreign table on a shard''s table without triggers, with batch_size, for the engine''s bulk writes; made and dropped in one transaction (internal)';
