--
-- Partition ring lookups as applications hold their keys: text, bytea and
-- uuid keys (through xxh3_64), handoff nodes (against OpenStack Swift's
-- get_more_nodes), and batches of keys; their errors.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

\i test/regress_helpers.sql

-- 12 nodes, 4 zones in 2 regions (zone i % 4, region i % 2), part power 8;
-- and 100 nodes in 20 zones of 4 regions, part power 16, weights 1 to 7.
CREATE TABLE lookup_rings (name text PRIMARY KEY, ring partition_ring);
INSERT INTO lookup_rings
SELECT 'small', ring_build(array_agg(i), array_agg(1.0::float8), array_agg(i % 4), array_agg(i % 2),
                           part_power => 8, replicas => 3)
FROM generate_series(1, 12) AS i;
INSERT INTO lookup_rings
SELECT 'large', ring_build(array_agg(i), array_agg((1 + i % 7)::float8), array_agg(i % 10), array_agg(i % 4),
                           part_power => 16, replicas => 3, seed => 11)
FROM generate_series(1, 100) AS i;

--
-- Text, bytea and uuid keys: the partition of the key's xxh3_64.
--

-- Partitions computed by python3-xxhash: xxh3_64(key) >> 56.
SELECT k, ring_partition(ring, k) AS partition
FROM lookup_rings, unnest(ARRAY['abc', 'user42@example.com', '']) AS k
WHERE name = 'small';
SELECT ring_partition(ring, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid) AS uuid_partition,
       ring_partition(ring, '\xdeadbeef'::bytea) AS bytea_partition
FROM lookup_rings WHERE name = 'small';

-- On random keys, each lookup equals the bigint lookup of xxh3_64(key), and
-- the partition is the top bits of the hash, taken here by shifting.
SELECT count(*) AS keys,
       count(*) FILTER (WHERE ring_partition(ring, t) <> ring_partition(ring, xxh3_64(t))
                           OR ring_partition(ring, t) <> (xxh3_64(t) >> 48) & 65535
                           OR ring_nodes(ring, t) <> ring_nodes(ring, xxh3_64(t))) AS text_differences,
       count(*) FILTER (WHERE ring_partition(ring, b) <> (xxh3_64(b) >> 48) & 65535
                           OR ring_nodes(ring, b) <> ring_nodes(ring, xxh3_64(b))) AS bytea_differences,
       count(*) FILTER (WHERE ring_partition(ring, u) <> (xxh3_64(u) >> 48) & 65535
                           OR ring_nodes(ring, u) <> ring_nodes(ring, xxh3_64(u))) AS uuid_differences
FROM lookup_rings,
     (SELECT md5(random()::text) || i AS t, decode(md5(random()::text), 'hex') AS b,
             gen_random_uuid() AS u
      FROM generate_series(1, 1000) AS i) AS keys
WHERE name = 'large';

-- An untyped literal resolves to the text overload: a number must be a
-- number (or be cast) to be looked up as a bigint.
SELECT ring_nodes(ring, '42') = ring_nodes(ring, '42'::text) AS literal_is_text,
       ring_nodes(ring, 42) = ring_nodes(ring, '42'::bigint) AS number_is_bigint
FROM lookup_rings WHERE name = 'small';

--
-- Handoff nodes.
--

-- Golden lists from OpenStack Swift 2.30.1's Ring.get_more_nodes on the same
-- assignment (test/tools/swift_handoff.py), every node its own server.
SELECT p, ring_partition_nodes(ring, p) AS primaries,
       ring_partition_handoff_nodes(ring, p, 20) AS handoffs,
       ring_partition_handoff_nodes(ring, p, 20) = swift AS same_as_swift,
       ring_partition_handoff_nodes(ring, p) = swift[1:3] AS default_count_is_3
FROM lookup_rings,
     (VALUES (0, '{1,6,12,4,11,2,5,9,3}'::int[]), (1, '{3,5,10,11,8,9,7,4,2}'), (2, '{8,5,6,7,10,1,12,4,3}'),
             (100, '{10,8,9,4,11,1,6,3,2}'), (200, '{6,1,3,12,7,5,10,4,2}'),
             (255, '{3,8,9,12,6,1,11,10,7}')) AS swift_lists(p, swift)
WHERE name = 'small'
ORDER BY p;

-- The properties, on random partitions of the large ring: no primary, no node
-- twice, shorter lists are prefixes of longer ones, and the tiers in order:
-- nodes in a region new to the partition (after its primaries and earlier
-- handoffs) first, then nodes in a new zone, then the others.
CREATE TEMP TABLE handoff_lists AS
SELECT p, ring_partition_nodes(ring, p) AS primaries,
       ring_partition_handoff_nodes(ring, p, 40) AS handoffs,
       ring_partition_handoff_nodes(ring, p, 7) AS first_7
