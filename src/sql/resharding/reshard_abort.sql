-- src/sql/resharding/reshard_abort.sql
--	reshard_abort: undo an interrupted resharding

CREATE PROCEDURE reshard_abort(parent regclass)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_abort';

COMMENT ON PROCEDURE reshard_abort(regclass) IS
'undoes an interrupted resharding of the table that has not cut over (the table is as it was); one that has cut over is finished instead';
