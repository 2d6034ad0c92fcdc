-- src/sql/resharding/reshard_catalog_check.sql
--	reshard_catalog_check: what the checks saw, the same at the cutover (internal)

-- As the table's owner.  The first call (after reshard_plan's checks,
-- before anything is made) records what of the table the checks and the
-- cutover depend on: its partitions, owners, columns, their defaults, the
-- files of the partitions' rows (a rewrite the capture does not see),
-- indexes, constraints, statistics objects, triggers, rules, policies,
-- row-level security, security labels, publications, foreign tables'
-- servers and options, and the foreign keys that refer to it.  The later
-- calls (before each step, and at the cutover under the lock) compare:
-- anything added, changed or removed meanwhile (a column, a default, a
-- trigger on a partition, a policy, a publication...) is an error
-- (object_not_in_prerequisite_state) that names it, and the resharding is
-- undone before it cuts over: a change of the table's definition is never
-- undone by the cutover.  The engine's own index and CHECK on the
-- new partition are not counted.
--
-- Both calls first refuse (feature_not_supported) what the engine cannot
-- reshard: a table published through its partitions: by a publication that
-- covers the table, one of its partitions or the new partition (FOR TABLE,
-- FOR TABLES IN SCHEMA of their schema, FOR ALL TABLES) without
-- publish_via_partition_root, or that covers some of its partitions and
-- not the table.  Such a publication sends the partitions' changes under
-- the partitions' names, and the rows the engine moves between partitions
-- would not reach its subscribers: the copies are written into tables that
-- are not partitions yet, the cutover swaps tables and deletes no
-- row.  Published through the root (the table), the moves change nothing of
-- what is published, and the writes of others are sent as the table's,
-- before the cutover and after it (the new table takes the old one's
-- publications).  Refused first, with or without
-- publish_via_partition_root: a publication that would publish the tables
-- the engine fills or empties under their own names, FOR ALL TABLES, FOR
-- TABLES IN SCHEMA of the table's schema (the shadows), of the new or
-- removed partition's or of the extension's (reshard_state), FOR TABLE the
-- new or removed partition: its subscribers would receive the copies, or
-- fail on tables they do not have.
CREATE FUNCTION reshard_catalog_check(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rels oid[];
    seen text[];
    changed text;
    hint text;
    key_name text;      -- the engine's index and CHECK on the new partition (reshard_object_name)
    bound_name text;
    all_views text[];   -- with shard_views, the views a foreign partition is pointed at, by old bucket
    shown_views text[];
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup', 'capture', 'copy', 'catch up', 'verify', 'cutover']);
    key_name := @extschema@.reshard_object_name(s, 'key', s.partition);
    bound_name := @extschema@.reshard_object_name(s, 'bound', s.partition);
    SELECT array_agg(CASE WHEN u.source IS NOT NULL THEN @extschema@.reshard_object_name(s, 'all', u.source) END ORDER BY u.i),
           array_agg(CASE WHEN u.source IS NOT NULL THEN @extschema@.reshard_object_name(s, 'shown', u.source) END ORDER BY u.i)
    INTO all_views, shown_views
    FROM unnest(s.sources) WITH ORDINALITY AS u(source, i);
    rels := ARRAY[s.parent] || ARRAY(SELECT inhrelid FROM pg_inherits WHERE inhparent = s.parent ORDER BY inhrelid)
            || s.partition;
    SELECT CASE WHEN count(*) = 1 THEN 'publication ' ELSE 'publications ' END
           || string_agg(format('%I', p.pubname), ', ' ORDER BY p.pubname),
           concat_ws(' ',
                     CASE WHEN bool_or(p.puballtables OR wide.nspname IS NOT NULL)
                          THEN format('Publish the table in a publication FOR TABLE %s WITH (publish_via_partition_root = true), not %s.',
                                      s.parent_name,
                                      string_agg(CASE WHEN p.puballtables THEN format('%I (FOR ALL TABLES)', p.pubname)
                                                      WHEN wide.nspname IS NOT NULL
                                                      THEN format('%I (FOR TABLES IN SCHEMA %s)', p.pubname, wide.nspname) END,
                                                 ', ' ORDER BY p.pubname)) END,
                     string_agg(CASE WHEN NOT p.puballtables AND wide.nspname IS NULL
                                     THEN format('ALTER PUBLICATION %I DROP TABLE %s;', p.pubname, s.partition::regclass) END,
                                ' ' ORDER BY p.pubname))
    INTO changed, hint
    FROM pg_publication p,
         LATERAL (SELECT string_agg(DISTINCT format('%I', m.nspname), ', ') AS nspname
                  FROM pg_publication_namespace n JOIN pg_namespace m ON m.oid = n.pnnspid
                  WHERE n.pnpubid = p.oid
                    AND n.pnnspid IN ((SELECT relnamespace FROM pg_class WHERE oid = s.parent),
                                      (SELECT relnamespace FROM pg_class WHERE oid = s.partition),
                                      '@extschema@'::regnamespace)) AS wide
    WHERE p.puballtables OR wide.nspname IS NOT NULL
       OR EXISTS (SELECT FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = s.partition);
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard % while % would publish the tables the resharding fills', s.parent_name, changed
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The resharding copies the rows into tables of its own in the table''s schema and into the new partition, empties the removed one, and records its state in reshard_state: the subscribers would receive their changes under their names.',
                  HINT = hint;
    END IF;
    WITH pub AS (
        SELECT p.pubname, p.pubviaroot,
               p.puballtables
               OR EXISTS (SELECT FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = s.parent)
               OR EXISTS (SELECT FROM pg_publication_namespace n JOIN pg_class c ON c.relnamespace = n.pnnspid
                          WHERE n.pnpubid = p.oid AND c.oid = s.parent) AS whole,
               (SELECT string_agg(r.prrelid::regclass::text, ', ' ORDER BY r.prrelid::regclass::text)
                FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = ANY (rels)) AS tables,
               (SELECT string_agg(DISTINCT format('%I', m.nspname), ', ')
                FROM pg_publication_namespace n JOIN pg_namespace m ON m.oid = n.pnnspid
                JOIN pg_class c ON c.relnamespace = n.pnnspid
                WHERE n.pnpubid = p.oid AND c.oid = ANY (rels)) AS schemas
        FROM pg_publication p)
    SELECT CASE WHEN count(*) = 1 THEN 'publication ' ELSE 'publications ' END
           || string_agg(format('%I', pubname), ', ' ORDER BY pubname),
           string_agg(CASE WHEN whole THEN format('ALTER PUBLICATION %I SET (publish_via_partition_root = true);', pubname)
                           ELSE concat_ws(' ',
                                          CASE WHEN tables IS NOT NULL
                                               THEN format('ALTER PUBLICATION %I DROP TABLE %s;', pubname, tables) END,
                                          CASE WHEN schemas IS NOT NULL
                                               THEN format('ALTER PUBLICATION %I DROP TABLES IN SCHEMA %s;', pubname, schemas) END)
                      END,
                      ' ' ORDER BY pubname)
    INTO changed, hint
    FROM pub
    WHERE (whole OR tables IS NOT NULL OR schemas IS NOT NULL) AND NOT (whole AND pubviaroot);
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard % while it is published through its partitions by %', s.parent_name, changed
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The rows the resharding moves between partitions would not reach the subscribers.',
                  HINT = 'Publish it through its root, or not at all: ' || hint;
    END IF;
    seen := ARRAY(
        SELECT x FROM (
            SELECT format('partition %s', i.inhrelid::regclass) AS x FROM pg_inherits i WHERE i.inhparent = s.parent
            UNION ALL
            SELECT format('%s: owner %s, kind %s, persistence %s, row security %s/%s', c.oid::regclass,
                          c.relowner::regrole, c.relkind, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity)
            FROM pg_class c WHERE c.oid = ANY (rels)
            UNION ALL
            -- (rewritten rows: a new file; told apart below)
            SELECT format('%s: storage %s', c.oid::regclass, c.relfilenode)
            FROM pg_class c WHERE c.oid = ANY (rels) AND c.oid <> s.partition AND c.relfilenode <> 0
            UNION ALL
            SELECT format('%s: column %I %s%s%s%s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                          CASE WHEN a.attcollation <> t.typcollation
                               THEN (SELECT format(' collate %I.%I', cn.nspname, co.collname)
                                     FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                                     WHERE co.oid = a.attcollation)
                               ELSE '' END,
                          CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                          CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END)
            FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = ANY (rels) AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT format('%s: column %I default %s', d.adrelid::regclass, a.attname, pg_get_expr(d.adbin, d.adrelid))
            FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
            WHERE d.adrelid = ANY (rels)
            UNION ALL
            SELECT format('%s: statistics %s', x.stxrelid::regclass, pg_get_statisticsobjdef(x.oid))
            FROM pg_statistic_ext x WHERE x.stxrelid = ANY (rels)
            UNION ALL
            SELECT format('%s: index %s', x.indrelid::regclass, pg_get_indexdef(x.indexrelid))
            FROM pg_index x WHERE x.indrelid = ANY (rels)
              AND NOT (x.indrelid = s.partition AND (SELECT relname FROM pg_class WHERE oid = x.indexrelid) = key_name)
            UNION ALL
            SELECT format('%s: constraint %I %s%s', n.conrelid::regclass, n.conname, pg_get_constraintdef(n.oid),
                          CASE WHEN n.convalidated THEN '' ELSE ' (not valid)' END)
            FROM pg_constraint n WHERE n.conrelid = ANY (rels)
              AND NOT (n.conrelid = s.partition AND n.conname = bound_name)
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
            -- (with shard_views, a foreign partition the engine pointed at
            -- its view on the shard counts with the options it had)
            SELECT format('%s: server %s, options %s', f.ftrelid::regclass, f.ftserver,
                          coalesce((SELECT coalesce(nullif(s.shard_options[u.i], '{}'), '')
                                    FROM unnest(s.sources) WITH ORDINALITY AS u(source, i)
                                    WHERE u.source = f.ftrelid AND s.shard_options[u.i] IS NOT NULL
                                      AND ARRAY['table_name=' || all_views[u.i],
                                                'table_name=' || shown_views[u.i]] && f.ftoptions
                                      AND ARRAY(SELECT x FROM unnest(f.ftoptions) AS x
                                                WHERE x !~ '^(schema|table)_name=' ORDER BY x)
                                          = ARRAY(SELECT x FROM unnest(s.shard_options[u.i]::text[]) AS x
                                                  WHERE x !~ '^(schema|table)_name=' ORDER BY x)),
                                   f.ftoptions::text))
            FROM pg_foreign_table f WHERE f.ftrelid = ANY (rels)
            UNION ALL
            SELECT format('%s: publication %I', r.prrelid::regclass, p.pubname)
            FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = ANY (rels)) AS t
        ORDER BY x);
    IF s.catalog IS NULL THEN
        s.catalog := seen;
        RETURN s;
    END IF;
    -- A table's file is named only when it changed (its rows rewritten
    -- without a write the capture sees, as ALTER TABLE ... ALTER COLUMN ...
    -- TYPE ... USING does; VACUUM FULL and CLUSTER too).
    SELECT string_agg(d, '; ' ORDER BY d) INTO changed FROM (
        (SELECT 'now ' || x AS d FROM unnest(seen) AS x WHERE x !~ ': storage [0-9]+$'
         EXCEPT SELECT 'now ' || x FROM unnest(s.catalog) AS x)
        UNION ALL
        (SELECT 'before ' || x FROM unnest(s.catalog) AS x WHERE x !~ ': storage [0-9]+$'
         EXCEPT SELECT 'before ' || x FROM unnest(seen) AS x)
        UNION ALL
        -- (a table whose file differs has two lines in the union of the
        -- files' lines, one of each side)
        SELECT format('now %s: its rows were rewritten (ALTER TABLE ... TYPE, VACUUM FULL, CLUSTER)', f.rel)
        FROM (SELECT split_part(x, ': storage ', 1) AS rel, x FROM unnest(s.catalog) AS x WHERE x ~ ': storage [0-9]+$'
              UNION
              SELECT split_part(x, ': storage ', 1), x FROM unnest(seen) AS x WHERE x ~ ': storage [0-9]+$') AS f
        GROUP BY f.rel HAVING count(*) > 1) AS t;
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'table % changed while it was being resharded', s.parent_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = left(changed, 2000),
                  HINT = 'Nothing was swapped; the table is as it was.  Call it again: the checks run again.';
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_catalog_check(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_catalog_check(reshard_state) IS
'resharding: records what of the table its checks saw, and at the cutover refuses any change of it (internal)';
