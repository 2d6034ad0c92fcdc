-- sql/src/resharding/reshard_phase_check.sql
--	reshard_phase_check: what the checks saw, the same at the cutover (internal)

-- As the table's owner.  The first call (after reshard_prepare's checks,
-- before anything is made) records what of the table the checks and the
-- cutover depend on: its partitions, owners, columns, indexes,
-- constraints, triggers, rules, policies, row-level security, security
-- labels, publications, and the foreign keys that refer to it.  The call at
-- the cutover, under the lock, compares: anything added, changed or
-- removed meanwhile (a trigger on a partition, a policy, a publication...)
-- is an error (object_not_in_prerequisite_state), which undoes the
-- resharding before it cuts over.  The engine's own index and CHECK on the
-- new partition are not counted.
CREATE FUNCTION reshard_phase_check(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rels oid[];
    seen text[];
    changed text;
BEGIN
    rels := ARRAY[s.parent] || ARRAY(SELECT inhrelid FROM pg_inherits WHERE inhparent = s.parent ORDER BY inhrelid)
            || s.partition;
    SELECT string_agg(c.oid::regclass::text, ', ') INTO changed
    FROM pg_class c WHERE c.oid = ANY (rels) AND c.relkind = 'f';
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard % with foreign partitions (%) with the engine of 1.2 yet', s.parent_name, changed
            USING ERRCODE = 'feature_not_supported';
    END IF;
    seen := ARRAY(
        SELECT x FROM (
            SELECT format('partition %s', i.inhrelid::regclass) AS x FROM pg_inherits i WHERE i.inhparent = s.parent
            UNION ALL
            SELECT format('%s: owner %s, kind %s, persistence %s, row security %s/%s', c.oid::regclass,
                          c.relowner::regrole, c.relkind, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity)
            FROM pg_class c WHERE c.oid = ANY (rels)
            UNION ALL
            SELECT format('%s: column %I %s%s%s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                          CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                          CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END)
            FROM pg_attribute a WHERE a.attrelid = ANY (rels) AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT format('%s: index %s', x.indrelid::regclass, pg_get_indexdef(x.indexrelid))
            FROM pg_index x WHERE x.indrelid = ANY (rels)
              AND x.indexrelid <> coalesce(to_regclass(format('%I.%I', (SELECT relnamespace::regnamespace::name FROM pg_class
                                                                       WHERE oid = s.partition),
                                                      'reshard_key_' || s.partition)), 0)
            UNION ALL
            SELECT format('%s: constraint %I %s%s', n.conrelid::regclass, n.conname, pg_get_constraintdef(n.oid),
                          CASE WHEN n.convalidated THEN '' ELSE ' (not valid)' END)
            FROM pg_constraint n WHERE n.conrelid = ANY (rels)
              AND NOT (n.conrelid = s.partition AND n.conname = 'reshard_bound_' || s.partition)
            UNION ALL
            SELECT format('%s: foreign key %I of %s %s', n.confrelid::regclass, n.conname, n.conrelid::regclass,
                          pg_get_constraintdef(n.oid))
            FROM pg_constraint n WHERE n.confrelid = ANY (rels) AND n.contype = 'f' AND n.conrelid <> ALL (rels)
            UNION ALL
            SELECT format('%s: trigger %s', t.tgrelid::regclass, pg_get_triggerdef(t.oid))
            FROM pg_trigger t WHERE t.tgrelid = ANY (rels) AND NOT t.tgisinternal
            UNION ALL
            SELECT format('%s: rule %s', r.ev_class::regclass, pg_get_ruledef(r.oid))
            FROM pg_rewrite r WHERE r.ev_class = ANY (rels)
            UNION ALL
            SELECT format('%s: policy %I', p.polrelid::regclass, p.polname) FROM pg_policy p WHERE p.polrelid = ANY (rels)
            UNION ALL
            SELECT format('%s: security label of %s', l.objoid::regclass, l.provider)
            FROM pg_seclabel l WHERE l.classoid = 'pg_class'::regclass AND l.objoid = ANY (rels)
            UNION ALL
            SELECT format('%s: publication %I', r.prrelid::regclass, p.pubname)
            FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = ANY (rels)) AS t
        ORDER BY x);
    IF s.catalog IS NULL THEN
        s.catalog := seen;
        RETURN s;
    END IF;
    SELECT string_agg(d, '; ' ORDER BY d) INTO changed FROM (
        (SELECT 'now ' || x AS d FROM unnest(seen) AS x EXCEPT SELECT 'now ' || x FROM unnest(s.catalog) AS x)
        UNION ALL
        (SELECT 'before ' || x FROM unnest(s.catalog) AS x EXCEPT SELECT 'before ' || x FROM unnest(seen) AS x)) AS t;
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'table % changed while it was being resharded', s.parent_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = left(changed, 2000),
                  HINT = 'Nothing was swapped; the table is as it was.  Call it again: the checks run again.';
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_check(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_check(reshard_state) IS
'resharding: records what of the table its checks saw, and at the cutover refuses any change of it (internal)';
