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
-- One introspection function, sharding_layout, says how a table is
-- partitioned by the extension (method, key, bucket count, the partition of
-- every bucket); the view sharded_tables, the dry run, the misplaced-row
-- check and both resharding procedures read it and nothing else.  The
-- procedures run in phases, one transaction each, each phase a function
-- that takes and returns the plan (jsonb) that reshard_prepare makes after
-- checking everything: reshard_copy, reshard_swap, reshard_cleanup.  See
-- docs/resharding.md.

DROP PROCEDURE reshard_add_partition(regclass, regclass, bigint);

CREATE FUNCTION sharding_layout(parent regclass)
RETURNS TABLE (method text, hash_function text, key text, buckets int, removed int[], operator_class text,
               bucket int, partition regclass, partition_bound text)
LANGUAGE plpgsql STABLE STRICT
AS $function$
DECLARE
    key_def text;
    parts text[];
    strategy "char";
    key_attnum int2;
    class_oid oid;
    ext_schema name;
BEGIN
    SELECT pt.partstrat, pg_get_expr(pt.partexprs, pt.partrelid), pt.partattrs[0], pt.partclass[0]
    INTO strategy, key_def, key_attnum, class_oid
    FROM pg_catalog.pg_partitioned_table pt
    WHERE pt.partrelid = parent AND pt.partnatts = 1;
    SELECT x.extnamespace::regnamespace::name INTO ext_schema FROM pg_catalog.pg_extension x WHERE x.extname = 'subsetting';
    removed := '{}';
    IF strategy = 'l' AND key_attnum = 0 THEN
        -- LIST (F(key, n)), F one of the extension's functions: the printed
        -- name is schema-qualified when the extension's schema is not on
        -- the search_path.
        parts := pg_catalog.regexp_match(key_def,
            '^((?:(?:"(?:[^"]|"")+"|[^".(), ]+)\.)?(jumpbackhash|jumphash|jumpbackanchorhash))\((.*), (\d+)(?:, ''(\{[0-9,]*\})''::integer\[\])?\)$');
        IF parts[5] IS NOT NULL AND parts[2] <> 'jumpbackanchorhash' THEN
            RETURN;
        END IF;
        IF parts IS NULL OR NOT EXISTS (
                SELECT FROM pg_catalog.pg_depend d
                JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid AND p.proname = parts[2]
                JOIN pg_catalog.pg_depend e ON e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                     AND e.objid = p.oid AND e.deptype = 'e'
                JOIN pg_catalog.pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = parent
                  AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass) THEN
            RETURN;
        END IF;
        method := parts[2];
        hash_function := parts[1];
        key := parts[3];
        buckets := parts[4]::int;
        removed := coalesce(parts[5], '{}')::int[];
    ELSIF strategy = 'h' THEN
        -- HASH (key jumpbackhash<N>_<type>_ops), a class of the extension's
        -- schema: REMAINDER b holds the rows with jumpbackhash(key, N) = b.
        SELECT o.opcname,
               substring(o.opcname FROM '^jumpbackhash([1-9][0-9]{0,8})_(?:int2|int4|int8|text|bytea|uuid)_ops$')::int
        INTO operator_class, buckets
        FROM pg_catalog.pg_opclass o WHERE o.oid = class_oid AND o.opcnamespace::regnamespace::name = ext_schema;
        IF buckets IS NULL THEN
            RETURN;
        END IF;
        method := 'hash_operator_class';
        hash_function := pg_catalog.format('%I.jumpbackhash', ext_schema);
        key := CASE WHEN key_attnum = 0 THEN '(' || key_def || ')'
                    ELSE (SELECT pg_catalog.quote_ident(a.attname) FROM pg_catalog.pg_attribute a
                          WHERE a.attrelid = parent AND a.attnum = key_attnum) END;
    ELSE
        RETURN;
    END IF;
    FOR bucket, partition, partition_bound IN
        SELECT CASE WHEN b.v ~ '^\d{1,9}$' AND b.v::int < buckets AND (b.m IS NULL OR b.m = buckets::text)
                         AND NOT b.v::int = ANY (removed)
                    THEN b.v::int END,
               c.oid::regclass, b.bound
        FROM pg_catalog.pg_inherits i
        JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
        CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) AS b0
        CROSS JOIN LATERAL (
            SELECT b0.bound,
                   CASE WHEN strategy = 'l' THEN substring(b0.bound FROM '^FOR VALUES IN \((\d+)\)$')
                        ELSE substring(b0.bound FROM '^FOR VALUES WITH \(modulus \d+, remainder (\d+)\)$') END AS v,
                   substring(b0.bound FROM '^FOR VALUES WITH \(modulus (\d+), remainder \d+\)$') AS m) AS b
        WHERE i.inhparent = parent
        ORDER BY 1, 2
    LOOP
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        bucket := NULL;
        partition := NULL;
        partition_bound := NULL;
        RETURN NEXT;
    END IF;
END
$function$;

COMMENT ON FUNCTION sharding_layout(regclass) IS
'how a table is partitioned by the extension: one row per partition with the method (jumpbackhash or jumphash for BY LIST (F(key, n)), hash_operator_class for BY HASH (key jumpbackhash<n>_<type>_ops)), the hash function that places a key (as printed in the key), the key expression, the bucket count, the removed buckets (none for these methods), the operator class, the partition''s bucket (NULL if its bound is not one bucket in range) and its bound; no row if the table is not partitioned by the extension';

CREATE FUNCTION reshard_bucket_sql(hash_function text, key text, buckets int, removed int[] DEFAULT '{}')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE WHEN hash_function ~ 'jumpbackanchorhash"?$' AND cardinality(removed) > 0
            THEN pg_catalog.format('%s(%s, %s, %L::integer[])', hash_function, key, buckets, removed::text)
            ELSE pg_catalog.format('%s(%s, %s)', hash_function, key, buckets) END
$$;

COMMENT ON FUNCTION reshard_bucket_sql(text, text, int, int[]) IS
'the SQL expression of a key''s bucket, as sharding_layout describes the partitioning, for a given bucket count: the partition key of a resharded table (internal)';

CREATE VIEW sharded_tables AS
SELECT c.oid::regclass AS parent, l.method, l.key, l.buckets, l.removed, l.operator_class,
       array_agg(l.partition ORDER BY l.bucket) FILTER (WHERE l.partition IS NOT NULL) AS partitions
FROM pg_catalog.pg_partitioned_table pt
JOIN pg_catalog.pg_class c ON c.oid = pt.partrelid
CROSS JOIN LATERAL sharding_layout(c.oid) AS l
GROUP BY 1, 2, 3, 4, 5, 6;

COMMENT ON VIEW sharded_tables IS
'the tables partitioned by the extension''s functions or operator classes: key, method, bucket count, removed buckets, operator class, partitions in bucket order';

