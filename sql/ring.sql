--
-- Partition ring: build, lookups, text and binary forms, rebalance, moves,
-- stats, and the lookup cache.  Errors are in ring_errors.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- A ring written by hand: 2 partitions, 2 replicas, 2 nodes.  The text form
-- is JSON; nodes come out sorted by id, keys in a fixed order.
SELECT '{"nodes": [{"id": 7, "zone": 1, "weight": 2.5}, {"id": 3, "zone": 0, "weight": 1}],
         "assignment": [[3, 7], [7, 3]], "replicas": 2, "part_power": 1}'::partition_ring;

-- Keys are placed by their top part_power bits, as unsigned: 0 .. 2^63-1 in
-- partition 0, negative keys in partition 1.
SELECT k, ring_partition(r, k) AS partition, ring_nodes(r, k) AS nodes
FROM (SELECT '{"part_power": 1, "replicas": 2, "nodes": [{"id": 3, "zone": 0, "weight": 1},
               {"id": 7, "zone": 1, "weight": 2.5}], "assignment": [[3, 7], [7, 3]]}'::partition_ring AS r) s,
     unnest(ARRAY[0, 1, 9223372036854775807, -9223372036854775808, -1]::bigint[]) AS k;

-- The assignment read straight from the bytes of the binary form (format 2,
-- the layout in src/core/ring.h), without the server's decoder or its cache:
-- the independent answer that cached lookups are checked against.
CREATE FUNCTION pg_temp.le32(v bytea, o int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT get_byte(v, o) + 256 * get_byte(v, o + 1) + 65536 * get_byte(v, o + 2)
           + 16777216::bigint * get_byte(v, o + 3) $$;
CREATE FUNCTION pg_temp.raw_assignments(r partition_ring, below int DEFAULT 16777216)
RETURNS TABLE (partition int, replica int, node int) LANGUAGE plpgsql AS $$
DECLARE
    b bytea := partition_ring_send(r);
    p int := pg_temp.le32(b, 40);
    reps int := pg_temp.le32(b, 44);
    n int := pg_temp.le32(b, 48);
    s int;
    id bigint;
BEGIN
    FOR x IN 0 .. least(1 << p, below) - 1 LOOP
        FOR k IN 0 .. reps - 1 LOOP
            s := 64 + 24 * n + 2 * (k * (1 << p) + x);
            id := pg_temp.le32(b, 64 + 24 * (get_byte(b, s) + 256 * get_byte(b, s + 1)));
            partition := x;
            replica := k;
            node := CASE WHEN id >= 2147483648 THEN id - 4294967296 ELSE id END;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END $$;

-- A fleet: 12 nodes in 4 zones, weights 1 and 2.
CREATE TABLE ring_nodes_t (id int PRIMARY KEY, weight float8, zone int);
INSERT INTO ring_nodes_t
SELECT i, CASE WHEN i % 3 = 0 THEN 2 ELSE 1 END, i % 4 FROM generate_series(1, 12) AS i;

CREATE TABLE rings (name text PRIMARY KEY, ring partition_ring);
INSERT INTO rings
SELECT 'main', ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                          part_power => 10, replicas => 3)
FROM ring_nodes_t;

SELECT part_power, replicas, partitions, nodes, zones, regions, seed, bytes,
       max_balance < 100.0 / 384 AS balanced_within_one, zone_dispersion, region_dispersion
FROM rings, ring_info(ring) WHERE name = 'main';

-- 3 x 1024 assignments, each partition on 3 distinct nodes in 3 distinct zones.
SELECT count(*) AS assignments,
       count(DISTINCT (partition, replica)) AS slots,
       min(replica) AS first_replica, max(replica) AS last_replica
FROM rings, ring_assignments(ring) WHERE name = 'main';

SELECT count(*) FILTER (WHERE nodes <> 3 OR zones <> 3) AS crowded_partitions
FROM (SELECT partition, count(DISTINCT a.node) AS nodes, count(DISTINCT n.zone) AS zones
      FROM rings, ring_assignments(ring) a JOIN ring_nodes_t n ON n.id = a.node
      WHERE name = 'main' GROUP BY partition) p;

