-- sql/src/resharding/reshard_remove_partition.sql
--	reshard_remove_partition: shrink a sharded table by one bucket

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
