-- src/sql/placement/placement_plan.sql
--	placement_plan: the moves that spread a sharded table's partitions over servers

-- The partitions of parent that must move so that each server of servers
-- (NULL: this server) holds floor(n / s) or ceil(n / s) of its n
-- partitions, and as few as possible move: a server keeps its partitions up
-- to its share, the servers that hold the most getting the larger shares;
-- every partition on a server not listed moves.  So, from a placement that
-- is already even, adding a server moves partitions only onto it, and
-- dropping one moves only its partitions.  Which partitions stay on a
-- server: its lowest buckets; the ones that move go, in bucket order, to
-- the servers short of their share, in the order of servers.  The plan
-- reads only this server's catalog.
CREATE FUNCTION placement_plan(parent regclass, servers name[])
RETURNS TABLE (partition regclass, bucket int, from_server name, to_server name)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    problem text;
    ext text;   -- the extension's schema (the search_path is pg_catalog's)
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
    SELECT coalesce(format('"%s"', u.server), 'NULL (this server)') INTO problem
    FROM unnest(servers) AS u(server) GROUP BY u.server HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'servers names % more than once', problem USING ERRCODE = 'invalid_parameter_value';
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
    SELECT x.extnamespace::regnamespace::text INTO STRICT ext FROM pg_extension x WHERE x.extname = 'subsetting';
    EXECUTE format('SELECT l.partition::text FROM %s.sharding_layout($1, true) AS l ORDER BY l.bucket IS NULL DESC LIMIT 1', ext)
    INTO problem USING parent;
    IF problem IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('SELECT l.partition::text FROM %s.sharding_layout($1, true) AS l WHERE l.bucket IS NULL LIMIT 1', ext)
    INTO problem USING parent;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'partition % of % is not the partition of one bucket', problem, parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Each partition must be FOR VALUES IN (b), or WITH (MODULUS n, REMAINDER b), for a bucket b.';
    END IF;
    RETURN QUERY EXECUTE format($query$
    WITH placed AS (
        SELECT p.partition, p.bucket, p.server,
               row_number() OVER (PARTITION BY p.server ORDER BY p.bucket) AS rank_on_server
        FROM %s.partition_placement AS p WHERE p."table" = $1),
    total AS (
        SELECT count(*) AS partitions, cardinality($2) AS servers FROM placed),
    share AS (
        SELECT u.server, u.ord,
               t.partitions / t.servers
               + CASE WHEN row_number() OVER (ORDER BY count(p.partition) DESC, u.ord) <= mod(t.partitions, t.servers)
                      THEN 1 ELSE 0 END AS share,
               count(p.partition) AS held
        FROM unnest($2) WITH ORDINALITY AS u(server, ord)
        CROSS JOIN total AS t
        LEFT JOIN placed AS p ON p.server IS NOT DISTINCT FROM u.server
        GROUP BY u.server, u.ord, t.partitions, t.servers),
    moving AS (
        SELECT p.partition, p.bucket, p.server, row_number() OVER (ORDER BY p.bucket) AS slot
        FROM placed AS p LEFT JOIN share AS s ON s.server IS NOT DISTINCT FROM p.server
        WHERE s.ord IS NULL OR p.rank_on_server > s.share),
    free AS (
        SELECT s.server, row_number() OVER (ORDER BY s.ord, g.i) AS slot
        FROM share AS s CROSS JOIN LATERAL generate_series(1, s.share - least(s.held, s.share)) AS g(i))
    SELECT m.partition, m.bucket, m.server, f.server
    FROM moving AS m JOIN free AS f USING (slot)
    ORDER BY m.slot$query$, ext)
    USING parent, servers;
END
$function$;

COMMENT ON FUNCTION placement_plan(regclass, name[]) IS
'the partitions of a sharded table to move so that each of servers (NULL: this server) holds its share within one partition, moving as few as possible: one row per move, with the partition, its bucket, the server it is on and the one it goes to';
