-- src/sql/resharding/reshard_whole_row.sql
--	reshard_whole_row: the trigger that lets a DELETE through a table read the whole rows of its foreign partitions
--	while the capture is on some (internal)

-- A DELETE through a partitioned table that PostgreSQL (15 and 18, as
-- tried) does not send whole to the servers fails with "wholerow is NULL"
-- when some of its foreign partitions have row triggers on DELETE and
-- others not: while the capture is on some foreign partitions but not all
-- (a move from a server), the engine puts this one, which lets every
-- delete through, on the others, until the cutover
-- (src/resharding/capture.c).  Internal triggers of the engine call it
-- (they need no privilege on it).
CREATE FUNCTION reshard_whole_row() RETURNS trigger
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_whole_row';
REVOKE ALL ON FUNCTION reshard_whole_row() FROM PUBLIC;

COMMENT ON FUNCTION reshard_whole_row() IS
'resharding: lets every delete through, so that a DELETE through the table reads the whole rows of a foreign partition, as of those captured (internal)';
