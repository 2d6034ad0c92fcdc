-- sql/src/resharding/reshard_progress.sql
--	reshard_progress: how far each resharding is, for every session

CREATE VIEW reshard_progress AS
SELECT s.parent_name AS "table", s.operation, s.phase,
       s.rows_to_move, s.rows_copied, s.rows_verified,
       (SELECT c.reltuples::bigint FROM pg_catalog.pg_class c WHERE c.oid = s.log) AS changes_waiting,
       s.changes_applied, s.cutover_attempts, s.started, s.last_progress,
       CASE WHEN a.pid IS NOT NULL THEN s.backend_pid END AS pid,
       a.pid IS NULL AND s.phase <> 'done' AS interrupted,
       s.error
FROM reshard_state s
LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = s.backend_pid AND a.backend_start = s.backend_start
WHERE pg_catalog.has_table_privilege(s.parent, 'SELECT') OR s.phase = 'done';
GRANT SELECT ON reshard_progress TO PUBLIC;

COMMENT ON VIEW reshard_progress IS
'each resharding of a table the current user may read: its phase, rows to move, copied and verified, changes waiting, cutover attempts, times, the backend running it (NULL when interrupted)';
