-- src/sql/resharding/reshard_remote_owner_checks.sql
--	reshard_remote_owner_checks: what the table's owner may not do with a table on a server (internal)

-- The engine puts triggers on a table on a server and objects next to it
-- (a partition moved from that server, and shard_views), through dblink,
-- as the table's owner.  This returns the WHEN branches of a CASE, to run
-- there in a query through dblink, that give what the owner may not do
-- with remote_table (a relation's name as the server reads it), each as a
-- text: sessions that are read-only, no such table, not a table, not the
-- owner's, no right to create in its schema.  reshard_plan_move and
-- reshard_plan_shard_views run them.  Not revoked from PUBLIC: they run as
-- the table's owner, any role, and call it in SQL (a privilege checked);
-- it reads nothing.
CREATE FUNCTION reshard_remote_owner_checks(remote_table text) RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    RETURN format($checks$
        WHEN pg_catalog.current_setting('default_transaction_read_only')::pg_catalog.bool
        THEN pg_catalog.format('the sessions of %%I there are read-only (default_transaction_read_only)', current_user)
        WHEN pg_catalog.to_regclass(%1$L) IS NULL
        THEN pg_catalog.format('it has no table %%s', %1$L)
        WHEN (SELECT relkind FROM pg_catalog.pg_class WHERE oid = pg_catalog.to_regclass(%1$L)) <> 'r'
        THEN pg_catalog.format('%%s is not a table there', %1$L)
        WHEN NOT pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class WHERE oid = pg_catalog.to_regclass(%1$L)), 'USAGE')
        THEN pg_catalog.format('%%I does not own %%s there', current_user, %1$L)
        WHEN NOT pg_catalog.has_schema_privilege((SELECT relnamespace FROM pg_catalog.pg_class
                                                 WHERE oid = pg_catalog.to_regclass(%1$L)), 'CREATE')
        THEN pg_catalog.format('%%I may not create in the schema of %%s there', current_user, %1$L)$checks$,
                  remote_table);
END
$function$;

COMMENT ON FUNCTION reshard_remote_owner_checks(text) IS
'resharding: the WHEN branches of a CASE that gives, on a server through dblink, what the table''s owner may not do with a table there (internal)';
