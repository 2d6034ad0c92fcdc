-- sql/src/resharding/reshard_add_partition.sql
--	reshard_add_partition: grow a sharded table by one bucket

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
