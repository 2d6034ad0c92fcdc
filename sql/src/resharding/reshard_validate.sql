-- sql/src/resharding/reshard_validate.sql
--	reshard_validate: validates the foreign keys created again (internal)

-- The last step: validates the foreign keys created again NOT VALID.
CREATE PROCEDURE reshard_validate(plan jsonb)
LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOR stmt IN SELECT jsonb_array_elements_text(plan->'validate') LOOP
        EXECUTE stmt;
    END LOOP;
END
$function$;

COMMENT ON PROCEDURE reshard_validate(jsonb) IS
'resharding, last step: validates the foreign keys of other tables created again NOT VALID during the swap (internal)';