-- Checks everything and returns the plan the phases follow (internal).
CREATE PROCEDURE reshard_prepare(parent regclass, operation text, partition regclass, INOUT plan jsonb DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    ext name;
    p pg_catalog.pg_class;
    lay record;
    n int;
    new_n int;
    method text;
    hf text;
    key_sql text;
    opclass text;
    new_opclass text;
    old_removed int[] := '{}';
    new_removed int[] := '{}';
    old_parts regclass[];
    new_parts_arr regclass[];
    new_bucket int;
    b int;
    partition_by text;
    bound_sql text;
    parts regclass[];
    bad text;
    r record;
    rels regclass[];
    removed_part regclass;
    resuming boolean := false;
    cols text;
    row_sql text;
    old_expr text;
    new_expr text;
    sources jsonb := '[]';
    targets jsonb := '[]';
    new_parts jsonb := '[]';
    not_empty boolean;
    i int;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    SELECT e.extnamespace::regnamespace::name INTO STRICT ext FROM pg_extension e WHERE e.extname = 'subsetting';
    IF parent IS NULL THEN
        RAISE EXCEPTION 'parent must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF now() < statement_timestamp() THEN   -- the transaction began before this statement
        RAISE EXCEPTION 'cannot reshard % inside a transaction block', parent
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'Resharding commits several transactions of its own.',
                  HINT = 'Call it on its own, outside BEGIN ... COMMIT.';
    END IF;
    SELECT * INTO p FROM pg_class WHERE oid = parent;
    IF NOT pg_has_role(current_user, p.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table % to reshard it', parent
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    -- The layout: one partition for each bucket.
    EXECUTE format('SELECT l.method, l.hash_function, l.key, l.buckets, l.operator_class, l.removed FROM %I.sharding_layout($1) AS l LIMIT 1', ext)
    INTO lay USING parent;
    IF lay.method IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s, not LIST (jumpbackhash(key, n)), LIST (jumphash(key, n)) or HASH (key jumpbackhash<n>_<type>_ops).',
                                  coalesce(pg_get_partkeydef(parent), 'none'));
    END IF;
    method := lay.method;
    opclass := lay.operator_class;
    old_removed := lay.removed;
    hf := lay.hash_function;
    key_sql := lay.key;
    n := lay.buckets;
    parts := array_fill(NULL::regclass, ARRAY[n]);
    FOR r IN EXECUTE format('SELECT * FROM %I.sharding_layout($1) AS l WHERE l.partition IS NOT NULL', ext) USING parent LOOP
        IF r.bucket IS NULL OR parts[r.bucket + 1] IS NOT NULL THEN
            RAISE EXCEPTION 'partition % of % is not the only one for one bucket in [0, %)', r.partition, parent, n
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Its bound is %s.', r.partition_bound),
                      HINT = CASE WHEN method = 'hash_operator_class'
                                  THEN format('Each partition must be FOR VALUES WITH (MODULUS %s, REMAINDER b), one for each bucket b.', n)
                                  ELSE 'Each partition must be FOR VALUES IN (b), one for each bucket b.' END;
        END IF;
        parts[r.bucket + 1] := r.partition;
    END LOOP;
    FOR i IN 1 .. n LOOP
        IF parts[i] IS NULL AND NOT (i - 1) = ANY (old_removed) THEN
            RAISE EXCEPTION 'table % has no partition for bucket %', parent, i - 1
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;

    IF method = 'jumpbackanchorhash' THEN
        -- Any bucket can go (pushed on the removed stack), and adding takes
        -- back the most recently removed one (hash4j's rules, in the
        -- extension's functions).
        old_parts := parts;
        new_parts_arr := parts;
        IF operation = 'add' THEN
            IF partition IS NULL THEN
                RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
            END IF;
            IF partition = ANY (parts) THEN
                resuming := true;   -- called again after a failure past the swap
                new_bucket := array_position(parts, partition) - 1;
                new_n := n;
                new_removed := old_removed;
                old_parts[new_bucket + 1] := NULL;
            ELSE
                IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                    RAISE EXCEPTION 'table % is already a partition', partition USING ERRCODE = 'invalid_parameter_value';
                END IF;
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_add_bucket($1, $2)', ext)
                INTO new_n, new_removed, new_bucket USING n, old_removed;
                new_parts_arr[new_bucket + 1] := partition;
            END IF;
        ELSIF operation = 'remove' THEN
            IF partition IS NULL THEN
                RAISE EXCEPTION 'the partition of % to remove must be named', parent
                    USING ERRCODE = 'null_value_not_allowed',
                          HINT = 'jumpbackanchorhash can remove any bucket: CALL reshard_remove_partition(parent, partition).';
            END IF;
            IF partition = ANY (parts) THEN
                IF cardinality(array_remove(parts, NULL)) = 1 THEN
                    RAISE EXCEPTION 'cannot remove the only partition of %', parent USING ERRCODE = 'invalid_parameter_value';
                END IF;
                b := array_position(parts, partition) - 1;
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_remove_bucket($1, $2, $3)', ext)
                INTO new_n, new_removed USING n, old_removed, b;
                new_parts_arr[b + 1] := NULL;
            ELSE
                -- Removed by a call that failed after the swap: it held the
                -- most recently removed bucket.
                IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) OR cardinality(old_removed) = 0 THEN
                    RAISE EXCEPTION 'table % is not a partition of %', partition, parent USING ERRCODE = 'invalid_parameter_value';
                END IF;
                resuming := true;
                new_n := n;
                new_removed := old_removed;
                b := old_removed[cardinality(old_removed)];
                old_removed := old_removed[1 : cardinality(old_removed) - 1];
                old_parts[b + 1] := partition;
            END IF;
            removed_part := partition;
        ELSE
            RAISE EXCEPTION 'unknown resharding operation %', operation;
        END IF;
    ELSIF operation = 'add' THEN
        IF partition IS NULL THEN
            RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF parts[n] = partition AND n > 1 THEN
            -- Called again after a failure past the swap: finish the clean-up.
            resuming := true;
            new_n := n;
            n := n - 1;
        ELSE
            IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                RAISE EXCEPTION 'table % is already a partition', partition
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            new_n := n + 1;
            parts := parts || partition;
        END IF;
    ELSIF operation = 'remove' THEN
        IF partition IS NOT NULL AND NOT partition = ANY (parts) THEN
            -- A partition removed by a call that failed after the swap:
            -- finish moving its rows.
            IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                RAISE EXCEPTION 'table % is a partition of another table', partition
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            resuming := true;
            new_n := n;
            n := n + 1;
            parts := parts || partition;
        ELSE
            IF n = 1 THEN
                RAISE EXCEPTION 'cannot remove the only partition of %', parent
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF partition IS NOT NULL AND partition <> parts[n] THEN
                RAISE EXCEPTION 'partition % is not the last bucket''s partition of %', partition, parent
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = format('%s removes only the last bucket, %s, held by %s.', method, n - 1, parts[n]);
            END IF;
            new_n := n - 1;
        END IF;
    ELSE
        RAISE EXCEPTION 'unknown resharding operation %', operation;
    END IF;
    IF method <> 'jumpbackanchorhash' THEN
        removed_part := CASE WHEN operation = 'remove' THEN parts[n] END;
        old_parts := parts[1 : n];
        new_parts_arr := parts[1 : new_n];
        new_bucket := new_n - 1;
    END IF;

    -- The parent: nothing that cannot be carried over to the new parent.
    IF p.relispartition THEN
        RAISE EXCEPTION 'cannot reshard %, it is a partition itself', parent USING ERRCODE = 'feature_not_supported';
    END IF;
    IF EXISTS (SELECT FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
               WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                 AND d.refobjid = parent AND d.deptype IN ('a', 'i')) THEN
        RAISE EXCEPTION 'cannot reshard %, it owns a sequence (serial or identity column)', parent
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Detach the sequence with ALTER SEQUENCE ... OWNED BY NONE, or drop the identity.';
    END IF;
    SELECT string_agg(x, ', ') INTO bad FROM (
        SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = parent AND NOT tgisinternal
        UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = parent
        UNION ALL SELECT 'row level security' WHERE p.relrowsecurity
        UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = parent
        UNION ALL SELECT format('security label of %s', provider) FROM pg_seclabel
                  WHERE classoid = 'pg_class'::regclass AND objoid = parent) AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, it has %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The parent is created again; these cannot be carried over.',
                  HINT = 'Drop them before resharding and create them again after.';
    END IF;
    -- Objects that depend on the parent or its row type and would be dropped
    -- with it: views, rules and policies of other tables, functions with a
    -- SQL-standard body, columns of its row type...
    SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), ', ') INTO bad
    FROM pg_depend d
    WHERE d.deptype = 'n'
      AND ((d.refclassid = 'pg_class'::regclass AND d.refobjid = parent)
           OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = p.reltype))
      AND NOT (d.classid = 'pg_constraint'::regclass)                     -- own constraints, foreign keys: carried over
      AND NOT (d.classid = 'pg_attrdef'::regclass)
      AND NOT (d.classid = 'pg_statistic_ext'::regclass)
      AND NOT (d.classid = 'pg_publication_rel'::regclass)
      AND NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = parent))
      AND NOT (d.classid = 'pg_type'::regclass AND d.objid IN (SELECT typarray FROM pg_type WHERE oid = p.reltype));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, other objects depend on it: %', parent, bad
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = 'The parent is created again, with a new OID; they would have to be dropped with the old one.',
                  HINT = 'Drop them before resharding and create them again after.';
    END IF;
    -- Functions in the partition key other than built-in ones or the
    -- extension's would run during the move.
    SELECT string_agg(DISTINCT d.refobjid::regprocedure::text, ', ') INTO bad
    FROM pg_depend d JOIN pg_proc f ON f.oid = d.refobjid
    WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_proc'::regclass
      AND f.pronamespace <> 'pg_catalog'::regnamespace
      AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                      WHERE e.classid = 'pg_proc'::regclass AND e.objid = f.oid AND e.deptype = 'e');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, its partition key calls %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Only built-in functions and the extension''s own may appear in the key.';
    END IF;
    -- Foreign keys of other tables to the parent are dropped and created
    -- again; publications are altered: the caller must be allowed to.
    SELECT string_agg(DISTINCT c.conrelid::regclass::text, ', ') INTO bad
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
      AND NOT pg_has_role(current_user, t.relowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys of tables you do not own refer to it: %', parent, bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The owner of those tables, or a superuser, can reshard it.';
    END IF;
    SELECT string_agg(pb.pubname::text, ', ') INTO bad
    FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    WHERE pr.prrelid = parent AND NOT pg_has_role(current_user, pb.pubowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, it is in publications you do not own: %', parent, bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The owner of the publications, or a superuser, can reshard it.';
    END IF;
    IF NOT pg_has_role(current_user, p.relowner, 'MEMBER')
       OR NOT has_schema_privilege(p.relowner, p.relnamespace, 'CREATE') THEN
        RAISE EXCEPTION 'cannot reshard %, its owner % cannot create tables in schema %',
                        parent, p.relowner::regrole, p.relnamespace::regnamespace
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The new parent is created by the table''s owner, in the same schema.';
    END IF;

    -- Rows referenced by a foreign key cannot move out of their partition.
    SELECT string_agg(format('%s of %s', quote_ident(c.conname), c.conrelid::regclass), ', ') INTO bad
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (parts);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys refer to its partitions: %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows that move would leave the partition the foreign key refers to.',
                  HINT = 'Drop those foreign keys before resharding.';
    END IF;

    -- The partitions, old and new: same owner as the parent, the parent's
    -- columns, and no code of their own (they are written to as their owner).
    rels := ARRAY(SELECT DISTINCT x FROM unnest(old_parts || new_parts_arr) AS x WHERE x IS NOT NULL);
    FOR i IN 1 .. array_length(rels, 1) LOOP
        SELECT * INTO r FROM pg_class WHERE oid = rels[i];
        IF r.relkind NOT IN ('r', 'f') THEN
            RAISE EXCEPTION 'cannot reshard %, % is not a table or foreign table', parent, rels[i]
                USING ERRCODE = 'feature_not_supported';
        END IF;
        IF r.relowner <> p.relowner THEN
            RAISE EXCEPTION 'table % is owned by %, not by %, the owner of %', rels[i], r.relowner::regrole,
                            p.relowner::regrole, parent
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Resharding writes to every partition and must not run code of another role.',
                      HINT = format('ALTER TABLE %s OWNER TO %s, if that is right.', rels[i], p.relowner::regrole);
        END IF;
        SELECT string_agg(DISTINCT quote_ident(coalesce(a.attname, pa.attname)), ', ') INTO bad
        FROM (SELECT * FROM pg_attribute WHERE attrelid = rels[i] AND attnum > 0 AND NOT attisdropped) a
        FULL JOIN (SELECT * FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped) pa
             ON pa.attname = a.attname
        WHERE a.attname IS NULL OR pa.attname IS NULL OR a.atttypid <> pa.atttypid OR a.atttypmod <> pa.atttypmod
           OR a.attcollation <> pa.attcollation OR a.attgenerated <> pa.attgenerated
           OR (pa.attnotnull AND NOT a.attnotnull);
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'table % does not have the columns of %: %', rels[i], parent, bad
                USING ERRCODE = 'datatype_mismatch',
                      DETAIL = 'A partition has the parent''s columns, with the same names, types, collations and NOT NULL.',
                      HINT = 'Create it with CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
        SELECT string_agg(x, ', ') INTO bad FROM (
            SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = rels[i] AND NOT tgisinternal
            UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = rels[i]
            UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = rels[i]
            UNION ALL SELECT 'row level security' FROM pg_class WHERE oid = rels[i] AND relrowsecurity
            UNION ALL
            SELECT format('check constraint %I', c.conname) FROM pg_constraint c
            WHERE c.conrelid = rels[i] AND c.contype = 'c'
              AND pg_get_constraintdef(c.oid) NOT IN
                  (SELECT pg_get_constraintdef(pc.oid) FROM pg_constraint pc WHERE pc.conrelid = parent AND pc.contype = 'c')
            UNION ALL
            SELECT format('index %s with an expression or predicate', x.indexrelid::regclass) FROM pg_index x
            WHERE x.indrelid = rels[i] AND (x.indexprs IS NOT NULL OR x.indpred IS NOT NULL)
              AND (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                   FROM generate_series(1, x.indnatts) AS k) || ' WHERE ' || coalesce(pg_get_expr(x.indpred, x.indrelid, true), '')
                  NOT IN (SELECT (SELECT string_agg(pg_get_indexdef(px.indexrelid, k, true), ', ' ORDER BY k)
                                  FROM generate_series(1, px.indnatts) AS k)
                                 || ' WHERE ' || coalesce(pg_get_expr(px.indpred, px.indrelid, true), '')
                          FROM pg_index px WHERE px.indrelid = parent)
            UNION ALL
            SELECT format('%s of column %I', CASE WHEN a.attgenerated <> '' THEN 'generation expression' ELSE 'default' END,
                          a.attname)
            FROM pg_attribute a JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
            WHERE a.attrelid = rels[i]
              AND NOT EXISTS (SELECT FROM pg_attribute pa JOIN pg_attrdef pd ON pd.adrelid = pa.attrelid AND pd.adnum = pa.attnum
                              WHERE pa.attrelid = parent AND pa.attname = a.attname AND pa.attgenerated = a.attgenerated
                                AND pg_get_expr(pd.adbin, pd.adrelid) = pg_get_expr(ad.adbin, ad.adrelid))
) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard % with %, it has % that % does not have', parent, rels[i], bad, parent
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Rows are written to and deleted from the partitions; code there would run during the move.',
                      HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
        END IF;
    END LOOP;

    IF operation = 'add' AND NOT resuming THEN
        EXECUTE format('SELECT EXISTS (SELECT FROM %s)', partition) INTO STRICT not_empty;
        IF not_empty THEN
            RAISE EXCEPTION 'table % is not empty', partition
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The new partition must be empty; rows left there by a failed call that did not swap the parent can be deleted.';
        END IF;
    END IF;

    -- The new parent's partition key and its partitions' bounds.
    IF method = 'hash_operator_class' THEN
        new_opclass := regexp_replace(opclass, '^jumpbackhash[0-9]+_', 'jumpbackhash' || new_n || '_');
        IF NOT EXISTS (SELECT FROM pg_opclass WHERE opcname = new_opclass AND opcnamespace = (SELECT oid FROM pg_namespace WHERE nspname = ext)) THEN
            RAISE EXCEPTION 'operator class %.% does not exist', quote_ident(ext), new_opclass
                USING ERRCODE = 'undefined_object',
                      DETAIL = format('Resharding %s to %s buckets partitions it by HASH (%s %s).', parent, new_n, key_sql, new_opclass),
                      HINT = format('A superuser can create it: SELECT %I.jumpbackhash_create_operator_classes(%s).', ext, new_n);
        END IF;
        SELECT format('HASH (%s%s %I.%I)', key_sql,
                      CASE WHEN pt.partcollation[0] <> 0 THEN ' COLLATE ' || pt.partcollation[0]::regcollation::text ELSE '' END,
                      ext, new_opclass)
        INTO partition_by FROM pg_partitioned_table pt WHERE pt.partrelid = parent;
        bound_sql := format('FOR VALUES WITH (MODULUS %s, REMAINDER %%s)', new_n);
    END IF;

    -- The plan.
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum),
           'ROW(' || string_agg('x.' || quote_ident(attname), ', ' ORDER BY attnum) || ')::text'
    INTO cols, row_sql
    FROM pg_attribute
    WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
    EXECUTE format('SELECT %I.reshard_bucket_sql($1, $2, $3, $4)', ext) INTO old_expr USING hf, key_sql, n, old_removed;
    EXECUTE format('SELECT %I.reshard_bucket_sql($1, $2, $3, $4)', ext) INTO new_expr USING hf, key_sql, new_n, new_removed;
    IF partition_by IS NULL THEN
        partition_by := format('LIST (%s)', new_expr);
        bound_sql := 'FOR VALUES IN (%s)';
    END IF;
    -- Sources: the partitions of the old layout, with the condition of their
    -- rows that move.  Targets: the partitions of the new layout that
    -- receive rows, with the condition of the copies they hold (rows that are
    -- not of their old bucket).
    FOR i IN 1 .. coalesce(array_length(old_parts, 1), 0) LOOP
        CONTINUE WHEN old_parts[i] IS NULL;
        -- Removing a bucket moves only its rows (these hashes move a key
        -- only from the bucket that goes).
        CONTINUE WHEN operation = 'remove' AND old_parts[i] <> removed_part;
        -- Adding, the new partition (called again) is no source.
        CONTINUE WHEN operation = 'add' AND old_parts[i] = partition;
        sources := sources || jsonb_build_object(
            'rel', old_parts[i]::text, 'local', (SELECT relkind <> 'f' FROM pg_class WHERE oid = old_parts[i]),
            'bucket', i - 1,
            'moving', CASE WHEN old_parts[i] = removed_part THEN 'true' ELSE format('%s <> %s', new_expr, i - 1) END);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(new_parts_arr, 1), 0) LOOP
        CONTINUE WHEN new_parts_arr[i] IS NULL;
        new_parts := new_parts || jsonb_build_object('rel', new_parts_arr[i]::text, 'bucket', i - 1);
        IF (operation = 'add' AND i - 1 = new_bucket) OR operation = 'remove' THEN
            targets := targets || jsonb_build_object(
                'rel', new_parts_arr[i]::text, 'local', (SELECT relkind <> 'f' FROM pg_class WHERE oid = new_parts_arr[i]),
                'bucket', i - 1,
                'copies', CASE WHEN operation = 'add' THEN 'true' ELSE format('%s <> %s', old_expr, i - 1) END);
        END IF;
    END LOOP;
    plan := jsonb_build_object(
        'ext', ext, 'operation', operation, 'resuming', resuming,
        'parent', parent::text, 'schema', p.relnamespace::regnamespace::text, 'name', p.relname,
        'owner', p.relowner::regrole::text, 'caller', quote_ident(current_user),
        'method', method, 'hash_function', hf, 'key', key_sql, 'old_n', n, 'new_n', new_n,
        'old_expr', old_expr, 'new_expr', new_expr, 'cols', cols, 'row', row_sql,
        'partition_by', partition_by, 'bound', bound_sql,
        'sources', sources, 'targets', targets, 'partitions', new_parts,
        'removed', removed_part::text, 'validate', '[]'::jsonb);
