--
-- Golden values of the partition ring: the exact rings that ring_build and
-- ring_rebalance make, pinned for a range of node counts, weights, zones,
-- regions, replicas, part powers and seeds.  Each ring is pinned by the MD5
-- of its text form (every assignment, node and the seed) and by the MD5 of
-- the nodes of 2,001 keys spread over the key space.
--
-- The expected values were computed once, by release 1.0 (commit 13d1955),
-- and are a compatibility promise (docs/ring.md): applications store rings
-- and place data by them, so the same arguments must give the same ring in
-- every later release.  An algorithm that must change gets a new function;
-- these values never change.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- case, nodes, zones, regions, part power, replicas, seed, weights
CREATE TEMP TABLE golden_cases (name text, n int, zones int, regions int, part_power int,
                                replicas int, seed bigint, weights text);
INSERT INTO golden_cases VALUES
    ('3 nodes, 3 replicas',             3,   3, 1,  4, 3,                    0, 'equal'),
    ('10 nodes in 2 zones',            10,   2, 1,  8, 2,                    1, 'mixed'),
    ('12 nodes, 4 zones, 2 regions',   12,   4, 2, 10, 3,                   42, 'mixed'),
    ('100 nodes, some of weight 0',   100,  10, 3, 12, 3,                   -7, 'some zero'),
    ('1000 nodes, 50 zones',         1000,  50, 5, 14, 3,            123456789, 'mixed'),
    ('7 nodes, 5 replicas',             7,   7, 1,  6, 5,                    9, 'skewed'),
    ('50 nodes, one zone, 1 replica',  50,   1, 1, 16, 1,                    3, 'mixed'),
    ('200 nodes, 4 replicas',         200,  20, 4, 13, 4,                    2, 'skewed'),
    ('2 nodes, part power 1',           2,   2, 1,  1, 2, -9223372036854775808, 'equal'),
    ('300 nodes, 3 zones heavy',      300,   3, 1, 15, 3,  9223372036854775807, 'skewed');

-- Node i of a case: id 7i + 1, zone i mod zones, region i mod regions.
CREATE FUNCTION pg_temp.weight_of(pattern text, i int) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE pattern
        WHEN 'equal' THEN 1.0
        WHEN 'mixed' THEN 1 + (i * 37 % 5) / 2.0
        WHEN 'some zero' THEN CASE WHEN i % 17 = 0 THEN 0 ELSE 1 + i % 3 END
        ELSE CASE WHEN i % 3 = 0 THEN 10.0 ELSE 0.25 * (1 + i % 4) END
    END $$;

-- The 2,001 keys: -2^62 * 2 .. 2^62 * 2 in even steps, so every part power
-- sees keys in many partitions.
CREATE FUNCTION pg_temp.lookups_md5(r partition_ring) RETURNS text LANGUAGE sql AS $$
    SELECT md5(string_agg(ring_nodes(r, (g::bigint - 1000) * 9214148823491423) ::text, ';' ORDER BY g))
    FROM generate_series(0, 2000) AS g $$;

CREATE TEMP TABLE golden_rings AS
SELECT c.name, ring_build(array_agg(7 * i + 1 ORDER BY i), array_agg(pg_temp.weight_of(c.weights, i) ORDER BY i),
                          array_agg(i % c.zones ORDER BY i), array_agg(i % c.regions ORDER BY i),
                          part_power => c.part_power, replicas => c.replicas, seed => c.seed) AS ring
FROM golden_cases c, generate_series(0, c.n - 1) AS i
GROUP BY c.name, c.part_power, c.replicas, c.seed;

SELECT c.name, md5(r.ring::text) AS ring_md5, pg_temp.lookups_md5(r.ring) AS lookups_md5
FROM golden_cases c JOIN golden_rings r USING (name) ORDER BY c.part_power, c.name;

-- Rebalances of those rings: nodes added, removed, reweighted, a zone added.
-- (change: 1 adds nodes n and n + 1, 2 removes every node i with i mod 10 =
-- 3, 3 sets weight 1 + i mod 7, 4 adds ten nodes in a new zone 99.)
CREATE FUNCTION pg_temp.rebalanced(c golden_cases, r partition_ring, change int, seed bigint)
RETURNS partition_ring LANGUAGE sql AS $$
    SELECT ring_rebalance(r, array_agg(7 * i + 1 ORDER BY i),
                          array_agg(CASE WHEN change = 3 THEN 1 + i % 7
                                         ELSE pg_temp.weight_of(c.weights, i) END ORDER BY i),
                          array_agg(CASE WHEN change = 4 AND i >= c.n THEN 99 ELSE i % c.zones END ORDER BY i),
                          array_agg(i % c.regions ORDER BY i), seed => seed)
    FROM generate_series(0, c.n - 1 + CASE change WHEN 1 THEN 2 WHEN 4 THEN 10 ELSE 0 END) AS i
    WHERE change <> 2 OR i % 10 <> 3 $$;
CREATE TEMP TABLE golden_rebalanced AS
SELECT x.what || c.name AS name, pg_temp.rebalanced(c, r.ring, x.change, x.seed) AS ring
FROM golden_cases c JOIN golden_rings r USING (name)
JOIN (VALUES (1, 'added 2 nodes to ', 11, '12 nodes, 4 zones, 2 regions'), (1, 'added 2 nodes to ', 11, '7 nodes, 5 replicas'),
             (2, 'removed every 10th node of ', 12, '100 nodes, some of weight 0'),
             (2, 'removed every 10th node of ', 12, '1000 nodes, 50 zones'),
             (3, 'reweighted ', 13, '200 nodes, 4 replicas'), (3, 'reweighted ', 13, '10 nodes in 2 zones'),
             (4, 'new zone in ', 14, '300 nodes, 3 zones heavy'), (4, 'new zone in ', 14, '50 nodes, one zone, 1 replica'))
     AS x(change, what, seed, name) USING (name);

SELECT name, md5(ring::text) AS ring_md5, pg_temp.lookups_md5(ring) AS lookups_md5
FROM golden_rebalanced ORDER BY name;
