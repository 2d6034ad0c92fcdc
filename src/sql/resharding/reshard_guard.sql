-- src/sql/resharding/reshard_guard.sql
--	reshard_guard: the trigger that keeps others from writing to the tables a resharding fills (internal)

-- Internal triggers of the engine call it (they need no privilege on it).
CREATE FUNCTION reshard_guard() RETURNS trigger
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_guard';
REVOKE ALL ON FUNCTION reshard_guard() FROM PUBLIC;

COMMENT ON FUNCTION reshard_guard() IS
'resharding: refuses every write but the engine''s to a shadow or a new partition (internal)';
