-- src/sql/resharding/reshard_state.sql
--	reshard_state: one row per resharding, written by the engine (internal)

-- Written only by the engine (src/resharding/state.c), as this table's owner,
-- in the transactions that do the work it records; read through
-- reshard_progress.  Arrays of tables are indexed by bucket + 1: sources by
-- the old layout's buckets, shadows by the new one's.  A move (partition_move)
-- keeps the layout: its sources and shadows hold only the moved partition's
-- bucket (the partition, and the table that takes its place on server).
CREATE TABLE reshard_state (
    parent oid PRIMARY KEY,              -- the table, as it was when the call began
    parent_name text NOT NULL,           -- schema-qualified, quoted
    operation text NOT NULL CHECK (operation IN ('add', 'remove', 'move')),
    partition oid NOT NULL,              -- the new partition, the removed one, or the moved one
    bucket int NOT NULL,                 -- its bucket
    method text NOT NULL,
    key text NOT NULL,                   -- the key expression, as sharding_layout writes it
    old_buckets int NOT NULL,
    new_buckets int NOT NULL,
    old_bucket_sql text NOT NULL,        -- a row's old bucket (columns unqualified)
    new_bucket_sql text NOT NULL,        -- a row's new bucket
    new_partition_by text NOT NULL,      -- the new parent's PARTITION BY
    new_bound text NOT NULL,             -- a partition's bound, format() with the bucket
    sources oid[] NOT NULL,              -- the old partitions, by old bucket
    shadows oid[] NOT NULL,              -- the table filled for each new bucket
    new_parent oid,
    log oid,
    log_sequence oid,
    name_key text NOT NULL,              -- random: the names of what the engine makes (reshard_object_name)
    catalog text[],                      -- what the checks saw (reshard_catalog_check)
    validate text[],                     -- foreign keys to validate after the cutover
    foreign_keys text[],                 -- then the parent's own, added again (attaching the partitions')
    analyze_parent boolean,              -- the old parent had planner statistics: the new one is analyzed
    shard_views boolean NOT NULL DEFAULT false, -- hide the rows leaving shards (reshard_shard_views)
    shard_options text[],                -- then, by old bucket: each foreign partition's options before
    hidden_keys oid[],                   -- and the foreign table here on the keys hidden on its shard
    server text,                         -- move: the foreign server the partition goes to (NULL: this server)
    phase text NOT NULL CHECK (phase IN ('setup', 'capture', 'copy', 'catch up', 'verify', 'cutover', 'finish', 'done',
                                         'undo', 'aborted')),
    rows_to_move bigint NOT NULL DEFAULT 0,
    rows_copied bigint NOT NULL DEFAULT 0,
    rows_verified bigint NOT NULL DEFAULT 0,
    sources_copied int NOT NULL DEFAULT 0,   -- how many of the sources the copy is done with
    changes_applied bigint NOT NULL DEFAULT 0,
    changes_waiting bigint,              -- logged, not yet applied, after the last round (NULL: not counted yet)
    cutover_attempts int NOT NULL DEFAULT 0,
    started timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    last_progress timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    backend_pid int NOT NULL DEFAULT pg_catalog.pg_backend_pid(),
    error text,
    made text[]                          -- what a routine made, not yet in reshard_state_cleanup (reshard_cleanup_record)
);
REVOKE ALL ON reshard_state FROM PUBLIC;

-- The engine executes the SQL text of a row (new_bucket_sql, foreign_keys,
-- ...) as the table's owner, drops the tables it names and derives names
-- from its name_key: no other role may write a row, nor read one.  Members
-- of pg_write_all_data may write every table and those of pg_read_all_data
-- read every table, privileges aside; row-level security without a policy
-- shows them no row and lets them write none (the owner and superusers
-- bypass it: the engine, and reshard_progress, read the table as its
-- owner).  A role with BYPASSRLS bypasses it too, and PostgreSQL advises
-- BYPASSRLS for the members of those roles where row-level security is
-- used: the trigger below refuses its writes, also when it is a
-- subscription's apply worker (the trigger fires always).
ALTER TABLE reshard_state ENABLE ROW LEVEL SECURITY;

CREATE FUNCTION reshard_state_guard() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        RAISE EXCEPTION 'only the resharding engine writes %', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'It executes what the table holds as the owner of the table resharded.',
                  HINT = 'Read reshard_progress; call reshard_abort or the resharding procedure again.';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$function$;
REVOKE ALL ON FUNCTION reshard_state_guard() FROM PUBLIC;

COMMENT ON FUNCTION reshard_state_guard() IS
'resharding: refuses a write to reshard_state by a role that has not the privileges of its owner (internal)';

-- (not named reshard_...: those are the names of what the engine makes)
CREATE TRIGGER only_the_engine_writes BEFORE INSERT OR UPDATE OR DELETE ON reshard_state
FOR EACH ROW EXECUTE FUNCTION reshard_state_guard();
ALTER TABLE reshard_state ENABLE ALWAYS TRIGGER only_the_engine_writes;

COMMENT ON TABLE reshard_state IS
'one row per resharding, as far as it got (internal; read reshard_progress)';
