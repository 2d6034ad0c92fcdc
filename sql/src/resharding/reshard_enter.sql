-- sql/src/resharding/reshard_enter.sql
--	reshard_enter: a phase's search_path and role (internal)

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