END
$function$;

COMMENT ON PROCEDURE reshard_prepare(regclass, text, regclass, jsonb) IS
'checks that a table can be resharded (operation add or remove) and returns the plan the phases follow (internal)';

-- Sets the search_path and the role of a phase's transaction (internal).
CREATE PROCEDURE reshard_enter(plan jsonb, as_caller boolean DEFAULT false)
LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF as_caller THEN
        EXECUTE pg_catalog.format('SET LOCAL ROLE %s', plan->>'caller');
    ELSIF current_user::text <> plan->>'owner' AND quote_ident(current_user) <> plan->>'owner' THEN
        EXECUTE pg_catalog.format('SET LOCAL ROLE %s', plan->>'owner');
    END IF;
END
$function$;

COMMENT ON PROCEDURE reshard_enter(jsonb, boolean) IS
'a resharding phase''s transaction runs with search_path pg_catalog, pg_temp and as the table''s owner (internal)';

-- Makes the copies in a target equal, as a multiset of rows, to the rows
-- of the sources that belong there; with insert_only, only adds the
-- missing ones.  Returns how many copies the target holds (internal).
CREATE PROCEDURE reshard_reconcile(plan jsonb, target jsonb, insert_only boolean, INOUT copies bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    src_sql text := '';
    copies_sql text;
    c bigint;
    expected_n bigint;
    copies_n bigint;
BEGIN
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN s->>'rel' = target->>'rel';
        src_sql := src_sql || CASE WHEN src_sql = '' THEN '' ELSE ' UNION ALL ' END
            || format('SELECT %s AS t FROM %s x WHERE (%s) AND %s = %s',
                      plan->>'row', s->>'rel', s->>'moving', plan->>'new_expr', target->>'bucket');
    END LOOP;
    copies_sql := format('SELECT %s AS t FROM %s x WHERE %s', plan->>'row', target->>'rel', target->>'copies');
    IF to_regclass('pg_temp.reshard_expected') IS NOT NULL THEN
        DROP TABLE pg_temp.reshard_expected, pg_temp.reshard_copies;
    END IF;
    EXECUTE format('CREATE TEMP TABLE reshard_expected ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   src_sql);
    EXECUTE format('CREATE TEMP TABLE reshard_copies ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   copies_sql);
    -- Verified by comparing the two multisets of rows exactly; when they are
    -- equal already (nothing was written since the copy), nothing to do.
    SELECT count(*) INTO c
    FROM pg_temp.reshard_expected e FULL JOIN pg_temp.reshard_copies k ON k.t = e.t
    WHERE e.cnt IS DISTINCT FROM k.cnt;
    IF c = 0 THEN
        SELECT coalesce(sum(cnt), 0) INTO copies_n FROM pg_temp.reshard_copies;
        copies := copies_n;
        RETURN;
    END IF;
    IF NOT insert_only THEN
        -- Copies with no row behind them any more (updated or deleted since
        -- they were copied).
        EXECUTE format('DELETE FROM %s WHERE ctid = ANY (ARRAY(
                            SELECT y.ctid FROM (SELECT x.ctid, %s AS t, row_number() OVER (PARTITION BY %s) AS rn
                                                FROM %s x WHERE %s) y
                            LEFT JOIN pg_temp.reshard_expected e ON e.t = y.t
                            WHERE y.rn > coalesce(e.cnt, 0)))',
                       target->>'rel', plan->>'row', plan->>'row', target->>'rel', target->>'copies');
    END IF;
    -- Rows not copied yet (written since the copy).
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN s->>'rel' = target->>'rel';
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM (
                            SELECT x.*, %s AS "reshard row", row_number() OVER (PARTITION BY %s) AS "reshard n"
                            FROM %s x WHERE (%s) AND %s = %s) y
                        JOIN (SELECT e.t, e.cnt - coalesce(k.cnt, 0) AS need
                              FROM pg_temp.reshard_expected e LEFT JOIN pg_temp.reshard_copies k ON k.t = e.t) m
                          ON m.t = y."reshard row"
                        WHERE y."reshard n" <= m.need',
                       target->>'rel', plan->>'cols', plan->>'cols', plan->>'row', plan->>'row',
                       s->>'rel', s->>'moving', plan->>'new_expr', target->>'bucket');
    END LOOP;
    -- Verified: the copies as they are now, against the rows they copy.
    DROP TABLE pg_temp.reshard_copies;
    EXECUTE format('CREATE TEMP TABLE reshard_copies ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                   copies_sql);
    SELECT coalesce(sum(cnt), 0) INTO expected_n FROM pg_temp.reshard_expected;
    SELECT coalesce(sum(cnt), 0) INTO copies_n FROM pg_temp.reshard_copies;
    SELECT count(*) INTO c
    FROM pg_temp.reshard_expected e FULL JOIN pg_temp.reshard_copies k ON k.t = e.t
    WHERE CASE WHEN insert_only THEN coalesce(k.cnt, 0) < e.cnt ELSE e.cnt IS DISTINCT FROM k.cnt END;
    IF c <> 0 THEN
        RAISE EXCEPTION 'could not verify the copies in %: % rows there, % rows to copy, % differ', target->>'rel',
                        copies_n, expected_n, c
            USING ERRCODE = 'data_corrupted',
                  DETAIL = 'Nothing was changed: every row is where it was.';
    END IF;
    copies := copies_n;
END
$function$;

COMMENT ON PROCEDURE reshard_reconcile(jsonb, jsonb, boolean, bigint) IS
'makes the copies of moving rows in a target partition match the rows they copy, and verifies them (internal)';

-- Deletes from a source the moving rows that have a copy in a target,
-- as a multiset; returns how many it deleted (internal).
CREATE PROCEDURE reshard_delete_copied(plan jsonb, source jsonb, INOUT deleted bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    t jsonb;
    copies_sql text := '';
    c bigint;
BEGIN
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
        CONTINUE WHEN t->>'rel' = source->>'rel';
        copies_sql := copies_sql || CASE WHEN copies_sql = '' THEN '' ELSE ' UNION ALL ' END
            || format('SELECT %s AS t FROM %s x WHERE %s', plan->>'row', t->>'rel', t->>'copies');
    END LOOP;
    IF copies_sql = '' THEN
        deleted := 0;   -- its rows move nowhere
        RETURN;
    END IF;
    -- The copies, read once a transaction (the targets are not written to
    -- between the deletes).
    IF to_regclass('pg_temp.reshard_copied') IS NULL THEN
        EXECUTE format('CREATE TEMP TABLE reshard_copied ON COMMIT DROP AS SELECT t, count(*) AS cnt FROM (%s) s GROUP BY t',
                       copies_sql);
    END IF;
    EXECUTE format('DELETE FROM %s WHERE ctid = ANY (ARRAY(
                        SELECT y.ctid FROM (SELECT x.ctid, %s AS t, row_number() OVER (PARTITION BY %s) AS rn
                                            FROM %s x WHERE %s) y
                        JOIN pg_temp.reshard_copied k ON k.t = y.t
                        WHERE y.rn <= k.cnt))',
                   source->>'rel', plan->>'row', plan->>'row', source->>'rel', source->>'moving');
    GET DIAGNOSTICS c = ROW_COUNT;
    deleted := c;
