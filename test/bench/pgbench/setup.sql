-- test/bench/pgbench/setup.sql
--	Tables for the pgbench comparisons: a 16-way table partitioned by
--	jumpbackhash, the same with PostgreSQL's native hash partitioning and
--	with the operator class jumpbackhash16_int8_ops; three 16-way tables of
--	100,000 users (the class, native, LIST by jumpbackhash) for point
--	selects; and rings of part power 16 and 22 over 1,000 nodes in 5 zones.
CREATE EXTENSION IF NOT EXISTS subsetting;

CREATE TABLE events_jump (id bigint NOT NULL, payload int NOT NULL)
    PARTITION BY LIST (jumpbackhash(id, 16));
CREATE TABLE events_native (id bigint NOT NULL, payload int NOT NULL)
    PARTITION BY HASH (id);
CREATE TABLE events_opclass (id bigint NOT NULL, payload int NOT NULL)
    PARTITION BY HASH (id jumpbackhash16_int8_ops);
SELECT format('CREATE TABLE events_jump_%s PARTITION OF events_jump FOR VALUES IN (%s)', b, b),
       format('CREATE TABLE events_native_%s PARTITION OF events_native FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b),
       format('CREATE TABLE events_opclass_%s PARTITION OF events_opclass FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b)
FROM generate_series(0, 15) AS b \gexec

-- Point selects: the same 100,000 users in each; a primary key where the
-- form allows one (LIST by an expression does not: an index on id instead).
CREATE TABLE users_opclass (id bigint PRIMARY KEY, name text NOT NULL)
    PARTITION BY HASH (id jumpbackhash16_int8_ops);
CREATE TABLE users_native (id bigint PRIMARY KEY, name text NOT NULL)
    PARTITION BY HASH (id);
CREATE TABLE users_list (id bigint NOT NULL, name text NOT NULL)
    PARTITION BY LIST (jumpbackhash(id, 16));
CREATE INDEX ON users_list (id);
SELECT format('CREATE TABLE users_opclass_%s PARTITION OF users_opclass FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b),
       format('CREATE TABLE users_native_%s PARTITION OF users_native FOR VALUES WITH (MODULUS 16, REMAINDER %s)', b, b),
       format('CREATE TABLE users_list_%s PARTITION OF users_list FOR VALUES IN (%s)', b, b)
FROM generate_series(0, 15) AS b \gexec
INSERT INTO users_opclass SELECT i, 'user ' || i FROM generate_series(1, 100000) AS i;
INSERT INTO users_native SELECT * FROM users_opclass;
INSERT INTO users_list SELECT * FROM users_opclass;
VACUUM ANALYZE users_opclass, users_native, users_list;

CREATE TABLE rings (part_power int PRIMARY KEY, ring partition_ring NOT NULL);
INSERT INTO rings
SELECT p, ring_build(array_agg(i), array_agg((1 + i % 7)::float8), array_agg(i % 5),
                     part_power => p, replicas => 3)
FROM generate_series(1, 1000) AS i, (VALUES (16), (22)) AS parts(p)
GROUP BY p;
