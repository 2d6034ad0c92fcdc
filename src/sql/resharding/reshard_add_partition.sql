-- src/sql/resharding/reshard_add_partition.sql
--	reshard_add_partition: grow a sharded table by one bucket

-- The resharding engine (src/resharding/procedures.c, docs/resharding.md).
CREATE PROCEDURE reshard_add_partition(parent regclass, new_partition regclass,
                                       INOUT moved_rows bigint DEFAULT NULL,
                                       cutover_budget interval DEFAULT '500 ms', cutover_attempts int DEFAULT 10,
                                       shard_views boolean DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_add_partition';

COMMENT ON PROCEDURE reshard_add_partition(regclass, regclass, bigint, interval, int, boolean) IS
'grows a table partitioned BY LIST (jumpbackhash(key, n)), BY LIST (jumphash(key, n)), BY LIST (jumpbackanchorhash(...)) or BY HASH (key jumpbackhash<n>_<type>_ops) by one bucket, new_partition (empty, local or foreign), moving only the rows whose bucket changes, online and verified; writes wait only for a cutover of at most cutover_budget, tried at most cutover_attempts times; with shard_views (by default, NULL: where the shards allow it), the rows that leave postgres_fdw shards are hidden there at the cutover and deleted after it (needs dblink and rights on the shards); returns how many rows moved (see docs/resharding.md)';
