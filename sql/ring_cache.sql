--
-- The partition ring lookup cache cannot be fooled: two different rings
-- whose 1.0 encodings (format 1) have the same size and 64-bit fingerprint,
-- which 1.0's cache took for the same ring, are told apart in one session.
-- The pair was made by test/tools/ring_collide.py (ring B is ring A with the
-- replicas of partition 4 swapped and its seed solved for); the expected
-- digests are that tool's (Python's hashlib), the expected nodes are in the
-- rings' text.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;
RESET jit;
\i test/regress_helpers.sql

CREATE TEMP TABLE crafted (name text, text_form text, format1 bytea, sha256 text);
INSERT INTO crafted VALUES
('A', '{"part_power": 3, "replicas": 2, "seed": 5, "nodes": [{"id": 1, "zone": 1, "region": 0, "weight": 1.0}, {"id": 2, "zone": 1, "region": 0, "weight": 1.0}, {"id": 3, "zone": 2, "region": 0, "weight": 1.0}, {"id": 4, "zone": 2, "region": 0, "weight": 1.0}], "assignment": [[1, 3, 2, 4, 1, 3, 2, 4], [3, 1, 4, 2, 4, 2, 3, 1]]}',
 '\x50524e470100000019f9cd3f3a73e16303000000020000000400000000000000050000000000000001000000010000000000000000000000000000000000f03f02000000010000000000000000000000000000000000f03f03000000020000000000000000000000000000000000f03f04000000020000000000000000000000000000000000f03f0000020001000300000002000100030002000000030001000300010002000000',
 '40b5bbbf435c9a96c227d3d1763547a3ada15a56f229f13d1b7034d120583fda'),
('B', '{"part_power": 3, "replicas": 2, "seed": -8109271570455271114, "nodes": [{"id": 1, "zone": 1, "region": 0, "weight": 1.0}, {"id": 2, "zone": 1, "region": 0, "weight": 1.0}, {"id": 3, "zone": 2, "region": 0, "weight": 1.0}, {"id": 4, "zone": 2, "region": 0, "weight": 1.0}], "assignment": [[1, 3, 2, 4, 4, 3, 2, 4], [3, 1, 4, 2, 1, 2, 3, 1]]}',
 '\x50524e470100000019f9cd3f3a73e1630300000002000000040000000000000036e9d6af7814768f01000000010000000000000000000000000000000000f03f02000000010000000000000000000000000000000000f03f03000000020000000000000000000000000000000000f03f04000000020000000000000000000000000000000000f03f0000020001000300030002000100030002000000030001000000010002000000',
 '86979cfd08cb5d30fae8f3c1f6a1a377003f4695b8ef97e940eb3dfe24ccb877');

-- Same size and the same fingerprint (bytes 8..15) in format 1, different rings.
SELECT count(DISTINCT length(format1)) AS sizes, count(DISTINCT substr(format1, 9, 8)) AS fingerprints,
       count(DISTINCT format1) AS values
FROM crafted;

-- Read from text, in one session, one after the other and in one query:
-- each ring answers for itself (partition 4: A has 1 then 4, B 4 then 1),
-- and its digest is the SHA-256 the tool computed.
SELECT name, ring_partition_nodes(text_form::partition_ring, 4) AS partition_4,
       (ring_info(text_form::partition_ring)).fingerprint = sha256 AS digest_as_computed
FROM crafted ORDER BY name;
SELECT name, ring_partition_nodes(text_form::partition_ring, 4) AS partition_4
FROM crafted ORDER BY name DESC;
SELECT name, ring_nodes(text_form::partition_ring, (4::bigint << 61)) AS key_in_partition_4
FROM crafted, generate_series(1, 3) ORDER BY 1;

