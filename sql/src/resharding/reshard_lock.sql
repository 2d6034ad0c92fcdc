-- sql/src/resharding/reshard_lock.sql
--	reshard_lock: the advisory lock of a resharding (internal)

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
