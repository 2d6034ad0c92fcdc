-- src/sql/placement/move_remote_checks.sql
--	move_remote_checks: what the table a partition moves into on a server needs there (internal)

-- The query, to run on the server a partition moves to through dblink (it
-- only reads), of what the table made there would need and the server
-- does not have: one text, the problems in a list, or NULL.  Each
-- collatable column's collation (move_collation_name: the name it goes by
-- there), which must exist there, for the database's encoding, of the same
-- provider and locale; and what the partition's CHECK constraints (its own
-- and the parent's) and the indexes and constraints made there
-- (move_remote_indexes: model's, the partition's or, for a partition on a
-- server, the parent's) use that is not built in: functions, operators,
-- types, operator classes (an extension's, such as btree_gist's), and
-- collations, which must exist there under the same names.  partition_move's
-- plan runs it (reshard_plan_move) before a row moves.  Not revoked from
-- PUBLIC: the plan calls it as the table's owner; it reads the catalog only.
CREATE FUNCTION move_remote_checks(partition regclass, model regclass) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT 'SELECT pg_catalog.string_agg(v.problem, ''; '' ORDER BY v.n) FROM (VALUES '
           || coalesce(string_agg(format('(%s, %L::pg_catalog.text, %L::pg_catalog.text, %L::pg_catalog.text, %L::pg_catalog.text, %L::pg_catalog.text)',
                                         u.n, u.kind, u.name, u.provider, u.locale, u.used_by), ', ' ORDER BY u.n),
                       '(0, NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.text)')
           || $remote$) AS w(n, kind, name, provider, locale, used_by)
                 CROSS JOIN LATERAL (SELECT w.n, pg_catalog.format('%s %s, %s, does not exist there%s', w.kind, w.name, w.used_by,
                                                                   CASE WHEN w.provider IS NULL THEN ''
                                                                        ELSE pg_catalog.format(' (for its encoding, of provider %s and locale %s)',
                                                                                               w.provider, w.locale) END) AS problem
                                     WHERE CASE w.kind
                                           WHEN 'function' THEN pg_catalog.to_regprocedure(w.name) IS NULL
                                           WHEN 'operator' THEN pg_catalog.to_regoperator(w.name) IS NULL
                                           WHEN 'type' THEN pg_catalog.to_regtype(w.name) IS NULL
                                           WHEN 'operator class'
                                           THEN NOT EXISTS (SELECT FROM pg_catalog.pg_opclass c
                                                            JOIN pg_catalog.pg_namespace s ON s.oid OPERATOR(pg_catalog.=) c.opcnamespace
                                                            JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.opcmethod
                                                            WHERE pg_catalog.format('%I.%I USING %I', s.nspname, c.opcname, a.amname)
                                                                  OPERATOR(pg_catalog.=) w.name)
                                           WHEN 'collation'
                                           THEN NOT EXISTS (SELECT FROM pg_catalog.pg_collation c
                                                            WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regcollation(w.name)
                                                              AND (w.provider IS NULL
                                                                   OR (c.collprovider::pg_catalog.text OPERATOR(pg_catalog.=) w.provider
                                                                       AND pg_catalog.lower(pg_catalog.translate(coalesce(pg_catalog.to_jsonb(c) OPERATOR(pg_catalog.->>) 'colllocale',
                                                                                                                          pg_catalog.to_jsonb(c) OPERATOR(pg_catalog.->>) 'colliculocale',
                                                                                                                          c.collcollate), '-_', ''))
                                                                           OPERATOR(pg_catalog.=) pg_catalog.lower(pg_catalog.translate(w.locale, '-_', '')))))
                                           END) AS v$remote$
    FROM (SELECT row_number() OVER (ORDER BY o.ord, o.kind, o.name, o.used_by) AS n, o.*
          FROM (-- the columns' collations
                SELECT 1 AS ord, 'collation' AS kind, @extschema@.move_collation_name(a.attcollation) AS name,
                       c.collprovider::text AS provider,
                       coalesce(to_jsonb(c) ->> 'colllocale', to_jsonb(c) ->> 'colliculocale', c.collcollate) AS locale,
                       format('of column %I', a.attname) AS used_by
                FROM pg_attribute a
                JOIN pg_collation c ON c.oid = CASE WHEN a.attcollation = 'pg_catalog.default'::regcollation
                                                    THEN (SELECT c2.oid FROM pg_collation c2 JOIN pg_namespace n2 ON n2.oid = c2.collnamespace
                                                          WHERE format('%I.%I', n2.nspname, c2.collname) = @extschema@.move_collation_name(a.attcollation))
                                                    ELSE a.attcollation END
                WHERE a.attrelid = partition AND a.attnum > 0 AND NOT a.attisdropped AND a.attcollation <> 0
                UNION
                -- what CHECK constraints, indexes and their constraints use
                SELECT DISTINCT 2, CASE d.refclassid WHEN 'pg_proc'::regclass THEN 'function'
                                                     WHEN 'pg_operator'::regclass THEN 'operator'
                                                     WHEN 'pg_type'::regclass THEN 'type'
                                                     WHEN 'pg_opclass'::regclass THEN 'operator class'
                                                     ELSE 'collation' END,
                       CASE d.refclassid WHEN 'pg_proc'::regclass THEN d.refobjid::regprocedure::text
                                         WHEN 'pg_operator'::regclass THEN d.refobjid::regoperator::text
                                         WHEN 'pg_type'::regclass THEN d.refobjid::regtype::text
                                         WHEN 'pg_opclass'::regclass
                                         THEN (SELECT format('%I.%I USING %I', n.nspname, c.opcname, m.amname)
                                               FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace
                                               JOIN pg_am m ON m.oid = c.opcmethod WHERE c.oid = d.refobjid)
                                         ELSE @extschema@.move_collation_name(d.refobjid) END,
                       NULL, NULL,
                       CASE WHEN d.classid = 'pg_constraint'::regclass
                            THEN (SELECT format('used by constraint %I of %s', k.conname, k.conrelid::regclass)
                                  FROM pg_constraint k WHERE k.oid = d.objid)
                            ELSE format('used by index %s', d.objid::regclass) END
                FROM pg_depend d
                WHERE d.deptype = 'n'
                  AND ((d.classid = 'pg_constraint'::regclass
                        AND d.objid IN (SELECT k.oid FROM pg_constraint k
                                        WHERE (k.conrelid = partition AND k.contype = 'c')
                                           OR (k.conrelid = model AND k.contype IN ('p', 'u', 'x'))))
                       OR (d.classid = 'pg_class'::regclass
                           AND d.objid IN (SELECT x.indexrelid FROM pg_index x WHERE x.indrelid = model)))
                  AND ((d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass, 'pg_type'::regclass, 'pg_opclass'::regclass)
                        AND d.refobjid >= 16384)
                       OR (d.refclassid = 'pg_collation'::regclass AND d.refobjid <> 'pg_catalog.default'::regcollation))) AS o
          WHERE o.name IS NOT NULL) AS u;
END;

COMMENT ON FUNCTION move_remote_checks(regclass, regclass) IS
'partition move: the query, run on the server a partition moves to, of what its table there would need and the server lacks (internal)';