-- Every node within one partition-replica of its weighted share 3 * 1024 * w / 16.
SELECT s.node, s.weight, s.partitions, s.quota,
       abs(s.partitions - 3 * 1024 * n.weight / 16) < 1 AS within_one
FROM rings, ring_node_stats(ring) s JOIN ring_nodes_t n ON n.id = s.node
WHERE name = 'main' ORDER BY s.node;

-- The same arguments give the same ring; another seed another ring; the
-- order of the input rows does not matter.
SELECT ring_build(array_agg(id), array_agg(weight), array_agg(zone), part_power => 10)::text
         = (SELECT ring::text FROM rings WHERE name = 'main') AS same,
       ring_build(array_agg(id ORDER BY id DESC), array_agg(weight ORDER BY id DESC),
                  array_agg(zone ORDER BY id DESC), part_power => 10)::text
         = (SELECT ring::text FROM rings WHERE name = 'main') AS any_order,
       ring_build(array_agg(id), array_agg(weight), array_agg(zone), part_power => 10, seed => 1)::text
         = (SELECT ring::text FROM rings WHERE name = 'main') AS other_seed
FROM ring_nodes_t;

-- Text form round trip.
SELECT ring::text::partition_ring::text = ring::text AS text_round_trip FROM rings WHERE name = 'main';

-- Binary form round trip through COPY (partition_ring_send and _recv).
\copy (SELECT name, ring FROM rings) TO 'results/ring_binary.bin' WITH (FORMAT binary)
CREATE TEMP TABLE rings_copy (LIKE rings);
\copy rings_copy FROM 'results/ring_binary.bin' WITH (FORMAT binary)
SELECT r.ring::text = c.ring::text AS binary_round_trip FROM rings r JOIN rings_copy c USING (name);

-- The binary form starts with the magic "PRNG" and format version 1.
SELECT substr(partition_ring_send(ring), 1, 8) FROM rings WHERE name = 'main';

