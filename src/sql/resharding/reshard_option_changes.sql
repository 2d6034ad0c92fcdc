-- src/sql/resharding/reshard_option_changes.sql
--	reshard_option_changes: the statements that give an object the options of another (internal)

-- The takeover's statements that turn options present (a shadow's index,
-- column or table: reloptions, attoptions, the TOAST table's as toast.*)
-- into options wanted (those of the one it replaces): statement_head (ALTER INDEX
-- i, ALTER TABLE t ALTER COLUMN c, ALTER TABLE t) RESET (what present has
-- and wanted has not), then statement_head SET (what wanted has and present has
-- not, or not so); none where they are the same.  Not revoked from PUBLIC:
-- reshard_takeover_sql runs as the table's owner, any role, and calls it
-- in SQL; it only writes text.
CREATE FUNCTION reshard_option_changes(statement_head text, wanted text[], present text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT coalesce(array_agg(x ORDER BY k), '{}') FROM (
        SELECT 1 AS k, format('%s RESET (%s)', statement_head,
                              string_agg(CASE WHEN name LIKE 'toast.%' THEN 'toast.' || quote_ident(substr(name, 7))
                                              ELSE quote_ident(name) END, ', ' ORDER BY name)) AS x
        FROM (SELECT split_part(opt, '=', 1) AS name FROM unnest(present) AS opt
              EXCEPT SELECT split_part(opt, '=', 1) FROM unnest(wanted) AS opt) AS t
        HAVING count(*) > 0
        UNION ALL
        SELECT 2, format('%s SET (%s)', statement_head,
                         string_agg(format('%s = %L',
                                           CASE WHEN opt LIKE 'toast.%' THEN 'toast.' || quote_ident(split_part(substr(opt, 7), '=', 1))
                                                ELSE quote_ident(split_part(opt, '=', 1)) END,
                                           substr(opt, strpos(opt, '=') + 1)), ', ' ORDER BY opt))
        FROM (SELECT opt FROM unnest(wanted) AS opt EXCEPT SELECT opt FROM unnest(present) AS opt) AS t
        HAVING count(*) > 0) AS t
$function$;

COMMENT ON FUNCTION reshard_option_changes(text, text[], text[]) IS
'resharding, cutover: the RESET and SET statements that give an index, column or table the options wanted (internal)';
