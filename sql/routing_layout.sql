-- routing_layout(parent): what a client needs to route a key of a sharded
-- table (docs/reference.md; docs/scaling-out.md, "Routing keys in the
-- application").  Each document is checked against where the database put
-- every row (tableoid): a key's bucket computed from the document alone (its
-- hash function, key type, buckets and removed buckets), then its partition
-- and server looked up in the document's list.  The table of
-- test/engine_move_helpers.sql (HASH, jumpbackhash3_int8_ops, 3 partitions
-- here), then with a partition on a server, then while a move runs; and
-- tables partitioned BY LIST by each hash function, of each key type.
\i test/engine_move_helpers.sql

-- The route of a key by the document alone: its bucket, its partition and
-- its server.
CREATE FUNCTION pg_temp.route(layout jsonb, key anyelement, OUT bucket int, OUT partition text, OUT server text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT %s($1::%s, $2%s)', layout->>'hash_function', layout->>'key_type',
                   CASE WHEN layout->>'method' = 'jumpbackanchorhash' THEN ', $3' ELSE '' END)
    INTO bucket
    USING key, (layout->>'buckets')::int, ARRAY(SELECT jsonb_array_elements_text(layout->'removed'))::int[];
    SELECT p->>'partition', p->>'server' INTO partition, server
    FROM jsonb_array_elements(layout->'partitions') AS p WHERE (p->>'bucket')::int = bucket;
END
$$;

-- The rows of a table whose route by its document is not where they are
-- (their partition here, and that partition's server in partition_placement);
-- key: the key of a row t, as the client computes it.
CREATE FUNCTION pg_temp.misrouted(parent regclass, key text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format($q$
        SELECT count(*) FROM (SELECT t.tableoid, (pg_temp.route(routing_layout(%1$L), %2$s)).* FROM %1$s AS t) AS r
        LEFT JOIN partition_placement p ON p.partition = r.tableoid
        WHERE r.partition::regclass IS DISTINCT FROM r.tableoid OR r.server IS DISTINCT FROM p.server$q$,
        parent, key) INTO n;
    RETURN n;
END
$$;

-- What a document says but its servers' options and its version (the
-- options name this cluster's socket and port).
CREATE FUNCTION pg_temp.shown(layout jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT layout - 'servers' - 'version' || jsonb_build_object('servers', (
        SELECT coalesce(jsonb_object_agg(s.key, (SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys(s.value) AS k)), '{}')
        FROM jsonb_each(layout->'servers') AS s))
$$;
SET search_path = engine_move, public;

-- All here.
SELECT jsonb_pretty(pg_temp.shown(routing_layout('em')));
SELECT pg_temp.misrouted('em', 't.id') AS misrouted, (SELECT count(*) FROM em) AS rows;
SELECT routing_layout('em')->>'version' AS version_here \gset

-- em_1 on the server: its entry names the server and the table there; the
-- server's entry, the options a client connects with (not its others); a
-- new version.
ALTER SERVER engine_move_server OPTIONS (ADD fetch_size '500', ADD application_name 'not for clients');
CALL partition_move('em_1', 'engine_move_server');
SELECT jsonb_pretty(pg_temp.shown(routing_layout('em')) #> '{partitions}') AS partitions,
       pg_temp.shown(routing_layout('em'))->'servers' AS servers,
       routing_layout('em')->'servers'->'engine_move_server'->>'dbname' AS dbname,
       routing_layout('em')->>'version' <> :'version_here' AS new_version;
SELECT pg_temp.misrouted('em', 't.id') AS misrouted, (SELECT count(*) FROM em) AS rows;
SELECT routing_layout('em')->>'version' AS version_there \gset

-- While em_1 moves back: the operation, and its bucket, whose keys go
-- through this server; another version, which is the one before again
-- once the move is undone (the same layout), and a third once it is done.
CALL reshard_begin('em', 'move', 'em_1', NULL);
CALL pg_temp.step_to('copy');
SELECT routing_layout('em')->'in_progress' AS in_progress,
       routing_layout('em')->>'version' NOT IN (:'version_here', :'version_there') AS new_version;
CALL reshard_abort('em');
SELECT routing_layout('em')->'in_progress' AS in_progress,
       routing_layout('em')->>'version' = :'version_there' AS version_there_again;
CALL partition_move('em_1', NULL);
SELECT routing_layout('em')->>'version' = :'version_here' AS version_here_again,
       pg_temp.misrouted('em', 't.id') AS misrouted;

-- Tables BY LIST: each hash function, each key type, keys that are
-- expressions; the same rows everywhere (1,000 keys, the text one
-- non-ASCII too).
CREATE TABLE keys AS
SELECT i::bigint AS i, 'ключ-' || i AS t, decode(md5(i::text), 'hex') AS b,
       md5(i::text)::uuid AS u FROM generate_series(1, 1000) AS i;
CREATE TABLE by_text (i bigint, t text) PARTITION BY LIST (jumpbackhash(t, 4));
CREATE TABLE by_bytea (i bigint, b bytea) PARTITION BY LIST (jumphash(b, 3));
CREATE TABLE by_uuid (i bigint, u uuid) PARTITION BY LIST (jumpbackanchorhash(u, 5, '{1,3}'));
CREATE TABLE by_expression (i bigint, t text) PARTITION BY LIST (jumpbackhash(xxh3_64(t || '/' || i::text), 2));
SELECT format('CREATE TABLE %s_%s PARTITION OF %s FOR VALUES IN (%s)', t, b, t, b)
FROM (VALUES ('by_text', 4), ('by_bytea', 3), ('by_expression', 2)) AS x(t, n), generate_series(0, n - 1) AS b
UNION ALL
SELECT format('CREATE TABLE by_uuid_%s PARTITION OF by_uuid FOR VALUES IN (%s)', b, b) FROM unnest(ARRAY[0, 2, 4]) AS b \gexec
INSERT INTO by_text SELECT i, t FROM keys;
INSERT INTO by_bytea SELECT i, b FROM keys;
INSERT INTO by_uuid SELECT i, u FROM keys;
INSERT INTO by_expression SELECT i, t FROM keys;
SELECT t, l->>'method' AS method, l->>'hash_function' AS hash_function, l->>'key' AS key, l->>'key_column' AS key_column,
       l->>'key_type' AS key_type, l->>'key_hash' AS key_hash, l->>'buckets' AS buckets, l->>'removed' AS removed,
       jsonb_array_length(l->'partitions') AS partitions, l->'in_progress' AS in_progress
FROM unnest(ARRAY['by_text', 'by_bytea', 'by_uuid', 'by_expression']) AS t, routing_layout(t::regclass) AS l;
SELECT pg_temp.misrouted('by_text', 't.t') AS by_text, pg_temp.misrouted('by_bytea', 't.b') AS by_bytea,
       pg_temp.misrouted('by_uuid', 't.u') AS by_uuid,
       pg_temp.misrouted('by_expression', $$xxh3_64(t.t || '/' || t.i::text)$$) AS by_expression;

-- Anyone may call it, of any table: what it shows is in the catalogs.
SET ROLE engine_move_reader;
SELECT routing_layout('em')->>'buckets' AS buckets;
RESET ROLE;

-- A table not partitioned by the extension, and NULL.
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT routing_layout('keys');
\set VERBOSITY terse
SELECT routing_layout(NULL) IS NULL AS null_gives_null;

RESET search_path;
DROP TABLE engine_move.keys, engine_move.by_text, engine_move.by_bytea, engine_move.by_uuid, engine_move.by_expression;
CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
