-- test/bench/pgbench/setup.sql
--	Tables for the pgbench comparisons: a 16-way table partitioned by
--	jumpbackhash, the same with PostgreSQL's native hash partitioning, and
--	rings of part power 16 and 22 over 1,000 nodes in 5 zones.
CREATE EXTENSION IF NOT EXISTS subsetting;

CREATE TABLE events_jump (id bigint NOT NULL, payload int NOT NULL)
    PARTITION BY LIST (jumpbackhash(id, 16));
CREATE TABLE events_native (id bigint NOT NULL, payload int NOT NULL)
    PARTITION BY HASH (id);
SELECT format('CREATE TABLE events_jump_%s PARTITION OF events_jump FOR VALUES IN (%s)', b, b),
       format('CREATE TABLE events_native_%s PARTITION OF events_native FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
FROM generate_series(0, 15) AS b \gexec

CREATE TABLE rings (part_power int PRIMARY KEY, ring partition_ring NOT NULL);
INSERT INTO rings
SELECT p, ring_build(array_agg(i), array_agg((1 + i % 7)::float8), array_agg(i % 5),
                     part_power => p, replicas => 3)
FROM generate_series(1, 1000) AS i, (VALUES (16), (22)) AS parts(p)
GROUP BY p;