END
$function$;

COMMENT ON PROCEDURE reshard_delete_copied(jsonb, jsonb, bigint) IS
'deletes from a source partition the moving rows that have a verified copy in their new partition (internal)';

-- Phase 1, its own transaction: copies the moving rows into the new
-- partition, which is not attached yet (add only); reads and writes of the
-- table go on.  Returns the plan with the count.
CREATE PROCEDURE reshard_copy(INOUT plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    t jsonb;
    c bigint;
    total bigint := 0;
    started timestamptz;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    IF plan->>'operation' <> 'add' THEN
        RETURN;    -- a removal copies during the swap: the targets are attached
    END IF;
    t := plan->'targets'->0;
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        started := clock_timestamp();
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM %s x WHERE %s = %s',
                       t->>'rel', plan->>'cols', plan->>'cols', s->>'rel', plan->>'new_expr', t->>'bucket');
        GET DIAGNOSTICS c = ROW_COUNT;
        total := total + c;
        RAISE NOTICE 'copied % rows from % to %', c, s->>'rel', t->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    plan := plan || jsonb_build_object('copied', total);
END
$function$;

COMMENT ON PROCEDURE reshard_copy(jsonb) IS
'resharding phase 1: copies the moving rows to the new partition, not attached yet (internal)';

-- Brings the copies in the targets up to date and verifies them, then
-- deletes the copied rows from the sources on this server (locked, so
-- nothing is written to them meanwhile); returns the rows moved (internal).
CREATE PROCEDURE reshard_move(plan jsonb, INOUT moved_rows bigint DEFAULT NULL)
LANGUAGE plpgsql
AS $function$
DECLARE
    t jsonb;
    s jsonb;
    c bigint;
    deleted bigint;
    moved bigint := 0;
    started timestamptz;
