-- sql/src/updates/subsetting--1.1--1.2.sql
--	What ALTER EXTENSION subsetting UPDATE TO '1.2' does to a 1.1 database.
--	sql/src/assemble replaces each "\ir FILE" line by the file: the
--	definition of a new or changed object is written once, in its source.

-- Internal routines are not for PUBLIC.
REVOKE ALL ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) FROM PUBLIC;

-- reshard_check and reshard_dry_run count as the table's owner, in a
-- security-restricted operation, for callers who may read the table.
DROP FUNCTION reshard_check(regclass);
\ir ../resharding/reshard_check.sql
DROP FUNCTION reshard_dry_run(regclass, int);
\ir ../resharding/reshard_dry_run.sql

-- Resharding refuses before it copies anything a table whose NOT NULL
-- constraint is not valid (PostgreSQL 18), and a new partition without
-- every CHECK constraint of the parent.
DROP PROCEDURE reshard_prepare(regclass, text, regclass, jsonb);
\ir ../resharding/reshard_prepare.sql

-- 1.2's resharding engine (work in progress): its state, its progress view,
-- the change log's trigger, and its phases.
\ir ../resharding/reshard_state.sql
\ir ../resharding/reshard_progress.sql
\ir ../resharding/reshard_capture.sql
\ir ../resharding/reshard_row_image_hash.sql
\ir ../resharding/reshard_phase_setup.sql
\ir ../resharding/reshard_phase_copy.sql
\ir ../resharding/reshard_phase_apply.sql
\ir ../resharding/reshard_phase_verify.sql
\ir ../resharding/reshard_takeover_sql.sql
\ir ../resharding/reshard_guard.sql
\ir ../resharding/reshard_phase_check.sql
\ir ../resharding/reshard_phase_cutover.sql
\ir ../resharding/reshard_phase_finish.sql
\ir ../resharding/reshard_phase_undo.sql
\ir ../resharding/reshard_engine.sql
\ir ../resharding/reshard_abort.sql
