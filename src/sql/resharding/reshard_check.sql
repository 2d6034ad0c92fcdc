-- src/sql/resharding/reshard_check.sql
--	reshard_check: the rows in the wrong partition

CREATE FUNCTION reshard_check(parent regclass)
RETURNS TABLE (partition regclass, bucket int, rows bigint, misplaced_rows bigint)
AS 'MODULE_PATHNAME', 'reshard_check'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION reshard_check(regclass) IS
'rows in the wrong partition of a table partitioned by the extension (a shard written to directly can drift): per partition, its rows and how many do not belong to its bucket';
