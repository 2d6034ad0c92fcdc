-- A DELETE through a table while a partition of it moves from a server
-- (docs/resharding-engine.md, "Moving a partition"): PostgreSQL (15 and
-- 18, as tried) fails a DELETE that it does not send whole to the servers
-- when some foreign partitions of the table have row triggers on DELETE
-- and others not ("wholerow is NULL"); the capture's are on the partition
-- that moves, so from the capture to the cutover the engine puts a
-- whole-row trigger on the other foreign partitions.  Such a DELETE of a
-- row of the partition that moves and of one of another foreign partition
-- goes through, in the copy and after the cutover; the whole-row triggers
-- go at the cutover, or with the undo.
\i test/engine_move_helpers.sql
SET client_min_messages = warning;
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL partition_move('engine_move.em_2', 'engine_move_server');
SET client_min_messages = notice;
-- (current_setting: a condition PostgreSQL does not send to the servers)
CREATE FUNCTION pg_temp.delete_two() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    deleted bigint;
BEGIN
    PERFORM set_config('test.ids', format('%s,%s', (SELECT min(id) FROM engine_move.em_1),
                                          (SELECT min(id) FROM engine_move.em_2)), false);
    DELETE FROM engine_move.em WHERE id = ANY (string_to_array(current_setting('test.ids'), ',')::bigint[]);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    DELETE FROM engine_move.mirror WHERE id = ANY (string_to_array(current_setting('test.ids'), ',')::bigint[]);
    RETURN deleted;
END
$$;

-- Undone.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('copy');
SELECT * FROM pg_temp.engine_objects() AS x WHERE x LIKE 'trigger%';
SELECT pg_temp.delete_two() AS deleted;
CALL reshard_abort('engine_move.em');
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();

-- Done.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('copy');
SELECT pg_temp.delete_two() AS deleted;
CALL pg_temp.step_to('finish');
SELECT * FROM pg_temp.engine_objects() AS x WHERE x LIKE 'trigger%';
SELECT pg_temp.delete_two() AS deleted;
CALL pg_temp.step_to('done');
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.placement();
SELECT * FROM pg_temp.differences();

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
