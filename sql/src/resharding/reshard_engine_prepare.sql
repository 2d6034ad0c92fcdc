-- sql/src/resharding/reshard_engine_prepare.sql
--	reshard_engine_prepare: 1.2's engine up to the cutover (internal, work in progress)

CREATE PROCEDURE reshard_engine_prepare(parent regclass, operation text, partition regclass)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_engine_prepare';
REVOKE ALL ON PROCEDURE reshard_engine_prepare(regclass, text, regclass) FROM PUBLIC;

COMMENT ON PROCEDURE reshard_engine_prepare(regclass, text, regclass) IS
'resharding with the engine of 1.2, up to the cutover (internal, work in progress)';
