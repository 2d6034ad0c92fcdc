-- sql/src/resharding/reshard_run.sql
--	reshard_run: the phases of a resharding, one transaction each (internal)

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
