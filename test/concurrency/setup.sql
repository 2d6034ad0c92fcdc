-- test/concurrency/setup.sql
--	The concurrent load of test/run-concurrency-tests: a table of
--	deterministic inputs, stored rings of a few sizes, the view "calls" that
--	applies every SQL-callable function of the extension to one input, and
--	the table "results" that the pgbench clients fill from it
--	(test/concurrency/transaction.sql).  Every argument is small, so that a
--	row of "calls" costs a few milliseconds.
CREATE EXTENSION subsetting;

-- Rings looked up by the inputs: part power 4, 6 and 9 over nodes 1 .. 20
-- in 5 zones and 2 regions.
CREATE TABLE rings (name text PRIMARY KEY, ring partition_ring NOT NULL);
INSERT INTO rings
SELECT 'p' || p, ring_build(array_agg(j ORDER BY j), array_agg((1 + j % 3)::float8 ORDER BY j),
                            array_agg(j % 5 ORDER BY j), array_agg(j % 2 ORDER BY j),
                            part_power => p, replicas => 3, seed => p)
FROM generate_series(1, 20) AS j, (VALUES (4), (6), (9)) AS parts(p)
GROUP BY p;

-- h(i, n): a deterministic pseudo-random integer in [0, n) for input i and
-- stream n (PostgreSQL's own hash, so that the inputs do not depend on the
-- extension under test).
CREATE FUNCTION h(i int, stream int, n bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT
RETURN (hashint8extended(i, stream) & 9223372036854775807) % n;

CREATE TABLE inputs (
    id int PRIMARY KEY,
    -- the hashes
    key bigint NOT NULL,
    key_text text NOT NULL,
    key_bytea bytea NOT NULL,
    key_uuid uuid NOT NULL,
    buckets int NOT NULL,
    -- one frontend's subset
    frontend int NOT NULL,
    backends int NOT NULL,
    small_backends int NOT NULL,    -- for the O(N) algorithms
    subset_size int NOT NULL,
    backend_scaling boolean NOT NULL,
    lot_size int NOT NULL,
    seed bigint NOT NULL,
    -- a job to measure
    algorithm text NOT NULL,
    job_frontends int NOT NULL,
    job_backends int NOT NULL,
    job_subset_size int NOT NULL,
    new_frontends int NOT NULL,
    new_backends int NOT NULL,
    new_subset_size int NOT NULL,
    restart_width int NOT NULL,
    -- a small ring to build
    node_ids int[] NOT NULL,
    node_weights float8[] NOT NULL,
    node_zones int[] NOT NULL,
    node_regions int[],
    part_power int NOT NULL,
    replicas int NOT NULL,
    -- a stored ring to look up, inspect and rebalance to a new node table
    ring_name text NOT NULL REFERENCES rings,
    tier text NOT NULL,
    new_ids int[] NOT NULL,
    new_weights float8[] NOT NULL,
    new_zones int[] NOT NULL
);

INSERT INTO inputs
SELECT i,
       hashint8extended(i, 1),
       'user' || i || '@example.com' || repeat('é', i % 7),
       int8send(i) || decode(md5(i::text), 'hex'),
       md5(i::text)::uuid,
       1 + h(i, 2, (ARRAY[10, 1000, 2147483647])[1 + i % 3]),
       h(i, 3, 1000000),
       1 + h(i, 4, (ARRAY[100, 1000000])[1 + i % 2]),
       1 + h(i, 5, 3000),
       h(i, 6, 30),
       i % 2 = 0,
       1 + h(i, 7, 20),
       hashint8extended(i, 8),
       (ARRAY['random', 'round_robin', 'deterministic', 'consistent', 'ringsteady',
              'ringsteady_unscaled', 'rocksteadier'])[1 + i % 7],
       1 + h(i, 9, 100),
       1 + h(i, 10, 100),
       1 + h(i, 11, 20),
       1 + h(i, 12, 100),
       1 + h(i, 13, 100),
       1 + h(i, 14, 20),
       1 + h(i, 15, 10),
       ARRAY(SELECT 100 * i + j FROM generate_series(1, n) AS j),
       ARRAY(SELECT (1 + (i + j) % 4)::float8 FROM generate_series(1, n) AS j),
       ARRAY(SELECT j % (1 + i % 4) FROM generate_series(1, n) AS j),
       CASE WHEN i % 3 = 0 THEN NULL ELSE ARRAY(SELECT j % 2 FROM generate_series(1, n) AS j) END,
       1 + h(i, 16, 8),
       least(1 + i % 3, n),
       'p' || (ARRAY[4, 6, 9])[1 + h(i, 17, 3)],
       (ARRAY['zone', 'region', 'node'])[1 + i % 3],
       ARRAY(SELECT j FROM generate_series(1, 20 + i % 3) AS j WHERE j <> 1 + i % 20),
       ARRAY(SELECT (1 + (i + j) % 4)::float8 FROM generate_series(1, 20 + i % 3) AS j WHERE j <> 1 + i % 20),
       ARRAY(SELECT j % 5 FROM generate_series(1, 20 + i % 3) AS j WHERE j <> 1 + i % 20)
FROM generate_series(1, 3000) AS i,
     LATERAL (SELECT 1 + h(i, 18, 12)::int AS n) AS nodes;

-- Every SQL-callable function of the extension on one input, as text and
-- integers that compare with =.  Ring values are compared by the md5 of
-- their binary form.  The OFFSET 0 keeps each built ring one call.
CREATE VIEW calls AS
SELECT i.id,
       -- consistent hashing and key hashes
       xxh3_64(i.key_text) AS xxh3_text,
       xxh3_64(i.key_bytea) AS xxh3_bytea,
       xxh3_64(i.key_uuid) AS xxh3_uuid,
       xxh3_64(i.key) AS xxh3_bigint,
       reshard_row_image_hash(ROW(i.key, i.key_text, i.key_bytea, i.key_uuid)) AS row_image_hash,
       jumpbackhash(i.key, i.buckets) AS jumpbackhash_bigint,
       jumpbackhash(i.key_text, i.buckets) AS jumpbackhash_text,
       jumpbackhash(i.key_bytea, i.buckets) AS jumpbackhash_bytea,
       jumpbackhash(i.key_uuid, i.buckets) AS jumpbackhash_uuid,
       jumphash(i.key, i.buckets) AS jumphash_bigint,
       jumphash(i.key_text, i.buckets) AS jumphash_text,
       jumphash(i.key_bytea, i.buckets) AS jumphash_bytea,
       jumphash(i.key_uuid, i.buckets) AS jumphash_uuid,
       -- jumpbackanchorhash: both forms of a set, conversions, adding and removing
       jumpbackanchorhash(i.key, i.buckets, a.removed) AS anchor_bigint,
       jumpbackanchorhash(i.key_text, i.buckets, a.removed) AS anchor_text,
       jumpbackanchorhash(i.key_bytea, i.buckets, a.removed) AS anchor_bytea,
       jumpbackanchorhash(i.key_uuid, i.buckets, a.removed) AS anchor_uuid,
       jumpbackanchorhash(i.key, a.state) AS anchor_state_bigint,
       jumpbackanchorhash(i.key_text, a.state) AS anchor_state_text,
       jumpbackanchorhash(i.key_bytea, a.state) AS anchor_state_bytea,
       jumpbackanchorhash(i.key_uuid, a.state) AS anchor_state_uuid,
       encode(a.state, 'hex') AS anchor_state,
       jumpbackanchorhash_buckets(a.state) AS anchor_buckets,
       jumpbackanchorhash_removed(a.state)::text AS anchor_removed,
       jumpbackanchorhash_add_bucket(i.buckets, a.removed)::text AS anchor_added,
       jumpbackanchorhash_add_bucket(a.state)::text AS anchor_state_added,
       jumpbackanchorhash_remove_bucket(i.buckets, a.removed,
                                        jumpbackanchorhash(i.key, i.buckets, a.removed))::text AS anchor_removed_one,
       encode(jumpbackanchorhash_remove_bucket(a.state, jumpbackanchorhash(i.key, a.state)), 'hex')
           AS anchor_state_removed_one,
       -- the support functions of the hash operator classes (those of 16 buckets stand for every N: they
       -- share their C functions), with the partition seed and another, and the SQL that creates them
       subsetting_partition_hash.jumpbackhash16_int2_partition_hash((i.key % 32768)::int2, 8816678312871386365) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_int4_partition_hash((i.key % 2147483648)::int4, 8816678312871386365) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_int8_partition_hash(i.key, 8816678312871386365) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_int8_partition_hash(i.key, i.seed) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_text_partition_hash(i.key_text, 8816678312871386365) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_bytea_partition_hash(i.key_bytea, 8816678312871386365) || ' ' ||
           subsetting_partition_hash.jumpbackhash16_uuid_partition_hash(i.key_uuid, i.seed) AS partition_hashes,
       md5(jumpbackhash_operator_classes_ddl(i.buckets, 'public', '$libdir/subsetting')) AS operator_classes_ddl,
       reshard_bucket_sql('jumpbackanchorhash', 'id', i.buckets, a.removed) AS reshard_bucket_sql,
       md5(reshard_remote_revoke(ARRAY[i.key_text], ARRAY[i.key_text || '()'])) AS reshard_remote_revoke,
       md5(reshard_remote_owner_checks(i.key_text)) AS reshard_remote_owner_checks,
       md5(reshard_remote_untimed()) AS reshard_remote_untimed,
       reshard_option_changes('ALTER TABLE t', ARRAY['fillfactor=' || (10 + i.buckets % 90), 'toast.' || i.key_text || '=1'],
                              ARRAY['fillfactor=50', 'parallel_workers=' || i.buckets % 3])::text AS reshard_option_changes,
       -- subsets
       ringsteady_subset(i.frontend, i.backends, i.subset_size, i.backend_scaling)::text AS ringsteady,
       rocksteadier_subset(i.frontend, i.backends, i.subset_size, i.lot_size)::text AS rocksteadier,
       random_subset(i.frontend, i.backends, i.subset_size, i.seed)::text AS random,
       round_robin_subset(i.frontend, i.backends, i.subset_size)::text AS round_robin,
       deterministic_subset(i.frontend, i.small_backends, i.subset_size, i.seed)::text AS deterministic,
       consistent_subset(i.frontend, i.small_backends, i.subset_size, i.seed)::text AS consistent,
       -- measuring
       subset_balance(i.algorithm, i.job_frontends, i.job_backends, i.job_subset_size,
                      i.seed, i.lot_size)::text AS balance,
       subset_diversity(i.algorithm, i.job_frontends, i.job_backends, i.job_subset_size,
                        i.seed, i.lot_size)::text AS diversity,
       subset_churn(i.algorithm, i.job_frontends, i.job_backends, i.job_subset_size,
                    i.new_frontends, i.new_backends, i.new_subset_size, i.seed, i.lot_size)::text AS churn,
       subset_spread(i.algorithm, i.job_frontends, i.job_backends, i.job_subset_size,
                     i.restart_width, i.seed, i.lot_size)::text AS spread,
       -- a small ring built, its text and binary forms, its inspection
       md5(partition_ring_send(b.ring)) AS built,
       md5(partition_ring_out(b.ring)::text) AS built_json,
       md5(partition_ring_send(partition_ring_in(partition_ring_out(b.ring)))) AS built_json_read,
       ring_info(b.ring)::text AS built_info,
       (SELECT count(*) || ' ' || md5(string_agg(a::text, ',' ORDER BY a.partition, a.replica))
        FROM ring_assignments(b.ring) AS a) AS built_assignments,
       -- a stored ring: lookups, inspection, a rebalance and its moves
       ring_partition(s.ring, i.key) AS partition,
       ring_nodes(s.ring, i.key)::text AS nodes,
       ring_partition_nodes(s.ring, ring_partition(s.ring, i.key))::text AS partition_nodes,
       (SELECT md5(string_agg(n::text, ',' ORDER BY n.node)) FROM ring_node_stats(s.ring) AS n) AS node_stats,
       ring_dispersion(s.ring, i.tier) AS dispersion,
       ring_info(s.ring)::text AS info,
       md5(partition_ring_send(r.ring)) AS rebalanced,
       (SELECT count(*) || ' ' || md5(string_agg(m::text, ',' ORDER BY m.partition, m.replica))
        FROM ring_moves(s.ring, r.ring) AS m) AS moves,
       -- the stored ring: lookups of the other key types, handoffs, batches
       ring_partition(s.ring, i.key_text) || ' ' || ring_partition(s.ring, i.key_bytea) || ' ' ||
           ring_partition(s.ring, i.key_uuid) AS key_partitions,
       ring_nodes(s.ring, i.key_text)::text || ring_nodes(s.ring, i.key_bytea)::text ||
           ring_nodes(s.ring, i.key_uuid)::text AS key_nodes,
       ring_handoff_nodes(s.ring, i.key, 1 + i.id % 5)::text || ring_handoff_nodes(s.ring, i.key_text)::text ||
           ring_handoff_nodes(s.ring, i.key_bytea)::text || ring_handoff_nodes(s.ring, i.key_uuid)::text ||
           ring_partition_handoff_nodes(s.ring, ring_partition(s.ring, i.key), 2)::text AS handoffs,
       (SELECT md5(string_agg(b::text, ',' ORDER BY o))
        FROM ring_nodes(s.ring, ARRAY[i.key, i.key + 1, -i.key, i.key # 4611686018427387904])
             WITH ORDINALITY AS b(key, partition, nodes, o)) AS batch,
       (SELECT md5(string_agg(b::text, ',')) FROM ring_nodes(s.ring, ARRAY[i.key_text, i.key_text || 'x']) AS b)
       || (SELECT md5(string_agg(b::text, ',')) FROM ring_nodes(s.ring, ARRAY[i.key_bytea]) AS b)
       || (SELECT md5(string_agg(b::text, ',')) FROM ring_nodes(s.ring, ARRAY[i.key_uuid]) AS b) AS key_batches
FROM inputs AS i
JOIN rings AS s ON s.name = i.ring_name
CROSS JOIN LATERAL (SELECT x.removed, jumpbackanchorhash_state(i.buckets, x.removed) AS state
                    FROM (SELECT ARRAY(SELECT DISTINCT h(i.id, 20 + j, i.buckets)::int
                                       FROM generate_series(1, least(1 + i.id % 5, i.buckets - 1)) AS j)
                                 AS removed) AS x) AS a
CROSS JOIN LATERAL (SELECT ring_build(i.node_ids, i.node_weights, i.node_zones, i.node_regions,
                                      i.part_power, i.replicas, i.seed) AS ring OFFSET 0) AS b
CROSS JOIN LATERAL (SELECT ring_rebalance(s.ring, i.new_ids, i.new_weights, i.new_zones,
                                          seed => i.seed) AS ring OFFSET 0) AS r;

CREATE TABLE results AS SELECT * FROM calls WITH NO DATA;
