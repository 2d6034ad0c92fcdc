-- src/sql/partition_hash/operator_classes_ddl.sql
--	jumpbackhash_operator_classes_ddl: the SQL that creates the hash operator
--	classes jumpbackhash<N>_<type>_ops of one N

-- For each number of buckets N, six hash operator classes
-- jumpbackhash<N>_{int2,int4,int8,text,bytea,uuid}_ops: PARTITION BY HASH
-- (key jumpbackhash<N>_<type>_ops) with N partitions of MODULUS N puts a row
-- in the partition with REMAINDER jumpbackhash(key, N) (see
-- src/partition_hash.c for how, and docs/sharding.md).  The six classes of
-- one N are in one family, jumpbackhash<N>_ops, which also holds the
-- cross-type = operators of int2, int4 and int8, so that an int4 value
-- prunes a bigint key.  Support function 1 is always the type's built-in
-- hash; support function 2 is jumpbackhash<N>_<type>_partition_hash, whose C
-- code reads N from its name.  The classes and their family are in schema
-- (the extension's), where users name them; the support functions, which
-- nobody calls, are in the extension's schema subsetting_partition_hash, out
-- of \df.  The family has a comment, for its six classes (one per class
-- would cost six times as much: docs/sharding.md, "What the classes cost").
-- Each N costs 37 catalog objects
-- (docs/sharding.md, "What the classes cost").
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
    class text;
    support text;
    i int;
BEGIN
    IF buckets < 1 THEN
        RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    ddl := format('CREATE OPERATOR FAMILY %1$s USING hash; COMMENT ON OPERATOR FAMILY %1$s USING hash IS %2$L;',
                  family,
                  format('the hash operator classes jumpbackhash%1$s_{int2,int4,int8,text,bytea,uuid}_ops: '
                         'PARTITION BY HASH (key jumpbackhash%1$s_<type>_ops) with partitions of MODULUS %1$s puts a '
                         'row in the partition of REMAINDER jumpbackhash(key, %1$s) (a text, bytea or uuid key '
                         'by its XXH3-64, as jumpbackhash does)', buckets));
    FOR i IN 1 .. 6 LOOP
        class := format('jumpbackhash%s_%s_ops', buckets, types[i][1]);
        support := format('subsetting_partition_hash.%I', format('jumpbackhash%s_%s_partition_hash', buckets, types[i][1]));
        ddl := ddl || format(
            'CREATE FUNCTION %1$s(key %2$s, seed bigint) RETURNS bigint AS %3$L, %4$L'
            ' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;'
            ' COMMENT ON FUNCTION %1$s(%2$s, bigint) IS %5$L;'
            ' CREATE OPERATOR CLASS %6$I.%7$I FOR TYPE %2$s USING hash %8$s AS'
            ' OPERATOR 1 pg_catalog.= (%2$s, %2$s), FUNCTION 1 %9$s, FUNCTION 2 %1$s(%2$s, bigint);',
            support, types[i][2], library, 'jumpbackhash_partition_hash_' || types[i][1],
            format('partition hash of jumpbackhash%s_%s_ops', buckets, types[i][1]),
            schema, class,
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
'the SQL that creates the hash operator classes jumpbackhash<buckets>_{int2,int4,int8,text,bytea,uuid}_ops and their family in schema, with a comment, and their support functions in schema subsetting_partition_hash, on the C library library';

REVOKE ALL ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) FROM PUBLIC;
