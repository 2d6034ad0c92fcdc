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

-- sharding_layout names the extension's schema quoted once (1.1 quoted a
-- name that needs quotes twice), and it and reshard_bucket_sql run with a
-- search_path of their own (the caller's could resolve their operators to
-- another role's); the view that calls sharding_layout goes and comes back.
DROP VIEW sharded_tables;
DROP FUNCTION sharding_layout(regclass);
\ir ../resharding/sharding_layout.sql
\ir ../resharding/sharded_tables.sql
DROP FUNCTION reshard_bucket_sql(text, text, int, int[]);
\ir ../resharding/reshard_bucket_sql.sql

-- 1.1's resharding engine goes: reshard_add_partition and
-- reshard_remove_partition run 1.2's (below), with new parameters.
DROP PROCEDURE reshard_add_partition(regclass, regclass, bigint, interval, int);
DROP PROCEDURE reshard_remove_partition(regclass, regclass, bigint, interval, int);
DROP PROCEDURE reshard_run(regclass, text, regclass, bigint, interval, int);
DROP PROCEDURE reshard_prepare(regclass, text, regclass, jsonb);
DROP PROCEDURE reshard_enter(jsonb, boolean);
DROP PROCEDURE reshard_reconcile(jsonb, jsonb, boolean, bigint);
DROP PROCEDURE reshard_delete_copied(jsonb, jsonb, bigint);
DROP PROCEDURE reshard_copy(jsonb);
DROP PROCEDURE reshard_move(jsonb, bigint);
DROP PROCEDURE reshard_swap(jsonb, interval, int);
DROP PROCEDURE reshard_cleanup(jsonb);
DROP PROCEDURE reshard_validate(jsonb);
DROP PROCEDURE reshard_lock(text, boolean);

-- 1.2's resharding engine: its state, its progress view, the change log's
-- trigger, its phases, and the procedures that run it.
\ir ../resharding/reshard_state.sql
\ir ../resharding/reshard_progress.sql
\ir ../resharding/reshard_capture.sql
\ir ../resharding/reshard_row_image_hash.sql
\ir ../resharding/reshard_expect_phase.sql
\ir ../resharding/reshard_phase_plan.sql
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
\ir ../resharding/reshard_phase_shard_views.sql
\ir ../resharding/reshard_engine.sql
\ir ../resharding/reshard_add_partition.sql
\ir ../resharding/reshard_remove_partition.sql
\ir ../resharding/reshard_abort.sql