FROM lookup_rings, (SELECT (i * 1093 + (random() * 1000)::int) % 65536 AS p FROM generate_series(1, 60) AS i) AS ps
WHERE name = 'large';
CREATE TEMP TABLE node_domains AS
SELECT node, region, zone FROM lookup_rings, ring_node_stats(ring) WHERE name = 'large';
CREATE TEMP TABLE handoff_tiers AS
SELECT p, o, o > 3 AS handoff,
       CASE WHEN NOT EXISTS (SELECT FROM unnest(primaries || handoffs) WITH ORDINALITY AS e(n, o2)
                             JOIN node_domains d2 ON d2.node = e.n
                             WHERE o2 < o AND d2.region = d.region) THEN 0
            WHEN NOT EXISTS (SELECT FROM unnest(primaries || handoffs) WITH ORDINALITY AS e(n, o2)
                             JOIN node_domains d2 ON d2.node = e.n
                             WHERE o2 < o AND d2.region = d.region AND d2.zone = d.zone) THEN 1
            ELSE 2 END AS tier
FROM handoff_lists, unnest(primaries || handoffs) WITH ORDINALITY AS u(n, o)
JOIN node_domains d ON d.node = u.n;
SELECT count(*) AS partitions,
       count(*) FILTER (WHERE cardinality(handoffs) = 40) AS full_lists,
       count(*) FILTER (WHERE handoffs && primaries) AS with_a_primary,
       count(*) FILTER (WHERE (SELECT count(DISTINCT n) FROM unnest(handoffs) AS n) <> 40) AS with_repeats,
       count(*) FILTER (WHERE first_7 <> handoffs[1:7]) AS not_prefixes
FROM handoff_lists;
SELECT count(*) FILTER (WHERE tier < previous) AS tiers_out_of_order,
       count(DISTINCT tier) FILTER (WHERE handoff) AS tiers_seen
FROM (SELECT handoff, tier, max(tier) FILTER (WHERE handoff) OVER (PARTITION BY p ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING
                                                                     AND 1 PRECEDING) AS previous
      FROM handoff_tiers) AS t
WHERE handoff;

-- All of them: every node but the primaries (each holds partitions).
SELECT p, cardinality(ring_partition_handoff_nodes(ring, p, 200)) AS handoffs,
       (SELECT array_agg(n ORDER BY n) FROM unnest(ring_partition_handoff_nodes(ring, p, 200)
                                                   || ring_partition_nodes(ring, p)) AS n)
           = (SELECT array_agg(i) FROM generate_series(1, 100) AS i) AS every_node
FROM lookup_rings, (VALUES (0), (65535), (31337)) AS ps(p)
WHERE name = 'large';

-- Keys: the handoffs of their partition, for every key type.
SELECT count(*) AS keys,
       count(*) FILTER (WHERE ring_handoff_nodes(ring, k, 5)
                              <> ring_partition_handoff_nodes(ring, ring_partition(ring, k), 5)
                           OR ring_handoff_nodes(ring, k)
                              <> ring_partition_handoff_nodes(ring, ring_partition(ring, k))
                           OR ring_handoff_nodes(ring, t, 4) <> ring_handoff_nodes(ring, xxh3_64(t), 4)
                           OR ring_handoff_nodes(ring, b, 4) <> ring_handoff_nodes(ring, xxh3_64(b), 4)
                           OR ring_handoff_nodes(ring, u, 4) <> ring_handoff_nodes(ring, xxh3_64(u), 4))
           AS differences
FROM lookup_rings,
     (SELECT (random() * 2 - 1) * 9.2e18 AS k0, md5(random()::text) AS t,
             decode(md5(random()::text), 'hex') AS b, gen_random_uuid() AS u
      FROM generate_series(1, 300)) AS keys,
     LATERAL (SELECT k0::bigint AS k) AS kk
WHERE name = 'large';

-- No handoffs asked for, or none left (a ring whose nodes are all primaries).
SELECT ring_handoff_nodes(ring, 1, 0) AS none_asked,
       ring_handoff_nodes(ring_build(ARRAY[1, 2, 3], ARRAY[1, 1, 1], ARRAY[1, 2, 3], part_power => 4), 1) AS none_left
FROM lookup_rings WHERE name = 'small';

--
-- Batches: ring_nodes(ring, keys[]), one row per key, in the array's order.
--

SELECT b.* FROM lookup_rings, ring_nodes(ring, ARRAY[1, -1, 0, 9223372036854775807, -9223372036854775808, 1])
    WITH ORDINALITY AS b
WHERE name = 'small';

-- Equal to one lookup per key, in order, on random keys of each type.
CREATE TEMP TABLE batch_keys AS
SELECT array_agg(((random() * 2 - 1) * 9.2e18)::bigint ORDER BY i) AS ints,
       array_agg(md5(random()::text) ORDER BY i) AS texts,
       array_agg(decode(md5(random()::text), 'hex') ORDER BY i) AS byteas,
       array_agg(gen_random_uuid() ORDER BY i) AS uuids
FROM generate_series(1, 2000) AS i;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE b.key <> ints[o] OR b.partition <> ring_partition(ring, ints[o])
                           OR b.nodes <> ring_nodes(ring, ints[o])) AS differences
