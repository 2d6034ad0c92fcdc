-- A move to a server, interrupted (issue 43, items 7 and 8;
-- docs/resharding-engine.md, "Moving a partition"): from the setup to the
-- cutover, the table the move made on the server refuses direct writes
-- (DELETE, INSERT, UPDATE, TRUNCATE) with a clear error, while the move's
-- own writes pass, and the table equals its mirror after the move, a plain
-- table again; a partition dropped, or detached, while its move waits is
-- undone by reshard_abort or by the next call, which say what happened, and
-- leave nothing of the engine here or on the server; cut over and not
-- finished, a move of the partition elsewhere is refused; a cutover that
-- renamed the table a partition leaves on its server and did not commit
-- here is undone, or done again, whole, and so is one whose renamed name
-- another table took; a transaction on that table there holds the cutover
-- back, and the error says so.
\i test/engine_move_helpers.sql
SET client_min_messages = notice;
-- Direct writes on the server's table, between the copy and the cutover.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('verify');
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('cutover');
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT dblink_exec('engine_move_server', 'DELETE FROM engine_move.em_1 WHERE id IN (SELECT id FROM engine_move.em_1 LIMIT 5)');
SELECT dblink_exec('engine_move_server', 'INSERT INTO engine_move.em_1 VALUES (-1, ''phantom'', 0)');
SELECT dblink_exec('engine_move_server', 'UPDATE engine_move.em_1 SET v = ''changed''');
SELECT dblink_exec('engine_move_server', 'TRUNCATE engine_move.em_1');
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('done');
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();
SELECT pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS differences_there;
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects() AS x WHERE x LIKE '%reshard%' OR x LIKE 'trigger%';
-- (a plain table again: written directly there, and through the parent)
SELECT dblink_exec('engine_move_server', 'UPDATE engine_move.em_1 SET v = v');
SELECT pg_temp.write_both() > 0 AS written;
SELECT * FROM pg_temp.differences();
-- Back here, for what follows.
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement();

-- Cut over and not finished (a call cut short in its finish): a move of
-- the partition elsewhere is refused, as before the cutover; the same
-- call finishes it.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('finish');
CALL partition_move('engine_move.em_1', NULL);
SELECT phase FROM reshard_progress;
CALL partition_move('engine_move.em_1', 'engine_move_server');
SELECT pg_temp.placement();
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement();

-- em_1 dropped while its move waits for its cutover: reshard_abort undoes
-- it, and says so.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('cutover');
SELECT count(*) > 0 AS objects_there FROM pg_temp.remote_objects() AS x WHERE x LIKE '%reshard%';
DELETE FROM engine_move.mirror m WHERE EXISTS (SELECT FROM engine_move.em_1 e WHERE e.id = m.id);
DROP TABLE engine_move.em_1;
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
CREATE TABLE engine_move.em_1 PARTITION OF engine_move.em FOR VALUES WITH (MODULUS 3, REMAINDER 1);

-- em_2 detached while its move waits in the catch-up: reshard_abort says so.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_2', 'engine_move_server');
CALL pg_temp.step_to('catch up');
ALTER TABLE engine_move.em DETACH PARTITION engine_move.em_2;
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
SELECT count(*) AS triggers_left FROM pg_trigger WHERE tgrelid = 'engine_move.em_2'::regclass;
ALTER TABLE engine_move.em ATTACH PARTITION engine_move.em_2 FOR VALUES WITH (MODULUS 3, REMAINDER 2);

-- em_1 dropped (and made again) while its move waits in the verification:
-- the next call, of another partition, undoes it, says so, and moves its own.
INSERT INTO engine_move.em SELECT i, 'w' || i, 1 FROM generate_series(5001, 5300) AS i;
INSERT INTO engine_move.mirror SELECT i, 'w' || i, 1 FROM generate_series(5001, 5300) AS i;
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('verify');
DELETE FROM engine_move.mirror m WHERE EXISTS (SELECT FROM engine_move.em_1 e WHERE e.id = m.id);
DROP TABLE engine_move.em_1;
CREATE TABLE engine_move.em_1 PARTITION OF engine_move.em FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CALL partition_move('engine_move.em_0', 'engine_move_server');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
-- Later moves work, and the table equals its mirror.
INSERT INTO engine_move.em SELECT i, 'w' || i, 1 FROM generate_series(5301, 5600) AS i;
INSERT INTO engine_move.mirror SELECT i, 'w' || i, 1 FROM generate_series(5301, 5600) AS i;
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL partition_move('engine_move.em_0', NULL);
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();

