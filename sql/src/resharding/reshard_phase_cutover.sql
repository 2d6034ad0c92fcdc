-- sql/src/resharding/reshard_phase_cutover.sql
--	reshard_phase_cutover: the new layout put in the place of the old one (internal)

-- As the table's owner, in the transaction that holds ACCESS EXCLUSIVE on
-- the parent, its partitions, the tables filled and the tables whose
-- foreign keys refer to the parent, after the whole log was applied and
-- the engine's triggers dropped.  Catalog work only, whose cost depends on
-- the number of partitions and catalog objects, not of rows: the change
-- log dropped (it is empty, and of the old parent's row type), the foreign
-- keys that refer to the parent dropped, the partitions that are not
-- replaced detached (the removed one), the old parent dropped with the old
-- local partitions, takeover (reshard_takeover_sql, read before) run to
-- give the new parent and the shadows the old ones' names and properties,
-- each table filled attached (its CHECK implies its bound: no scan) and its
-- helpers dropped, the foreign keys added again NOT VALID (validated by
-- reshard_phase_finish).  The state's parent becomes the new parent.
CREATE FUNCTION reshard_phase_cutover(s reshard_state, takeover text[]) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    r record;
    b int;
    target regclass;
    statement text;
    foreign_keys text[] := '{}';
    replaced oid[];
BEGIN
    replaced := ARRAY(SELECT src FROM unnest(s.sources) WITH ORDINALITY AS u(src, i)
                      WHERE src IS NOT NULL AND s.shadows[i] IS NOT NULL AND s.shadows[i] <> s.partition);
    s.validate := '{}';
    EXECUTE format('DROP TABLE %s', s.log::regclass);
    EXECUTE format('DROP SEQUENCE %s', s.log_sequence::regclass);
    FOR r IN SELECT n.conrelid::regclass AS rel, n.conname, pg_get_constraintdef(n.oid) AS def, n.convalidated,
                    obj_description(n.oid, 'pg_constraint') AS comment
             FROM pg_constraint n
             WHERE n.confrelid = s.parent AND n.contype = 'f' AND n.conparentid = 0 AND n.conrelid <> s.parent
             ORDER BY n.oid LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname);
        foreign_keys := foreign_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.rel, r.conname, r.def,
                                               CASE WHEN r.convalidated THEN ' NOT VALID' ELSE '' END);
        IF r.comment IS NOT NULL THEN
            foreign_keys := foreign_keys || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.rel, r.comment);
        END IF;
        IF r.convalidated THEN
            s.validate := s.validate || format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.rel, r.conname);
        END IF;
    END LOOP;
    FOR r IN SELECT inhrelid::regclass AS rel FROM pg_inherits
             WHERE inhparent = s.parent AND inhrelid <> ALL (replaced) ORDER BY inhrelid LOOP
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', s.parent::regclass, r.rel);
    END LOOP;
    EXECUTE format('DROP TABLE %s', s.parent::regclass);
    FOREACH statement IN ARRAY takeover LOOP
        EXECUTE statement;
    END LOOP;
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        target := s.shadows[b + 1];
        EXECUTE format('DROP INDEX %s', (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
                                         JOIN pg_namespace n ON n.oid = c.relnamespace
                                         WHERE c.relname = 'reshard_key_' || s.shadows[b + 1]
                                           AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = target)));
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.new_parent::regclass, target, format(s.new_bound, b));
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, 'reshard_bound_' || s.shadows[b + 1]);
    END LOOP;
    FOREACH statement IN ARRAY foreign_keys LOOP
        EXECUTE statement;
    END LOOP;
    s.parent := s.new_parent;
    s.phase := 'finish';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_cutover(reshard_state, text[]) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_cutover(reshard_state, text[]) IS
'resharding, cutover: the new layout put in the place of the old one under the lock, catalog work only (internal)';