-- The format 1 values as 1.0 stored them (a binary-coercible cast writes
-- the bytes as they are, as 1.0's server did): read again, each found by
-- the SHA-256 of all its bytes, never by the fingerprint.
CREATE CAST (bytea AS partition_ring) WITHOUT FUNCTION;
CREATE TEMP TABLE stored_by_1_0 AS SELECT name, format1::partition_ring AS ring FROM crafted;
SELECT name, substr(partition_ring_send(ring), 1, 8) AS format_1_header,
       ring_partition_nodes(ring, 4) AS partition_4,
       (ring_info(ring)).fingerprint = sha256 AS same_digest_as_format_2,
       ring::text = text_form::partition_ring::text AS same_text
FROM stored_by_1_0 JOIN crafted USING (name) ORDER BY name;
SELECT s.name, count(*) AS lookups,
       count(*) FILTER (WHERE ring_nodes(s.ring, (x::bigint << 61) + 12345)
                              <> ring_partition_nodes(c.text_form::partition_ring, x)) AS wrong
FROM stored_by_1_0 s JOIN crafted c USING (name), generate_series(0, 7) AS x, generate_series(1, 20) AS rep
GROUP BY s.name ORDER BY s.name;

-- A format 1 value whose bytes no longer match its fingerprint is refused
-- (data corrupted), and so is a format 2 value whose digest does not match
-- (of a ring not yet decoded: a format 2 value is found by the digest in
-- its header, which every input path checks; bytes written around them, as
-- this cast does, are checked when they are decoded).
SELECT pg_temp.error_of($$SELECT ring_partition_nodes(
    (SELECT set_byte(format1, 160, 1)::partition_ring FROM crafted WHERE name = 'A'), 0)$$);
SELECT pg_temp.error_of($$SELECT ring_partition_nodes(
    set_byte(partition_ring_send(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3],
                                            part_power => 4, seed => 424242)), 100, 9)::partition_ring, 0)$$);
DROP CAST (bytea AS partition_ring);

-- Binary input (COPY BINARY, or a client's binary parameter) of a format 1
-- value checks it and stores it in format 2.
\copy (SELECT name, format1 FROM crafted) TO 'results/ring_cache_format1.bin' WITH (FORMAT binary)
CREATE TEMP TABLE received (name text, ring partition_ring);
\copy received FROM 'results/ring_cache_format1.bin' WITH (FORMAT binary)
SELECT name, substr(partition_ring_send(ring), 1, 8) AS header, ring_partition_nodes(ring, 4) AS partition_4,
       substr(partition_ring_send(ring), 9, 32) = decode(sha256, 'hex') AS digest_as_computed
FROM received JOIN crafted USING (name) ORDER BY name;

--
-- Memory: one decode per ring per query, whatever the query's shape.  Each
-- decode says so at DEBUG1 ("decoded a ring"); a ring is decoded into the
-- cache once and then shared by every call in the query.
--
CREATE TEMP TABLE fleet AS
SELECT ring_build(array_agg(i), array_agg(1 + i % 3), array_agg(i % 5), part_power => 12, replicas => 3) AS ring
FROM generate_series(1, 40) AS i;
SET jit = off;
SET client_min_messages = debug1;
-- With room for none (subsetting.ring_cache_size 0): eight calls in one row,
-- and lookups in every row of a query, decode the ring once per query, and
-- the query's end frees it.
SET subsetting.ring_cache_size = 0;
SELECT ring_dispersion(ring, 'zone') = ring_dispersion(ring, 'zone') AS same,
       ring_dispersion(ring, 'region') + ring_dispersion(ring, 'node') + ring_dispersion(ring, 'zone')
       + ring_dispersion(ring, 'region') + ring_dispersion(ring, 'node') + ring_dispersion(ring, 'zone') >= 0 AS eight_calls
FROM fleet;
SELECT (ring_info(ring)).part_power, (ring_info(ring)).nodes, (ring_info(ring)).zones FROM fleet;
SELECT count(*) AS rows, count(DISTINCT ring_nodes(ring, k)) > 1 AS spread,
       bool_and(ring_nodes(ring, k) = ring_partition_nodes(ring, ring_partition(ring, k))) AS agree
FROM fleet, (SELECT (hashint4(i)::bigint << 32) # hashint4(-i) AS k FROM generate_series(1, 3000) AS i) keys;
SELECT count(*) AS rings_kept_after FROM pg_backend_memory_contexts WHERE name = 'decoded partition ring';
-- With room: the first query decodes it, later queries find it.
RESET subsetting.ring_cache_size;
SELECT ring_partition_nodes(ring, 7) = ring_partition_nodes(ring, 7) AS first FROM fleet;
SELECT ring_partition_nodes(ring, 7) = ring_partition_nodes(ring, 7) AS again FROM fleet;
SELECT length(ring::text) > 0 AS text_form, (SELECT count(*) FROM ring_moves(ring, ring)) AS moves,
       (SELECT count(*) FROM ring_node_stats(ring)) AS nodes FROM fleet;
RESET client_min_messages;
RESET jit;
