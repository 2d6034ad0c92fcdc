--
-- jumpbackhash where users put it: a partition key with pruning, a stored
-- generated column, and an expression index.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;

-- PARTITION BY LIST on the bucket of the key.
CREATE TABLE accounts (id bigint NOT NULL, balance numeric NOT NULL)
    PARTITION BY LIST (jumpbackhash(id, 4));
CREATE TABLE accounts_0 PARTITION OF accounts FOR VALUES IN (0);
CREATE TABLE accounts_1 PARTITION OF accounts FOR VALUES IN (1);
CREATE TABLE accounts_2 PARTITION OF accounts FOR VALUES IN (2);
CREATE TABLE accounts_3 PARTITION OF accounts FOR VALUES IN (3);
INSERT INTO accounts SELECT i, i * 10 FROM generate_series(1, 10000) AS i;

-- Every row is in the partition its bucket names, and the partitions are even
-- (2,500 rows each expected, with a standard deviation of 43).
SELECT tableoid::regclass AS partition, count(*) BETWEEN 2350 AND 2650 AS about_a_quarter,
       count(*) FILTER (WHERE 'accounts_' || jumpbackhash(id, 4) <> tableoid::regclass::text) AS misplaced
FROM accounts GROUP BY 1 ORDER BY 1;

-- A query on the partition expression is pruned to one partition, at plan
-- time for a constant and at run time for a parameter.
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE jumpbackhash(id, 4) = 2;
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE jumpbackhash(id, 4) = jumpbackhash(1, 4) AND id = 1;
PREPARE by_key(bigint) AS SELECT * FROM accounts WHERE jumpbackhash(id, 4) = jumpbackhash($1, 4) AND id = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_key(1);
EXECUTE by_key(1);
RESET plan_cache_mode;
DEALLOCATE by_key;

-- A condition on the key alone cannot be pruned: every partition is scanned.
EXPLAIN (COSTS OFF) SELECT * FROM accounts WHERE id = 1;

-- Updating the key moves the row to its new partition.
UPDATE accounts SET id = 20001 WHERE id = 1;
SELECT tableoid::regclass = ('accounts_' || jumpbackhash(20001, 4))::regclass AS moved_to_its_bucket
FROM accounts WHERE id = 20001;

-- A stored generated column.
CREATE TABLE sessions (
    user_id bigint,
    shard int GENERATED ALWAYS AS (jumpbackhash(user_id, 16)) STORED
);
INSERT INTO sessions (user_id) VALUES (0), (1), (-1), (9223372036854775807), (NULL::bigint);
SELECT user_id, shard, shard IS NOT DISTINCT FROM jumpbackhash(user_id, 16) AS consistent
FROM sessions ORDER BY user_id NULLS LAST;

-- An expression index, used by a query on the same expression.
CREATE TABLE events (id bigint NOT NULL, payload text);
INSERT INTO events SELECT i, 'event ' || i FROM generate_series(1, 20000) AS i;
CREATE INDEX events_bucket ON events (jumpbackhash(id, 64));
ANALYZE events;
EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE jumpbackhash(id, 64) = 7;
SELECT count(*) = (SELECT count(*) FROM generate_series(1, 20000) AS i WHERE jumpbackhash(i, 64) = 7)
    AS index_agrees
FROM events WHERE jumpbackhash(id, 64) = 7;

DROP TABLE accounts, sessions, events;
