-- src/sql/partition_hash/partition_bound_guard.sql
--	jumpbackhash_partition_bounds: a partition whose MODULUS is not its table's bucket count, refused

-- A table BY HASH (key jumpbackhash<N>_<type>_ops) places a row in the
-- partition of REMAINDER jumpbackhash(key, N) only if every partition has
-- MODULUS N: with MODULUS M, PostgreSQL takes the remainder of that bucket
-- modulo M, and rows land where neither the clients nor sharding_layout
-- expect them.  At the end of each CREATE TABLE, CREATE FOREIGN TABLE and
-- ALTER TABLE, this refuses (rolling the statement back) a partition of
-- such a table, made or attached, whose modulus is not N; it reads the
-- catalog only, as the role that ran the statement; not the resharding
-- engine's statements, whose bounds it computes.  Fires also under
-- session_replication_role = replica.  (Tables partitioned so before 1.2:
-- jumpbackhash_partitioning_problems names them.)
CREATE FUNCTION jumpbackhash_partition_bound_guard() RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
BEGIN
    -- (the resharding engine's own statements: the bounds are its own, of
    -- the layout it checked; src/resharding/xact.c)
    IF current_setting('subsetting_reshard.engine_ddl', true) = 'on' THEN
        RETURN;
    END IF;
    -- Only the partitions this transaction made or attached (their
    -- pg_inherits row is its own, or of its subtransactions, whose XIDs are
    -- not older than its own: age() is 0 or less; a newer transaction's
    -- that committed since is checked too), found by index from the
    -- relations the statement touched, each table's class read once, and
    -- the bound's modulus found in its node tree by strpos: a transaction
    -- that attaches 256 partitions one by one checks 256 * 257 / 2 bounds,
    -- each a few microseconds (deparsing them took 1 s).
    FOR r IN WITH touched AS MATERIALIZED (
                 SELECT DISTINCT c.objid FROM pg_event_trigger_ddl_commands() AS c
                 WHERE c.classid = 'pg_class'::regclass),
             made AS MATERIALIZED (
                 SELECT i.inhrelid, i.inhparent FROM touched t JOIN pg_inherits i ON i.inhrelid = t.objid
                 WHERE age(i.xmin) <= 0
                 UNION
                 SELECT i.inhrelid, i.inhparent FROM touched t JOIN pg_inherits i ON i.inhparent = t.objid
                 WHERE age(i.xmin) <= 0),
             tables AS MATERIALIZED (
                 SELECT t.partrelid, o.opcname, substring(o.opcname FROM '^jumpbackhash([1-9][0-9]*)_') AS buckets
                 FROM (SELECT DISTINCT inhparent FROM made) AS m
                 JOIN pg_partitioned_table t ON t.partrelid = m.inhparent AND t.partstrat = 'h' AND t.partnatts = 1
                 JOIN pg_opclass o ON o.oid = t.partclass[0] AND o.opcnamespace = '@extschema@'::regnamespace
                 WHERE o.opcname ~ '^jumpbackhash[1-9][0-9]*_(int2|int4|int8|text|bytea|uuid)_ops$')
             SELECT m.inhrelid::regclass AS partition, m.inhparent::regclass AS parent, x.opcname, x.buckets,
                    substring(p.relpartbound::text FROM ':modulus (\d+) ') AS modulus
             FROM made m JOIN tables x ON x.partrelid = m.inhparent JOIN pg_class p ON p.oid = m.inhrelid
             WHERE strpos(p.relpartbound::text, ':modulus ' || x.buckets || ' ') = 0
             ORDER BY 1 LOOP
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
