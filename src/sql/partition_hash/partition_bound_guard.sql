-- src/sql/partition_hash/partition_bound_guard.sql
--	jumpbackhash_partition_bounds: a partition whose MODULUS is not its table's bucket count, refused

-- A table BY HASH (key jumpbackhash<N>_<type>_ops) places a row in the
-- partition of REMAINDER jumpbackhash(key, N) only if every partition has
-- MODULUS N: with MODULUS M, PostgreSQL takes the remainder of that bucket
-- modulo M, and rows land where neither the clients nor sharding_layout
-- expect them.  At the end of each CREATE TABLE, CREATE FOREIGN TABLE and
-- ALTER TABLE, this refuses (rolling the statement back) a partition of
-- such a table, made or attached, whose modulus is not N; it reads the
-- catalog only, as the role that ran the statement.  Fires also under
-- session_replication_role = replica.  (Tables partitioned so before 1.2:
-- jumpbackhash_partitioning_problems names them.)
CREATE FUNCTION jumpbackhash_partition_bound_guard() RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT DISTINCT i.inhrelid::regclass AS partition, i.inhparent::regclass AS parent, o.opcname,
                    substring(o.opcname FROM '^jumpbackhash([1-9][0-9]*)_') AS buckets,
                    substring(pg_get_expr(p.relpartbound, p.oid) FROM 'modulus (\d+)') AS modulus
             FROM pg_event_trigger_ddl_commands() AS c
             JOIN pg_inherits i ON c.classid = 'pg_class'::regclass AND c.objid IN (i.inhrelid, i.inhparent)
             JOIN pg_partitioned_table t ON t.partrelid = i.inhparent AND t.partstrat = 'h' AND t.partnatts = 1
             JOIN pg_opclass o ON o.oid = t.partclass[0] AND o.opcnamespace = '@extschema@'::regnamespace
             JOIN pg_class p ON p.oid = i.inhrelid
             WHERE o.opcname ~ '^jumpbackhash[1-9][0-9]*_(int2|int4|int8|text|bytea|uuid)_ops$'
             ORDER BY 1 LOOP
        CONTINUE WHEN r.modulus = r.buckets;
        RAISE EXCEPTION 'partition % of % has MODULUS %, but % places rows in % buckets', r.partition, r.parent,
                        coalesce(r.modulus, 'none'), r.opcname, r.buckets
            USING ERRCODE = 'invalid_object_definition',
                  DETAIL = format('Its rows would go by jumpbackhash(key, %s) modulo %s, not where jumpbackhash places them.',
                                  r.buckets, coalesce(r.modulus, 'none')),
                  HINT = format('Give each partition of %s FOR VALUES WITH (MODULUS %s, REMAINDER b), b from 0 to %s.',
                                r.parent, r.buckets, r.buckets::int - 1);
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION jumpbackhash_partition_bound_guard() FROM PUBLIC;

COMMENT ON FUNCTION jumpbackhash_partition_bound_guard() IS
'refuses a partition of a table partitioned by a jumpbackhash<N> operator class whose MODULUS is not N (the event trigger jumpbackhash_partition_bounds)';

CREATE EVENT TRIGGER jumpbackhash_partition_bounds ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'CREATE FOREIGN TABLE', 'ALTER TABLE')
    EXECUTE FUNCTION jumpbackhash_partition_bound_guard();
ALTER EVENT TRIGGER jumpbackhash_partition_bounds ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER jumpbackhash_partition_bounds IS
'a partition of a table partitioned by a jumpbackhash<N> operator class must have MODULUS N';
