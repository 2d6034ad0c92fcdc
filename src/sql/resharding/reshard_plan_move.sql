-- src/sql/resharding/reshard_plan_move.sql
--	reshard_plan_move: the checks of a partition's move, of the partition and of the servers (internal)

-- reshard_plan's checks of a move (partition_move), as the table's owner,
-- after reshard_plan_table's: the partition named (s.partition) is one of
-- the table's partitions (the table's layout by bucket), a table or a
-- foreign table of the table's owner, not on the server it is to go to
-- (s.server; NULL: this one) already; both servers, the one it leaves and
-- the one it goes to, are postgres_fdw servers that the owner may use,
-- with a user mapping, and dblink is installed; neither the table nor the
-- partition has what a foreign partition cannot have or what would be
-- lost with the partition dropped where it was; and on each server, as
-- the owner reaches it through dblink, what the move makes or drops there
-- may be made or dropped, and what the table made there needs exists
-- there (move_remote_checks: collations, and what CHECK constraints and
-- indexes use).  Returns s with the partition's bucket and,
-- moving it from a server, shard_views and the partition's options by
-- bucket.  Not revoked from PUBLIC: reshard_plan runs as the table's
-- owner, any role, and calls it in SQL (a privilege checked); it reads
-- the catalog and raises errors, and runs queries that only read on the
-- servers through dblink, as its caller's user mappings allow.
CREATE FUNCTION reshard_plan_move(s reshard_state, partitions regclass[], key text) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    p pg_class;
    r record;
    bad text;
    b int;
    source_server name;   -- the server the partition leaves (NULL: this one)
    remote_table text;    -- its table there
    remote record;        -- a check on a server
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
    IF partition IS NULL THEN
        RAISE EXCEPTION 'partition must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    b := array_position(partitions, partition) - 1;
    IF b IS NULL THEN
        RAISE EXCEPTION 'table % is not a partition of %', partition, parent USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO r FROM pg_class WHERE oid = partition;
    IF r.relkind NOT IN ('r', 'f') THEN
        RAISE EXCEPTION 'cannot move %, it is not a table', partition USING ERRCODE = 'feature_not_supported';
    END IF;
    source_server := (SELECT v.srvname FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
                      WHERE f.ftrelid = partition);
    IF r.relowner <> p.relowner THEN
        RAISE EXCEPTION 'table % is owned by %, not by %, the owner of %', partition, r.relowner::regrole,
                        p.relowner::regrole, parent
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('ALTER TABLE %s OWNER TO %s, if that is right.', partition, p.relowner::regrole);
    END IF;
    IF s.server IS NOT DISTINCT FROM source_server THEN
        RAISE EXCEPTION 'partition % is on % already', partition,
                        coalesce('server "' || source_server || '"', 'this server')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name the foreign server to move it to, or NULL for this server.';
    END IF;
    -- The table's PRIMARY KEY and UNIQUE constraints: PostgreSQL allows
    -- no foreign partition under them; its partitions can keep them.
    SELECT string_agg(format('%I', c.conname), ', ' ORDER BY c.conname) INTO bad
    FROM pg_constraint c WHERE c.conrelid = parent AND c.contype IN ('p', 'u');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot move %, its table % has PRIMARY KEY or UNIQUE constraints: %', partition, parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'PostgreSQL allows no foreign partition under a table with a unique index.',
                  HINT = format('Hand them to its partitions first, each of which keeps its index as a constraint of its own (nothing is built): CALL %s.unique_constraints_to_partitions(%L);',
                                (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                                 WHERE x.extname = 'subsetting'), parent::text);
    END IF;
    -- Both servers (the one it leaves, the one it goes to), as the
    -- owner reaches them.
    SELECT string_agg(x, ', ') INTO bad FROM (
        SELECT format('server "%s" does not exist', v.name) AS x
        FROM unnest(ARRAY[source_server, s.server]) AS v(name)
        WHERE v.name IS NOT NULL AND NOT EXISTS (SELECT FROM pg_foreign_server WHERE srvname = v.name)
        UNION ALL
        SELECT format('server "%s" is not a postgres_fdw server', v.srvname)
        FROM pg_foreign_server v JOIN pg_foreign_data_wrapper w ON w.oid = v.srvfdw
        WHERE v.srvname IN (source_server, s.server) AND w.fdwname <> 'postgres_fdw'
        UNION ALL
        SELECT format('%s may not use server "%s" (USAGE)', p.relowner::regrole, v.srvname)
        FROM pg_foreign_server v WHERE v.srvname IN (source_server, s.server) AND NOT has_server_privilege(p.relowner, v.oid, 'USAGE')
        UNION ALL
        SELECT format('%s has no user mapping for server "%s"', p.relowner::regrole, v.srvname)
        FROM pg_foreign_server v WHERE v.srvname IN (source_server, s.server)
          AND NOT EXISTS (SELECT FROM pg_user_mappings m WHERE m.srvid = v.oid AND m.umuser IN (0, p.relowner))) AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot move % to %: %', partition, coalesce(format('server "%s"', s.server), 'this server'), bad
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A partition moves between this server and foreign servers of postgres_fdw that the table''s owner may use, with a user mapping: CREATE SERVER, GRANT USAGE ON FOREIGN SERVER, CREATE USER MAPPING.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'dblink') THEN
        RAISE EXCEPTION 'extension dblink is not installed'
            USING ERRCODE = 'undefined_object',
                  DETAIL = 'partition_move creates the partition''s table on the server through dblink.',
                  HINT = 'A superuser can install it: CREATE EXTENSION dblink.';
    END IF;
    -- What PostgreSQL does not allow over a foreign partition, what a
    -- foreign table cannot carry, and what depends on the partition
    -- here (it is dropped once the move is done).
    SELECT string_agg(x, '; ') INTO bad FROM (
        SELECT format('unique index %s of %s (PostgreSQL allows none on a table with a foreign partition)',
                      x.indexrelid::regclass, parent) AS x
        FROM pg_index x WHERE x.indrelid = parent AND x.indisunique
        UNION ALL
        SELECT format('foreign key %I of %s, which refers to %s', c.conname, c.conrelid::regclass, c.confrelid::regclass)
        FROM pg_constraint c WHERE c.confrelid IN (parent, partition) AND c.contype = 'f' AND c.conparentid = 0
          AND NOT @extschema@.partition_foreign_key_kept(c.oid)
        UNION ALL
        SELECT format('foreign key %I of %s (PostgreSQL enforces none on a foreign table)', c.conname, c.conrelid::regclass)
        FROM pg_constraint c WHERE c.conrelid IN (parent, partition) AND c.contype = 'f' AND c.conparentid = 0
          AND NOT @extschema@.partition_foreign_key_kept(c.oid)
        UNION ALL
        SELECT format('trigger %I on %s', g.tgname, g.tgrelid::regclass)
        FROM pg_trigger g WHERE g.tgrelid IN (parent, partition) AND NOT g.tgisinternal
        UNION ALL
        SELECT format('policy %I on %s', o.polname, o.polrelid::regclass)
        FROM pg_policy o WHERE o.polrelid IN (parent, partition)
        UNION ALL
        SELECT format('row level security on %s', c.oid::regclass)
        FROM pg_class c WHERE c.oid IN (parent, partition) AND c.relrowsecurity
        UNION ALL
        SELECT format('rule %I on %s', w.rulename, w.ev_class::regclass)
        FROM pg_rewrite w WHERE w.ev_class = partition
        UNION ALL
        SELECT format('publication %s (a foreign table is not published)', b2.pubname)
        FROM pg_publication b2
        WHERE b2.puballtables
           OR EXISTS (SELECT FROM pg_publication_rel pr WHERE pr.prpubid = b2.oid AND pr.prrelid IN (parent, partition))
           OR EXISTS (SELECT FROM pg_publication_namespace pn WHERE pn.pnpubid = b2.oid AND pn.pnnspid = r.relnamespace)
        UNION ALL
        SELECT DISTINCT format('generated column %I, computed by %s, which the server would have to have',
                               a.attname, pg_describe_object(d.refclassid, d.refobjid, 0))
        FROM pg_attribute a JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
        JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
        WHERE a.attrelid = partition AND a.attgenerated <> ''
          AND d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass, 'pg_type'::regclass) AND d.refobjid >= 16384
        UNION ALL
        SELECT format('statistics object %s', x.stxname) FROM pg_statistic_ext x WHERE x.stxrelid = partition
        UNION ALL
        SELECT format('column %I, of the database''s default collation, which no collation here names (move_collation_name): give it a COLLATE',
                      a.attname)
        FROM pg_attribute a
        WHERE s.server IS NOT NULL AND a.attrelid = partition AND a.attnum > 0 AND NOT a.attisdropped
          AND a.attcollation <> 0 AND @extschema@.move_collation_name(a.attcollation) IS NULL
        UNION ALL
        SELECT DISTINCT format('%s depends on it',
                               CASE WHEN d.classid = 'pg_rewrite'::regclass   -- a view's rule: the view
                                    THEN pg_describe_object('pg_class'::regclass, (SELECT ev_class FROM pg_rewrite WHERE oid = d.objid), 0)
                                    ELSE pg_describe_object(d.classid, d.objid, d.objsubid) END)
        FROM pg_depend d
        WHERE d.deptype = 'n' AND d.refclassid = 'pg_class'::regclass AND d.refobjid = partition
          AND d.classid NOT IN ('pg_constraint'::regclass, 'pg_attrdef'::regclass)) AS t;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot move % to %: %', partition, coalesce(format('server "%s"', s.server), 'this server'), bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A partition on a server is a foreign table here, and the table it leaves is dropped.',
                  HINT = 'Drop or change these first (docs/scaling-out.md, "What is refused").';
    END IF;
    -- The servers, as the table's owner reaches them (its user mapping),
    -- through dblink; on both, the owner's sessions may write (postgres_fdw
    -- writes there in them: the catch-up).  The one it goes to: a schema of the partition's
    -- name in which it may create, and no table of the partition's name
    -- there yet.  The one it leaves: its table is the owner's there (the
    -- move refuses direct writes to it with triggers, then drops it), in
    -- a schema where the owner may create (the triggers' functions), a
    -- table, and nothing else there depends on it; and its key is a
    -- column here (reshard_shard_views marks the writes that come
    -- through this server by it).
    IF source_server IS NOT NULL THEN
        SELECT format('%I.%I', coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'schema_name'), n.nspname),
                      coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'table_name'), r.relname))
        INTO STRICT remote_table
        FROM pg_namespace n LEFT JOIN pg_foreign_table f ON f.ftrelid = partition
        LEFT JOIN LATERAL pg_options_to_table(f.ftoptions) AS o ON true
        WHERE n.oid = r.relnamespace GROUP BY n.nspname;
        IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = partition AND attnum > 0 AND NOT attisdropped
                                                  AND quote_ident(attname) = key) THEN
            RAISE EXCEPTION 'cannot move % from server "%": its key % is not a column', partition, source_server, key
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'While a partition moves from a server, the server refuses the writes that do not come through this one, which it tells by the key column.';
        END IF;
    END IF;
    FOR remote IN
        SELECT * FROM (VALUES
            (s.server, 'to', format($remote$SELECT CASE WHEN pg_catalog.current_setting('default_transaction_read_only')::pg_catalog.bool
                                                      THEN pg_catalog.format('the sessions of %%I there are read-only (default_transaction_read_only)', current_user)
                                                      WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = %1$L)
                                                      THEN pg_catalog.format('it has no schema %%I', %1$L)
                                                      WHEN NOT pg_catalog.has_schema_privilege(%1$L, 'CREATE')
                                                      THEN pg_catalog.format('%%I may not create tables in schema %%I there', current_user, %1$L)
                                                      WHEN pg_catalog.to_regclass(pg_catalog.format('%%I.%%I', %1$L, %2$L)) IS NOT NULL
                                                      THEN pg_catalog.format('a table %%I.%%I exists there', %1$L, %2$L)
                                                 END$remote$,
                                    (SELECT nspname FROM pg_namespace WHERE oid = r.relnamespace), r.relname),
             'The partition goes to a table of its schema and name on the server, made by the table''s owner (its user mapping) through dblink.'),
            (s.server, 'to', @extschema@.move_remote_checks(partition, CASE WHEN r.relkind = 'f' THEN parent ELSE partition END),
             'The table made on the server has the partition''s columns with their collations, its CHECK constraints and its indexes, unique and exclusion constraints, under the same names there.'),
            (source_server, 'from', 'SELECT CASE ' || @extschema@.reshard_remote_owner_checks(remote_table) || format($remote$
                                                             ELSE (SELECT pg_catalog.format('%%s depends on %%s there',
                                                                                            pg_catalog.string_agg(DISTINCT
                                                                                                CASE WHEN d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
                                                                                                     THEN pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass,
                                                                                                                                        (SELECT ev_class FROM pg_catalog.pg_rewrite WHERE oid = d.objid), 0)
                                                                                                     ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) END, ', '), %1$L)
                                                                   FROM pg_catalog.pg_depend d
                                                                   WHERE d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                                                     AND d.refobjid = pg_catalog.to_regclass(%1$L) AND d.deptype = 'n'
                                                                     AND d.classid NOT IN ('pg_catalog.pg_constraint'::pg_catalog.regclass,
                                                                                           'pg_catalog.pg_attrdef'::pg_catalog.regclass)
                                                                   HAVING pg_catalog.count(*) > 0)
                                                        END$remote$, remote_table),
             'Moving a partition from a server, the table''s owner (its user mapping) refuses direct writes to its table there while it moves, and drops it once it has moved, through dblink.')
        ) AS v(server, direction, query, detail)
        WHERE v.server IS NOT NULL
    LOOP
        BEGIN
            EXECUTE @extschema@.reshard_remote_query(remote.server, remote.query, 'problem text')
            INTO bad;
        EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection THEN
            GET STACKED DIAGNOSTICS bad = PG_EXCEPTION_DETAIL;
            RAISE EXCEPTION 'cannot move % % server "%": it cannot be reached', partition, remote.direction, remote.server
                USING ERRCODE = 'sqlclient_unable_to_establish_sqlconnection', DETAIL = bad;
        END;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot move % % server "%": %', partition, remote.direction, remote.server, bad
                USING ERRCODE = CASE remote.direction WHEN 'to' THEN 'invalid_parameter_value' ELSE 'feature_not_supported' END,
                      DETAIL = remote.detail;
        END IF;
    END LOOP;
    IF source_server IS NOT NULL THEN
        -- (the server refuses the direct writes from the first copy on:
        -- the views and triggers of reshard_shard_views on its table)
        s.shard_views := true;
        s.shard_options := array_fill(NULL::text, ARRAY[cardinality(partitions)]);
        s.shard_options[b + 1] := (SELECT coalesce(f.ftoptions, '{}')::text FROM pg_foreign_table f WHERE f.ftrelid = partition);
    END IF;
    s.bucket := b;
    RETURN s;
END
$function$;

COMMENT ON FUNCTION reshard_plan_move(reshard_state, regclass[], text) IS
'resharding: the plan''s checks of a partition''s move, of the partition and of the servers it leaves and goes to (internal)';
