-- src/sql/placement/routing_layout.sql
--	routing_layout: what a client needs to route a key of a sharded table to its partition and server

-- One document per table partitioned by the extension (others: 22023, as
-- sharding_layout):
--   table, method, hash_function, key (the partition key's expression),
--   key_column (the column it is, else NULL), key_type (what the hash
--   function takes the key as: bigint, text, bytea or uuid; for the
--   operator classes, their type: smallint and integer are sign-extended),
--   key_hash (value: the key's value is its hash; xxh3_64: XXH3-64 of its
--   bytes, a text's in UTF-8, a uuid's 16 in network order), buckets,
--   removed;
--   partitions: per partition, its bucket (NULL: its bound is not one
--   bucket of the layout), its name here, its server (NULL: this one) and
--   the table there;
--   servers: per server named, what a client connects with, from its
--   postgres_fdw options (host, hostaddr, port, dbname, sslmode,
--   target_session_attrs; nothing else: secrets are the user mappings');
--   in_progress: NULL, or the operation on the table that has not ended
--   (reshard_progress: operation, phase, interrupted) and the buckets whose
--   keys a client sends through this server until the version changes
--   (NULL: every bucket; a move: the bucket it moves);
--   version: the first 16 hex digits of the SHA-256 of the rest, which
--   changes with the layout, where a partition lives, and an operation
--   beginning or ending.
-- As the caller: what it shows is in the catalogs, which every role may
-- read, and in reshard_progress, which shows the reshardings of the tables
-- the caller may read.
CREATE FUNCTION routing_layout(parent regclass) RETURNS jsonb
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    layout record;
    key_type text;
    document jsonb;
BEGIN
    SELECT l.method, l.hash_function, l.key, l.buckets, l.removed, l.operator_class INTO layout
    FROM @extschema@.sharding_layout(parent) AS l LIMIT 1;
    IF layout.method = 'hash_operator_class' THEN
        key_type := CASE substring(layout.operator_class FROM '_(int2|int4|int8|text|bytea|uuid)_ops$')
                    WHEN 'int2' THEN 'smallint' WHEN 'int4' THEN 'integer' WHEN 'int8' THEN 'bigint'
                    ELSE substring(layout.operator_class FROM '_(text|bytea|uuid)_ops$') END;
    ELSE
        -- (the hash function the partition key calls: its first argument's type)
        SELECT format_type(p.proargtypes[0], NULL) INTO STRICT key_type
        FROM pg_depend d JOIN pg_proc p ON p.oid = d.refobjid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_proc'::regclass
          AND p.proname = layout.method AND p.pronamespace = '@extschema@'::regnamespace;
    END IF;
    document := jsonb_build_object(
        'table', parent::text,
        'method', layout.method,
        'hash_function', layout.hash_function,
        'key', layout.key,
        'key_column', (SELECT a.attname FROM pg_attribute a
                       WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped
                         AND quote_ident(a.attname) = layout.key),
        'key_type', key_type,
        'key_hash', CASE WHEN key_type IN ('smallint', 'integer', 'bigint') THEN 'value' ELSE 'xxh3_64' END,
        'buckets', layout.buckets,
        'removed', to_jsonb(layout.removed),
        'partitions', coalesce((
            SELECT jsonb_agg(jsonb_build_object('bucket', p.bucket, 'partition', p.partition::text,
                                                'server', p.server, 'remote_table', p.remote_table)
                             ORDER BY p.bucket, p.partition::text)
            FROM @extschema@.partition_placement p WHERE p."table" = parent), '[]'),
        'servers', coalesce((
            SELECT jsonb_object_agg(s.srvname, (
                       SELECT coalesce(jsonb_object_agg(o.option_name, o.option_value), '{}')
                       FROM pg_options_to_table(s.srvoptions) AS o
                       WHERE o.option_name IN ('host', 'hostaddr', 'port', 'dbname', 'sslmode', 'target_session_attrs')))
            FROM pg_foreign_server s
            WHERE s.srvname IN (SELECT p.server FROM @extschema@.partition_placement p WHERE p."table" = parent)), '{}'),
        'in_progress', (
            SELECT jsonb_build_object('operation', r.operation, 'phase', r.phase, 'interrupted', r.interrupted,
                                      'buckets', CASE r.operation WHEN 'move' THEN jsonb_build_array(r.bucket) END)
            FROM @extschema@.reshard_progress r
            WHERE r.relid = parent AND r.phase NOT IN ('done', 'aborted')));
    RETURN document || jsonb_build_object('version',
        left(encode(sha256(convert_to(document::text, 'UTF8')), 'hex'), 16));
END
$function$;

COMMENT ON FUNCTION routing_layout(regclass) IS
'what a client needs to route a key of a table partitioned by the extension: method, hash function, key and how it is hashed, buckets, removed buckets, each partition with its bucket, server and table there, the servers'' connection options (no secrets), the operation in progress and the buckets to send through this server meanwhile, and a version that changes with all of these';
