-- src/sql/resharding/reshard_plan.sql
--	reshard_plan: the checks of a resharding, and its state row (internal)

-- As the table's owner, in a security-restricted operation (the engine,
-- src/reshard_engine.c, checked that the caller owns the table or is a
-- superuser).  Checks everything that can be checked before anything is
-- made, and returns the state row of a new resharding (not yet written):
-- the old layout's partitions by bucket, the new layout's bucket
-- expression, partition key and bounds.  Nothing of the table's is run: no
-- function or operator in the key that is neither built in nor the
-- extension's, no code of its own on a partition.  s holds the table
-- (parent), the partition named (partition), shard_views (NULL: decided
-- here, where the shards allow it) and, moving a partition, the server it
-- goes to (server), nothing else.
CREATE FUNCTION reshard_plan(s reshard_state, operation text) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    ext name;
    p pg_class;
    lay record;
    r record;
    n int;
    new_n int;
    old_removed int[];
    new_removed int[];
    parts regclass[];
    rels regclass[];
    new_opclass text;
    bad text;
    not_empty boolean;
    b int;
    i int;
    source_server name;   -- moving: the server the partition leaves (NULL: this one)
    remote_table text;    -- its table there
    remote record;        -- moving: a check on a server
    -- On a server, through dblink, of a table there (%1$L) that the engine
    -- puts triggers on and objects next to (a move from that server, and
    -- shard_views): the WHEN branches of a CASE that gives what the owner
    -- may not do.
    owner_table_checks constant text := $checks$
        WHEN pg_catalog.current_setting('default_transaction_read_only')::pg_catalog.bool
        THEN pg_catalog.format('the sessions of %%I there are read-only (default_transaction_read_only)', current_user)
        WHEN pg_catalog.to_regclass(%1$L) IS NULL
        THEN pg_catalog.format('it has no table %%s', %1$L)
        WHEN (SELECT relkind FROM pg_catalog.pg_class WHERE oid = pg_catalog.to_regclass(%1$L)) <> 'r'
        THEN pg_catalog.format('%%s is not a table there', %1$L)
        WHEN NOT pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class WHERE oid = pg_catalog.to_regclass(%1$L)), 'USAGE')
        THEN pg_catalog.format('%%I does not own %%s there', current_user, %1$L)
        WHEN NOT pg_catalog.has_schema_privilege((SELECT relnamespace FROM pg_catalog.pg_class
                                                 WHERE oid = pg_catalog.to_regclass(%1$L)), 'CREATE')
        THEN pg_catalog.format('%%I may not create in the schema of %%s there', current_user, %1$L)$checks$;
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['setup'];
    SELECT n.nspname INTO STRICT ext FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'subsetting';
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
    IF operation IS NULL OR operation NOT IN ('add', 'remove', 'move') THEN
        RAISE EXCEPTION 'unknown resharding operation %', coalesce(operation, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The table named as its own partition (CALL reshard_add_partition('t', 't')).
    IF partition = parent THEN
        RAISE EXCEPTION 'table % is the table being resharded, not a partition of its own', partition
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = CASE WHEN operation = 'add'
                                THEN 'new_partition names the table that reshard_add_partition gives a new partition.'
                                ELSE 'partition names the table that reshard_remove_partition takes a partition from.' END,
                  HINT = CASE WHEN operation = 'add'
                              THEN format('Create an empty table like it and name that: CREATE TABLE %s (LIKE %s INCLUDING ALL).',
                                          quote_ident(p.relname || '_new'), parent)
                              ELSE format('Name one of its partitions, or NULL for the last bucket''s: CALL reshard_remove_partition(%L).',
                                          parent::text) END;
    END IF;

    -- The layout: one partition for each bucket.
    EXECUTE format('SELECT l.method, l.hash_function, l.key, l.buckets, l.operator_class, l.removed
                    FROM %I.sharding_layout($1, true) AS l LIMIT 1', ext)
    INTO lay USING parent;
    IF lay.method IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension''s functions or operator classes', parent
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its partition key is %s, not LIST (jumpbackhash(key, n)), LIST (jumphash(key, n)), LIST (jumpbackanchorhash(key, n, removed)) or HASH (key jumpbackhash<n>_<type>_ops).',
                                  coalesce(pg_get_partkeydef(parent), 'none'));
    END IF;
    n := lay.buckets;
    old_removed := coalesce(lay.removed, '{}');
    parts := array_fill(NULL::regclass, ARRAY[n]);
    FOR r IN EXECUTE format('SELECT * FROM %I.sharding_layout($1, true) AS l WHERE l.partition IS NOT NULL', ext) USING parent LOOP
        IF r.bucket IS NULL OR parts[r.bucket + 1] IS NOT NULL THEN
            RAISE EXCEPTION 'partition % of % is not the only one for one bucket in [0, %)', r.partition, parent, n
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Its bound is %s.', r.partition_bound),
                      HINT = CASE WHEN lay.method = 'hash_operator_class'
                                  THEN format('Each partition must be FOR VALUES WITH (MODULUS %s, REMAINDER b), one for each bucket b.', n)
                                  ELSE 'Each partition must be FOR VALUES IN (b), one for each bucket b.' END;
        END IF;
        parts[r.bucket + 1] := r.partition;
    END LOOP;
    FOR i IN 1 .. n LOOP
        IF parts[i] IS NULL AND NOT (i - 1) = ANY (old_removed) THEN
            RAISE EXCEPTION 'table % has no partition for bucket %', parent, i - 1
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;

    -- Checks of resharding and moving alike.  The table is not a partition itself.
    IF p.relispartition THEN
        RAISE EXCEPTION 'cannot reshard %, it is a partition itself', parent USING ERRCODE = 'feature_not_supported';
    END IF;
    -- The partition key is evaluated for every row: its functions,
    -- operators (and their functions) and operator classes must be built
    -- in, the extension's, or a superuser's.
    WITH used AS (
        SELECT d.refclassid AS class, d.refobjid AS object FROM pg_depend d
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent
          AND d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass, 'pg_opclass'::regclass)
        UNION
        SELECT 'pg_proc'::regclass, o.oprcode FROM pg_depend d JOIN pg_operator o ON o.oid = d.refobjid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = parent AND d.refclassid = 'pg_operator'::regclass)
    SELECT string_agg(DISTINCT pg_describe_object(u.class, u.object, 0), ', ') INTO bad
    FROM used u
    WHERE u.object >= 16384   -- not built in
      AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'subsetting'
                      WHERE e.classid = u.class AND e.objid = u.object AND e.deptype = 'e')
      AND NOT EXISTS (SELECT FROM pg_roles o
                      WHERE o.rolsuper
                        AND o.oid = CASE u.class WHEN 'pg_proc'::regclass THEN (SELECT proowner FROM pg_proc WHERE oid = u.object)
                                                 WHEN 'pg_operator'::regclass THEN (SELECT oprowner FROM pg_operator WHERE oid = u.object)
                                                 ELSE (SELECT opcowner FROM pg_opclass WHERE oid = u.object) END);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, its partition key uses %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The key is evaluated for every row, as the table''s owner: only functions, operators and operator classes that are built in, the extension''s or a superuser''s may appear in it.';
    END IF;
    -- The engine's tables (the change log, the shadows) are made in the table's schema, by its owner.
    IF NOT has_schema_privilege(p.relowner, p.relnamespace, 'CREATE') THEN
        RAISE EXCEPTION 'cannot reshard %, its owner % cannot create tables in schema %',
                        parent, p.relowner::regrole, p.relnamespace::regnamespace
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The engine''s tables are created by the table''s owner, in the same schema.';
    END IF;
    -- Rows referenced by a foreign key cannot move out of their partition.
    SELECT string_agg(format('%s of %s', quote_ident(c.conname), c.conrelid::regclass), ', ') INTO bad
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (parts || partition);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot reshard %, foreign keys refer to its partitions: %', parent, bad
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows that move would leave the partition the foreign key refers to.',
                  HINT = 'Drop those foreign keys before resharding.';
    END IF;

    -- Moving a partition (partition_move): the layout stays; the partition
    -- goes, whole, from here or a foreign server (postgres_fdw) to another
    -- server or here (s.server NULL).  Refused before anything is made:
    -- what a foreign partition cannot have, or what would be lost with the
    -- partition dropped where it was.
    IF operation = 'move' THEN
        IF partition IS NULL THEN
            RAISE EXCEPTION 'partition must not be null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        b := array_position(parts, partition) - 1;
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
            RAISE EXCEPTION 'partition % is on %s already', partition,
                            coalesce(format('server "%s"', source_server), 'this server')
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Name the foreign server to move it to, or NULL for this server.';
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
            SELECT format('foreign key %I of %s, which refers to %s', c.conname, c.conrelid::regclass, parent)
            FROM pg_constraint c WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
            UNION ALL
            SELECT format('foreign key %I of %s (PostgreSQL enforces none on a foreign table)', c.conname, c.conrelid::regclass)
            FROM pg_constraint c WHERE c.conrelid IN (parent, partition) AND c.contype = 'f' AND c.conparentid = 0
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
                                                      AND quote_ident(attname) = lay.key) THEN
                RAISE EXCEPTION 'cannot move % from server "%": its key % is not a column', partition, source_server, lay.key
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
                (source_server, 'from', format('SELECT CASE ' || owner_table_checks || $remote$
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
                EXECUTE format('SELECT x.problem FROM %s.dblink(%L, %L) AS x(problem text)',
                               (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                                WHERE x.extname = 'dblink'),
                               remote.server, remote.query)
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
            s.shard_options := array_fill(NULL::text, ARRAY[n]);
            s.shard_options[b + 1] := (SELECT coalesce(f.ftoptions, '{}')::text FROM pg_foreign_table f WHERE f.ftrelid = partition);
        END IF;
        new_n := n;
        new_removed := old_removed;
    END IF;

    -- Resharding (adding or removing a bucket) only.
    <<resharding_only>>
    BEGIN
        EXIT resharding_only WHEN operation = 'move';
        -- The bucket that comes or goes.  jumpbackanchorhash removes any bucket
        -- (pushed on its removed stack) and adds back the most recently removed
        -- one (hash4j's rules, in the extension's functions); the jump hashes
        -- add and remove only the last one.
        IF partition IS NULL AND operation = 'remove' AND lay.method <> 'jumpbackanchorhash' THEN
            partition := parts[n];   -- the jump hashes remove the last bucket
            s.partition := partition;
        END IF;
        IF partition IS NULL AND operation = 'add' THEN
            RAISE EXCEPTION 'new_partition must not be null' USING ERRCODE = 'null_value_not_allowed';
        ELSIF partition IS NULL THEN
            RAISE EXCEPTION 'the partition of % to remove must be named', parent
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'jumpbackanchorhash can remove any bucket: CALL reshard_remove_partition(parent, partition).';
        END IF;
        IF operation = 'add' THEN
            IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = partition) THEN
                RAISE EXCEPTION 'table % is already a partition', partition USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF lay.method = 'jumpbackanchorhash' THEN
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_add_bucket($1, $2)', ext)
                INTO new_n, new_removed, b USING n, old_removed;
            ELSE
                new_n := n + 1;
                new_removed := '{}';
                b := n;
            END IF;
        ELSE
            b := array_position(parts, partition) - 1;
            IF b IS NULL THEN
                RAISE EXCEPTION 'table % is not a partition of %', partition, parent USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF cardinality(array_remove(parts, NULL)) = 1 THEN
                RAISE EXCEPTION 'cannot remove the only partition of %', parent USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF lay.method = 'jumpbackanchorhash' THEN
                EXECUTE format('SELECT * FROM %I.jumpbackanchorhash_remove_bucket($1, $2, $3)', ext)
                INTO new_n, new_removed USING n, old_removed, b;
            ELSIF b <> n - 1 THEN
                RAISE EXCEPTION 'partition % is not the last bucket''s partition of %', partition, parent
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = format('%s removes only the last bucket, %s, held by %s.', lay.method, n - 1, parts[n]);
            ELSE
                new_n := n - 1;
                new_removed := '{}';
            END IF;
        END IF;

        -- The parent: nothing that cannot be carried over to the new parent.
        -- A NOT NULL constraint NOT VALID (PostgreSQL 18): rows may hold NULLs,
        -- which the new partition, created LIKE the parent, would refuse.
        SELECT string_agg(quote_ident(c.conname), ', ') INTO bad
        FROM pg_constraint c WHERE c.conrelid = parent AND c.contype = 'n' AND NOT c.convalidated;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, its NOT NULL constraint % is not valid', parent, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Rows may hold NULLs that the partitions of the resharded table would refuse.',
                      HINT = format('Validate it first: ALTER TABLE %s VALIDATE CONSTRAINT %s.', parent, bad);
        END IF;
        IF EXISTS (SELECT FROM pg_depend d JOIN pg_class q ON q.oid = d.objid AND q.relkind = 'S'
                   WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                     AND d.refobjid = parent AND d.deptype IN ('a', 'i')) THEN
            RAISE EXCEPTION 'cannot reshard %, it owns a sequence (serial or identity column)', parent
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Detach the sequence from the table first: ALTER SEQUENCE ... OWNED BY NONE for a serial column; an identity column must be dropped (ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY) and its default given back with a sequence of its own.';
        END IF;
        SELECT string_agg(x, ', ') INTO bad FROM (
            SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = parent AND NOT tgisinternal
            UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = parent
            UNION ALL SELECT 'row level security' WHERE p.relrowsecurity
            UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = parent
            UNION ALL SELECT format('security label of %s', provider) FROM pg_seclabel
                      WHERE classoid = 'pg_class'::regclass AND objoid = parent) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, it has %', parent, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'The parent is created again; these cannot be carried over.',
                      HINT = 'Drop them before resharding and create them again after.';
        END IF;
        -- Objects that depend on the parent or its row type and would be dropped
        -- with it: views, rules and policies of other tables, functions with a
        -- SQL-standard body, columns of its row type...
        SELECT string_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid), ', ') INTO bad
        FROM pg_depend d
        WHERE d.deptype = 'n'
          AND ((d.refclassid = 'pg_class'::regclass AND d.refobjid = parent)
               OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = p.reltype))
          AND NOT (d.classid = 'pg_constraint'::regclass)                     -- own constraints, foreign keys: carried over
          AND NOT (d.classid = 'pg_attrdef'::regclass)
          AND NOT (d.classid = 'pg_statistic_ext'::regclass)
          AND NOT (d.classid = 'pg_publication_rel'::regclass)
          AND NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = parent))
          AND NOT (d.classid = 'pg_type'::regclass AND d.objid IN (SELECT typarray FROM pg_type WHERE oid = p.reltype));
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, other objects depend on it: %', parent, bad
                USING ERRCODE = 'dependent_objects_still_exist',
                      DETAIL = 'The parent is created again, with a new OID; they would have to be dropped with the old one.',
                      HINT = 'Drop them before resharding and create them again after.';
        END IF;
        -- Foreign keys of other tables to the parent are dropped and created
        -- again (on a partitioned table, on each of its partitions first),
        -- publications altered: by the table's owner, who must own them.
        SELECT string_agg(DISTINCT c.conrelid::regclass::text, ', ') INTO bad
        FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
        WHERE c.confrelid = parent AND c.contype = 'f' AND c.conrelid <> parent AND t.relowner <> p.relowner;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, foreign keys of tables its owner does not own refer to it: %', parent, bad
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'They are dropped and created again by the table''s owner.';
        END IF;
        -- Its own foreign keys are added again to the partitions and the new
        -- parent, by the table's owner: who must still have the right to refer
        -- to the tables they refer to; and it cannot be created again referring
        -- to itself.
        SELECT string_agg(format('%I', c.conname), ', ') INTO bad
        FROM pg_constraint c WHERE c.conrelid = parent AND c.contype = 'f' AND c.confrelid = parent;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, its foreign key % refers to the table itself', parent, bad
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Drop it before resharding and create it again after.';
        END IF;
        SELECT string_agg(format('%I (%s)', c.conname, c.confrelid::regclass), ', ') INTO bad
        FROM pg_constraint c
        WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0
          AND EXISTS (SELECT FROM unnest(c.confkey) AS k(attnum)
                      WHERE NOT has_column_privilege(p.relowner, c.confrelid, k.attnum, 'REFERENCES'));
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, its owner % may no longer refer to the tables of its foreign keys: %',
                            parent, p.relowner::regrole, bad
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'The foreign keys are added again by the table''s owner, who needs the REFERENCES privilege.';
        END IF;
        IF operation = 'add' AND (SELECT relkind FROM pg_class WHERE oid = partition) = 'f'
           AND EXISTS (SELECT FROM pg_constraint WHERE conrelid = parent AND contype = 'f') THEN
            RAISE EXCEPTION 'cannot add foreign table % to %, which has foreign keys', partition, parent
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'PostgreSQL does not enforce foreign keys on foreign tables.';
        END IF;
        SELECT string_agg(pb.pubname::text, ', ') INTO bad
        FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
        WHERE pr.prrelid = parent AND pb.pubowner <> p.relowner;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, it is in publications its owner does not own: %', parent, bad
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'The resharded table is added to them again by the table''s owner.';
        END IF;
        SELECT string_agg(format('%s.%I', stxnamespace::regnamespace, stxname), ', ') INTO bad
        FROM pg_statistic_ext WHERE stxrelid = parent AND stxowner <> p.relowner;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot reshard %, its statistics objects % are not its owner''s', parent, bad
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'They are created again on the resharded table by the table''s owner.',
                      HINT = format('ALTER STATISTICS ... OWNER TO %s, if that is right.', p.relowner::regrole);
        END IF;

        -- The new partition is given the table's foreign keys at the cutover;
        -- one of its own would act on the copies while they are made (a
        -- cascade from the table it refers to would delete a copy the change
        -- log then deletes again).
        IF operation = 'add' THEN
            SELECT string_agg(format('%I', conname), ', ') INTO bad
            FROM pg_constraint WHERE conrelid = partition AND contype = 'f' AND conparentid = 0;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION 'cannot reshard % with %, it has foreign keys: %', parent, partition, bad
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = format('The resharding gives %s the foreign keys of %s when it attaches it.', partition, parent),
                          HINT = format('ALTER TABLE %s DROP CONSTRAINT %s.', partition, bad);
            END IF;
        END IF;

        -- The partitions, old and new: tables or foreign tables of the parent's
        -- owner with the parent's columns, and no code of their own.
        rels := ARRAY(SELECT DISTINCT x FROM unnest(parts || partition) AS x WHERE x IS NOT NULL);
        FOR i IN 1 .. cardinality(rels) LOOP
            SELECT * INTO r FROM pg_class WHERE oid = rels[i];
            IF r.relkind NOT IN ('r', 'f') THEN
                RAISE EXCEPTION 'cannot reshard %, % is not a table or foreign table', parent, rels[i]
                    USING ERRCODE = 'feature_not_supported';
            END IF;
            IF r.relowner <> p.relowner THEN
                RAISE EXCEPTION 'table % is owned by %, not by %, the owner of %', rels[i], r.relowner::regrole,
                                p.relowner::regrole, parent
                    USING ERRCODE = 'insufficient_privilege',
                          DETAIL = 'Resharding writes to every partition and must not run code of another role.',
                          HINT = format('ALTER TABLE %s OWNER TO %s, if that is right.', rels[i], p.relowner::regrole);
            END IF;
            SELECT string_agg(DISTINCT quote_ident(coalesce(a.attname, pa.attname)), ', ') INTO bad
            FROM (SELECT * FROM pg_attribute WHERE attrelid = rels[i] AND attnum > 0 AND NOT attisdropped) a
            FULL JOIN (SELECT * FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped) pa
                 ON pa.attname = a.attname
            WHERE a.attname IS NULL OR pa.attname IS NULL OR a.atttypid <> pa.atttypid OR a.atttypmod <> pa.atttypmod
               OR a.attcollation <> pa.attcollation OR a.attgenerated <> pa.attgenerated
               OR (pa.attnotnull AND NOT a.attnotnull);
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION 'table % does not have the columns of %: %', rels[i], parent, bad
                    USING ERRCODE = 'datatype_mismatch',
                          DETAIL = 'A partition has the parent''s columns, with the same names, types, collations and NOT NULL.',
                          HINT = 'Create it with CREATE TABLE ... (LIKE parent INCLUDING ALL).';
            END IF;
            -- PostgreSQL attaches a partition only if it has every CHECK
            -- constraint of the parent.
            SELECT string_agg(quote_ident(pc.conname), ', ') INTO bad
            FROM pg_constraint pc
            WHERE pc.conrelid = parent AND pc.contype = 'c'
              AND pg_get_constraintdef(pc.oid) NOT IN
                  (SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.conrelid = rels[i] AND c.contype = 'c');
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION 'table % lacks the check constraint % of %', rels[i], bad, parent
                    USING ERRCODE = 'feature_not_supported',
                          HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
            END IF;
            SELECT string_agg(x, ', ') INTO bad FROM (
                SELECT format('trigger %I', tgname) AS x FROM pg_trigger WHERE tgrelid = rels[i] AND NOT tgisinternal
                UNION ALL SELECT format('foreign key %I', conname) FROM pg_constraint
                          WHERE conrelid = rels[i] AND contype = 'f' AND conparentid = 0 AND rels[i] <> s.partition
                UNION ALL SELECT format('rule %I', rulename) FROM pg_rewrite WHERE ev_class = rels[i]
                UNION ALL SELECT format('policy %I', polname) FROM pg_policy WHERE polrelid = rels[i]
                UNION ALL SELECT 'row level security' FROM pg_class WHERE oid = rels[i] AND relrowsecurity
                UNION ALL
                SELECT format('check constraint %I', c.conname) FROM pg_constraint c
                WHERE c.conrelid = rels[i] AND c.contype = 'c'
                  AND pg_get_constraintdef(c.oid) NOT IN
                      (SELECT pg_get_constraintdef(pc.oid) FROM pg_constraint pc WHERE pc.conrelid = parent AND pc.contype = 'c')
                UNION ALL
                SELECT format('index %s with an expression or predicate', x.indexrelid::regclass) FROM pg_index x
                WHERE x.indrelid = rels[i] AND (x.indexprs IS NOT NULL OR x.indpred IS NOT NULL)
                  AND (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
                       FROM generate_series(1, x.indnatts) AS k) || ' WHERE ' || coalesce(pg_get_expr(x.indpred, x.indrelid, true), '')
                      NOT IN (SELECT (SELECT string_agg(pg_get_indexdef(px.indexrelid, k, true), ', ' ORDER BY k)
                                      FROM generate_series(1, px.indnatts) AS k)
                                     || ' WHERE ' || coalesce(pg_get_expr(px.indpred, px.indrelid, true), '')
                              FROM pg_index px WHERE px.indrelid = parent)
                UNION ALL
                SELECT format('%s of column %I', CASE WHEN a.attgenerated <> '' THEN 'generation expression' ELSE 'default' END,
                              a.attname)
                FROM pg_attribute a JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                WHERE a.attrelid = rels[i]
                  AND NOT EXISTS (SELECT FROM pg_attribute pa JOIN pg_attrdef pd ON pd.adrelid = pa.attrelid AND pd.adnum = pa.attnum
                                  WHERE pa.attrelid = parent AND pa.attname = a.attname AND pa.attgenerated = a.attgenerated
                                    AND pg_get_expr(pd.adbin, pd.adrelid) = pg_get_expr(ad.adbin, ad.adrelid))) AS t;
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION 'cannot reshard % with %, it has % that % does not have', parent, rels[i], bad, parent
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = 'Rows are written to and deleted from the partitions; code there would run during the move.',
                          HINT = 'Give the partition exactly the parent''s columns, defaults, constraints and indexes, e.g. CREATE TABLE ... (LIKE parent INCLUDING ALL).';
            END IF;
        END LOOP;
        IF operation = 'add' THEN
            EXECUTE format('SELECT EXISTS (SELECT FROM %s)', partition) INTO STRICT not_empty;
            IF not_empty THEN
                RAISE EXCEPTION 'table % is not empty', partition
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = 'The new partition receives the rows that move to its bucket, and nothing else.';
            END IF;
        END IF;

        -- shard_views NULL: where the shards allow it.  Every foreign
        -- partition a postgres_fdw one, dblink here, the key a column, and on
        -- each shard's server, as the owner reaches it (its user mapping):
        -- sessions that may write, and the shard's table a table of the
        -- owner's in a schema where the owner may create (what
        -- reshard_shard_views makes there).  Otherwise without, and a
        -- NOTICE says why.
        IF s.shard_views IS NULL THEN
            s.shard_views := false;
            IF EXISTS (SELECT FROM pg_foreign_table f WHERE f.ftrelid = ANY (parts)) THEN
                bad := CASE
                    WHEN NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'dblink')
                    THEN 'extension dblink is not installed'
                    WHEN NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped
                                                               AND quote_ident(attname) = lay.key)
                    THEN format('its key %s is not a column', lay.key)
                    ELSE (SELECT format('%s is not a postgres_fdw foreign table', f.ftrelid::regclass)
                          FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
                          JOIN pg_foreign_data_wrapper w ON w.oid = v.srvfdw
                          WHERE f.ftrelid = ANY (parts) AND w.fdwname <> 'postgres_fdw' ORDER BY f.ftrelid LIMIT 1)
                END;
                FOR r IN SELECT v.srvname AS server,
                                format('%I.%I', coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'schema_name'), n.nspname),
                                       coalesce(max(o.option_value) FILTER (WHERE o.option_name = 'table_name'), c.relname)) AS remote
                         FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
                         JOIN pg_class c ON c.oid = f.ftrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                         LEFT JOIN LATERAL pg_options_to_table(f.ftoptions) AS o ON true
                         WHERE f.ftrelid = ANY (parts)
                         GROUP BY f.ftrelid, v.srvname, n.nspname, c.relname ORDER BY f.ftrelid LOOP
                    EXIT WHEN bad IS NOT NULL;
                    BEGIN
                        EXECUTE format('SELECT x.problem FROM %s.dblink(%L, %L) AS x(problem text)',
                                       (SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
                                        WHERE x.extname = 'dblink'),
                                       r.server,
                                       format('SELECT CASE ' || owner_table_checks || ' END', r.remote))
                        INTO bad;
                    EXCEPTION WHEN OTHERS THEN
                        bad := SQLERRM;
                    END;
                    IF bad IS NOT NULL THEN
                        bad := format('on server "%s", %s', r.server, bad);
                    END IF;
                END LOOP;
                IF bad IS NULL THEN
                    s.shard_views := true;
                ELSE
                    RAISE NOTICE 'resharding % without shard_views: %', parent, bad
                        USING DETAIL = 'The cutover then deletes the rows that leave the shards, or writes those that enter them, under its lock: its work grows with them, and the default cutover_budget may not suffice.',
                              HINT = 'docs/resharding.md, "Shards: hiding the rows that leave or enter", says what shard_views needs; shard_views => false does without it and says nothing.';
                END IF;
            END IF;
        END IF;

        -- shard_views: the rows leaving or entering the foreign partitions are
        -- hidden by their key on the shards' servers, reached through dblink.
        IF s.shard_views THEN
            IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'dblink') THEN
                RAISE EXCEPTION 'extension dblink is not installed'
                    USING ERRCODE = 'undefined_object',
                          DETAIL = 'shard_views reaches the shards'' servers through dblink.',
                          HINT = 'A superuser can install it: CREATE EXTENSION dblink.';
            END IF;
            IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = parent AND attnum > 0 AND NOT attisdropped
                                                      AND quote_ident(attname) = lay.key) THEN
                RAISE EXCEPTION 'cannot hide the rows that leave the shards of %: its key % is not a column', parent, lay.key
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = 'shard_views hides rows on a shard''s server by the value of their key column.';
            END IF;
            SELECT string_agg(format('%s (server %I)', f.ftrelid::regclass, v.srvname), ', ') INTO bad
            FROM pg_foreign_table f JOIN pg_foreign_server v ON v.oid = f.ftserver
            JOIN pg_foreign_data_wrapper w ON w.oid = v.srvfdw
            WHERE f.ftrelid = ANY (parts) AND w.fdwname <> 'postgres_fdw';
            IF bad IS NOT NULL THEN
                RAISE EXCEPTION 'cannot hide the rows that leave the shards of %: not postgres_fdw: %', parent, bad
                    USING ERRCODE = 'feature_not_supported';
            END IF;
            s.shard_options := ARRAY(SELECT (SELECT coalesce(f.ftoptions, '{}')::text FROM pg_foreign_table f WHERE f.ftrelid = u.x)
                                     FROM unnest(parts) WITH ORDINALITY AS u(x, i) ORDER BY u.i);
        END IF;
    END resharding_only;

    -- The state row: the layouts.
    s.parent := parent;
    s.parent_name := parent::text;
    s.operation := operation;
    s.partition := partition;
    s.bucket := b;
    s.method := lay.method;
    s.key := lay.key;
    s.old_buckets := n;
    s.new_buckets := new_n;
    EXECUTE format('SELECT %I.reshard_bucket_sql($1, $2, $3, $4), %I.reshard_bucket_sql($1, $2, $5, $6)', ext, ext)
    INTO s.old_bucket_sql, s.new_bucket_sql USING lay.hash_function, lay.key, n, old_removed, new_n, new_removed;
    IF lay.method = 'hash_operator_class' THEN
        -- A NULL key goes to remainder 0.
        s.old_bucket_sql := format('COALESCE(%s, 0)', s.old_bucket_sql);
        s.new_bucket_sql := format('COALESCE(%s, 0)', s.new_bucket_sql);
        new_opclass := regexp_replace(lay.operator_class, '^jumpbackhash[0-9]+_', 'jumpbackhash' || new_n || '_');
        IF NOT EXISTS (SELECT FROM pg_opclass WHERE opcname = new_opclass AND opcnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = ext)) THEN
            RAISE EXCEPTION 'operator class %.% does not exist', quote_ident(ext), new_opclass
                USING ERRCODE = 'undefined_object',
                      DETAIL = format('Resharding %s to %s buckets partitions it by HASH (%s %s).', parent, new_n, lay.key, new_opclass),
                      HINT = format('A superuser can create it: SELECT %I.jumpbackhash_create_operator_classes(%s).', ext, new_n);
        END IF;
        SELECT format('HASH (%s%s %I.%I)', lay.key,
                      CASE WHEN pt.partcollation[0] <> 0 THEN ' COLLATE ' || pt.partcollation[0]::regcollation::text ELSE '' END,
                      ext, new_opclass)
        INTO s.new_partition_by FROM pg_partitioned_table pt WHERE pt.partrelid = parent;
        s.new_bound := format('FOR VALUES WITH (MODULUS %s, REMAINDER %%s)', new_n);
    ELSE
        s.new_partition_by := format('LIST (%s)', s.new_bucket_sql);
        s.new_bound := 'FOR VALUES IN (%s)';
    END IF;
    s.sources := parts::oid[];
    IF operation = 'move' THEN
        -- (the moved partition's bucket only: nothing else is copied)
        s.sources := array_fill(NULL::oid, ARRAY[n]);
        s.sources[b + 1] := partition;
    END IF;
    s.shadows := '{}';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_plan(reshard_state, text) FROM PUBLIC;

COMMENT ON FUNCTION reshard_plan(reshard_state, text) IS
'resharding: the checks before anything is made, and the state row of a new resharding (internal)';