-- A value whose bytes were changed is refused by receive (the digest no
-- longer matches).  A bytea column has the same COPY BINARY framing.
\copy (SELECT 'bad', set_byte(partition_ring_send(ring), 100, get_byte(partition_ring_send(ring), 100) # 1) FROM rings WHERE name = 'main') TO 'results/ring_bad.bin' WITH (FORMAT binary)
\copy rings_copy FROM 'results/ring_bad.bin' WITH (FORMAT binary)

-- Lookups agree with each other and with the top-bits formula.
SELECT count(*) AS keys,
       count(*) FILTER (WHERE ring_partition(ring, k) <> ((k >> 54) & 1023)) AS wrong_partition,
       count(*) FILTER (WHERE ring_nodes(ring, k) <> ring_partition_nodes(ring, ring_partition(ring, k))) AS disagree
FROM rings, (SELECT (hashint8(i)::bigint << 32) # hashint8(i + 7) AS k FROM generate_series(1, 5000) AS i) keys
WHERE name = 'main';

-- The primary is replica 0 of ring_assignments.
SELECT bool_and((ring_partition_nodes(ring, a.partition))[a.replica + 1] = a.node) AS consistent
FROM rings, ring_assignments(ring) a WHERE name = 'main';

-- Lookups with the ring from a scalar subquery, over many rows (the decoded
-- ring is cached for the backend, keyed by its SHA-256 digest).
SELECT count(*) AS rows, count(DISTINCT p) AS partitions_hit,
       count(*) FILTER (WHERE n <> ring_partition_nodes((SELECT ring FROM rings WHERE name = 'main'), p)) AS wrong
FROM (SELECT ring_nodes((SELECT ring FROM rings WHERE name = 'main'), k) AS n, ((k >> 54) & 1023)::int AS p
      FROM (SELECT (hashint8(i)::bigint << 32) # hashint8(i + 1) AS k
            FROM generate_series(1, 40000) AS i) keys) s;

-- Two rings of the same size in one column: the cache must not mix them up.
INSERT INTO rings
SELECT 'other', ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                           part_power => 10, replicas => 3, seed => 99)
FROM ring_nodes_t;
SELECT count(*) AS lookups,
       count(*) FILTER (WHERE ring_nodes(ring, k) <> ring_partition_nodes(ring, ((k >> 54) & 1023)::int)) AS wrong,
       count(DISTINCT name) AS rings
FROM (SELECT name, ring, k FROM rings, generate_series(1, 200) AS g,
             LATERAL (SELECT g::bigint * 46116860184273879 AS k) kk
      ORDER BY g, name) s;

-- Six rings in turn, more than the backend keeps decoded: each lookup agrees
-- with the assignment read from the bytes (raw_assignments).
CREATE TEMP TABLE many_rings AS
SELECT s AS seed, ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                             part_power => 8, replicas => 2, seed => s) AS ring
FROM ring_nodes_t, generate_series(1, 6) AS s GROUP BY s;
CREATE TEMP TABLE many_expected AS
SELECT m.seed, a.partition, array_agg(a.node ORDER BY a.replica) AS nodes
FROM many_rings m, pg_temp.raw_assignments(m.ring) a GROUP BY 1, 2;
SELECT count(*) AS lookups, count(*) FILTER (WHERE s.got <> e.nodes) AS wrong
FROM (SELECT m.seed, m.k, ring_nodes(m.ring, m.k) AS got
      FROM (SELECT seed, ring, g::bigint * 46116860184273879 AS k
            FROM many_rings, generate_series(1, 50) AS g ORDER BY g, seed OFFSET 0) m) s
JOIN many_expected e ON e.seed = s.seed AND e.partition = ((s.k >> 56) & 255)::int;

-- The rings kept decoded take at most subsetting.ring_cache_size together
-- (these are 1,352 bytes each, so 3kB holds two), and lookups stay right.
SET subsetting.ring_cache_size = '3kB';
SELECT count(*) AS lookups, count(*) FILTER (WHERE s.got <> e.nodes) AS wrong
FROM (SELECT m.seed, m.k, ring_nodes(m.ring, m.k) AS got
      FROM (SELECT seed, ring, g::bigint * 46116860184273879 AS k
            FROM many_rings, generate_series(1, 50) AS g ORDER BY g, seed OFFSET 0) m) s
JOIN many_expected e ON e.seed = s.seed AND e.partition = ((s.k >> 56) & 255)::int;
SELECT count(*) AS rings_kept
FROM pg_backend_memory_contexts WHERE name = 'decoded partition ring';
-- A ring larger than the setting is decoded once for the query (a hundred
-- lookups and 256 rows of ring_assignments), and dropped when it ends.
SET subsetting.ring_cache_size = 0;
SELECT count(*) FILTER (WHERE ring_nodes(m.ring, g::bigint << 56) <> e.nodes) AS wrong,
       (SELECT count(*) FROM pg_backend_memory_contexts
        WHERE name = 'decoded partition ring') AS rings_kept_in_the_query
FROM many_rings m, generate_series(0, 255) AS g, many_expected e
WHERE m.seed = 1 AND e.seed = 1 AND e.partition = g;
SELECT count(*) AS rings_kept FROM pg_backend_memory_contexts WHERE name = 'decoded partition ring';
RESET subsetting.ring_cache_size;

-- A larger ring (3 x 2^14 partitions, 98 kB) is stored out of line.
INSERT INTO rings
SELECT 'big', ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                         part_power => 14, replicas => 3)
FROM ring_nodes_t;
SELECT pg_column_size(ring) AS stored_bytes, (ring_info(ring)).bytes FROM rings WHERE name = 'big';
SELECT count(*) AS rows,
       count(*) FILTER (WHERE n <> ring_partition_nodes((SELECT ring FROM rings WHERE name = 'big'),
                                                        ((k >> 50) & 16383)::int)) AS wrong
