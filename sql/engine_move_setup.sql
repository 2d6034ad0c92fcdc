-- Phase setup of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_setup in src/reshard_steps.c): what takes the
-- partition's place is made, and nothing else.  To a server: the table
-- there, under the partition's schema and name, empty, marked as this
-- move's, and a foreign table on it here; back here: a table here, and on
-- the server the objects that will refuse direct writes to the partition's
-- table (not yet armed).  Both: the change log and its sequence, the new
-- parent (unused by a move), the guards of the table filled.  The table is
-- unchanged, its writes not yet logged.
\i test/engine_move_helpers.sql
CREATE TEMP TABLE partitions_before AS
SELECT c.relname, c.oid, c.relkind FROM pg_class c WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^em(_[0-9]+)?$';

-- To a server.  The plan: the state row, in phase setup, the layout kept
-- (sources: the moved partition only); nothing made, here or there.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
SELECT phase, operation, bucket, old_buckets, new_buckets, server,
       array(SELECT coalesce(u.t::regclass::text, 'NULL') FROM unnest(sources) AS u(t)) AS sources,
       shadows = '{}' AS no_shadows, new_parent IS NULL AS no_new_parent, log IS NULL AS no_log,
       shard_options IS NULL AS no_shard_options
FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();

-- One step: phase setup, then phase capture.
CALL reshard_step('engine_move.em');
SELECT phase, sources_copied, rows_copied, rows_to_move, changes_applied FROM pg_temp.state();
-- Here: a foreign table for bucket 1 (the shadow), the log and its
-- sequence, the guards on the log and the guard on the shadow (a foreign
-- table has no TRUNCATE trigger); no new parent (a move rebuilds nothing).
-- No trigger on em_1.
SELECT * FROM pg_temp.engine_objects();
SELECT u.i - 1 AS bucket, pg_temp.normalized(c.relname::text) AS filled, c.relkind,
       v.srvname AS server, f.ftoptions AS options
