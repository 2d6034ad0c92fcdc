/* sql/subsetting--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION subsetting" to load this file. \quit

--
-- Key to bucket: consistent hashing
--

CREATE FUNCTION jumpbackhash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by JumpBackHash with SplitMix64 (Ertl 2024), as hash4j''s ConsistentHashing.jumpBackHash(splitMix64_V1())';

CREATE FUNCTION jumphash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by jump consistent hash (Lamping and Veach 2014), as the paper''s C++ code and ClickHouse''s jumpConsistentHash';

--
-- Keys of any type: a stable 64-bit key hash, and the buckets of text, bytea
-- and uuid keys
--

CREATE FUNCTION xxh3_64(key text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(text) IS
'XXH3-64 (seed 0) of the UTF-8 bytes of the text, whatever the database encoding, as a signed 64-bit integer';

CREATE FUNCTION xxh3_64(key bytea)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(bytea) IS
'XXH3-64 (seed 0) of the bytes, as a signed 64-bit integer';

CREATE FUNCTION xxh3_64(key uuid)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(uuid) IS
'XXH3-64 (seed 0) of the 16 bytes of the uuid in network byte order, as a signed 64-bit integer';

CREATE FUNCTION jumpbackhash(key text, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(text, int) IS
'bucket in [0, buckets) of a text key: jumpbackhash(xxh3_64(key), buckets)';

CREATE FUNCTION jumpbackhash(key bytea, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bytea, int) IS
'bucket in [0, buckets) of a bytea key: jumpbackhash(xxh3_64(key), buckets)';

CREATE FUNCTION jumpbackhash(key uuid, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(uuid, int) IS
'bucket in [0, buckets) of a uuid key: jumpbackhash(xxh3_64(key), buckets)';

CREATE FUNCTION jumphash(key text, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(text, int) IS
'bucket in [0, buckets) of a text key: jumphash(xxh3_64(key), buckets)';

CREATE FUNCTION jumphash(key bytea, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bytea, int) IS
'bucket in [0, buckets) of a bytea key: jumphash(xxh3_64(key), buckets)';

CREATE FUNCTION jumphash(key uuid, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(uuid, int) IS
'bucket in [0, buckets) of a uuid key: jumphash(xxh3_64(key), buckets)';

--
-- Resharding: one bucket more, with only the keys that must move moved
--

CREATE PROCEDURE reshard_add_partition(parent regclass, new_partition regclass,
                                       INOUT moved_rows bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $procedure$
DECLARE
    parent_schema name;
    parent_name name;
    parent_owner regrole;
    parent_acl aclitem[];
    parent_comment text;
    key_def text;
    parts text[];
    call_prefix text;           -- jumpbackhash or jumphash, qualified as printed
    key_expr text;
    n int;
    partitions regclass[];
    bound text;
    b int;
    resuming boolean := false;
    not_empty boolean;
    deleted bigint;
    cols text;
    staging name;
    grant_row record;
    r record;
    c bigint;
    i int;
BEGIN
    IF parent IS NULL OR new_partition IS NULL THEN
        RAISE EXCEPTION 'parent and new_partition must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;

    SELECT pg_get_expr(pt.partexprs, pt.partrelid)
    INTO key_def
    FROM pg_partitioned_table pt
    WHERE pt.partrelid = parent AND pt.partstrat = 'l' AND pt.partnatts = 1 AND pt.partattrs[0] = 0;
    parts := regexp_match(key_def,
        '^((?:(?:"(?:[^"]|"")+"|[^".(), ]+)\.)?(?:jumpbackhash|jumphash))\((.*), (\d+)\)$');
    IF parts IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by LIST (jumpbackhash(key, n)) or LIST (jumphash(key, n))', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s.', coalesce(pg_get_partkeydef(parent), 'none'));
    END IF;
    call_prefix := parts[1];
    key_expr := parts[2];
    n := parts[3]::int;

    -- The partitions: one for each bucket 0 .. n - 1, FOR VALUES IN (bucket).
    partitions := array_fill(NULL::regclass, ARRAY[n]);
    FOR r IN SELECT inh.inhrelid::regclass AS part, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits inh JOIN pg_class c ON c.oid = inh.inhrelid
             WHERE inh.inhparent = parent
    LOOP
        bound := substring(r.bound FROM '^FOR VALUES IN \((\d+)\)$');
        b := bound::int;
        IF bound IS NULL OR b >= n OR partitions[b + 1] IS NOT NULL THEN
            RAISE EXCEPTION 'partition % of % is not the only one for one bucket in [0, %)', r.part, parent, n
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Its bound is %s.', r.bound);
        END IF;
        partitions[b + 1] := r.part;
    END LOOP;
    IF array_position(partitions, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no partition for bucket %', parent, array_position(partitions, NULL) - 1
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    IF partitions[n] = new_partition THEN
        -- A run that was interrupted after the first transaction: the new
        -- partition is already the last bucket; remove what is left of the
        -- moved rows from the others.
        resuming := true;
        n := n - 1;
    ELSE
        IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = new_partition) THEN
            RAISE EXCEPTION 'table % is already a partition', new_partition
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF EXISTS (SELECT FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
                   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                     AND d.refobjid = parent AND d.deptype IN ('a', 'i')) THEN
            RAISE EXCEPTION 'cannot reshard %, it owns a sequence (serial or identity column)', parent
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Detach the sequence with ALTER SEQUENCE ... OWNED BY NONE, or drop the identity.';
        END IF;
        IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = parent AND NOT tgisinternal)
           OR EXISTS (SELECT FROM pg_policy WHERE polrelid = parent)
           OR (SELECT relrowsecurity FROM pg_class WHERE oid = parent) THEN
            RAISE EXCEPTION 'cannot reshard %, it has triggers or row security', parent
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Drop them before, and create them again after.';
        END IF;

        SELECT c.relnamespace::regnamespace::name, c.relname, c.relowner::regrole, c.relacl,
               obj_description(c.oid, 'pg_class')
        INTO parent_schema, parent_name, parent_owner, parent_acl, parent_comment
        FROM pg_class c WHERE c.oid = parent;
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
        FROM pg_attribute
        WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '';

        -- Transaction 1: no writes through the parent from here on; copy the
        -- rows of bucket n (of n + 1) into the new partition, then put a
        -- parent for n + 1 buckets over the same partitions.
        EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', parent);
        EXECUTE format('SELECT EXISTS (SELECT FROM %s)', new_partition) INTO STRICT not_empty;
        IF not_empty THEN
            RAISE EXCEPTION 'table % is not empty', new_partition
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The new partition must be empty; a copy left by a failed run can be deleted.';
        END IF;
        moved_rows := 0;
        deleted := 0;
        FOR i IN 0 .. n - 1 LOOP
            EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s(%s, %s) = %s',
                           new_partition, cols, cols, partitions[i + 1], call_prefix, key_expr, n + 1, n);
            GET DIAGNOSTICS c = ROW_COUNT;
            moved_rows := moved_rows + c;
        END LOOP;
        -- A table on this server is checked against its new bound when it is
        -- attached: delete its moved rows now, in the same transaction as
        -- the copy (a foreign table is not checked, and waits for
        -- transaction 2, see below).
        FOR i IN 0 .. n - 1 LOOP
            CONTINUE WHEN (SELECT relkind FROM pg_class WHERE oid = partitions[i + 1]) = 'f';
            EXECUTE format('DELETE FROM %s WHERE %s(%s, %s) = %s',
                           partitions[i + 1], call_prefix, key_expr, n + 1, n);
            GET DIAGNOSTICS c = ROW_COUNT;
            deleted := deleted + c;
        END LOOP;

        staging := left('reshard_' || parent::oid || '_' || parent_name, 63);
        EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING ALL) PARTITION BY LIST (%s(%s, %s))',
                       parent_schema, staging, parent, call_prefix, key_expr, n + 1);
        FOR i IN 0 .. n - 1 LOOP
            EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, partitions[i + 1]);
            EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %s FOR VALUES IN (%s)',
                           parent_schema, staging, partitions[i + 1], i);
        END LOOP;
        EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %s FOR VALUES IN (%s)',
                       parent_schema, staging, new_partition, n);
        EXECUTE format('ALTER TABLE %I.%I OWNER TO %s', parent_schema, staging, parent_owner);
        FOR grant_row IN SELECT a.grantee, a.privilege_type, a.is_grantable FROM aclexplode(parent_acl) a
                         WHERE a.grantee <> parent_owner LOOP
            EXECUTE format('GRANT %s ON %I.%I TO %s%s', grant_row.privilege_type, parent_schema, staging,
                           CASE WHEN grant_row.grantee = 0 THEN 'PUBLIC'
                                ELSE quote_ident(grant_row.grantee::regrole::text) END,
                           CASE WHEN grant_row.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
        EXECUTE format('COMMENT ON TABLE %I.%I IS %L', parent_schema, staging, parent_comment);
        EXECUTE format('DROP TABLE %s', parent);
        EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', parent_schema, staging, parent_name);
        COMMIT;
        parent := format('%I.%I', parent_schema, parent_name)::regclass;
    END IF;

    -- Transaction 2: delete the rows copied to the new partition from the
    -- foreign tables they were in.  postgres_fdw commits the servers one
    -- after the other, not atomically: deleting in the transaction after the
    -- copy means that a failure leaves a row twice, never nowhere.  Apart
    -- from the moment between the two transactions, writes through the
    -- parent wait.
    EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', parent);
    IF resuming THEN
        deleted := 0;
    END IF;
    FOR i IN 0 .. n - 1 LOOP
        CONTINUE WHEN NOT resuming AND (SELECT relkind FROM pg_class WHERE oid = partitions[i + 1]) <> 'f';
        EXECUTE format('DELETE FROM %s WHERE %s(%s, %s) = %s',
                       partitions[i + 1], call_prefix, key_expr, n + 1, n);
        GET DIAGNOSTICS c = ROW_COUNT;
        deleted := deleted + c;
    END LOOP;
    IF resuming THEN
        moved_rows := deleted;
    ELSIF deleted <> moved_rows THEN
        RAISE WARNING 'copied % rows to %, but deleted % from the other partitions', moved_rows, new_partition, deleted
            USING DETAIL = 'Rows were written through the parent between the two transactions.';
    END IF;
    COMMIT;
END
$procedure$;

COMMENT ON PROCEDURE reshard_add_partition(regclass, regclass, bigint) IS
'grows a table partitioned BY LIST (jumpbackhash(key, n)) or (jumphash(key, n)) to n + 1 buckets with new_partition as bucket n, moving only the rows whose bucket changes; returns how many moved';

--
-- Backend subsetting
--

CREATE FUNCTION ringsteady_subset(frontend int, backends int, subset_size int,
                                  backend_scaling boolean DEFAULT true)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ringsteady_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ringsteady_subset(int, int, int, boolean) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Ringsteady subsetting (Google, ACM Queue 2023), in ring order; with backend_scaling (Figure 4c) exactly the Ringsteady post''s code, with an exact rotation';

CREATE FUNCTION rocksteadier_subset(frontend int, backends int, subset_size int,
                                    lot_size int DEFAULT 10)
RETURNS int[]
AS 'MODULE_PATHNAME', 'rocksteadier_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION rocksteadier_subset(int, int, int, int) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Rocksteadier subsetting (Google, ACM Queue 2023): lots of lot_size backends shuffled per lot of frontends, visited in Ringsteady order';

CREATE FUNCTION random_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'random_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION random_subset(int, int, int, bigint) IS
'the first subset_size backends of a shuffle of all backends (SplitMix64, Fisher-Yates) seeded by seed and frontend: random subsetting';

CREATE FUNCTION round_robin_subset(frontend int, backends int, subset_size int)
RETURNS int[]
AS 'MODULE_PATHNAME', 'round_robin_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION round_robin_subset(int, int, int) IS
'the subset_size consecutive backends from (frontend * subset_size) mod backends on: round-robin subsetting';

CREATE FUNCTION deterministic_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'deterministic_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION deterministic_subset(int, int, int, bigint) IS
'deterministic subsetting (Site Reliability Engineering, chapter 20) with the Google article''s round-robin choice of leftover backends: frontends in rounds of floor(backends / subset_size) share one seeded shuffle';

CREATE FUNCTION consistent_subset(frontend int, backends int, subset_size int, seed bigint DEFAULT 0)
RETURNS int[]
AS 'MODULE_PATHNAME', 'consistent_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION consistent_subset(int, int, int, bigint) IS
'the first subset_size backends clockwise from the frontend on a circle where frontends and backends sit at seeded random positions: consistent subsetting (Figure 4a of the Google article)';

CREATE FUNCTION subset_balance(algorithm text, frontends int, backends int, subset_size int,
                               seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                               OUT connections bigint, OUT min_connections int,
                               OUT max_connections int, OUT mean_connections float8,
                               OUT utilization float8, OUT achievable_utilization float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_balance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_balance(text, int, int, int, bigint, int) IS
'connection balance of a job (frontends 0..frontends-1) under a subsetting algorithm: connections per backend, the article''s utilization M*k/(N*max) and achievable utilization ceil(M*k/N)/max';

CREATE FUNCTION subset_diversity(algorithm text, frontends int, backends int, subset_size int,
                                 seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                                 OUT distinct_subsets int, OUT largest_group int)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_diversity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_diversity(text, int, int, int, bigint, int) IS
'subset diversity of a job under a subsetting algorithm: the number of distinct subsets and the most frontends sharing one';

CREATE FUNCTION subset_churn(algorithm text, frontends int, backends int, subset_size int,
                             new_frontends int, new_backends int, new_subset_size int,
                             seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                             OUT frontends_compared int, OUT dropped bigint,
                             OUT mean_dropped float8, OUT max_dropped int,
                             OUT frontends_losing_all int, OUT share_losing_all float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_churn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_churn(text, int, int, int, int, int, int, bigint, int) IS
'connection churn when a job is resized (frontend, backend or subset-size churn): connections dropped per frontend present before and after, and the frontends that lose their whole subset';

CREATE FUNCTION subset_spread(algorithm text, frontends int, backends int, subset_size int,
                              restart_width int, seed bigint DEFAULT 0, lot_size int DEFAULT 10,
                              OUT max_down int, OUT max_down_share float8,
                              OUT mean_max_down_share float8)
RETURNS record
AS 'MODULE_PATHNAME', 'subset_spread'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION subset_spread(text, int, int, int, int, bigint, int) IS
'subset spread of a job during a rolling restart of restart_width consecutive backends: the most of any frontend''s subset down at once';
--
-- Partition ring
--

CREATE TYPE partition_ring;

CREATE FUNCTION partition_ring_in(cstring)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_out(partition_ring)
RETURNS cstring
AS 'MODULE_PATHNAME', 'partition_ring_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_recv(internal)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_send(partition_ring)
RETURNS bytea
AS 'MODULE_PATHNAME', 'partition_ring_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: large rings live out of line uncompressed, so that the
-- lookups read their header with a cheap slice fetch.
CREATE TYPE partition_ring (
    INPUT = partition_ring_in,
    OUTPUT = partition_ring_out,
    RECEIVE = partition_ring_recv,
    SEND = partition_ring_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = external
);

COMMENT ON TYPE partition_ring IS
'2^part_power partitions, each with replicas placed on distinct weighted nodes in distinct failure domains; text form is JSON';

COMMENT ON FUNCTION partition_ring_in(cstring) IS 'partition_ring from its JSON text form (validated)';
COMMENT ON FUNCTION partition_ring_out(partition_ring) IS 'JSON text form of a partition_ring';
COMMENT ON FUNCTION partition_ring_recv(internal) IS 'partition_ring from its binary form (validated)';
COMMENT ON FUNCTION partition_ring_send(partition_ring) IS 'binary form of a partition_ring (fixed-width little-endian)';

CREATE FUNCTION ring_build(nodes int[], weights float8[], zones int[],
                           regions int[] DEFAULT NULL,
                           part_power int DEFAULT 16, replicas int DEFAULT 3,
                           seed bigint DEFAULT 0)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'ring_build'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION ring_build(int[], float8[], int[], int[], int, int, bigint) IS
'a new ring of 2^part_power partitions with replicas on the given nodes (one id, weight, zone and optional region each): every node within one partition-replica of its weighted share, replicas in distinct zones and regions as far as the topology allows; NULL if any argument but regions is NULL';

CREATE FUNCTION ring_rebalance(ring partition_ring, nodes int[], weights float8[],
                               zones int[], regions int[] DEFAULT NULL,
                               seed bigint DEFAULT 0)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'ring_rebalance'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION ring_rebalance(partition_ring, int[], float8[], int[], int[], bigint) IS
'the ring rebuilt for a new node table (added and removed nodes, changed weights and zones), moving as few replicas as the new shares allow and at most one replica of any partition (apart from replicas on removed nodes); repeat until ring_moves is empty to finish larger changes';

CREATE FUNCTION ring_partition(ring partition_ring, key bigint)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, bigint) IS
'partition of a 64-bit key: its top part_power bits, taken as unsigned';

CREATE FUNCTION ring_nodes(ring partition_ring, key bigint)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, bigint) IS
'node ids of the replicas of a 64-bit key''s partition, primary first';

CREATE FUNCTION ring_partition_nodes(ring partition_ring, partition int)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_partition_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition_nodes(partition_ring, int) IS
'node ids of the replicas of a partition, primary first';

CREATE FUNCTION ring_assignments(ring partition_ring,
                                 OUT partition int, OUT replica int, OUT node int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_assignments'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_assignments(partition_ring) IS
'every (partition, replica, node) of the ring, by partition then replica';

CREATE FUNCTION ring_node_stats(ring partition_ring,
                                OUT node int, OUT zone int, OUT region int,
                                OUT weight float8, OUT partitions bigint,
                                OUT primaries bigint, OUT wanted float8,
                                OUT quota bigint, OUT balance float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_node_stats'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 100;

COMMENT ON FUNCTION ring_node_stats(partition_ring) IS
'per node: partition-replicas held, primaries held, wanted (exact weighted share R * 2^p * w / W), quota (the builder''s target, below wanted where failure domains cap the node), and balance = 100 * (partitions - wanted) / wanted';

CREATE FUNCTION ring_dispersion(ring partition_ring, tier text DEFAULT 'zone')
RETURNS float8
AS 'MODULE_PATHNAME', 'ring_dispersion'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_dispersion(partition_ring, text) IS
'share of partition-replicas placed in a failure domain (tier ''region'', ''zone'' or ''node'') that already holds a replica of the same partition';

CREATE FUNCTION ring_info(ring partition_ring,
                          OUT part_power int, OUT replicas int, OUT partitions int,
                          OUT nodes int, OUT zones int, OUT regions int,
                          OUT seed bigint, OUT fingerprint text, OUT bytes bigint,
                          OUT max_balance float8, OUT zone_dispersion float8,
                          OUT region_dispersion float8)
RETURNS record
AS 'MODULE_PATHNAME', 'ring_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_info(partition_ring) IS
'summary of a ring: sizes, seed, content fingerprint, largest |balance| in percent, zone and region dispersion';

CREATE FUNCTION ring_moves(old_ring partition_ring, new_ring partition_ring,
                           OUT partition int, OUT replica int,
                           OUT from_node int, OUT to_node int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_moves'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 100;

COMMENT ON FUNCTION ring_moves(partition_ring, partition_ring) IS
'the replicas that change node from old_ring to new_ring (same part power and replicas): the data copies to plan';