FROM (SELECT k, ring_nodes((SELECT ring FROM rings WHERE name = 'big'), k) AS n
      FROM (SELECT (hashint8(i)::bigint << 32) # hashint8(-i) AS k FROM generate_series(1, 20000) AS i) keys) s;

-- In one transaction, the big ring replaced by another of the same size (its
-- seed differs): lookups find the new ring, not the entry that the old
-- value's toast pointer led to.  Expected nodes are read from the bytes
-- (raw_assignments).
BEGIN;
CREATE TEMP TABLE big_before AS
SELECT a.partition, array_agg(a.node ORDER BY a.replica) AS nodes
FROM rings, pg_temp.raw_assignments(ring, 100) a WHERE name = 'big' GROUP BY 1;
SELECT count(*) FILTER (WHERE ring_nodes((SELECT ring FROM rings WHERE name = 'big'),
                                         partition::bigint << 50) <> nodes) AS wrong
FROM big_before;
UPDATE rings SET ring = (SELECT ring_build(array_agg(id), array_agg(weight), array_agg(zone),
                                           part_power => 14, replicas => 3, seed => 7)
                         FROM ring_nodes_t)
WHERE name = 'big';
CREATE TEMP TABLE big_after AS
SELECT a.partition, array_agg(a.node ORDER BY a.replica) AS nodes
FROM rings, pg_temp.raw_assignments(ring, 100) a WHERE name = 'big' GROUP BY 1;
SELECT count(*) FILTER (WHERE ring_nodes((SELECT ring FROM rings WHERE name = 'big'),
                                         a.partition::bigint << 50) <> a.nodes) AS wrong,
       count(*) FILTER (WHERE a.nodes <> b.nodes) > 0 AS rings_differ
FROM big_after a JOIN big_before b USING (partition);
ROLLBACK;

--
-- Rebalance
--

-- Add node 13 (weight 1, zone 1): only the replicas it takes move, every
-- one of them to node 13, at most one replica of any partition.  It should
-- take its share 3 * 1024 / 17 = 180.7, so 180 or 181.
CREATE TEMP TABLE nodes2 AS SELECT * FROM ring_nodes_t;
INSERT INTO nodes2 VALUES (13, 1, 1);
INSERT INTO rings
SELECT 'added', ring_rebalance((SELECT ring FROM rings WHERE name = 'main'),
                               array_agg(id), array_agg(weight), array_agg(zone))
FROM nodes2;
SELECT count(*) BETWEEN 180 AND 181 AS moved_its_share,
       count(*) FILTER (WHERE to_node <> 13) AS moved_elsewhere,
       max(per_partition) AS most_moved_in_a_partition
FROM (SELECT m.*, count(*) OVER (PARTITION BY partition) AS per_partition
      FROM ring_moves((SELECT ring FROM rings WHERE name = 'main'),
                      (SELECT ring FROM rings WHERE name = 'added')) m) s;
SELECT max_balance < 100.0 / 180 AS balanced_within_one, zone_dispersion
FROM rings, ring_info(ring) WHERE name = 'added';

-- Remove node 5: exactly its replicas move.
INSERT INTO rings
SELECT 'removed', ring_rebalance((SELECT ring FROM rings WHERE name = 'main'),
                                 array_agg(id), array_agg(weight), array_agg(zone))
FROM ring_nodes_t WHERE id <> 5;
SELECT (SELECT count(*) FROM ring_moves((SELECT ring FROM rings WHERE name = 'main'),
                                        (SELECT ring FROM rings WHERE name = 'removed')))
       = (SELECT partitions FROM rings, ring_node_stats(ring) WHERE name = 'main' AND node = 5)
       AS moved_exactly_its_replicas,
       (SELECT count(*) FROM ring_moves((SELECT ring FROM rings WHERE name = 'main'),
                                        (SELECT ring FROM rings WHERE name = 'removed'))
        WHERE from_node <> 5) AS other_moves;

-- Rebalancing a balanced ring with the same nodes changes nothing.
SELECT count(*) AS moves
FROM ring_moves((SELECT ring FROM rings WHERE name = 'main'),
                (SELECT ring_rebalance(ring, (SELECT array_agg(id) FROM ring_nodes_t),
                                       (SELECT array_agg(weight) FROM ring_nodes_t),
                                       (SELECT array_agg(zone) FROM ring_nodes_t))
                 FROM rings WHERE name = 'main'));

--
-- Failure domains and weights that cannot be met exactly
--

-- Zone 0 holds 60% of the weight with 3 replicas: it may hold one replica of
-- each partition (1024 of 3072), not its weighted 1843; the stats show it
-- (quota below wanted), and no partition has two replicas in one zone.
SELECT s.zone, sum(s.partitions) AS partitions, round(sum(s.wanted)) AS wanted, sum(s.quota) AS quota
FROM ring_node_stats(ring_build(ARRAY[1, 2, 3, 4, 5, 6], ARRAY[3, 3, 1, 1, 1, 1],
                                ARRAY[0, 0, 1, 2, 3, 3], part_power => 10)) s
GROUP BY s.zone ORDER BY s.zone;
SELECT ring_dispersion(ring_build(ARRAY[1, 2, 3, 4, 5, 6], ARRAY[3, 3, 1, 1, 1, 1],
                                  ARRAY[0, 0, 1, 2, 3, 3], part_power => 10)) AS zone_dispersion;

-- Two zones and three replicas: one zone must hold two replicas of each
-- partition, a dispersion of 1/3 at the zone tier, none at the node tier.
SELECT round(ring_dispersion(r, 'zone')::numeric, 4) AS zone, ring_dispersion(r, 'node') AS node,
       ring_dispersion(r, 'region') AS region
FROM (SELECT ring_build(ARRAY[1, 2, 3, 4], ARRAY[1, 1, 1, 1], ARRAY[0, 0, 1, 1], part_power => 8) AS r) s;

-- Regions above zones: region 2 has one zone, region 1 three; each partition
-- gets one replica in region 2 and two, in distinct zones, in region 1.
SELECT round(ring_dispersion(r, 'region')::numeric, 4) AS region_dispersion,
       ring_dispersion(r, 'zone') AS zone_dispersion,
       (ring_info(r)).regions, (ring_info(r)).zones
FROM (SELECT ring_build(ARRAY[1, 2, 3, 4, 5, 6, 7, 8], ARRAY[1, 1, 1, 1, 1, 1, 1, 1],
                        ARRAY[1, 1, 2, 2, 3, 3, 4, 4], ARRAY[1, 1, 1, 1, 1, 1, 2, 2],
                        part_power => 8) AS r) s;

-- Zero weight: the node stays in the ring and holds nothing (drain a node by
-- setting its weight to 0 and rebalancing).
SELECT node, weight, partitions, quota, round(balance::numeric, 4) AS balance
FROM ring_node_stats(ring_build(ARRAY[1, 2, 3, 4], ARRAY[1, 1, 1, 0], ARRAY[0, 1, 2, 3],
                                part_power => 6, replicas => 2))
ORDER BY node;

-- Weights can be given as integers (int[] converts to float8[]).
SELECT (ring_info(ring_build(ARRAY[1, 2, 3], ARRAY[10, 20, 30], ARRAY[1, 2, 3],
                             part_power => 4, replicas => 1))).nodes;

-- NULL arguments (other than regions) give NULL, like a strict function.
SELECT ring_build(NULL, ARRAY[1.0], ARRAY[0]) IS NULL AS null_nodes,
       ring_build(ARRAY[1], ARRAY[1.0], ARRAY[0], part_power => NULL) IS NULL AS null_part_power,
       ring_rebalance(NULL, ARRAY[1], ARRAY[1.0], ARRAY[0]) IS NULL AS null_ring;

-- The lookups are IMMUTABLE: usable in generated columns and indexes.
CREATE TEMP TABLE objects (
    key bigint NOT NULL,
    home int[] GENERATED ALWAYS AS (ring_nodes('{"part_power": 1, "replicas": 2, "nodes": [
        {"id": 3, "zone": 0, "weight": 1}, {"id": 7, "zone": 1, "weight": 1}],
        "assignment": [[3, 7], [7, 3]]}'::partition_ring, key)) STORED
);
INSERT INTO objects VALUES (42), (-42);
CREATE INDEX ON objects ((home[1]));
SELECT key, home FROM objects ORDER BY key;

DROP TABLE rings, ring_nodes_t;
