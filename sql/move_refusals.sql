--
-- partition_move refuses, before it makes anything, what it cannot move:
-- each refusal names what to change.  (The moves themselves: phase by
-- phase, to a second database of this cluster, the regression tests
-- engine_move_*; between servers, TAP test 019; the servers here cannot be
-- reached.)
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
CREATE EXTENSION subsetting;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
DROP EXTENSION IF EXISTS dblink;
DROP SERVER IF EXISTS move_a, move_b CASCADE;
DROP FOREIGN DATA WRAPPER IF EXISTS move_other CASCADE;
DROP ROLE IF EXISTS move_owner;
RESET client_min_messages;
\set SHOW_CONTEXT never
CREATE SERVER move_a FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'a');
CREATE SERVER move_b FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'b');
CREATE USER MAPPING FOR CURRENT_USER SERVER move_a;
CREATE FOREIGN DATA WRAPPER move_other;
CREATE SERVER move_other FOREIGN DATA WRAPPER move_other;
CREATE TABLE m (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE m_%s PARTITION OF m FOR VALUES WITH (MODULUS 4, REMAINDER %s)', i, i)
FROM generate_series(0, 2) AS i \gexec
CREATE FOREIGN TABLE m_3 PARTITION OF m FOR VALUES WITH (MODULUS 4, REMAINDER 3) SERVER move_a;
CREATE TABLE plain (id int NOT NULL) PARTITION BY LIST (id);
CREATE TABLE plain_1 PARTITION OF plain FOR VALUES IN (1);

-- Arguments.
CALL partition_move(NULL, 'move_a');
CALL partition_move('m', 'move_a');
CALL partition_move('plain_1', 'move_a');
CALL partition_move('m_0', 'move_a', cutover_budget => NULL);
CALL partition_move('m_0', 'move_a', cutover_budget => '0 s');
CALL partition_move('m_0', 'move_a', cutover_attempts => 0);
CALL partition_move('m_0', NULL);
-- The servers.
CALL partition_move('m_0', 'nowhere');
CALL partition_move('m_0', 'move_other');
CALL partition_move('m_0', 'move_b');
CREATE USER MAPPING FOR CURRENT_USER SERVER move_b;
-- dblink makes the partition's table on the server.
CALL partition_move('m_0', 'move_b');
CREATE EXTENSION dblink;
-- Already there: nothing to do; a server that cannot be reached, named.
CALL partition_move('m_3', 'move_a');
\set VERBOSITY terse
CALL partition_move('m_3', 'move_b');
CALL partition_move('m_3', NULL);
\set VERBOSITY default

-- What a foreign partition cannot have, or what would be lost with the
-- partition dropped here: refused, all named at once.  (A table with a
-- foreign partition can have none of the first; u has none yet.)
CREATE TABLE refers (id bigint PRIMARY KEY);
CREATE TABLE u (id bigint NOT NULL REFERENCES refers) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE UNIQUE INDEX u_id ON u (id);
CREATE TABLE u_0 PARTITION OF u FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE u_1 PARTITION OF u FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE referring (id bigint REFERENCES u (id));
CALL partition_move('u_0', 'move_b');
-- The table's PRIMARY KEY and UNIQUE constraints before all that, with the
-- call that hands them to the partitions (the test unique_constraints).
ALTER TABLE u ADD CONSTRAINT u_pkey PRIMARY KEY (id), ADD CONSTRAINT u_unique UNIQUE (id);
CALL partition_move('u_0', 'move_b');
DROP TABLE u, referring;
CREATE FUNCTION m_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER m_touch BEFORE INSERT ON m_0 FOR EACH ROW EXECUTE FUNCTION m_touch();
CREATE VIEW m_0_rows AS SELECT * FROM m_0;
CREATE POLICY m_0_mine ON m_0 USING (true);
ALTER TABLE m_0 ENABLE ROW LEVEL SECURITY;
CALL partition_move('m_0', 'move_b');
DROP TRIGGER m_touch ON m_0;
DROP VIEW m_0_rows;
DROP POLICY m_0_mine ON m_0;
ALTER TABLE m_0 DISABLE ROW LEVEL SECURITY;
SET client_min_messages = error;
CREATE PUBLICATION move_pub FOR TABLE m;
RESET client_min_messages;
CALL partition_move('m_0', 'move_b');
DROP PUBLICATION move_pub;

-- Another role's partition.
CREATE ROLE move_owner;
ALTER TABLE m_2 OWNER TO move_owner;
CALL partition_move('m_2', 'move_b');
ALTER TABLE m_2 OWNER TO CURRENT_USER;

-- Nothing was made, nothing recorded.
SELECT count(*) AS states FROM reshard_state;
SELECT count(*) AS made FROM pg_class WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%'
                                       AND relname <> 'reshard_progress';

DROP TABLE m, plain, refers;
DROP SERVER move_a, move_b, move_other CASCADE;
DROP FOREIGN DATA WRAPPER move_other;
DROP ROLE move_owner;
DROP FUNCTION m_touch();
