-- src/sql/placement/rebalance.sql
--	rebalance: the moves of placement_plan, one partition_move after the other

-- (src/resharding/procedures.c, docs/scaling-out.md)
CREATE PROCEDURE rebalance(parent regclass, servers name[], weights float8[] DEFAULT NULL, INOUT moves int DEFAULT NULL,
                           cutover_budget interval DEFAULT '500 ms', cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'rebalance';

COMMENT ON PROCEDURE rebalance(regclass, name[], float8[], int, interval, int) IS
'spreads the partitions of a table partitioned by the extension over servers (NULL: this server), by weight (all equal by default), as placement_plan says, one partition_move after the other (a NOTICE for each); an interrupted move of the table is finished first, so calling it again after an interruption goes on; returns the moves made (see docs/scaling-out.md)';