-- em_1 moving back here, its cutover's COMMIT done on the server and not
-- here (its table there renamed away, the move still waiting for its
-- cutover: the rename made by hand here, as the cutover makes it).  Through
-- the parent, em_1 is read and written as before (its foreign table reads
-- a view bound to the table there); reshard_abort gives the table its name
-- back (and says so when another table took it meanwhile); and a call that
-- finishes the move renames it once.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('cutover');
SELECT reshard_object_name(s, 'gone', s.partition) AS gone FROM pg_temp.state() AS s \gset
SELECT dblink_exec('engine_move_server', format('ALTER TABLE engine_move.em_1 RENAME TO %I', :'gone'));
INSERT INTO engine_move.em VALUES (pg_temp.id_in(1, 6001), 'renamed there', 1);
INSERT INTO engine_move.mirror VALUES (pg_temp.id_in(1, 6001), 'renamed there', 1);
UPDATE engine_move.em SET v = 'updated' WHERE id = pg_temp.id_in(1, 6001);
UPDATE engine_move.mirror SET v = 'updated' WHERE id = pg_temp.id_in(1, 6001);
SELECT pg_temp.differences() AS differences;
SELECT dblink_exec('engine_move_server', 'CREATE TABLE engine_move.em_1 (id bigint)');
CALL reshard_abort('engine_move.em');
SELECT dblink_exec('engine_move_server', 'DROP TABLE engine_move.em_1');
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.remote_objects() AS x WHERE x LIKE '%reshard%' OR x LIKE 'table %';
SELECT pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS differences_there;
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('cutover');
SELECT reshard_object_name(s, 'gone', s.partition) AS gone FROM pg_temp.state() AS s \gset
SELECT dblink_exec('engine_move_server', format('ALTER TABLE engine_move.em_1 RENAME TO %I', :'gone'));
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();
SELECT * FROM pg_temp.remote_objects() AS x WHERE x LIKE '%reshard%' OR x LIKE 'table %';

-- The renamed table's name taken there by another table before the
-- cutover (its name is in the rename's function, which anybody may read):
-- the cutover fails (duplicate_table) and the move is undone, renaming
-- nothing else, the table there keeps its name and rows; once that table is
-- gone, the move called again ends.  (A move to where the partition
-- is already is refused, naming where.)
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('cutover');
SELECT reshard_object_name(s, 'gone', s.partition) AS gone FROM pg_temp.state() AS s \gset
SELECT dblink_exec('engine_move_server', format('CREATE TABLE engine_move.%I (id bigint)', :'gone'));
\set VERBOSITY sqlstate
CALL partition_move('engine_move.em_1', NULL);
\set VERBOSITY terse
SELECT phase FROM reshard_progress;
SELECT n AS em_1_rows_there FROM dblink('engine_move_server', 'SELECT count(*) FROM engine_move.em_1') AS t(n bigint);
SELECT dblink_exec('engine_move_server', format('DROP TABLE engine_move.%I', :'gone'));
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();
SELECT * FROM pg_temp.remote_objects() AS x WHERE x LIKE '%reshard%' OR x LIKE 'table %';

-- A transaction on the server that reads em_1's table there holds back the
-- cutover of its move back here (the rename waits for it, within the
-- budget), until the attempts run out; called again once it ended, the
-- move ends.
CALL partition_move('engine_move.em_1', 'engine_move_server');
SELECT dblink_connect('reader_there', 'engine_move_server');
SELECT dblink_exec('reader_there', 'BEGIN');
SELECT n > 0 AS read_there FROM dblink('reader_there', 'SELECT count(*) FROM engine_move.em_1') AS t(n bigint);
\set VERBOSITY default
CALL partition_move('engine_move.em_1', NULL, cutover_budget => '100 ms', cutover_attempts => 2);
\set VERBOSITY terse
SELECT phase, cutover_attempts FROM reshard_progress;
SELECT dblink_exec('reader_there', 'COMMIT');
SELECT dblink_disconnect('reader_there');
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
