-- src/sql/placement/move_remote_indexes.sql
--	move_remote_indexes: the indexes and constraints of the table a partition moves into on a server (internal)

-- As the table's owner, once the copy has filled the table on the server:
-- there, the indexes of the partition, or of the parent if it came from a
-- server (named after the partition there) with the PRIMARY KEY and UNIQUE
-- constraints of the parent that its partitions keep
-- (partition_unique_constraints), each as unique as it is here:
-- a PRIMARY KEY, UNIQUE or EXCLUDE constraint as that constraint (its
-- definition as pg_get_constraintdef gives it: DEFERRABLE, INCLUDE,
-- WHERE), a unique index that is no constraint's (partial, or of
-- expressions) as a unique index (NULLS NOT DISTINCT), the others as
-- indexes; the catch-up and the cutover find rows by the key: one leading
-- with it, if none does.  Each under its name here (after the
-- partition's, cut there as PostgreSQL cuts a name, to 63 bytes at a
-- character's boundary) if no relation of the schema there has it yet,
-- whoever owns it, else under the name PostgreSQL picks (never skipped:
-- two names cut to one are both made); then the table analyzed there (its
-- statistics, for the plans there and the estimates asked of it).  In one
-- statement through dblink, committed at once, all or
-- none: a table there with an index has them all already (a call cut
-- short after that commit), and none is made again.  As long as it takes
-- (no time limit of the role's there).  The plan checked that what they
-- use exists there (move_remote_checks).  Not revoked from PUBLIC:
-- move_phase_copy calls it as the table's owner; it does only what dblink
-- lets its caller do.
CREATE FUNCTION move_remote_indexes(s reshard_state) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    model oid := CASE WHEN (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f' THEN s.parent ELSE s.partition END;
    moved_name name := (SELECT relname FROM pg_class WHERE oid = s.partition);
    remote text := (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
                    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = s.partition);
    names text[];
    kinds text[];
    statements text[];  -- each with %s where its name goes (its other % doubled)
BEGIN
    SELECT array_agg(u.name ORDER BY u.n, u.name), array_agg(u.kind ORDER BY u.n, u.name),
           array_agg(u.statement ORDER BY u.n, u.name)
    INTO names, kinds, statements
    FROM (SELECT 1 AS n, CASE WHEN model = s.partition THEN i.relname::text
                              ELSE moved_name || '_' || i.relname END AS name,
                 CASE WHEN c.oid IS NULL THEN 'index' ELSE 'constraint' END AS kind,
                 CASE WHEN c.oid IS NOT NULL
                      THEN format('ALTER TABLE %s ADD ', replace(remote, '%', '%%')) || '%s '
                           || replace(pg_get_constraintdef(c.oid), '%', '%%')
                      ELSE format('CREATE %sINDEX ', CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END) || '%s '
                           || replace(format('ON %s USING %I (%s)%s%s%s', remote, a.amname,
                                             (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                                              FROM generate_series(1, x.indnkeyatts) AS k),
                                             CASE WHEN x.indnatts > x.indnkeyatts
                                                  THEN format(' INCLUDE (%s)',
                                                              (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                                                               FROM generate_series(x.indnkeyatts + 1, x.indnatts) AS k))
                                                  ELSE '' END,
                                             CASE WHEN x.indisunique AND x.indnullsnotdistinct THEN ' NULLS NOT DISTINCT' ELSE '' END,
                                             CASE WHEN x.indpred IS NOT NULL
                                                  THEN ' WHERE ' || pg_get_expr(x.indpred, x.indrelid, true) ELSE '' END),
                                      '%', '%%') END AS statement
          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam
          LEFT JOIN pg_constraint c ON c.conrelid = x.indrelid AND c.conindid = x.indexrelid AND c.contype IN ('p', 'u', 'x')
          WHERE x.indrelid = model
          UNION ALL
          -- (the table's constraints that its partitions keep)
          SELECT 1, moved_name || '_' || u.name, 'constraint',
                 format('ALTER TABLE %s ADD ', replace(remote, '%', '%%')) || '%s ' || replace(u.definition, '%', '%%')
          FROM @extschema@.partition_unique_constraints u WHERE model = s.parent AND u.parent = s.parent
          UNION ALL
          SELECT 2, moved_name || '_key_idx', 'index',
                 'CREATE INDEX %s ' || replace(format('ON %s ((%s))', remote, s.key), '%', '%%')
          WHERE NOT EXISTS (SELECT FROM pg_index x JOIN pg_attribute k ON k.attrelid = x.indrelid
                                                                 AND k.attnum = x.indkey[0]
                            WHERE x.indrelid = model AND x.indpred IS NULL
                              AND quote_ident(k.attname) = s.key)) AS u;
    EXECUTE @extschema@.reshard_remote_sql(s.server, format($remote$
        SET LOCAL statement_timeout = 0;
        DO $do$
        DECLARE
            tbl pg_catalog.regclass := pg_catalog.to_regclass(%L);
            r record;
        BEGIN
            IF EXISTS (SELECT FROM pg_catalog.pg_index x WHERE x.indrelid OPERATOR(pg_catalog.=) tbl) THEN
                RETURN;
            END IF;
            FOR r IN SELECT * FROM ROWS FROM (pg_catalog.unnest(%L::pg_catalog.name[]), pg_catalog.unnest(%L::pg_catalog.text[]),
                                                     pg_catalog.unnest(%L::pg_catalog.text[])) WITH ORDINALITY AS u(name, kind, statement, n) ORDER BY u.n LOOP
                EXECUTE pg_catalog.format(r.statement,
                                          CASE WHEN EXISTS (SELECT FROM pg_catalog.pg_class c
                                                            WHERE c.relname OPERATOR(pg_catalog.=) r.name
                                                              AND c.relnamespace OPERATOR(pg_catalog.=)
                                                                  (SELECT t.relnamespace FROM pg_catalog.pg_class t
                                                                   WHERE t.oid OPERATOR(pg_catalog.=) tbl))
                                               THEN ''
                                               WHEN r.kind OPERATOR(pg_catalog.=) 'constraint'
                                               THEN 'CONSTRAINT ' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(r.name)
                                               ELSE pg_catalog.quote_ident(r.name) END);
            END LOOP;
            -- (its statistics, for the plans there, and for the estimates
            -- this server asks of it: a join sent there)
            EXECUTE pg_catalog.format('ANALYZE %%s', tbl);
        END
        $do$;
        %s$remote$, remote, names, kinds, statements,
        -- (what an event trigger there granted for them taken back)
        @extschema@.reshard_remote_revoke(ARRAY[remote])));
END
$function$;

COMMENT ON FUNCTION move_remote_indexes(reshard_state) IS
'partition move: the indexes of the table a partition moves into on a server, unique and exclusion constraints as such (internal)';
