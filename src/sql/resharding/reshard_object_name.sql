-- src/sql/resharding/reshard_object_name.sql
--	reshard_object_name: the name of something the engine makes (internal)

-- Every table, index, view, sequence, function, trigger and constraint the
-- engine makes, here or on a shard, is named reshard_KIND_OID_HASH: its kind
-- (shadow, incoming, key, bound, parent, log, log_seq, transfer, hidden, hidden_key,
-- mark, refuse_direct, all, shown, direct_writes, direct_truncate), the OID
-- of the table it is made for, and 16 hexadecimal digits of the SHA-256 of
-- the state's name_key (random, chosen when the resharding begins, in
-- reshard_state, which only the extension's owner reads), the kind and the
-- OID.  No other role can tell a name before its object exists, nor one
-- name from another (each is a hash of its own): a role that may create in
-- the table's schema, or in a shard's, cannot take a name first, whatever
-- OIDs it knows, and what finds an object later by its name finds the
-- engine's.  At most 8 + 15 + 1 + 10 + 1 + 16 = 51 bytes (NAMEDATALEN is
-- 64).  Not revoked from PUBLIC: the routines that run as the table's
-- owner call it in SQL; it reads nothing.
CREATE FUNCTION reshard_object_name(s reshard_state, kind text, object oid) RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF s.name_key IS NULL OR kind IS NULL OR kind !~ '^[a-z_]{1,15}$' OR object IS NULL THEN
        RAISE EXCEPTION 'cannot name an object of kind % for OID %', coalesce(quote_literal(kind), 'NULL'),
                        coalesce(object::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = CASE WHEN s.name_key IS NULL THEN 'The state has no name_key.'
                                ELSE 'A kind is 1 to 15 lower-case letters or underscores.' END;
    END IF;
    RETURN format('reshard_%s_%s_%s', kind, object,
                  left(encode(sha256(convert_to(format('%s %s %s', s.name_key, kind, object), 'UTF8')), 'hex'), 16));
END
$function$;

COMMENT ON FUNCTION reshard_object_name(reshard_state, text, oid) IS
'resharding: the name of a relation, function, trigger or constraint the engine makes, unguessable by other roles (internal)';