BEGIN
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
        started := clock_timestamp();
        EXECUTE format('CALL %I.reshard_reconcile($1, $2, false, NULL)', plan->>'ext') INTO c USING plan, t;
        moved := moved + c;
        RAISE NOTICE '% holds the % rows that move there, verified', t->>'rel', c
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    -- The partitions on this server: locked, so nothing is written to them
    -- meanwhile; every moving row has its copy.
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        CONTINUE WHEN NOT (s->>'local')::boolean;
        started := clock_timestamp();
        -- Locked since the copies were verified against its rows: its
        -- moving rows are exactly the ones copied.
        EXECUTE format('DELETE FROM %s x WHERE %s', s->>'rel', s->>'moving');
        GET DIAGNOSTICS deleted = ROW_COUNT;
        RAISE NOTICE 'deleted the % moved rows from %', deleted, s->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;

    moved_rows := moved;
END
$function$;

COMMENT ON PROCEDURE reshard_move(jsonb, bigint) IS
'resharding, in the swap: makes the copies of the moving rows exact and verified, and deletes the moved rows from the partitions on this server (internal)';

-- Phase 2, its own transaction: locks the table (ACCESS EXCLUSIVE, waiting
-- at most lock_timeout at a time, attempts times), brings the copies up to
-- date and verifies them, deletes the copied rows from the partitions on
-- this server, and puts a new parent over the new layout.  Returns the plan
-- with the number of rows moved.
CREATE PROCEDURE reshard_swap(INOUT plan jsonb, lock_wait interval, attempts int)
LANGUAGE plpgsql
AS $function$
DECLARE
    parent regclass := (plan->>'parent')::regclass;
    staging text;
    qualified text := format('%I.%I', plan->>'schema', plan->>'name');
    t jsonb;
    s jsonb;
    r record;
    c bigint;
    moved bigint := 0;
    deleted bigint;
    attempt int := 0;
    blockers int[];
    started timestamptz;
    lock_rels regclass[];
    saved_timeout text := current_setting('lock_timeout');
    ddl text[] := '{}';        -- run as the owner, after the new parent is named
    caller_ddl text[] := '{}'; -- run as the caller: foreign keys of other tables, publications
    fk_ddl text[] := '{}';     -- run as the caller before the partitions are attached: foreign keys of the parent
    validate jsonb := '[]';
    stmt text;
    p pg_class;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    SELECT * INTO p FROM pg_class WHERE oid = parent;
    lock_rels := ARRAY(SELECT (e->>'rel')::regclass FROM jsonb_array_elements(plan->'sources' || plan->'targets') e
                       WHERE (e->>'local')::boolean);
    lock_rels := lock_rels || ARRAY(SELECT DISTINCT c.conrelid::regclass FROM pg_constraint c
                                    WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
                                      AND c.conrelid <> parent);
    -- The locks, parent first, then partitions: a transaction that reads
    -- the table and then writes it holds its lock already, and is let
    -- through before this request; a wait is bounded by lock_wait.
    LOOP
        attempt := attempt + 1;
        BEGIN
            PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text, true);
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', parent);
            FOR r IN SELECT DISTINCT unnest(lock_rels) AS rel ORDER BY 1 LOOP
                EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.rel);
            END LOOP;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            SELECT array_agg(DISTINCT l.pid ORDER BY l.pid) INTO blockers
            FROM pg_locks l
            WHERE l.granted AND l.pid <> pg_backend_pid() AND l.locktype = 'relation'
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.relation = ANY (parent || lock_rels);
            IF attempt >= attempts THEN
                RAISE EXCEPTION 'could not lock % to swap its parent, % attempts of % each', parent, attempts, lock_wait
                    USING ERRCODE = 'lock_not_available',
                          DETAIL = format('Backends holding locks on the table or its partitions: %s.  %s',
                                          coalesce(blockers::text, 'none any more'),
                                          CASE WHEN plan->>'operation' = 'add'
                                               THEN 'The table is as it was; the rows copied to the new partition are deleted.'
                                               ELSE 'The table is as it was.' END),
                          HINT = 'Call it again when those transactions are done (see pg_stat_activity), or with a longer lock_timeout or more lock_attempts.';
            END IF;
            RAISE NOTICE 'waiting for backends % to release %, attempt % of %', blockers, parent, attempt, attempts;
            PERFORM pg_sleep(least(1.0, extract(epoch FROM lock_wait) * (1 + random())));
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text, true);

    -- What the new parent must have, read before the old one goes.
    staging := left(format('reshard_%s_%s', parent::oid, plan->>'name'), 63);
    -- Constraints, with their names: checks, primary keys, unique and
    -- exclusion constraints (with their indexes), foreign keys.
    -- Foreign keys as the caller (who may reference the other table), the
    -- rest as the owner.
    FOR r IN SELECT c.oid, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def, obj_description(c.oid, 'pg_constraint') AS comment
             FROM pg_constraint c WHERE c.conrelid = parent AND c.contype IN ('c', 'p', 'u', 'x', 'f')
             ORDER BY c.oid LOOP
        IF r.contype = 'f' THEN
            fk_ddl := fk_ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s', qualified, r.conname, r.def);
        ELSE
            ddl := ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s', qualified, r.conname, r.def);
        END IF;
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, qualified, r.comment);
        END IF;
    END LOOP;
    -- Other indexes, with their names, storage parameters and tablespaces.
    FOR r IN SELECT i.indexrelid, pg_get_indexdef(i.indexrelid) AS def, obj_description(i.indexrelid, 'pg_class') AS comment
             FROM pg_index i WHERE i.indrelid = parent
               AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = parent)
             ORDER BY i.indexrelid LOOP
        ddl := ddl || regexp_replace(r.def, ' ON ONLY ', ' ON ');
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON INDEX %s IS %L', r.indexrelid::regclass, r.comment);
        END IF;
    END LOOP;
    FOR r IN SELECT i.indexrelid, obj_description(i.indexrelid, 'pg_class') AS comment
             FROM pg_index i JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = parent
             WHERE i.indrelid = parent AND obj_description(i.indexrelid, 'pg_class') IS NOT NULL LOOP
        ddl := ddl || format('COMMENT ON INDEX %s IS %L', r.indexrelid::regclass, r.comment);
    END LOOP;
    IF p.relreplident = 'i' THEN
        ddl := ddl || (SELECT format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', qualified, c.relname)
                       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                       WHERE i.indrelid = parent AND i.indisreplident);
    ELSIF p.relreplident IN ('f', 'n') THEN
        ddl := ddl || format('ALTER TABLE %s REPLICA IDENTITY %s', qualified,
                             CASE p.relreplident WHEN 'f' THEN 'FULL' ELSE 'NOTHING' END);
    END IF;
    -- Extended statistics.
    FOR r IN SELECT s.oid, pg_get_statisticsobjdef(s.oid) AS def, s.stxstattarget,
                    format('%I.%I', s.stxnamespace::regnamespace, s.stxname) AS name,
                    obj_description(s.oid, 'pg_statistic_ext') AS comment
             FROM pg_statistic_ext s WHERE s.stxrelid = parent LOOP
        ddl := ddl || r.def;
        IF r.stxstattarget >= 0 THEN
            ddl := ddl || format('ALTER STATISTICS %s SET STATISTICS %s', r.name, r.stxstattarget);
        END IF;
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON STATISTICS %s IS %L', r.name, r.comment);
        END IF;
    END LOOP;
    -- Columns: statistics targets, options; comments come with LIKE.
    FOR r IN SELECT a.attname, a.attstattarget,
                    nullif(array(SELECT o FROM unnest(a.attoptions) AS o WHERE o NOT LIKE 'pg\_attver=%'), '{}') AS attoptions
             FROM pg_attribute a
             WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum LOOP
        IF r.attstattarget >= 0 THEN
            ddl := ddl || format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', qualified, r.attname, r.attstattarget);
        END IF;
        IF r.attoptions IS NOT NULL THEN
            ddl := ddl || format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', qualified, r.attname, array_to_string(r.attoptions, ', '));
        END IF;
    END LOOP;
    IF obj_description(parent, 'pg_class') IS NOT NULL THEN
        ddl := ddl || format('COMMENT ON TABLE %s IS %L', qualified, obj_description(parent, 'pg_class'));
    END IF;
    -- Privileges, as the owner: the table's and the columns'.
    IF p.relacl IS NOT NULL THEN
        ddl := ddl || format('REVOKE ALL ON TABLE %s FROM %s', qualified, plan->>'owner');
        FOR r IN SELECT a.grantee, a.privilege_type, a.is_grantable FROM aclexplode(p.relacl) a ORDER BY 1, 2 LOOP
            ddl := ddl || format('GRANT %s ON TABLE %s TO %s%s', r.privilege_type, qualified,
                                 CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                                 CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
    END IF;
    FOR r IN SELECT att.attname, a.grantee, a.privilege_type, a.is_grantable
             FROM pg_attribute att CROSS JOIN LATERAL aclexplode(att.attacl) a
             WHERE att.attrelid = parent AND att.attnum > 0 AND NOT att.attisdropped AND att.attacl IS NOT NULL
             ORDER BY 1, 2, 3 LOOP
        ddl := ddl || format('GRANT %s (%I) ON TABLE %s TO %s%s', r.privilege_type, r.attname, qualified,
                             CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                             CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
    -- Publications (with their column lists and row filters).
    FOR r IN SELECT pb.pubname, pr.prattrs, pg_get_expr(pr.prqual, pr.prrelid) AS qual
             FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
             WHERE pr.prrelid = parent LOOP
        caller_ddl := caller_ddl || format('ALTER PUBLICATION %I ADD TABLE %s%s%s', r.pubname, qualified,
            CASE WHEN r.prattrs IS NULL THEN ''
                 ELSE ' (' || (SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
                               WHERE attrelid = parent AND attnum = ANY (r.prattrs::int2[])) || ')' END,
            CASE WHEN r.qual IS NULL THEN '' ELSE ' WHERE (' || r.qual || ')' END);
    END LOOP;
    -- Foreign keys of other tables to this one: dropped now, created again
    -- NOT VALID after the swap and validated after the clean-up, so the
    -- swap does not read those tables.
    FOR r IN SELECT c.conrelid::regclass AS rel, c.conname, pg_get_constraintdef(c.oid) AS def, c.convalidated,
                    obj_description(c.oid, 'pg_constraint') AS comment
             FROM pg_constraint c
             WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0 AND c.conrelid <> parent LOOP
        EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname);
        EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
        caller_ddl := caller_ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.rel, r.conname, r.def,
                                           CASE WHEN r.def LIKE '% NOT VALID' THEN '' ELSE ' NOT VALID' END);
        IF r.comment IS NOT NULL THEN
            caller_ddl := caller_ddl || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.rel, r.comment);
        END IF;
        IF r.convalidated THEN
            validate := validate || jsonb_build_array(format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.rel, r.conname));
        END IF;
    END LOOP;

    -- Adding: the copies are verified, and the moved rows deleted from the
    -- partitions on this server, before the swap (which checks each
    -- partition against its new bound), after the foreign keys to the
    -- parent are dropped (a moved row is not in the parent meanwhile).
    IF plan->>'operation' = 'add' THEN
        EXECUTE format('CALL %I.reshard_move($1, NULL)', plan->>'ext') INTO moved USING plan;
    END IF;

    -- The swap: a new parent, the same partitions under it.
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING COMMENTS INCLUDING COMPRESSION INCLUDING DEFAULTS
                                        INCLUDING GENERATED INCLUDING STORAGE)
                    PARTITION BY %s%s',
                   plan->>'schema', staging, parent, plan->>'partition_by',
                   CASE WHEN p.reltablespace <> 0
                        THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = p.reltablespace))
                        ELSE '' END);
    FOR r IN SELECT inhrelid::regclass AS rel FROM pg_inherits WHERE inhparent = parent ORDER BY inhrelid LOOP
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, r.rel);
    END LOOP;
    EXECUTE format('DROP TABLE %s', parent);
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', plan->>'schema', staging, plan->>'name');
    FOREACH stmt IN ARRAY ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOREACH stmt IN ARRAY fk_ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'partitions') LOOP
        started := clock_timestamp();
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', qualified, t->>'rel', format(plan->>'bound', t->>'bucket'));
        RAISE NOTICE 'attached % as bucket %', t->>'rel', t->>'bucket'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOREACH stmt IN ARRAY caller_ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    -- Removing: the targets are under the new parent now, where the moving
    -- rows belong; the removed partition is detached.
    IF plan->>'operation' = 'remove' THEN
        EXECUTE format('CALL %I.reshard_move($1, NULL)', plan->>'ext') INTO moved USING plan;
    END IF;
    PERFORM set_config('lock_timeout', saved_timeout, true);
    plan := plan || jsonb_build_object('moved', moved, 'validate', validate, 'parent', qualified);
