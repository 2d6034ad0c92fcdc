-- src/sql/partition_hash/jumpbackhash_create_operator_classes.sql
--	jumpbackhash_create_operator_classes: the classes for another number of buckets (superuser)

CREATE FUNCTION jumpbackhash_create_operator_classes(buckets int)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    library text;
    ddl text;
BEGIN
    -- Not STRICT: no rows for a NULL would read as "nothing to create".
    IF buckets IS NULL THEN
        RAISE EXCEPTION 'buckets must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'permission denied to create the jumpbackhash operator classes for % buckets', buckets
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Their support functions are C functions, which only a superuser may create.',
                  HINT = 'The classes for 1 to 256 buckets are installed with the extension, and everyone may use them.';
    END IF;
    IF buckets < 1 THEN
        RAISE EXCEPTION 'number of buckets must be at least 1, got %', buckets
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT FROM pg_opclass
               WHERE opcname = format('jumpbackhash%s_int8_ops', buckets)
                 AND opcnamespace = '@extschema@'::regnamespace) THEN
        RAISE EXCEPTION 'the jumpbackhash operator classes for % buckets exist already', buckets
            USING ERRCODE = 'duplicate_object',
                  DETAIL = CASE WHEN buckets <= 256
                                THEN 'The extension installs the classes for 1 to 256 buckets.'
                                ELSE format('Schema %s holds jumpbackhash%s_int8_ops.', '@extschema@', buckets) END;
    END IF;
    -- The C library, as the extension's own jumpbackhash(bigint, int) names it.
    SELECT probin INTO library FROM pg_proc WHERE oid = '@extschema@.jumpbackhash(bigint, int)'::regprocedure;
    -- (the schema's name, unquoted)
    ddl := @extschema@.jumpbackhash_operator_classes_ddl(buckets, (parse_ident('@extschema@'))[1], library);
    EXECUTE ddl;
    -- Laid out as the installed classes (the support functions in schema
    -- subsetting_partition_hash), but not members of the extension: pg_dump
    -- dumps them (a dump holds only CREATE EXTENSION for the members), and
    -- ALTER EXTENSION UPDATE leaves them.  DROP EXTENSION refuses while they
    -- exist, as their support functions are in the extension's schema
    -- subsetting_partition_hash (CASCADE drops them, and the tables that
    -- use them).
    RETURN QUERY
    SELECT format('%s.%I', '@extschema@', format('jumpbackhash%s_%s_ops', buckets, name))
    FROM unnest(ARRAY['int2', 'int4', 'int8', 'text', 'bytea', 'uuid']) AS name;
END
$function$;

COMMENT ON FUNCTION jumpbackhash_create_operator_classes(int) IS
'superuser only: creates the hash operator classes jumpbackhash<buckets>_{int2,int4,int8,text,bytea,uuid}_ops for a number of buckets the extension does not install (it installs 1 to 256), in the extension''s schema; returns their names; a NULL number of buckets is an error';
