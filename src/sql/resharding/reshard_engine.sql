-- src/sql/resharding/reshard_engine.sql
--	reshard_engine_run, reshard_begin, reshard_step: 1.2's resharding engine (internal)

-- A resharding from the checks to the end, or the continuation of an
-- interrupted one (src/resharding/driver.c).
CREATE PROCEDURE reshard_engine_run(parent regclass, operation text, partition regclass,
                             cutover_budget interval, cutover_attempts int, shard_views boolean DEFAULT false)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_run';
REVOKE ALL ON PROCEDURE reshard_engine_run(regclass, text, regclass, interval, int, boolean) FROM PUBLIC;

COMMENT ON PROCEDURE reshard_engine_run(regclass, text, regclass, interval, int, boolean) IS
'a resharding with the engine of 1.2, from the checks to the end (internal)';

-- The checks and the state row, nothing else; then reshard_step runs one
-- step at a time: each phase on its own, for the tests.  A move names the
-- server (NULL: here).
CREATE PROCEDURE reshard_begin(parent regclass, operation text, partition regclass, server name DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_begin';
REVOKE ALL ON PROCEDURE reshard_begin(regclass, text, regclass, name) FROM PUBLIC;

COMMENT ON PROCEDURE reshard_begin(regclass, text, regclass, name) IS
'the checks and the state row of a resharding, nothing else (internal; tests)';

CREATE PROCEDURE reshard_step(parent regclass, cutover_budget interval DEFAULT '500 ms', cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'reshard_step';
REVOKE ALL ON PROCEDURE reshard_step(regclass, interval, int) FROM PUBLIC;

COMMENT ON PROCEDURE reshard_step(regclass, interval, int) IS
'the next step of a resharding (internal; tests)';

-- The phase table of the engine (src/resharding/phases.h), a row per phase in
-- the order a resharding goes through them: the C step that runs it, the
-- isolation of its transactions, how it waits for locks, the SQL routine
-- that does its work, the phase after it (docs/resharding-engine.md).
CREATE FUNCTION reshard_phases(OUT ordinal int, OUT phase text, OUT step text, OUT isolation text, OUT locks text,
                               OUT routine regprocedure, OUT next text)
RETURNS SETOF record
LANGUAGE C STABLE AS 'MODULE_PATHNAME', 'reshard_phases';
REVOKE ALL ON FUNCTION reshard_phases() FROM PUBLIC;

COMMENT ON FUNCTION reshard_phases() IS
'the phase table of the resharding engine (internal; tests and docs)';

-- The operation table of the engine (src/resharding/operations.h), a row per
-- operation: what becomes of the partition it names, whether it rebuilds
-- the table, the SQL routine of its plan, the SQL routine of each phase
-- that has one (setup, copy, catch up, verify, cutover, finish, undo: the
-- operation's own, else the phase table's), the C function of one cutover
-- attempt (docs/resharding-engine.md).
CREATE FUNCTION reshard_operations(OUT ordinal int, OUT operation text, OUT partition text, OUT rebuilds boolean,
                                   OUT plan regprocedure, OUT routines regproc[], OUT cutover text)
RETURNS SETOF record
LANGUAGE C STABLE AS 'MODULE_PATHNAME', 'reshard_operations';
REVOKE ALL ON FUNCTION reshard_operations() FROM PUBLIC;

COMMENT ON FUNCTION reshard_operations() IS
'the operation table of the resharding engine (internal; tests and docs)';
