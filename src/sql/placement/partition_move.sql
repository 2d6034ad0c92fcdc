-- src/sql/placement/partition_move.sql
--	partition_move: move one partition of a sharded table, whole, to a server

-- An operation of the resharding engine (src/resharding/procedures.c,
-- docs/scaling-out.md): the layout and the parent stay, one partition is
-- replaced by its copy: a foreign table on server's, or a table here
-- (server NULL).
CREATE PROCEDURE partition_move(partition regclass, server name, INOUT moved_rows bigint DEFAULT NULL,
                                cutover_budget interval DEFAULT '500 ms', cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'partition_move';

COMMENT ON PROCEDURE partition_move(regclass, name, bigint, interval, int) IS
'moves a partition of a table partitioned by the extension, whole, between this server and postgres_fdw servers (server: where it goes, NULL for this server; on a server, a table of the same schema and name, made through dblink), online and verified: the parent keeps its OID, the partition its name; writes wait only for a cutover of at most cutover_budget, tried at most cutover_attempts times; returns the rows moved (see docs/scaling-out.md)';