END
$function$;

COMMENT ON PROCEDURE reshard_swap(jsonb, interval, int) IS
'resharding phase 2: locks the table, verifies the copies, deletes the moved rows from local partitions, and puts a new parent over the new layout (internal)';

-- Phase 3, one transaction a round, after the swap: deletes from the
-- partitions the rows that have a verified copy in their new partition,
-- and copies there those that have none (written directly to a shard since
-- the swap read it), to be deleted by the next round.  Returns the plan
-- with the rows deleted and the rows still to move.
CREATE PROCEDURE reshard_cleanup(INOUT plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    s jsonb;
    t jsonb;
    c bigint;
    deleted bigint := 0;
    left_behind bigint := 0;
    started timestamptz;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    FOR s IN SELECT * FROM jsonb_array_elements(plan->'sources') LOOP
        -- A partition on this server was emptied of its moving rows by the
        -- swap, under lock; attached, its partition constraint keeps them
        -- out, and a removed one is no longer part of the table.
        -- (Called again after a failure, it looks at every partition.)
        CONTINUE WHEN (s->>'local')::boolean AND NOT (plan->>'resuming')::boolean;
        EXECUTE format('SELECT count(*) FROM %s x WHERE %s', s->>'rel', s->>'moving') INTO c;
        CONTINUE WHEN c = 0;
        started := clock_timestamp();
        EXECUTE format('CALL %I.reshard_delete_copied($1, $2, NULL)', plan->>'ext') INTO c USING plan, s;
        deleted := deleted + c;
        RAISE NOTICE 'deleted % moved rows from %', c, s->>'rel'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
        EXECUTE format('SELECT count(*) FROM %s x WHERE %s', s->>'rel', s->>'moving') INTO c;
        left_behind := left_behind + c;
    END LOOP;
    IF left_behind > 0 THEN
        FOR t IN SELECT * FROM jsonb_array_elements(plan->'targets') LOOP
            EXECUTE format('CALL %I.reshard_reconcile($1, $2, true, NULL)', plan->>'ext') INTO c USING plan, t;
        END LOOP;
        RAISE NOTICE '% rows written to the old partitions since the swap read them: copied, to be deleted next round',
            left_behind;
    END IF;
    plan := plan || jsonb_build_object('deleted', coalesce((plan->>'deleted')::bigint, 0) + deleted,
                                      'left', left_behind,
                                      'rounds', coalesce((plan->>'rounds')::int, 0) + 1);
END
$function$;

COMMENT ON PROCEDURE reshard_cleanup(jsonb) IS
'resharding phase 3: deletes the moved rows that have a verified copy from the old partitions, copies those written since (internal)';

-- The last step: validates the foreign keys created again NOT VALID.
CREATE PROCEDURE reshard_validate(plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOR stmt IN SELECT jsonb_array_elements_text(plan->'validate') LOOP
        EXECUTE stmt;
    END LOOP;
END
$function$;

COMMENT ON PROCEDURE reshard_validate(jsonb) IS
'resharding, last step: validates the foreign keys of other tables created again NOT VALID during the swap (internal)';

-- The advisory lock that lets one resharding of a table run at a time.
CREATE PROCEDURE reshard_lock(parent text, lock boolean)
LANGUAGE plpgsql
AS $function$
DECLARE
    k1 int := hashtext('subsetting.reshard');
    k2 int := hashtext(parent);
    holder int;
BEGIN
    IF NOT lock THEN
        PERFORM pg_advisory_unlock(k1, k2);
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
               AND classid::int = k1 AND objid::int = k2 AND objsubid = 2) THEN
        RETURN;
    END IF;
    IF NOT pg_try_advisory_lock(k1, k2) THEN
        SELECT pid INTO holder FROM pg_locks WHERE locktype = 'advisory' AND granted
               AND classid::int = k1 AND objid::int = k2 AND objsubid = 2 LIMIT 1;
        RAISE EXCEPTION 'table % is being resharded by another session', parent
            USING ERRCODE = 'lock_not_available',
                  DETAIL = format('Backend %s is resharding it.', holder),
                  HINT = 'Wait for that call to end (pg_stat_activity shows it), then check the table''s layout before calling again.';
    END IF;
END
$function$;

COMMENT ON PROCEDURE reshard_lock(text, boolean) IS
'takes (or releases) the session advisory lock that lets one resharding of a table (schema-qualified name) run at a time (internal)';

-- The phases, one transaction each; the advisory lock released on every
-- way out (internal).
CREATE PROCEDURE reshard_run(parent regclass, operation text, partition regclass,
                             INOUT moved_rows bigint, lock_timeout interval, lock_attempts int)
LANGUAGE plpgsql
AS $procedure$
DECLARE
    plan jsonb;
    ext text;
    locked text;
    again text;
    failed boolean := false;
    err_state text;
    err_message text;
    err_detail text;
    err_hint text;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_extension WHERE extname = 'subsetting';
    IF lock_timeout IS NULL OR lock_timeout <= '0' OR lock_attempts IS NULL OR lock_attempts < 1 THEN
        RAISE EXCEPTION 'lock_timeout must be positive and lock_attempts at least 1, got % and %', lock_timeout, lock_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT format('%I.%I', relnamespace::regnamespace, relname) INTO locked FROM pg_class WHERE oid = parent;
    EXECUTE format('CALL %s.reshard_lock($1, true)', ext) USING locked;
    BEGIN
        EXECUTE format('CALL %s.reshard_prepare($1, $2, $3, NULL)', ext) INTO plan USING parent, operation, partition;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM set_config('search_path', 'pg_catalog, pg_temp', true);
        EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
        RAISE;
    END;
    again := format('CALL %s(%L, %L)', CASE operation WHEN 'add' THEN 'reshard_add_partition' ELSE 'reshard_remove_partition' END,
                    plan->>'parent',
                    CASE operation WHEN 'add' THEN partition::text ELSE plan->>'removed' END);
    COMMIT;
    IF NOT (plan->>'resuming')::boolean THEN
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        BEGIN
            EXECUTE format('CALL %s.reshard_copy($1)', ext) INTO plan USING plan;
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
            RAISE;
        END;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        BEGIN
            EXECUTE format('CALL %s.reshard_swap($1, $2, $3)', ext) INTO plan USING plan, lock_timeout, lock_attempts;
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT,
                                    err_detail = PG_EXCEPTION_DETAIL, err_hint = PG_EXCEPTION_HINT;
            failed := true;
        END;
        IF failed THEN
            -- Nothing changed but the copies in the new partition, which
            -- is not attached: delete them, so that calling again starts
            -- afresh.
            COMMIT;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            BEGIN
                IF operation = 'add' THEN
                    EXECUTE format('CALL %s.reshard_enter($1, false)', ext) USING plan;
                    EXECUTE format('DELETE FROM %s', partition);
                END IF;
            EXCEPTION WHEN OTHERS THEN
                err_detail := concat_ws(' ', err_detail,
                    format('The rows copied to %s could not be deleted (%s); delete them before calling again.', partition, SQLERRM));
            END;
            COMMIT;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
            RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_message,
                                  DETAIL = coalesce(nullif(err_detail, ''), 'The table is as it was.'),
                                  HINT = coalesce(nullif(err_hint, ''), 'Calling again starts afresh.');
        END IF;
        COMMIT;
    END IF;
    -- After the swap the table has its new layout; a failure from here on
    -- leaves moved rows twice at worst, and a second call finishes.
    LOOP
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        BEGIN
            EXECUTE format('CALL %s.reshard_cleanup($1)', ext) INTO plan USING plan;
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
            RAISE EXCEPTION 'could not finish resharding %: %', plan->>'parent', SQLERRM
                USING ERRCODE = SQLSTATE,
                      DETAIL = format('The table has its new layout, %s buckets; some moved rows may still be in their old partition too (twice, never lost).',
                                      plan->>'new_n'),
                      HINT = format('Fix the cause, then %s again to finish.', again);
        END;
        COMMIT;
        EXIT WHEN (plan->>'left')::bigint = 0;
        IF (plan->>'rounds')::int >= 5 THEN
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
            RAISE EXCEPTION 'could not finish resharding %: rows keep arriving in their old partitions', plan->>'parent'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('%s rows were written directly to a shard during the last round, placed by the old bucket count; they are copied to their new partition, not yet deleted.',
                                      plan->>'left'),
                      HINT = format('Stop the writers that write to the shards directly, then %s again to finish.', again);
        END IF;
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    BEGIN
        EXECUTE format('CALL %s.reshard_validate($1)', ext) USING plan;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
        RAISE;
    END;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    EXECUTE format('CALL %s.reshard_lock($1, false)', ext) USING locked;
    moved_rows := CASE WHEN (plan->>'resuming')::boolean THEN (plan->>'deleted')::bigint ELSE (plan->>'moved')::bigint END;
    COMMIT;
END
$procedure$;

COMMENT ON PROCEDURE reshard_run(regclass, text, regclass, bigint, interval, int) IS
'runs the phases of a resharding, one transaction each (internal; call reshard_add_partition or reshard_remove_partition)';

CREATE PROCEDURE reshard_add_partition(parent regclass, new_partition regclass,
                                       INOUT moved_rows bigint DEFAULT NULL,
                                       lock_timeout interval DEFAULT '200ms', lock_attempts int DEFAULT 50)
LANGUAGE plpgsql
AS $procedure$
BEGIN
    IF parent IS NULL OR new_partition IS NULL THEN
        RAISE EXCEPTION 'parent and new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Only the extension's schema on the search_path (pg_catalog first,
    -- implicitly) to find its procedure; each phase sets its own.
    PERFORM pg_catalog.set_config('search_path',
        (SELECT pg_catalog.quote_ident(extnamespace::regnamespace::text) FROM pg_catalog.pg_extension
         WHERE extname = 'subsetting'), true);
    CALL reshard_run(parent, 'add', new_partition, moved_rows, lock_timeout, lock_attempts);
END
$procedure$;

COMMENT ON PROCEDURE reshard_add_partition(regclass, regclass, bigint, interval, int) IS
'grows a table partitioned BY LIST (jumpbackhash(key, n)), BY LIST (jumphash(key, n)) or BY HASH (key jumpbackhash<n>_<type>_ops) to n + 1 buckets with new_partition as bucket n, moving only the rows whose bucket changes, verified; waits at most lock_timeout at a time, lock_attempts times, for the swap; returns how many rows moved (see docs/resharding.md)';

CREATE PROCEDURE reshard_remove_partition(parent regclass, partition regclass DEFAULT NULL,
                                          INOUT moved_rows bigint DEFAULT NULL,
                                          lock_timeout interval DEFAULT '200ms', lock_attempts int DEFAULT 50)
LANGUAGE plpgsql
AS $procedure$
BEGIN
    IF parent IS NULL THEN
        RAISE EXCEPTION 'parent must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM pg_catalog.set_config('search_path',
        (SELECT pg_catalog.quote_ident(extnamespace::regnamespace::text) FROM pg_catalog.pg_extension
         WHERE extname = 'subsetting'), true);
    CALL reshard_run(parent, 'remove', partition, moved_rows, lock_timeout, lock_attempts);
