-- rebalance with weights (docs/scaling-out.md, "Servers of different
-- sizes"): the moves of placement_plan(parent, servers, weights), made.
-- The table of test/engine_move_helpers.sql, 3 partitions here, spread
-- over here and a server (engine_move_server, of this cluster) by weight:
-- each side ends with its share, the table holds what it held (its
-- mirror), and only what the shares require moves.
\i test/engine_move_helpers.sql
-- (placement(): where each partition of em is)
CREATE FUNCTION pg_temp.placement_of_em() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(partition::text || ' ' || coalesce(server, 'here'), ', ' ORDER BY bucket)
    FROM partition_placement WHERE "table" = 'engine_move.em'::regclass
$$;

-- Here twice the server: 2 and 1; the highest bucket moves.
CALL rebalance('engine_move.em', ARRAY[NULL, 'engine_move_server']::name[], ARRAY[2, 1]);
SELECT pg_temp.placement_of_em(), pg_temp.differences() AS differences;
-- The server twice here: one more moves; called again, nothing.
CALL rebalance('engine_move.em', ARRAY[NULL, 'engine_move_server']::name[], ARRAY[1, 2]);
SELECT pg_temp.placement_of_em(), pg_temp.differences() AS differences;
CALL rebalance('engine_move.em', ARRAY[NULL, 'engine_move_server']::name[], ARRAY[1, 2]);
-- Weight 0 for the server: everything back here.
CALL rebalance('engine_move.em', ARRAY[NULL, 'engine_move_server']::name[], ARRAY[1, 0]);
SELECT pg_temp.placement_of_em(), pg_temp.differences() AS differences;
-- Nothing of the engine's left, here or there.
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
-- A bad weight is refused before anything moves.
\set VERBOSITY default
\set SHOW_CONTEXT never
CALL rebalance('engine_move.em', ARRAY[NULL, 'engine_move_server']::name[], ARRAY[1, -1]);
\set VERBOSITY terse
SELECT pg_temp.placement_of_em();

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
