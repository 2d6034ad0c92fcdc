-- src/sql/placement/move_phase_verify.sql
--	move_phase_verify: the table a partition moves into against the partition, by row image (internal)

-- As the table's owner, in a REPEATABLE READ transaction (for a table on a
-- server, the snapshots of both servers were taken while no write to it
-- was under way), after the catch-up: the multiset of row images of the
-- partition equals that of its copy (count, and the sum of a 64-bit hash of
-- each row image, reshard_row_image_hash), or an error says which differs
-- and nothing changes.  A partition here holds only rows of its bucket
-- (its bound says so); one on a server is read whole, and a row of another
-- bucket there is an error (the copy would hold it in the wrong place).
-- A copy on a server that has the extension, of this version, is counted
-- and summed there first, through a view (made through dblink, dropped by
-- the finish or the undo) read by postgres_fdw in this transaction's
-- snapshot there; read whole only if they differ (a row image may differ
-- on another platform, or where a value holds an OID: an enum's), or
-- where there is no such view.  A copy here then gets a CHECK of its
-- bucket, so that the cutover attaches it without a scan.
CREATE FUNCTION move_phase_verify(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    target oid := s.shadows[s.bucket + 1];
    target_is_foreign boolean := (SELECT relkind FROM pg_class WHERE oid = s.shadows[s.bucket + 1]) = 'f';
    partition_is_foreign boolean := (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f';
    cols text;
    source_count bigint;
    source_sum numeric;
    misplaced bigint;
    filled_count bigint;
    filled_sum numeric;
    filled regclass;   -- the copy, or a foreign table on it read in batches
    remote_ext text;   -- the extension's schema on the server, if it is of this version
    images text;       -- the view there of its copy's count and sum (reshard_object_name)
    remote_schema name;
    remote_name name;
    images_here text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['verify']);
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'move_phase_verify must run in a repeatable read transaction';
    END IF;
    SELECT string_agg('t.' || quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(ROW(%s))), 0), count(*) FILTER (WHERE %s)
                    FROM ONLY %s AS t',
                   '@extschema@', cols,
                   CASE WHEN partition_is_foreign THEN format('(%s) IS DISTINCT FROM %s', s.new_bucket_sql, s.bucket) ELSE 'false' END,
                   s.partition::regclass)
    INTO source_count, source_sum, misplaced;
    IF misplaced > 0 THEN
        RAISE EXCEPTION 'foreign partition % of % holds % rows of other buckets', s.partition::regclass, s.parent_name, misplaced
            USING ERRCODE = 'check_violation',
                  DETAIL = 'PostgreSQL updates the key of a row of a foreign partition in place, on its server, and does not move the row; or the row was written directly on the server.  Nothing was moved; the table is as it was.',
                  HINT = format('SELECT * FROM reshard_check(%L) lists them; move each by DELETE and INSERT through the parent.', s.parent_name);
    END IF;
    IF NOT target_is_foreign THEN
        EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(ROW(%s))), 0) FROM %s AS t',
                       '@extschema@', cols, target::regclass)
        INTO filled_count, filled_sum;
    ELSE
        -- (the rest of this transaction there without the server's timeouts)
        PERFORM @extschema@.move_destination_guard(s, 'mark');
        EXECUTE @extschema@.reshard_remote_query(s.server,
                       format('SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension x
                               JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace
                               WHERE x.extname = %L AND x.extversion = %L',
                              'subsetting', (SELECT extversion FROM pg_extension WHERE extname = 'subsetting')),
                       'schema text')
        INTO remote_ext;
        IF remote_ext IS NOT NULL THEN
            images := @extschema@.reshard_object_name(s, 'images', s.partition);
            SELECT n.nspname, c.relname INTO STRICT remote_schema, remote_name
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition;
            -- (here, a foreign table on that view, in the table's schema, for this transaction)
            images_here := format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                                            WHERE c.oid = s.parent), images);
            -- (what the schema's default privileges grant on the view there
            -- revoked, in the transaction that makes it)
            EXECUTE @extschema@.reshard_remote_sql(s.server,
                format('CREATE OR REPLACE VIEW %1$I.%2$I WITH (security_invoker = true) AS
                            SELECT pg_catalog.count(*) AS n,
                                   pg_catalog.sum(%3$s.reshard_row_image_hash(ROW(%4$s)))::pg_catalog.numeric AS total
                            FROM %1$I.%5$I AS t;
                        %6$s',
                       remote_schema, images, remote_ext, cols, remote_name,
                       @extschema@.reshard_remote_revoke(ARRAY[format('%I.%I', remote_schema, images)])));
            EXECUTE format('CREATE FOREIGN TABLE %s (n bigint, total numeric) SERVER %I OPTIONS (schema_name %L, table_name %L)',
                           images_here, s.server, remote_schema, images);
            EXECUTE format('SELECT n, coalesce(total, 0) FROM %s', images_here) INTO filled_count, filled_sum;
            EXECUTE format('DROP FOREIGN TABLE %s', images_here);
        END IF;
        IF filled_count IS DISTINCT FROM source_count OR filled_sum IS DISTINCT FROM source_sum THEN
            -- (a foreign table read in batches of 10,000 rows: reshard_transfer_table)
            filled := @extschema@.reshard_transfer_table(s, target);
            EXECUTE format('SELECT count(*), coalesce(sum(%s.reshard_row_image_hash(ROW(%s))), 0) FROM %s AS t',
                           '@extschema@', cols, filled)
            INTO filled_count, filled_sum;
            IF filled <> target THEN
                EXECUTE format('DROP FOREIGN TABLE %s', filled);
            END IF;
        END IF;
    END IF;
    IF filled_count <> source_count OR filled_sum <> source_sum THEN
        RAISE EXCEPTION 'the rows of bucket % of % differ from their copies in %', s.bucket, s.parent_name, target::regclass
            USING ERRCODE = 'data_corrupted',
                  DETAIL = format('%s rows, %s copies (or the same count, other values).  Nothing was swapped; the table is as it was.',
                                  source_count, filled_count);
    END IF;
    s.rows_verified := filled_count;
    -- (a copy here is attached at the cutover, its CHECK dropped then)
    IF NOT target_is_foreign THEN
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s)', target::regclass,
                       @extschema@.reshard_object_name(s, 'bound', target),
                       CASE WHEN s.method = 'hash_operator_class'
                            THEN format('satisfies_hash_partition(%s::oid, %s, %s, %s)', s.parent, s.new_buckets, s.bucket, s.key)
                            ELSE format('%1$s IS NOT NULL AND %1$s = %2$s', s.new_bucket_sql, s.bucket) END);
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_verify(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_verify(reshard_state) IS
'partition move, verification: the table the partition moves into against the partition, by row image (internal)';
