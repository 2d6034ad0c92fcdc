-- src/sql/placement/placement_plan.sql
--	placement_plan: the moves that spread a sharded table's partitions over servers

-- The partitions of parent that must move so that each server of servers
-- (NULL: this server) holds its share of its n partitions, and as few as
-- possible move.  A server's share is n * w / W (w its weight, W the sum of
-- the weights; without weights, all are equal), rounded down or up: the
-- rounded shares add up to n, and those rounded up are first those of the
-- servers that hold more than the share rounded down (each keeps one
-- partition more: one move fewer), the fullest first, then the larger
-- remainder, then the order of servers.  A server keeps
-- its partitions up to its share; every partition on a server not listed,
-- or of weight 0, moves.  So, from a placement that is already even,
-- adding a server moves partitions only onto it, dropping one moves only
-- its partitions, and changing a weight moves only what the new shares
-- require.  Which partitions stay on a server: its lowest buckets; the
-- ones that move go, in bucket order, to the servers short of their share,
-- in the order of servers.  The shares are computed in numeric, exactly
-- (a weight is a float8, whose value numeric holds).  A table co-located
-- with others (colocate): each of their partitions goes where parent's of
-- its bucket goes, or is, in bucket order, parent's first.  The plan
-- reads only this server's catalog.
CREATE FUNCTION placement_plan(parent regclass, servers name[], weights float8[] DEFAULT NULL)
RETURNS TABLE (partition regclass, bucket int, from_server name, to_server name)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    problem text;
BEGIN
    IF parent IS NULL OR servers IS NULL THEN
        RAISE EXCEPTION 'placement_plan needs a table and an array of servers, not NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(servers) = 0 THEN
        RAISE EXCEPTION 'servers is empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name at least one foreign server; NULL stands for this server.';
    END IF;
    SELECT CASE WHEN u.server IS NULL THEN 'NULL (this server)' ELSE format('"%s"', u.server) END INTO problem
    FROM unnest(servers) AS u(server) GROUP BY u.server HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'servers names % more than once', problem USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF weights IS NOT NULL THEN
        IF array_ndims(weights) > 1 THEN
            RAISE EXCEPTION 'weights has % dimensions', array_ndims(weights)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give one weight per server, in the order of servers, in an array of one dimension.';
        END IF;
        IF cardinality(weights) <> cardinality(servers) THEN
            RAISE EXCEPTION 'weights has % elements, servers %', cardinality(weights), cardinality(servers)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give one weight per server, in the order of servers.';
        END IF;
        SELECT format('%s of %s', coalesce(w.weight::text, 'NULL'),
                      CASE WHEN w.server IS NULL THEN 'NULL (this server)' ELSE format('"%s"', w.server) END)
        INTO problem
        FROM unnest(weights, servers) WITH ORDINALITY AS w(weight, server, ord)
        WHERE w.weight IS NULL OR w.weight < 0 OR w.weight IN ('Infinity', 'NaN') ORDER BY w.ord LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'weight % is not a finite number, 0 or more', problem
                USING ERRCODE = CASE WHEN problem LIKE 'NULL of %' THEN 'null_value_not_allowed' ELSE 'invalid_parameter_value' END;
        END IF;
        IF NOT 0 < ANY (weights) THEN
            RAISE EXCEPTION 'every weight is 0'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'A server of weight 0 gets no partition; give at least one server a weight above 0.';
        END IF;
    END IF;
    SELECT u.server INTO problem FROM unnest(servers) AS u(server)
    WHERE u.server IS NOT NULL AND NOT EXISTS (SELECT FROM pg_foreign_server s WHERE s.srvname = u.server) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'server "%" does not exist', problem
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name foreign servers of postgres_fdw (CREATE SERVER), or NULL for this server.';
    END IF;
    SELECT s.srvname INTO problem FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
    WHERE s.srvname = ANY (servers) AND w.fdwname <> 'postgres_fdw' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'server "%" is not a postgres_fdw server', problem
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Partitions move only to and from servers of postgres_fdw.';
    END IF;
    SELECT l.partition::text INTO problem FROM @extschema@.sharding_layout(parent, true) AS l ORDER BY l.bucket IS NULL DESC LIMIT 1;
    IF problem IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT l.partition::text INTO problem FROM @extschema@.sharding_layout(parent, true) AS l WHERE l.bucket IS NULL LIMIT 1;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'partition % of % is not the partition of one bucket', problem, parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Each partition must be FOR VALUES IN (b), or WITH (MODULUS n, REMAINDER b), for a bucket b.';
    END IF;
    RETURN QUERY
    WITH placed AS (
        SELECT p.partition, p.bucket, p.server,
               row_number() OVER (PARTITION BY p.server ORDER BY p.bucket) AS rank_on_server
        FROM @extschema@.partition_placement AS p WHERE p."table" = parent),
    weighed AS (
        SELECT u.server, u.ord, u.weight::numeric AS weight,
               (SELECT count(*) FROM placed AS p WHERE p.server IS NOT DISTINCT FROM u.server) AS held,
               (SELECT count(*) FROM placed) AS partitions
        FROM unnest(servers, coalesce(weights, array_fill(1::float8, ARRAY[cardinality(servers)])))
             WITH ORDINALITY AS u(server, weight, ord)),
    -- (n * w / W = whole + remainder / W)
    exact AS (
        SELECT w.*, div(w.partitions * w.weight, t.total) AS whole, mod(w.partitions * w.weight, t.total) AS remainder
        FROM weighed AS w CROSS JOIN (SELECT sum(weight) AS total FROM weighed) AS t),
    share AS (
        SELECT e.server, e.ord, e.held,
               e.whole + CASE WHEN e.remainder > 0
                                   AND row_number() OVER (ORDER BY e.remainder > 0 DESC, e.held > e.whole DESC, e.held DESC,
                                                                   e.remainder DESC, e.ord)
                                       <= e.partitions - sum(e.whole) OVER ()
                              THEN 1 ELSE 0 END AS share
        FROM exact AS e),
    moving AS (
        SELECT p.partition, p.bucket, p.server, row_number() OVER (ORDER BY p.bucket) AS slot
        FROM placed AS p LEFT JOIN share AS s ON s.server IS NOT DISTINCT FROM p.server
        WHERE s.ord IS NULL OR p.rank_on_server > s.share),
    free AS (
        SELECT s.server, row_number() OVER (ORDER BY s.ord, g.i) AS slot
        FROM share AS s CROSS JOIN LATERAL generate_series(1, s.share - least(s.held, s.share)) AS g(i)),
    planned AS (
        SELECT m.partition, f.server AS to_server FROM moving AS m JOIN free AS f USING (slot)),
    -- (each bucket's server once the plan is done, for every table of the group)
    target AS (
        SELECT p.bucket, CASE WHEN x.partition IS NOT NULL THEN x.to_server ELSE p.server END AS server
        FROM placed AS p LEFT JOIN planned AS x USING (partition))
    SELECT q.partition, q.bucket, q.server, t.server
    FROM unnest(@extschema@.colocated_with(parent)) WITH ORDINALITY AS g(member, rank)
    JOIN @extschema@.partition_placement AS q ON q."table" = g.member
    JOIN target AS t ON t.bucket = q.bucket
    WHERE q.server IS DISTINCT FROM t.server
    ORDER BY q.bucket, g.rank;
END
$function$;

COMMENT ON FUNCTION placement_plan(regclass, name[], float8[]) IS
'the partitions of a sharded table to move so that each of servers (NULL: this server) holds its share, by weight (all equal by default), within one partition, moving as few as possible: one row per move, with the partition, its bucket, the server it is on and the one it goes to';
