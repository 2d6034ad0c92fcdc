-- src/sql/partition_hash/operator_classes.sql
--	the hash operator classes jumpbackhash<N>_<type>_ops for N = 1 to 256

-- Members of the extension, in its schema; their support functions in
-- subsetting_partition_hash (operator_classes_ddl.sql).
DO $install$
BEGIN
    FOR n IN 1 .. 256 LOOP
        EXECUTE jumpbackhash_operator_classes_ddl(n, current_schema(), 'MODULE_PATHNAME');
    END LOOP;
END
$install$;
