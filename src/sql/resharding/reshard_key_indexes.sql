-- src/sql/resharding/reshard_key_indexes.sql
--	reshard_key_indexes: an index by the key on each local table filled (internal)

-- Once the copy has filled the tables (and the engine has built their
-- indexes), the catch-up finds a row of each local table filled by its key,
-- through an index of the table's that leads with it (plain btree, the
-- key's default operator class and collation), else through one of the
-- engine's own (reshard_object_name 'key'), dropped at the cutover: their
-- names, schema-qualified, which the copy records.  Not revoked from
-- PUBLIC: the routines that run as the table's owner call it.
CREATE FUNCTION reshard_key_indexes(s reshard_state) RETURNS text[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    target oid;
    key_name text;
    made text[] := '{}';
BEGIN
    FOR target IN SELECT t FROM unnest(s.shadows) AS u(t) JOIN pg_class c ON c.oid = u.t WHERE c.relkind <> 'f' LOOP
        key_name := @extschema@.reshard_object_name(s, 'key', target);
        CONTINUE WHEN EXISTS (
            SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam
            LEFT JOIN pg_attribute k ON k.attrelid = x.indrelid AND k.attnum = x.indkey[0]
            LEFT JOIN pg_opclass o ON o.oid = x.indclass[0]
            WHERE x.indrelid = target
              AND (i.relname = key_name
                   OR a.amname = 'btree' AND x.indpred IS NULL AND x.indisvalid
                      AND quote_ident(k.attname) = s.key AND o.opcdefault AND o.opcintype = k.atttypid
                      AND x.indcollation[0] = k.attcollation));
        EXECUTE format('CREATE INDEX %I ON %s ((%s))', key_name, target::regclass, s.key);
        made := made || format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                                         WHERE c.oid = target), key_name);
    END LOOP;
    RETURN made;
END
$function$;

COMMENT ON FUNCTION reshard_key_indexes(reshard_state) IS
'resharding: an index by the key on each local table filled, unless one of its own leads with the key (internal)';