END
$procedure$;

COMMENT ON PROCEDURE reshard_remove_partition(regclass, regclass, bigint, interval, int) IS
'shrinks a table partitioned BY LIST (jumpbackhash(key, n)), BY LIST (jumphash(key, n)) or BY HASH (key jumpbackhash<n>_<type>_ops) to n - 1 buckets, moving only the rows of the last bucket, verified, to the others; the last partition is detached, not dropped; given a partition removed by a call that failed after the swap, finishes moving its rows; returns how many rows moved (see docs/resharding.md)';

CREATE FUNCTION reshard_dry_run(parent regclass, buckets int DEFAULT NULL)
RETURNS TABLE (partition regclass, bucket int, rows bigint, rows_to_move bigint)
LANGUAGE plpgsql STABLE
AS $function$
DECLARE
    ext text;
    lay record;
    new_expr text;
BEGIN
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_catalog.pg_extension WHERE extname = 'subsetting';
    FOR lay IN EXECUTE format('SELECT * FROM %s.sharding_layout($1)', ext) USING parent LOOP
        IF lay.partition IS NULL OR lay.bucket IS NULL THEN
            RAISE EXCEPTION 'table % is not partitioned by the extension one bucket a partition', parent
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF buckets IS NOT NULL AND buckets < 1 THEN
            RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets USING ERRCODE = 'invalid_parameter_value';
        END IF;
        EXECUTE format('SELECT %s.reshard_bucket_sql($1, $2, $3)', ext) INTO new_expr
            USING lay.hash_function, lay.key, coalesce(buckets, lay.buckets + 1);
        partition := lay.partition;
        bucket := lay.bucket;
        EXECUTE format('SELECT count(*), count(*) FILTER (WHERE %s <> %s) FROM %s', new_expr, lay.bucket, lay.partition)
            INTO rows, rows_to_move;
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_dry_run(regclass, int) IS
'what resharding to buckets (default: one more) would move, changing nothing: per partition, its rows and how many of them would leave it';

