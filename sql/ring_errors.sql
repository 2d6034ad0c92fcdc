--
-- Partition ring: every error, with its SQLSTATE.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

\i test/regress_helpers.sql

-- Arguments of ring_build (22023), sizes (54000).
SELECT pg_temp.error_of(q) FROM (VALUES
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 0)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 25)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => -3)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], replicas => 0)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], replicas => 4)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 0], ARRAY[1, 2, 3], replicas => 3)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 'NaN'::float8, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 'Infinity'::float8, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, -0.5, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[0, 0, 0], ARRAY[1, 2, 3], replicas => 1)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 2], ARRAY[1, 1, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], ARRAY[1])$$),
    ($$SELECT ring_build(ARRAY[1, NULL, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, NULL], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, NULL, 3])$$),
    ($$SELECT ring_build(ARRAY[[1, 2], [3, 4]], ARRAY[1, 1, 1, 1], ARRAY[1, 2, 3, 4])$$),
    ($$SELECT ring_build('{}', '{}', '{}', replicas => 1)$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3, 4, 5], ARRAY[1, 1, 1, 1, 1], ARRAY[1, 2, 3, 4, 5],
                         part_power => 24, replicas => 5)$$),
    ($$SELECT ring_build(array_agg(i), array_agg(1.0), array_agg(i)) FROM generate_series(1, 70000) i$$)
) AS t(q);

-- ring_rebalance checks the same things.
SELECT pg_temp.error_of(q) FROM (VALUES
    ($$SELECT ring_rebalance(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                             ARRAY[1, 2], ARRAY[1, 1], ARRAY[1, 2])$$),
    ($$SELECT ring_rebalance(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                             ARRAY[1, 2, 3], ARRAY[1, 1, -1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_rebalance(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                             ARRAY[1, 1, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3])$$)
) AS t(q);

-- Lookups and inspection.
SELECT pg_temp.error_of(q) FROM (VALUES
    ($$SELECT ring_partition_nodes(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4), 16)$$),
    ($$SELECT ring_partition_nodes(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4), -1)$$),
    ($$SELECT ring_dispersion(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4), 'rack')$$),
    ($$SELECT * FROM ring_moves(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                                ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 5))$$),
    ($$SELECT * FROM ring_moves(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                                ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4, replicas => 2))$$)
) AS t(q);

-- Malformed text (22P02).  The valid one first, for reference.
SELECT pg_temp.error_of(format('SELECT %L::partition_ring', q)) FROM (VALUES
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 1]]}'),
    (''),
    ('{"part_power": 1}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 1]]} trailing'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 1]], "extra": 1}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 2]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1]]}'),
    ('{"part_power": 1, "replicas": 2, "nodes": [{"id": 1, "zone": 0, "weight": 1}, {"id": 2, "zone": 0, "weight": 1}], "assignment": [[1, 2], [1, 1]]}'),
    ('{"part_power": 1, "replicas": 2, "nodes": [{"id": 1, "zone": 0, "weight": 1}, {"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 1], [1, 1]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": -1}], "assignment": [[1, 1]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 0}], "assignment": [[1, 1]]}'),
    ('{"part_power": 1, "replicas": 2, "nodes": [{"id": 1, "zone": 0, "weight": 1}, {"id": 2, "zone": 0, "weight": 0}], "assignment": [[1, 2], [2, 1]]}'),
    ('{"part_power": 0, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0}], "assignment": [[1, 1]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1, "port": 6000}], "assignment": [[1, 1]]}')
) AS t(q);

-- Malformed binary (22P03): bytes changed after the digest was computed (the
-- zone of the first node), a value cut short, a wrong magic number.
CREATE TEMP TABLE bad_rings (ring partition_ring);
\copy (SELECT set_byte(partition_ring_send(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4)), 70, 7)) TO 'results/ring_errors_bad.bin' WITH (FORMAT binary)
\copy bad_rings FROM 'results/ring_errors_bad.bin' WITH (FORMAT binary)
\copy (SELECT substr(partition_ring_send(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4)), 1, 30)) TO 'results/ring_errors_short.bin' WITH (FORMAT binary)
\copy bad_rings FROM 'results/ring_errors_short.bin' WITH (FORMAT binary)
\copy (SELECT '\x58524e4701000000'::bytea || substr(partition_ring_send(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4)), 9)) TO 'results/ring_errors_magic.bin' WITH (FORMAT binary)
\copy bad_rings FROM 'results/ring_errors_magic.bin' WITH (FORMAT binary)
SELECT count(*) AS accepted FROM bad_rings;

-- A long build answers statement_timeout (and query cancel) promptly: the
-- builder calls CHECK_FOR_INTERRUPTS as it goes.
SET statement_timeout = '100ms';
SELECT ring_build(array_agg(i), array_agg(1.0), array_agg(i % 5), part_power => 24, replicas => 3)
FROM generate_series(1, 1000) i;
RESET statement_timeout;
