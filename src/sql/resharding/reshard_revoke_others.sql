-- src/sql/resharding/reshard_revoke_others.sql
--	reshard_revoke_others: what other roles got on the engine's new tables, revoked (internal)

-- Nobody but the owner may use what the engine makes: the schema's default
-- privileges reach every table its owner creates there, and so may an
-- event trigger's grants, of columns too; the setup revokes what they
-- granted on the tables and sequence of the state (its shadows or the
-- table a partition moves into, its new parent, its change log and its
-- sequence; not the new partition, the DBA's) in the transaction that
-- made them (REVOKE on a table revokes its columns'
-- privileges too; the cutover gives the tables that take the old ones'
-- places the old ones' grants).  Not revoked from PUBLIC: the setup
-- routines call it as the table's owner; it revokes only what its caller
-- may.
CREATE FUNCTION reshard_revoke_others(s reshard_state) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT DISTINCT c.oid, c.relkind, a.grantee
             FROM pg_class c,
                  LATERAL (SELECT c.relacl UNION ALL SELECT attacl FROM pg_attribute WHERE attrelid = c.oid) AS x(acl),
                  aclexplode(x.acl) AS a
             WHERE c.oid = ANY (s.shadows || s.new_parent || s.log || s.log_sequence)
               AND c.oid IS DISTINCT FROM s.partition AND a.grantee <> c.relowner LOOP
        EXECUTE format('REVOKE ALL ON %s %s FROM %s', CASE r.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
                       r.oid::regclass, CASE r.grantee WHEN 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END);
    END LOOP;
END
$function$;

COMMENT ON FUNCTION reshard_revoke_others(reshard_state) IS
'resharding: every right of other roles on the tables and sequences the engine made, revoked (internal)';