CREATE FUNCTION reshard_check(parent regclass)
RETURNS TABLE (partition regclass, bucket int, rows bigint, misplaced_rows bigint)
LANGUAGE plpgsql STABLE STRICT
AS $function$
DECLARE
    ext text;
    lay record;
    expr text;
BEGIN
    SELECT quote_ident(extnamespace::regnamespace::text) INTO STRICT ext FROM pg_catalog.pg_extension WHERE extname = 'subsetting';
    FOR lay IN EXECUTE format('SELECT * FROM %s.sharding_layout($1)', ext) USING parent LOOP
        CONTINUE WHEN lay.partition IS NULL;
        EXECUTE format('SELECT %s.reshard_bucket_sql($1, $2, $3)', ext) INTO expr USING lay.hash_function, lay.key, lay.buckets;
        partition := lay.partition;
        bucket := lay.bucket;
        EXECUTE format('SELECT count(*), count(*) FILTER (WHERE %s IS DISTINCT FROM %s) FROM %s', expr,
                       coalesce(lay.bucket::text, 'NULL'), lay.partition)
            INTO rows, misplaced_rows;
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

COMMENT ON FUNCTION reshard_check(regclass) IS
'rows in the wrong partition of a table partitioned by the extension (a shard written to directly can drift): per partition, its rows and how many do not belong to its bucket';


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
