-- src/sql/resharding/reshard_capture.sql
--	reshard_capture: the trigger that logs the writes to an old partition (internal)

-- Internal triggers of the engine call it (they need no privilege on it);
-- nobody may create a trigger with it.
CREATE FUNCTION reshard_capture() RETURNS trigger
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_capture';
REVOKE ALL ON FUNCTION reshard_capture() FROM PUBLIC;

COMMENT ON FUNCTION reshard_capture() IS
'resharding: appends each write to an old partition to the change log (internal)';
