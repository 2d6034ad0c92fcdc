--
-- partition_placement and placement_plan: where the partitions of a sharded
-- table live, and the moves that spread them over servers.  The plans are
-- checked by their properties (each server within one partition of its
-- share, as few moves as the shares allow, none when already spread), not
-- against a copy of their own result; nothing connects to the servers.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS subsetting CASCADE;
CREATE EXTENSION subsetting;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
DROP SERVER IF EXISTS placement_a, placement_b, placement_c CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never
CREATE SERVER placement_a FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'a');
CREATE SERVER placement_b FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'b');
CREATE SERVER placement_c FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'c');

-- placed(name, servers, counts): a table NAME (id bigint) of 64 partitions
-- LIST (jumpbackhash(id, 64)), the first counts[1] on servers[1] (NULL:
-- here, a table), the next counts[2] on servers[2], and so on.
CREATE FUNCTION placed(name text, servers name[], counts int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    b int := 0;
BEGIN
    EXECUTE format('CREATE TABLE %I (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 64))', name);
    FOR i IN 1 .. cardinality(servers) LOOP
        FOR j IN 1 .. counts[i] LOOP
            IF servers[i] IS NULL THEN
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES IN (%s)', name || '_' || b, name, b);
            ELSE
                EXECUTE format('CREATE FOREIGN TABLE %I PARTITION OF %I FOR VALUES IN (%s) SERVER %I OPTIONS (table_name %L)',
                               name || '_' || b, name, b, servers[i], name || '_' || b);
            END IF;
            b := b + 1;
        END LOOP;
    END LOOP;
END
$$;

-- plan_outcome(table, servers[, weights]): the plan's moves, and the
-- placement it leads to: the partitions each server of servers holds after
-- it (in the order of servers), the moves, and the moves of each kind.
CREATE FUNCTION plan_outcome(t regclass, servers name[], weights float8[] DEFAULT NULL)
RETURNS TABLE (held_after text, moves bigint, moves_from text, moves_to text)
LANGUAGE sql AS $$
    WITH plan AS (SELECT * FROM placement_plan(t, servers, weights)),
    after AS (
        SELECT p.partition, CASE WHEN m.partition IS NULL THEN p.server ELSE m.to_server END AS server
        FROM partition_placement AS p LEFT JOIN plan AS m USING (partition)
        WHERE p."table" = t)
    SELECT (SELECT string_agg(coalesce(u.s, 'here') || ' ' || (SELECT count(*) FROM after AS a
                                                            WHERE a.server IS NOT DISTINCT FROM u.s), ', ' ORDER BY u.o)
            FROM unnest(servers) WITH ORDINALITY AS u(s, o)),
           (SELECT count(*) FROM plan),
           (SELECT string_agg(DISTINCT coalesce(from_server, 'here'), ', ') FROM plan),
           (SELECT string_agg(DISTINCT coalesce(to_server, 'here'), ', ') FROM plan)
$$;

-- The view: every partition, its bucket, where it lives and the table there.
SELECT placed('spread', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[22, 21, 21]);
CREATE FOREIGN TABLE spread_64 (id bigint NOT NULL, v text) SERVER placement_a;  -- (not a partition: not listed)
ALTER FOREIGN TABLE spread_30 OPTIONS (ADD schema_name 'elsewhere', SET table_name 'Bucket 30');
SELECT partition, bucket, server, remote_table, rows_estimate, bytes IS NOT NULL AS has_bytes
FROM partition_placement WHERE "table" = 'spread'::regclass AND bucket IN (0, 21, 22, 30, 43, 63) ORDER BY bucket;
SELECT count(*) AS partitions, count(DISTINCT bucket) AS buckets, count(*) FILTER (WHERE server IS NULL) AS here
FROM partition_placement WHERE "table" = 'spread'::regclass;

-- Spread already: no move, whatever the order of the servers.
SELECT * FROM plan_outcome('spread', ARRAY[NULL, 'placement_a', 'placement_b']::name[]);
SELECT * FROM plan_outcome('spread', ARRAY['placement_b', NULL, 'placement_a']::name[]);
-- A server added: 64 / 4 = 16 each; only onto it, 6 + 5 + 5 moves.
SELECT * FROM plan_outcome('spread', ARRAY[NULL, 'placement_a', 'placement_b', 'placement_c']::name[]);
-- A server dropped: only its 21 partitions move, 32 each after.
SELECT * FROM plan_outcome('spread', ARRAY[NULL, 'placement_a']::name[]);
-- Everything back here: the 42 foreign partitions.
SELECT * FROM plan_outcome('spread', ARRAY[NULL]::name[]);

-- From one server to three: 64 - ceil(64 / 3) = 42 moves, here keeping 22.
SELECT placed('local', ARRAY[NULL]::name[], ARRAY[64]);
SELECT * FROM plan_outcome('local', ARRAY[NULL, 'placement_a', 'placement_b']::name[]);
-- Off this server entirely: all 64 move, 32 on each.
SELECT * FROM plan_outcome('local', ARRAY['placement_a', 'placement_b']::name[]);
-- Which ones: the lowest buckets stay, the others go in bucket order to the
-- servers short of their share, in the order given.
SELECT min(bucket), max(bucket), count(*), to_server
FROM placement_plan('local', ARRAY[NULL, 'placement_a', 'placement_b']::name[]) GROUP BY to_server ORDER BY 1;

-- Uneven: the servers that hold the most keep the larger shares (64 / 3:
-- one share of 22, taken by the fullest server), so the fewest move.
SELECT placed('uneven', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[10, 40, 14]);
SELECT * FROM plan_outcome('uneven', ARRAY[NULL, 'placement_a', 'placement_b']::name[]);

-- The HASH form, 8 partitions over 3 servers: 3, 3, 2.
CREATE TABLE hashed (id bigint PRIMARY KEY) PARTITION BY HASH (id jumpbackhash8_int8_ops);
SELECT format('CREATE TABLE hashed_%s PARTITION OF hashed FOR VALUES WITH (MODULUS 8, REMAINDER %s)', b, b)
FROM generate_series(0, 7) AS b \gexec
SELECT * FROM plan_outcome('hashed', ARRAY[NULL, 'placement_a', 'placement_b']::name[]);

-- Weights: each server's share is 64 * w / W, rounded down or up.  Here
-- twice a and b: 32, 16, 16 (16 + 16 move).
SELECT * FROM plan_outcome('local', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[2, 1, 1]);
-- Equal weights are no weights.
SELECT (SELECT array_agg(p::text ORDER BY p.partition) FROM placement_plan('uneven', ARRAY[NULL, 'placement_a', 'placement_b']::name[]) AS p)
     = (SELECT array_agg(p::text ORDER BY p.partition) FROM placement_plan('uneven', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[3.5, 3.5, 3.5]) AS p)
       AS same;
-- A weight raised: only onto that server (b: 32, from 21); here and a
-- keep 16 each of their 22 and 21.
SELECT * FROM plan_outcome('spread', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[1, 1, 2]);
-- Weight 0: that server is emptied, and only its partitions move.
SELECT * FROM plan_outcome('spread', ARRAY[NULL, 'placement_a', 'placement_b']::name[], ARRAY[0, 1, 1]);
-- Shares that are not whole (6.4, 12.8, 44.8): 6 or 7, 12 or 13, 44 or 45,
-- adding up to 64; the fullest servers round up (a, which holds 40: 45;
-- b, 14: 13), so here, 10, gives 4 and b 1.
SELECT * FROM plan_outcome('uneven', ARRAY[NULL, 'placement_b', 'placement_a']::name[], ARRAY[0.1, 0.2, 0.7]);
-- Weights at the ends of float8 are exact in numeric: one server of
-- weight 1e308 and one of 5e-324 (the smallest float8 above 0) take 64
-- and 0.
SELECT * FROM plan_outcome('spread', ARRAY['placement_a', 'placement_b']::name[], ARRAY[1e308, 5e-324]);

-- Any placement, any weights: the plan's outcome against a search of its
-- own.  For random placements of 12 partitions on 4 servers (here, a, b,
-- c) and random whole weights 0 to 4 (exact shares, in bigint), every
-- server ends with floor(12 w / W) or ceil(12 w / W) partitions, and the
-- plan moves as few as the best choice of floors and ceilings allows,
-- found by trying all of them; each partition moves at most once, from
-- where it is, to a server of the list.
CREATE FUNCTION plan_against_search(cases int) RETURNS TABLE (cases_tried int, wrong_shares int, not_fewest int, bad_moves int)
LANGUAGE plpgsql AS $$
DECLARE
    servers name[] := ARRAY[NULL, 'placement_a', 'placement_b', 'placement_c'];
    homes int[];
    counts int[];
    weights int[];
    after int[];
    total int;
    fewest int;
    moves int;
    lo int;
    hi int;
    sum_shares int;
    excess int;
BEGIN
    cases_tried := 0; wrong_shares := 0; not_fewest := 0; bad_moves := 0;
    PERFORM setseed(0.42);
    FOR c IN 1 .. cases LOOP
        -- (12 partitions: each on a random one of the four servers)
        homes := ARRAY(SELECT 1 + floor(random() * 4)::int FROM generate_series(1, 12));
        counts := ARRAY(SELECT (SELECT count(*) FROM unnest(homes) AS h WHERE h = j)::int FROM generate_series(1, 4) AS j ORDER BY j);
        weights := ARRAY(SELECT floor(random() * 5)::int FROM generate_series(1, 4));
        CONTINUE WHEN (SELECT sum(w) FROM unnest(weights) AS w) = 0;
        PERFORM placed('searched', servers, counts);
        cases_tried := cases_tried + 1;
        total := (SELECT sum(w) FROM unnest(weights) AS w);
        -- the plan, and the outcome: each server's count after it
        DELETE FROM pg_temp.plan;
        INSERT INTO pg_temp.plan SELECT * FROM placement_plan('searched', servers, weights::float8[]);
        after := ARRAY(
            SELECT (SELECT count(*) FROM partition_placement AS p LEFT JOIN pg_temp.plan AS m USING (partition)
                    WHERE p."table" = 'searched'::regclass
                      AND (CASE WHEN m.partition IS NULL THEN p.server ELSE m.to_server END) IS NOT DISTINCT FROM u.s)::int
            FROM unnest(servers) WITH ORDINALITY AS u(s, o) ORDER BY u.o);
        moves := (SELECT count(*) FROM pg_temp.plan);
        IF EXISTS (SELECT FROM pg_temp.plan AS m JOIN partition_placement AS p USING (partition)
                   WHERE p.server IS DISTINCT FROM m.from_server OR m.to_server IS NOT DISTINCT FROM m.from_server
                      OR NOT EXISTS (SELECT FROM unnest(servers) AS u(s) WHERE u.s IS NOT DISTINCT FROM m.to_server))
           OR (SELECT count(*) <> count(DISTINCT partition) FROM pg_temp.plan) THEN
            bad_moves := bad_moves + 1;
        END IF;
        FOR i IN 1 .. 4 LOOP
            lo := (12 * weights[i]) / total;
            hi := lo + CASE WHEN (12 * weights[i]) % total = 0 THEN 0 ELSE 1 END;
            IF after[i] NOT BETWEEN lo AND hi THEN
                wrong_shares := wrong_shares + 1;
            END IF;
        END LOOP;
        -- the fewest moves: every choice of floor or ceiling per server
        -- whose shares add up to 12; a server moves out what it holds above
        -- its share
        fewest := NULL;
        FOR choice IN 0 .. 15 LOOP
            sum_shares := 0;
            excess := 0;
            FOR i IN 1 .. 4 LOOP
                lo := (12 * weights[i]) / total + CASE WHEN (choice >> (i - 1)) & 1 = 1 AND (12 * weights[i]) % total <> 0 THEN 1 ELSE 0 END;
                sum_shares := sum_shares + lo;
                excess := excess + greatest(counts[i] - lo, 0);
            END LOOP;
            IF sum_shares = 12 AND (fewest IS NULL OR excess < fewest) THEN
                fewest := excess;
            END IF;
        END LOOP;
        IF moves <> fewest THEN
            not_fewest := not_fewest + 1;
        END IF;
        DROP TABLE searched;
    END LOOP;
    RETURN NEXT;
END
$$;
CREATE TEMP TABLE plan (partition regclass, bucket int, from_server name, to_server name);
SELECT * FROM plan_against_search(100);

-- Refused, each naming what is wrong.
\set VERBOSITY default
SELECT * FROM placement_plan(NULL, ARRAY[NULL]::name[]);
SELECT * FROM placement_plan('spread', NULL);
SELECT * FROM placement_plan('spread', '{}');
SELECT * FROM placement_plan('spread', ARRAY['placement_a', 'placement_b', 'placement_a']::name[]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a', NULL]::name[]);
SELECT * FROM placement_plan('spread', ARRAY['placement_a', 'no_such_server']::name[]);
CREATE FOREIGN DATA WRAPPER placement_other;
CREATE SERVER placement_other_server FOREIGN DATA WRAPPER placement_other;
SELECT * FROM placement_plan('spread', ARRAY['placement_a', 'placement_other_server']::name[]);
CREATE TABLE plain (id bigint);
SELECT * FROM placement_plan('plain', ARRAY[NULL]::name[]);
CREATE TABLE odd (id bigint NOT NULL) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE odd_0 PARTITION OF odd FOR VALUES IN (0);
CREATE TABLE odd_1 PARTITION OF odd FOR VALUES IN (1, 5);
SELECT * FROM placement_plan('odd', ARRAY[NULL]::name[]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[1]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[[1], [2]]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[1, -0.5]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY['NaN', 1]::float8[]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[1, 'Infinity']::float8[]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[1, NULL]);
SELECT * FROM placement_plan('spread', ARRAY[NULL, 'placement_a']::name[], ARRAY[0, 0]);

-- Clean up.
SET client_min_messages = warning;
DROP TABLE spread, local, uneven, hashed, plain, odd;
DROP FOREIGN TABLE spread_64;
DROP SERVER placement_a, placement_b, placement_c, placement_other_server CASCADE;
DROP FOREIGN DATA WRAPPER placement_other;
DROP FUNCTION placed(text, name[], int[]), plan_outcome(regclass, name[], float8[]), plan_against_search(int);
