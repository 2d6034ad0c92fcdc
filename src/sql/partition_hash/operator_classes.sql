-- src/sql/partition_hash/operator_classes.sql
--	the hash operator classes jumpbackhash<N>_<type>_ops for N = 1 to 256, and the SQL that creates them

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

REVOKE ALL ON FUNCTION jumpbackhash_operator_classes_ddl(int, name, text) FROM PUBLIC;

-- The classes for 1 to 256 buckets, members of the extension.
DO $install$
BEGIN
    FOR n IN 1 .. 256 LOOP
        EXECUTE jumpbackhash_operator_classes_ddl(n, current_schema(), 'MODULE_PATHNAME');
    END LOOP;
END
$install$;
