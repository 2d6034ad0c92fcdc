/* sql/subsetting--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION subsetting UPDATE TO '1.1'" to load this file. \quit

--
-- Key to bucket: JumpBackAnchorHash
--
-- hash4j's ConsistentJumpBackAnchorBucketSetHasher (SplitMix64): JumpBackHash
-- with the removal of any bucket.  A set of buckets is (buckets, removed):
-- hash4j's historicMaxNumBuckets and its stack of removed buckets, oldest
-- first; or state: the bytes of hash4j's getState().

CREATE FUNCTION jumpbackanchorhash(key bigint, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bigint, int, int[]) IS
'bucket of a key among buckets 0 .. buckets - 1 less the removed ones (oldest first), exactly as hash4j''s jumpBackAnchorHash(splitMix64_V1()); with nothing removed, jumpbackhash(key, buckets)';

CREATE FUNCTION jumpbackanchorhash(key text, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(text, int, int[]) IS
'bucket of a text key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key bytea, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bytea, int, int[]) IS
'bucket of a bytea key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key uuid, buckets int, removed int[] DEFAULT '{}')
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(uuid, int, int[]) IS
'bucket of a uuid key: jumpbackanchorhash(xxh3_64(key), buckets, removed)';

CREATE FUNCTION jumpbackanchorhash(key bigint, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bigint_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bigint, bytea) IS
'bucket of a key in the set of buckets whose state is hash4j''s getState() bytes, exactly as hash4j''s setState(state).getBucket(key)';

CREATE FUNCTION jumpbackanchorhash(key text, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_text_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(text, bytea) IS
'bucket of a text key: jumpbackanchorhash(xxh3_64(key), state)';

CREATE FUNCTION jumpbackanchorhash(key bytea, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_bytea_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(bytea, bytea) IS
'bucket of a bytea key: jumpbackanchorhash(xxh3_64(key), state)';

CREATE FUNCTION jumpbackanchorhash(key uuid, state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_uuid_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash(uuid, bytea) IS
'bucket of a uuid key: jumpbackanchorhash(xxh3_64(key), state)';

CREATE FUNCTION jumpbackanchorhash_state(buckets int, removed int[] DEFAULT '{}')
RETURNS bytea
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_state(int, int[]) IS
'the state (hash4j''s getState() bytes: buckets, then each removed bucket oldest first, as 4-byte little-endian integers) of buckets with the removed ones';

CREATE FUNCTION jumpbackanchorhash_buckets(state bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_buckets'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_buckets(bytea) IS
'the buckets of a state: the number of buckets ever in use (hash4j''s historicMaxNumBuckets), removed ones included';

CREATE FUNCTION jumpbackanchorhash_removed(state bytea)
RETURNS int[]
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_removed'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_removed(bytea) IS
'the removed buckets of a state, oldest first';

CREATE FUNCTION jumpbackanchorhash_add_bucket(INOUT buckets int, INOUT removed int[] DEFAULT '{}',
                                              OUT bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_add_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_add_bucket(int, int[]) IS
'hash4j''s addBucket(): the set with one bucket more, and that bucket: the most recently removed one, or, with none removed, the new bucket number buckets';

CREATE FUNCTION jumpbackanchorhash_add_bucket(INOUT state bytea, OUT bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_add_bucket_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_add_bucket(bytea) IS
'hash4j''s addBucket() on a state: the new state and the bucket added (the most recently removed one, or a new last one)';

CREATE FUNCTION jumpbackanchorhash_remove_bucket(INOUT buckets int, INOUT removed int[], bucket int)
RETURNS record
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_remove_bucket'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_remove_bucket(int, int[], int) IS
'hash4j''s removeBucket(bucket): the set without that bucket; only its keys move. The last bucket with none removed shrinks buckets; the only bucket left empties the set (0 buckets)';

CREATE FUNCTION jumpbackanchorhash_remove_bucket(state bytea, bucket int)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jumpbackanchorhash_remove_bucket_state'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackanchorhash_remove_bucket(bytea, int) IS
'hash4j''s removeBucket(bucket) on a state: the new state, without that bucket';


--
-- Hash operator classes: PARTITION BY HASH placed by JumpBackHash
--

-- For each number of buckets N, six hash operator classes
-- jumpbackhash<N>_{int2,int4,int8,text,bytea,uuid}_ops: PARTITION BY HASH
-- (key jumpbackhash<N>_<type>_ops) with N partitions of MODULUS N puts a row
-- in the partition with REMAINDER jumpbackhash(key, N) (see
-- src/partition_hash.c for how, and docs/sharding.md).  The six classes of
-- one N are in one family, jumpbackhash<N>_ops, which also holds the
-- cross-type = operators of int2, int4 and int8, so that an int4 value
-- prunes a bigint key.  Support function 1 is always the type's built-in
-- hash; support function 2 is jumpbackhash<N>_<type>_partition_hash, whose C
-- code reads N from its name.  Each N costs 37 catalog objects; N = 1 to 256
-- add about 4 MB to the catalog of a database and take about 0.5 s to create.

CREATE FUNCTION jumpbackhash_operator_classes_ddl(buckets int, schema name, library text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    -- type in the names, SQL type, support function 1 (the built-in hash)
    types constant text[][] := ARRAY[
        ['int2', 'smallint', 'hashint2(smallint)'],
        ['int4', 'integer', 'hashint4(integer)'],
        ['int8', 'bigint', 'hashint8(bigint)'],
        ['text', 'text', 'hashtext(text)'],
        ['bytea', 'bytea', '(bytea, bytea) pg_catalog.hashvarlena(internal)'],
        ['uuid', 'uuid', 'uuid_hash(uuid)']];
    family constant text := format('%I.%I', schema, format('jumpbackhash%s_ops', buckets));
    ddl text := '';
    support text;
    i int;
BEGIN
    IF buckets < 1 THEN
        RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    ddl := format('CREATE OPERATOR FAMILY %s USING hash;', family);
    FOR i IN 1 .. 6 LOOP
        support := format('%I.%I', schema, format('jumpbackhash%s_%s_partition_hash', buckets, types[i][1]));
        ddl := ddl || format(
            'CREATE FUNCTION %1$s(key %2$s, seed bigint) RETURNS bigint AS %3$L, %4$L'
            ' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;'
            ' COMMENT ON FUNCTION %1$s(%2$s, bigint) IS %5$L;'
            ' CREATE OPERATOR CLASS %6$I.%7$I FOR TYPE %2$s USING hash %8$s AS'
            ' OPERATOR 1 pg_catalog.= (%2$s, %2$s), FUNCTION 1 %9$s, FUNCTION 2 %1$s(%2$s, bigint);',
            support, types[i][2], library, 'jumpbackhash_partition_hash_' || types[i][1],
            format('partition hash of jumpbackhash%s_%s_ops', buckets, types[i][1]),
            schema, format('jumpbackhash%s_%s_ops', buckets, types[i][1]),
            'FAMILY ' || family,
            CASE WHEN types[i][3] LIKE '(%' THEN types[i][3] ELSE 'pg_catalog.' || types[i][3] END);
    END LOOP;
    RETURN ddl || format(
        'ALTER OPERATOR FAMILY %s USING hash ADD'
        ' OPERATOR 1 pg_catalog.= (smallint, integer), OPERATOR 1 pg_catalog.= (smallint, bigint),'
        ' OPERATOR 1 pg_catalog.= (integer, smallint), OPERATOR 1 pg_catalog.= (integer, bigint),'
        ' OPERATOR 1 pg_catalog.= (bigint, smallint), OPERATOR 1 pg_catalog.= (bigint, integer);', family);
END
$function$;

COMMENT ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) IS
'the SQL that creates, in schema, the hash operator classes jumpbackhash<buckets>_{int2,int4,int8,text,bytea,uuid}_ops and their support functions in the C library library';

-- The classes for 1 to 256 buckets, members of the extension.
DO $install$
BEGIN
    FOR n IN 1 .. 256 LOOP
        EXECUTE jumpbackhash_operator_classes_ddl(n, current_schema(), 'MODULE_PATHNAME');
    END LOOP;
END
$install$;

CREATE FUNCTION jumpbackhash_create_operator_classes(buckets int)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    extension oid;
    schema name;
    library text;
    ddl text;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'permission denied to create the jumpbackhash operator classes for % buckets', buckets
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Their support functions are C functions, which only a superuser may create.',
                  HINT = 'The classes for 1 to 256 buckets are installed with the extension, and everyone may use them.';
    END IF;
    IF buckets < 1 THEN
        RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT e.oid, n.nspname INTO extension, schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'subsetting';
    IF EXISTS (SELECT FROM pg_opclass
               WHERE opcname = format('jumpbackhash%s_int8_ops', buckets)
                 AND opcnamespace = (SELECT oid FROM pg_namespace WHERE nspname = schema)) THEN
        RAISE EXCEPTION 'the jumpbackhash operator classes for % buckets exist already', buckets
            USING ERRCODE = 'duplicate_object',
                  DETAIL = CASE WHEN buckets <= 256
                                THEN 'The extension installs the classes for 1 to 256 buckets.'
                                ELSE format('Schema %I holds jumpbackhash%s_int8_ops.', schema, buckets) END;
    END IF;
    -- The C library, as the extension's own jumpbackhash(bigint, int) names it.
    SELECT p.probin INTO library
    FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
    WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass
      AND d.refobjid = extension AND d.deptype = 'e'
      AND p.proname = 'jumpbackhash' AND p.proargtypes = '20 23'::oidvector;
    EXECUTE format('SELECT %I.jumpbackhash_operator_classes_ddl($1, $2, $3)', schema)
    INTO ddl USING buckets, schema, library;
    EXECUTE ddl;
    -- Not members of the extension, and independent of it: pg_dump dumps
    -- them (a dump holds only CREATE EXTENSION for the members), ALTER
    -- EXTENSION UPDATE leaves them, and DROP EXTENSION leaves them working
    -- (a DEPENDS ON EXTENSION would make DROP EXTENSION drop the support
    -- functions and leave the classes without them, under tables that use
    -- them).
    RETURN QUERY
    SELECT format('%I.%I', schema, format('jumpbackhash%s_%s_ops', buckets, name))
    FROM unnest(ARRAY['int2', 'int4', 'int8', 'text', 'bytea', 'uuid']) AS name;
END
$function$;

COMMENT ON FUNCTION jumpbackhash_create_operator_classes(int) IS
'superuser only: creates the hash operator classes jumpbackhash<buckets>_{int2,int4,int8,text,bytea,uuid}_ops for a number of buckets the extension does not install (it installs 1 to 256), in the extension''s schema; returns their names';

CREATE FUNCTION jumpbackhash_partitioning_problems(parent regclass)
RETURNS SETOF text
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    key_columns int;
    class text;
    key_collation oid;
    buckets int;
    part record;
    remainders int[] := '{}';
    moduli_ok boolean := true;
BEGIN
    SELECT p.partnatts,
           (SELECT opcname FROM pg_opclass WHERE oid = p.partclass[0]),
           p.partcollation[0]
    INTO key_columns, class, key_collation
    FROM pg_partitioned_table p
    WHERE p.partrelid = parent AND p.partstrat = 'h';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by hash', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF class !~ '^jumpbackhash[1-9][0-9]*_(int2|int4|int8|text|bytea|uuid)_ops$' THEN
        IF EXISTS (SELECT FROM pg_partitioned_table p, unnest(p.partclass::oid[]) AS c(oid), pg_opclass o
                   WHERE p.partrelid = parent AND o.oid = c.oid AND o.opcname ~ '^jumpbackhash[0-9]+_') THEN
            RETURN NEXT format('the first key column of %s does not use a jumpbackhash operator class, a later one does: '
                               'rows are not placed by jumpbackhash', parent);
        ELSE
            RETURN NEXT format('the partition key of %s uses no jumpbackhash operator class', parent);
        END IF;
        RETURN;
    END IF;
    buckets := substring(class FROM '^jumpbackhash([0-9]+)_')::int;
    IF key_columns > 1 THEN
        RETURN NEXT format('the partition key of %s has %s columns: with more than one, rows are not placed by '
                           'jumpbackhash(key, %s) but by a hash of all columns', parent, key_columns, buckets);
    END IF;
    IF key_collation <> 0 AND NOT (SELECT collisdeterministic FROM pg_collation WHERE oid = key_collation) THEN
        RETURN NEXT format('the partition key of %s has the nondeterministic collation %s: no row can be placed',
                           parent, key_collation::regcollation);
    END IF;
    FOR part IN
        SELECT c.oid::regclass AS partition,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'modulus (\d+)')::int AS modulus,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'remainder (\d+)')::int AS remainder
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = parent
        ORDER BY remainder, modulus
    LOOP
        IF part.modulus <> buckets THEN
            moduli_ok := false;
            RETURN NEXT format('partition %s has MODULUS %s, not %s: it holds the rows with '
                               'jumpbackhash(key, %s) %% %s = %s', part.partition, part.modulus, buckets,
                               buckets, part.modulus, part.remainder);
        END IF;
        remainders := remainders || part.remainder;
    END LOOP;
    IF moduli_ok THEN
        RETURN QUERY
        SELECT format('no partition of %s for bucket %s: inserting a row of that bucket fails', parent, b)
        FROM generate_series(0, buckets - 1) AS b
        WHERE b <> ALL (remainders)
        ORDER BY b
        LIMIT 10;
    END IF;
END
$function$;

COMMENT ON FUNCTION jumpbackhash_partitioning_problems(regclass) IS
'what keeps a table partitioned by hash with a jumpbackhash<N>_<type>_ops class from holding exactly the rows with jumpbackhash(key, N) = b in its partition of REMAINDER b: a partition of another MODULUS than N, more than one key column, a nondeterministic collation, missing buckets; no row if none';



--
-- Resharding
--


--
-- Partition ring
--

-- Values carry a SHA-256 digest since 1.1 (format 2; format 1 still reads):
-- ring_info's fingerprint is that digest, in hex.
COMMENT ON FUNCTION ring_info(partition_ring) IS
'summary of a ring: sizes, seed, fingerprint (SHA-256 digest of its contents, hex), largest |balance| in percent, zone and region dispersion';

-- Lookups by key type, handoff nodes, batches

CREATE FUNCTION ring_partition(ring partition_ring, key text)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, text) IS
'partition of a text key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_partition(ring partition_ring, key bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, bytea) IS
'partition of a bytea key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_partition(ring partition_ring, key uuid)
RETURNS int
AS 'MODULE_PATHNAME', 'ring_partition_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition(partition_ring, uuid) IS
'partition of a uuid key: ring_partition(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key text)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, text) IS
'node ids of the replicas of a text key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key bytea)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, bytea) IS
'node ids of the replicas of a bytea key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_nodes(ring partition_ring, key uuid)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_nodes_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_nodes(partition_ring, uuid) IS
'node ids of the replicas of a uuid key''s partition, primary first: ring_nodes(ring, xxh3_64(key))';

CREATE FUNCTION ring_partition_handoff_nodes(ring partition_ring, partition int,
                                             count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_partition_handoff_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_partition_handoff_nodes(partition_ring, int, int) IS
'up to count further nodes to try for a partition when its primaries are down, in the order of OpenStack Swift''s get_more_nodes: nodes in new regions first, then in new zones, then the others; never a primary, never a node twice';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key bigint, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, bigint, int) IS
'up to count handoff nodes of a 64-bit key: ring_partition_handoff_nodes(ring, ring_partition(ring, key), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key text, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, text, int) IS
'up to count handoff nodes of a text key: ring_handoff_nodes(ring, xxh3_64(key), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key bytea, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, bytea, int) IS
'up to count handoff nodes of a bytea key: ring_handoff_nodes(ring, xxh3_64(key), count)';

CREATE FUNCTION ring_handoff_nodes(ring partition_ring, key uuid, count int DEFAULT 3)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ring_handoff_nodes_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ring_handoff_nodes(partition_ring, uuid, int) IS
'up to count handoff nodes of a uuid key: ring_handoff_nodes(ring, xxh3_64(key), count)';

CREATE FUNCTION ring_nodes(ring partition_ring, keys bigint[],
                           OUT key bigint, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, bigint[]) IS
'one row per key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)), looked up with the ring''s memory latency hidden; at most 4194304 keys';

CREATE FUNCTION ring_nodes(ring partition_ring, keys text[],
                           OUT key text, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, text[]) IS
'one row per text key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';

CREATE FUNCTION ring_nodes(ring partition_ring, keys bytea[],
                           OUT key bytea, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_bytea'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, bytea[]) IS
'one row per bytea key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';

CREATE FUNCTION ring_nodes(ring partition_ring, keys uuid[],
                           OUT key uuid, OUT partition int, OUT nodes int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ring_nodes_batch_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION ring_nodes(partition_ring, uuid[]) IS
'one row per uuid key of the array, in its order: the key, its partition and the node ids of its replicas (as ring_nodes(ring, key)); at most 4194304 keys';
