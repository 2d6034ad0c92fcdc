-- src/sql/resharding/reshard_free_name.sql
--	reshard_free_name: a name for a relation, free in its schema, as PostgreSQL makes one (internal)

-- base || ending, base cut at a character's boundary so that the name fits
-- in 63 bytes (NAMEDATALEN - 1), as PostgreSQL cuts the names it makes; if
-- a relation of the schema namespace has it, ending numbered 1, 2, ...
-- until none has.  For the indexes the engine leaves on a partition, named
-- after it.  Not revoked from PUBLIC: the routines that run as the table's
-- owner call it; it reads the catalog, which everyone may.
CREATE FUNCTION reshard_free_name(namespace oid, base text, ending text) RETURNS name
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    numbered text;
    cut text;
BEGIN
    IF namespace IS NULL OR base IS NULL OR ending IS NULL OR octet_length(ending) > 50 THEN
        RAISE EXCEPTION 'cannot make a name of % and %', coalesce(quote_literal(base), 'NULL'), coalesce(quote_literal(ending), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR number IN 0 .. 1000000 LOOP
        numbered := ending || CASE WHEN number > 0 THEN number::text ELSE '' END;
        cut := left(base, 63);   -- (63 characters: 63 bytes or more)
        WHILE octet_length(cut) + octet_length(numbered) > 63 AND cut <> '' LOOP
            cut := left(cut, -1);
        END LOOP;
        IF NOT EXISTS (SELECT FROM pg_class WHERE relname = cut || numbered AND relnamespace = namespace) THEN
            RETURN cut || numbered;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'no free name for % in schema %', base || ending, namespace::regnamespace;
END
$function$;

COMMENT ON FUNCTION reshard_free_name(oid, text, text) IS
'resharding: a relation name of base and ending, cut to 63 bytes at a character''s boundary and numbered where taken in the schema (internal)';
