-- src/sql/resharding/reshard_remove_partition.sql
--	reshard_remove_partition: shrink a sharded table by one bucket

-- The resharding engine (src/resharding/procedures.c, docs/resharding.md).
CREATE PROCEDURE reshard_remove_partition(parent regclass, partition regclass DEFAULT NULL,
                                          INOUT moved_rows bigint DEFAULT NULL,
                                          cutover_budget interval DEFAULT '500 ms', cutover_attempts int DEFAULT 10,
                                          shard_views boolean DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_remove_partition';

COMMENT ON PROCEDURE reshard_remove_partition(regclass, regclass, bigint, interval, int, boolean) IS
'shrinks a sharded table by one bucket, partition (by default the last bucket''s; any bucket''s for jumpbackanchorhash), moving only its rows, online and verified; the partition is detached and emptied, not dropped; writes wait only for a cutover of at most cutover_budget, tried at most cutover_attempts times; with shard_views (by default, NULL: where the shards allow it), the rows that enter postgres_fdw shards are written there online, hidden until the cutover (needs dblink and rights on the shards); returns how many rows moved (see docs/resharding.md)';
