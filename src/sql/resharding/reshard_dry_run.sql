-- src/sql/resharding/reshard_dry_run.sql
--	reshard_dry_run: what a resharding would move

CREATE FUNCTION reshard_dry_run(parent regclass, buckets int DEFAULT NULL)
RETURNS TABLE (partition regclass, bucket int, rows bigint, rows_to_move bigint)
AS 'MODULE_PATHNAME', 'reshard_dry_run'
LANGUAGE C STABLE;

COMMENT ON FUNCTION reshard_dry_run(regclass, int) IS
'what resharding to buckets (default: one more) would move, changing nothing: per partition, its rows and how many of them would leave it';
