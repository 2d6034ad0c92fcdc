-- src/sql/placement/move_phase_copy.sql
--	move_phase_copy: the partition copied whole into the table that takes its place (internal)

-- As the table's owner, in a REPEATABLE READ transaction (for a partition
-- on a server, its snapshot taken while no write to it was under way):
-- the first call copies every row of the partition (its bound says they
-- are of its bucket) and deletes the log entries the same snapshot sees
-- (their effect is in the copy); the next finds nothing left to copy
-- (the engine has built the indexes of a table here) and makes what the
-- catch-up needs to find rows by the key.  The copy is the move's one
-- step: what a call cut short after a server committed left in the table
-- goes first.
--
-- A partition here to a server: the table there emptied (through dblink,
-- committed at once), then the rows sent with COPY over a connection of
-- the engine's own, committed there at once too (reshard_copy_rows).  A
-- partition on a server, to this one or another: read 10,000 rows at a
-- time, and written into a table on a server in batches too
-- (reshard_transfer_table).  Returns the state with the counts.
CREATE FUNCTION move_phase_copy(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    target oid := s.shadows[s.bucket + 1];
    cols text;
    n bigint;
    write_to oid;   -- the target, or a foreign table on it written in batches
    read_from oid;  -- the partition, or a foreign table on it read in batches
    r record;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['copy']);
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'move_phase_copy must run in a repeatable read transaction';
    END IF;
    -- (sources_copied counts the sources in order: the partition's is its bucket's)
    IF s.sources_copied > s.bucket THEN
        s.sources_copied := cardinality(s.sources) + 1;
        -- (a partition moved here from a server: the table's PRIMARY KEY and
        -- UNIQUE constraints that its partitions keep, named after it)
        IF s.server IS NULL THEN
            FOR r IN SELECT u.name, u.definition FROM @extschema@.partition_unique_constraints u
                     WHERE u.parent = s.parent
                       AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = target
                                                                     AND pg_get_constraintdef(c.oid) = u.definition)
                     ORDER BY u.name LOOP
                EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', target::regclass,
                               @extschema@.reshard_free_name((SELECT relnamespace FROM pg_class WHERE oid = target),
                                                             (SELECT relname FROM pg_class WHERE oid = s.partition) || '_' || r.name,
                                                             ''),
                               r.definition);
            END LOOP;
        END IF;
        PERFORM @extschema@.reshard_key_indexes(s);
        IF s.server IS NOT NULL THEN
            PERFORM @extschema@.move_remote_indexes(s);
        END IF;
        RETURN s;
    END IF;
    s.sources_copied := s.bucket + 1;
    IF (SELECT relkind FROM pg_class WHERE oid = s.partition) <> 'f' AND s.server IS NOT NULL THEN
        EXECUTE @extschema@.reshard_remote_sql(s.server,
            format('SELECT pg_catalog.set_config(%L, ''on'', true); TRUNCATE %s', 'subsetting_reshard.into_' || s.partition, (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
                                   JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition)));
        n := @extschema@.reshard_copy_rows(s.partition, target);
    ELSE
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
        FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
        write_to := @extschema@.reshard_transfer_table(s, target);
        -- (a table on a server refuses other writes: move_destination_guard)
        PERFORM @extschema@.move_destination_guard(s, 'mark');
        EXECUTE format('TRUNCATE %s', write_to::regclass);
        read_from := @extschema@.reshard_transfer_table(s, s.partition);
        EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM ONLY %s',
                       write_to::regclass, cols, cols, read_from::regclass);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF write_to <> target THEN
            EXECUTE format('DROP FOREIGN TABLE %s', write_to::regclass);
        END IF;
        IF read_from <> s.partition THEN
            EXECUTE format('DROP FOREIGN TABLE %s', read_from::regclass);
        END IF;
    END IF;
    s.rows_copied := s.rows_copied + n;
    s.rows_to_move := s.rows_to_move + n;
    EXECUTE format('DELETE FROM %s WHERE partition = $1', s.log::regclass) USING s.partition;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION move_phase_copy(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION move_phase_copy(reshard_state) IS
'partition move, copy: every row of the partition into the table that takes its place, here or on a server (internal)';