FROM lookup_rings, batch_keys, ring_nodes(ring, ints) WITH ORDINALITY AS b(key, partition, nodes, o)
WHERE name = 'large';
SELECT count(*) AS rows,
       count(*) FILTER (WHERE b.key <> texts[o] OR b.partition <> ring_partition(ring, texts[o])
                           OR b.nodes <> ring_nodes(ring, texts[o])) AS differences
FROM lookup_rings, batch_keys, ring_nodes(ring, texts) WITH ORDINALITY AS b(key, partition, nodes, o)
WHERE name = 'large';
SELECT count(*) AS rows,
       count(*) FILTER (WHERE b.key <> byteas[o] OR b.partition <> ring_partition(ring, byteas[o])
                           OR b.nodes <> ring_nodes(ring, byteas[o])) AS differences
FROM lookup_rings, batch_keys, ring_nodes(ring, byteas) WITH ORDINALITY AS b(key, partition, nodes, o)
WHERE name = 'large';
SELECT count(*) AS rows,
       count(*) FILTER (WHERE b.key <> uuids[o] OR b.partition <> ring_partition(ring, uuids[o])
                           OR b.nodes <> ring_nodes(ring, uuids[o])) AS differences
FROM lookup_rings, batch_keys, ring_nodes(ring, uuids) WITH ORDINALITY AS b(key, partition, nodes, o)
WHERE name = 'large';

-- More keys than one chunk of the lookup (65536 / replicas), an int[] of keys,
-- and no keys.
SELECT count(*) AS rows, count(*) FILTER (WHERE nodes <> ring_nodes(ring, key)) AS differences
FROM lookup_rings, ring_nodes(ring, ARRAY(SELECT i * 1234567890123 FROM generate_series(1, 25000) AS i))
WHERE name = 'large';
SELECT key, nodes = ring_nodes(ring, 7) AS same
FROM lookup_rings, ring_nodes(ring, ARRAY[7]::int[]) WHERE name = 'small';
SELECT count(*) AS rows FROM lookup_rings, ring_nodes(ring, '{}'::bigint[]) WHERE name = 'small';

--
-- Errors and NULLs.
--

SELECT pg_temp.error_of(q) FROM (VALUES
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), ARRAY[1, NULL, 3]::bigint[])$$),
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), ARRAY['a', NULL])$$),
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), ARRAY[NULL]::uuid[])$$),
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), ARRAY[NULL]::bytea[])$$),
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), ARRAY[[1, 2], [3, 4]]::bigint[])$$),
    ($$SELECT * FROM ring_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), array_fill(0::bigint, ARRAY[4194305]))$$),
    ($$SELECT ring_handoff_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), 1, -1)$$),
    ($$SELECT ring_handoff_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), 'a', 65536)$$),
    ($$SELECT ring_partition_handoff_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), 256)$$),
    ($$SELECT ring_partition_handoff_nodes((SELECT ring FROM lookup_rings WHERE name = 'small'), -1)$$)
) AS queries(q);

--
-- Integer ids: a bigint key is taken as already hashed, its top bits as the
-- partition, so ids 1..10000 all fall in partition 0 of the small ring (part
-- power 8: the top 8 bits, 0 for every id below 2^56).  xxh3_64(id) is the
-- documented fix: the ids spread over the 256 partitions (10000 keys miss
-- one with a probability of about 256 * (255/256)^10000 < 10^-14; each
-- partition gets about 39, none more than twice that).
--
SELECT count(DISTINCT ring_partition(ring, id)) AS partitions_of_raw_ids,
       min(ring_partition(ring, id)) AS raw_partition,
       count(DISTINCT ring_nodes(ring, id)) AS node_sets_of_raw_ids
FROM lookup_rings, generate_series(1, 10000) AS id WHERE name = 'small';
SELECT count(*) AS partitions, min(ids) >= 10 AS fewest_at_least_10, max(ids) <= 78 AS most_at_most_78,
       sum(ids) AS ids
FROM (SELECT ring_partition(ring, xxh3_64(id)) AS partition, count(*) AS ids
      FROM lookup_rings, generate_series(1, 10000) AS id WHERE name = 'small'
      GROUP BY 1) AS p;
SELECT count(DISTINCT ring_nodes(ring, xxh3_64(id))) > 100 AS hashed_ids_reach_many_node_sets,
       count(*) FILTER (WHERE ring_nodes(ring, xxh3_64(id)) <> ring_partition_nodes(ring, ring_partition(ring, xxh3_64(id))))
           AS nodes_not_of_partition
FROM lookup_rings, generate_series(1, 10000) AS id WHERE name = 'small';

-- STRICT: a NULL argument gives NULL (no rows for a batch).
SELECT ring_nodes(ring, NULL::text) IS NULL AS text_null, ring_partition(ring, NULL::uuid) IS NULL AS uuid_null,
       ring_handoff_nodes(ring, 1, NULL) IS NULL AS count_null,
       ring_handoff_nodes(NULL, 'x') IS NULL AS ring_null,
       (SELECT count(*) FROM ring_nodes(ring, NULL::bigint[])) AS batch_rows
FROM lookup_rings WHERE name = 'small';
DROP TABLE lookup_rings;