FROM unnest((pg_temp.state()).shadows) WITH ORDINALITY AS u(t, i) JOIN pg_class c ON c.oid = u.t
JOIN pg_foreign_table f ON f.ftrelid = c.oid JOIN pg_foreign_server v ON v.oid = f.ftserver ORDER BY u.i;
-- The foreign table has the partition's columns, defaults and CHECK.
SELECT (SELECT string_agg(format('%s %s%s%s', attname, format_type(atttypid, atttypmod), CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END,
                                 coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')), ', ' ORDER BY attnum)
        FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE attrelid = s.shadows[2] AND attnum > 0 AND NOT attisdropped) AS columns,
       (SELECT string_agg(format('%s %s', conname, pg_get_constraintdef(oid)), ', ') FROM pg_constraint
        WHERE conrelid = s.shadows[2] AND contype = 'c') AS checks
FROM pg_temp.state() AS s;
SELECT new_parent IS NULL AS no_new_parent FROM pg_temp.state();
-- The log's rows are of the shadow's row type (the partition's columns).
SELECT pg_temp.normalized(l.relname::text) AS log,
       (SELECT atttypid FROM pg_attribute WHERE attrelid = l.oid AND attname = 'new_row')
       = (SELECT reltype FROM pg_class WHERE oid = s.shadows[2]) AS of_the_shadows_row_type, pg_temp.rows_in(l.oid) AS entries,
       pg_temp.normalized(q.relname::text) AS sequence
FROM pg_temp.state() s JOIN pg_class l ON l.oid = s.log JOIN pg_class q ON q.oid = s.log_sequence;
-- There: the table em_1 of the partition's columns (its NOT NULL), empty,
-- with the comment that marks it as this move's, no privilege for any
-- other role; nothing else.
SELECT * FROM pg_temp.remote_objects();
SELECT * FROM pg_temp.remote($$
    SELECT string_agg(format('%s %s%s', attname, format_type(atttypid, atttypmod), CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END),
                      ', ' ORDER BY attnum)
    FROM pg_attribute WHERE attrelid = 'engine_move.em_1'::regclass AND attnum > 0 AND NOT attisdropped
$$) AS remote_columns;
SELECT count(*) AS remote_rows FROM pg_temp.remote_rows();
-- The guards: nobody writes to the foreign table here.
SELECT pg_temp.sqlstate_of(format('INSERT INTO %s VALUES (-1, %L, 0)', (pg_temp.state()).shadows[2]::regclass, 'x')) AS insert_into_shadow;
SELECT count(*) AS remote_rows FROM pg_temp.remote_rows();

-- The table is unchanged: the same OIDs and kinds, em_1 here; a write to
-- it is not logged (the capture has not begun) and does not reach the
-- server.
TRUNCATE pg_temp.writes;
SELECT pg_temp.write_both() AS written_to_em_1;
SELECT pg_temp.differences() AS differences,
       pg_temp.rows_in((pg_temp.state()).log) AS entries_logged,
       (SELECT count(*) FROM partitions_before b
        WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = b.oid AND c.relname = b.relname AND c.relkind = b.relkind))
           AS partitions_changed,
       pg_temp.placement() AS em_1,
       (SELECT count(*) FROM pg_temp.remote_rows()) AS remote_rows;
CALL reshard_abort('engine_move.em');

-- Back here, from the server it was moved to.
CALL partition_move('engine_move.em_1', 'engine_move_server');
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences;
TRUNCATE partitions_before;
INSERT INTO partitions_before
SELECT c.relname, c.oid, c.relkind FROM pg_class c WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^em(_[0-9]+)?$';
CREATE TEMP TABLE remote_before AS SELECT * FROM pg_temp.remote_objects() AS o(object);
SELECT * FROM remote_before;
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
-- The state: no server to go to; the foreign partition's options kept, to
-- be pointed back at its table (shard_options, by bucket).
SELECT phase, operation, bucket, server IS NULL AS here, shard_views, shard_options FROM pg_temp.state();

CALL reshard_step('engine_move.em');
SELECT phase, sources_copied, rows_copied, rows_to_move, changes_applied FROM pg_temp.state();
-- Here: a table for bucket 1 (the shadow) with the partition's columns,
-- defaults and CHECK, of the parent's access method (its indexes come
-- after the copy); the log and its sequence; the guards on the log and on
-- the shadow.  No trigger on em_1.
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.normalized(c.relname::text) AS filled, c.relkind, a.amname AS access_method, c.relpersistence,
       (SELECT string_agg(format('%s %s%s%s', attname, format_type(atttypid, atttypmod), CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END,
                                 coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')), ', ' ORDER BY attnum)
        FROM pg_attribute t LEFT JOIN pg_attrdef d ON d.adrelid = t.attrelid AND d.adnum = t.attnum
        WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped) AS columns,
       (SELECT string_agg(format('%s %s', conname, pg_get_constraintdef(k.oid)), ', ') FROM pg_constraint k
        WHERE conrelid = c.oid AND contype = 'c') AS checks,
       pg_temp.rows_in(c.oid) AS rows
FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = (pg_temp.state()).shadows[2];
SELECT pg_temp.sqlstate_of(format('INSERT INTO %s VALUES (-1, %L, 0)', (pg_temp.state()).shadows[2]::regclass, 'x')) AS insert_into_shadow,
       pg_temp.sqlstate_of(format('TRUNCATE %s', (pg_temp.state()).shadows[2]::regclass)) AS truncate_shadow;
-- There: next to em_1, what will refuse direct writes to it and let
-- through those that come through this server: a function that marks a
-- transaction, one that refuses a write not marked, views of em_1 that
-- mark (all, shown, incoming) and a table of hidden keys with its index
-- (reshard_shard_views' objects; a move hides no key); no trigger on em_1
-- yet (the first copy step arms them).
SELECT made FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x(made) ORDER BY made COLLATE "C";
SELECT object AS gone FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects();
-- em_1 still reads and writes its table there: a write through the table
-- lands there, not logged; a direct write there is not refused yet.
SELECT f.ftoptions AS em_1_options FROM pg_foreign_table f WHERE f.ftrelid = 'engine_move.em_1'::regclass;
TRUNCATE pg_temp.writes;
SELECT pg_temp.write_both() AS written_to_em_1;
SELECT pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences,
       pg_temp.rows_in((pg_temp.state()).log) AS entries_logged,
       (SELECT count(*) FROM partitions_before b
        WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = b.oid AND c.relname = b.relname AND c.relkind = b.relkind))
           AS partitions_changed,
       pg_temp.placement() AS em_1;
SELECT pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'BEGIN; DELETE FROM engine_move.em_1 WHERE id = (SELECT min(id) FROM engine_move.em_1); ROLLBACK')$$)
    AS direct_write_there;
CALL reshard_abort('engine_move.em');

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
