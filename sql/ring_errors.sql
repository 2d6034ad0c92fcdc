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

-- Every other message of malformed text, each once: what the parser
-- expected, and where; a number for each kind of value.
SELECT pg_temp.error_of(format('SELECT %L::partition_ring', q)) FROM (VALUES
    ('{}'),
    ('{"p\u0061rt_power": 1}'),
    ('{"part_power'),
    ('{"part_power" 1}'),
    ('{"part_power": 1, "part_power": 2}'),
    ('{"part_power": 1 "replicas": 1}'),
    ('{"part_power": x}'),
    ('{"part_power": 2147483648}'),
    ('{"replicas": 1.5}'),
    ('{"seed": 1e3}'),
    ('{"seed": 9223372036854775808}'),
    ('{"nodes": 1}'),
    ('{"nodes": [1]}'),
    ('{"nodes": [{"id": 1 "zone": 1}]}'),
    ('{"nodes": [{"id": 1, "id": 2}]}'),
    ('{"nodes": [{"id": 1, "zone": 1, "weight": 1} {"id": 2}]}'),
    ('{"nodes": [{"id": "1"}]}'),
    ('{"nodes": [{"zone": 1e2}]}'),
    ('{"nodes": [{"region": -2147483649}]}'),
    ('{"nodes": [{"weight": 1.}]}'),
    ('{"assignment": 1}'),
    ('{"assignment": [1]}'),
    ('{"assignment": [[1 2]]}'),
    ('{"assignment": [[1.5]]}'),
    ('{"assignment": [[1], [1, 2]]}'),
    ('{"assignment": [[1] [2]]}')
) AS t(q);
SELECT pg_temp.error_of(format('SELECT %L::partition_ring',
    '{"nodes": [' || string_agg(format('{"id": %s, "zone": 0, "weight": 1}', i), ', ') || ']}'))
FROM generate_series(1, 65536) i;

-- Sizes and weights a ring's text cannot have, as ring_build refuses them.
SELECT pg_temp.error_of(format('SELECT %L::partition_ring', q)) FROM (VALUES
    ('{"part_power": 1, "replicas": 0, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": []}'),
    ('{"part_power": 24, "replicas": 5, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": []}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [], "assignment": []}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 7, "zone": 0, "weight": -1e999}], "assignment": [[7, 7]]}'),
    ('{"part_power": 1, "replicas": 1, "nodes": [{"id": 7, "zone": 0, "weight": -2.5e-7}], "assignment": [[7, 7]]}')
) AS t(q);

-- Weights as the messages print them.
SELECT pg_temp.error_of(q) FROM (VALUES
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, '-Infinity'::float8, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, '-0'::float8, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, -123456789.123, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_build(ARRAY[1, 2, 3], ARRAY[1, -4.9e-324, 1], ARRAY[1, 2, 3])$$),
    ($$SELECT ring_rebalance(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4),
                             ARRAY[1, 2, 3], ARRAY[1, 'NaN'::float8, 1], ARRAY[1, 2, 3])$$)
) AS t(q);

-- Malformed stored values (XX001), written around the checks by a
-- binary-coercible cast: every check of the binary form, on a ring of 3
-- nodes, part power 2 and 2 replicas (header at 0, nodes at 64, assignment
-- at 136, 152 bytes), changed and given the digest of its new bytes.
CREATE FUNCTION pg_temp.redigest(v bytea) RETURNS bytea LANGUAGE sql AS $$
    SELECT substr(v, 1, 8) || sha256(substr(v, 41)) || substr(v, 41)
$$;
CREATE FUNCTION pg_temp.put(v bytea, off int, b bytea) RETURNS bytea LANGUAGE sql AS $$
    SELECT overlay(v placing b from off + 1)
$$;
CREATE TEMP TABLE good AS SELECT partition_ring_send(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1],
    ARRAY[1, 2, 3], part_power => 2, replicas => 2)) AS b;
SELECT length(b) AS bytes, substr(b, 137, 16) AS assignment FROM good;
CREATE CAST (bytea AS partition_ring) WITHOUT FUNCTION;
SELECT what, pg_temp.error_of(format('SELECT ring_partition_nodes(%L::bytea::partition_ring, 0)', v))
FROM good, LATERAL (VALUES
    ('4 bytes', '\x50524e47'::bytea),
    ('format 3', pg_temp.put(b, 4, '\x03')),
    ('a byte more', pg_temp.redigest(b || '\x00'::bytea)),
    ('part power 25', pg_temp.redigest(pg_temp.put(b, 40, '\x19'))),
    ('no replicas', pg_temp.redigest(pg_temp.put(b, 44, '\x00'))),
    ('no nodes', pg_temp.redigest(pg_temp.put(b, 48, '\x00'))),
    ('70000 nodes', pg_temp.redigest(pg_temp.put(b, 48, '\x70110100'))),
    ('5 replicas of 2^24', pg_temp.redigest(pg_temp.put(pg_temp.put(b, 40, '\x18'), 44, '\x05'))),
    ('reserved field', pg_temp.redigest(pg_temp.put(b, 52, '\x01'))),
    ('reserved field of node 2', pg_temp.redigest(pg_temp.put(b, 64 + 48 + 12, '\x01'))),
    ('node ids 1, 1, 3', pg_temp.redigest(pg_temp.put(b, 88, '\x01'))),
    ('node ids 1, 0, 3', pg_temp.redigest(pg_temp.put(b, 88, '\x00'))),
    ('weight NaN', pg_temp.redigest(pg_temp.put(b, 80, '\x000000000000f87f'))),
    ('weight -infinity', pg_temp.redigest(pg_temp.put(b, 104, '\x000000000000f0ff'))),
    ('weight -0', pg_temp.redigest(pg_temp.put(b, 80, '\x0000000000000080'))),
    ('node index 5', pg_temp.redigest(pg_temp.put(b, 136 + 2, '\x05'))),
    ('two replicas on one node', pg_temp.redigest(pg_temp.put(b, 144 + 2, substr(b, 136 + 3, 2))))
) AS t(what, v);
DROP CAST (bytea AS partition_ring);

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
