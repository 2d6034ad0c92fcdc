-- src/sql/resharding/reshard_progress.sql
--	reshard_progress: how far each resharding is, for every session

-- The backend running a resharding holds a session lock that SQL cannot
-- take (advisory, objsubid 3, classid the table's OID): while pg_locks
-- shows it granted, that backend runs it; else it was interrupted.  A
-- security barrier: a reader's own functions in its WHERE see only the rows
-- of the tables it may read (else, cheap enough, they ran before the
-- privilege check, on every row of reshard_state).
CREATE VIEW reshard_progress WITH (security_barrier) AS
SELECT s.parent_name AS "table", s.operation, s.phase,
       s.rows_to_move, s.rows_copied, s.rows_verified,
       s.changes_applied, s.changes_waiting, s.cutover_attempts, s.started, s.last_progress,
       l.pid,
       l.pid IS NULL AND s.phase NOT IN ('done', 'aborted') AS interrupted,
       s.error, s.parent AS relid, s.bucket
FROM reshard_state s
LEFT JOIN pg_catalog.pg_locks l
       ON l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_catalog.pg_database
                                                    WHERE datname = pg_catalog.current_database())
      AND l.classid = s.parent AND l.objid = 0 AND l.objsubid = 3 AND l.granted
WHERE pg_catalog.has_table_privilege(s.parent, 'SELECT');
GRANT SELECT ON reshard_progress TO PUBLIC;

COMMENT ON VIEW reshard_progress IS
'each resharding of a table the current user may read: its phase, rows to move, copied and verified, changes applied and waiting, cutover attempts, times, the backend running it (NULL when interrupted), its last error, the table''s OID and the bucket it adds, removes or moves';
