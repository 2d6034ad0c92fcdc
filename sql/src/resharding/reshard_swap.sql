-- sql/src/resharding/reshard_swap.sql
--	reshard_swap: phase 2, the swap (internal)

-- Phase 2, its own transaction: locks the table (ACCESS EXCLUSIVE, waiting
-- at most lock_timeout at a time, attempts times), brings the copies up to
-- date and verifies them, deletes the copied rows from the partitions on
-- this server, and puts a new parent over the new layout.  Returns the plan
-- with the number of rows moved.
CREATE PROCEDURE reshard_swap(INOUT plan jsonb, lock_wait interval, attempts int)
LANGUAGE plpgsql
AS $function$
DECLARE
    parent regclass := (plan->>'parent')::regclass;
    staging text;
    qualified text := format('%I.%I', plan->>'schema', plan->>'name');
    t jsonb;
    s jsonb;
    r record;
    c bigint;
    moved bigint := 0;
    deleted bigint;
    attempt int := 0;
    blockers int[];
    started timestamptz;
    lock_rels regclass[];
    saved_timeout text := current_setting('lock_timeout');
    ddl text[] := '{}';        -- run as the owner, after the new parent is named
    caller_ddl text[] := '{}'; -- run as the caller: foreign keys of other tables, publications
    fk_ddl text[] := '{}';     -- run as the caller before the partitions are attached: foreign keys of the parent
    validate jsonb := '[]';
    stmt text;
    p pg_class;
BEGIN
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    SELECT * INTO p FROM pg_class WHERE oid = parent;
    lock_rels := ARRAY(SELECT (e->>'rel')::regclass FROM jsonb_array_elements(plan->'sources' || plan->'targets') e
                       WHERE (e->>'local')::boolean);
    lock_rels := lock_rels || ARRAY(SELECT DISTINCT c.conrelid::regclass FROM pg_constraint c
                                    WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0
                                      AND c.conrelid <> parent);
    -- The locks, parent first, then partitions: a transaction that reads
    -- the table and then writes it holds its lock already, and is let
    -- through before this request; a wait is bounded by lock_wait.
    LOOP
        attempt := attempt + 1;
        BEGIN
            PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text, true);
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', parent);
            FOR r IN SELECT DISTINCT unnest(lock_rels) AS rel ORDER BY 1 LOOP
                EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.rel);
            END LOOP;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            SELECT array_agg(DISTINCT l.pid ORDER BY l.pid) INTO blockers
            FROM pg_locks l
            WHERE l.granted AND l.pid <> pg_backend_pid() AND l.locktype = 'relation'
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.relation = ANY (parent || lock_rels);
            IF attempt >= attempts THEN
                RAISE EXCEPTION 'could not lock % to swap its parent, % attempts of % each', parent, attempts, lock_wait
                    USING ERRCODE = 'lock_not_available',
                          DETAIL = format('Backends holding locks on the table or its partitions: %s.  %s',
                                          coalesce(blockers::text, 'none any more'),
                                          CASE WHEN plan->>'operation' = 'add'
                                               THEN 'The table is as it was; the rows copied to the new partition are deleted.'
                                               ELSE 'The table is as it was.' END),
                          HINT = 'Call it again when those transactions are done (see pg_stat_activity), or with a longer lock_timeout or more lock_attempts.';
            END IF;
            RAISE NOTICE 'waiting for backends % to release %, attempt % of %', blockers, parent, attempt, attempts;
            PERFORM pg_sleep(least(1.0, extract(epoch FROM lock_wait) * (1 + random())));
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', (extract(epoch FROM lock_wait) * 1000)::bigint::text, true);

    -- What the new parent must have, read before the old one goes.
    staging := left(format('reshard_%s_%s', parent::oid, plan->>'name'), 63);
    -- Constraints, with their names: checks, primary keys, unique and
    -- exclusion constraints (with their indexes), foreign keys.
    -- Foreign keys as the caller (who may reference the other table), the
    -- rest as the owner.
    FOR r IN SELECT c.oid, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def, obj_description(c.oid, 'pg_constraint') AS comment
             FROM pg_constraint c WHERE c.conrelid = parent AND c.contype IN ('c', 'p', 'u', 'x', 'f')
             ORDER BY c.oid LOOP
        IF r.contype = 'f' THEN
            fk_ddl := fk_ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s', qualified, r.conname, r.def);
        ELSE
            ddl := ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s', qualified, r.conname, r.def);
        END IF;
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, qualified, r.comment);
        END IF;
    END LOOP;
    -- Other indexes, with their names, storage parameters and tablespaces.
    FOR r IN SELECT i.indexrelid, pg_get_indexdef(i.indexrelid) AS def, obj_description(i.indexrelid, 'pg_class') AS comment
             FROM pg_index i WHERE i.indrelid = parent
               AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = parent)
             ORDER BY i.indexrelid LOOP
        ddl := ddl || regexp_replace(r.def, ' ON ONLY ', ' ON ');
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON INDEX %s IS %L', r.indexrelid::regclass, r.comment);
        END IF;
    END LOOP;
    FOR r IN SELECT i.indexrelid, obj_description(i.indexrelid, 'pg_class') AS comment
             FROM pg_index i JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = parent
             WHERE i.indrelid = parent AND obj_description(i.indexrelid, 'pg_class') IS NOT NULL LOOP
        ddl := ddl || format('COMMENT ON INDEX %s IS %L', r.indexrelid::regclass, r.comment);
    END LOOP;
    IF p.relreplident = 'i' THEN
        ddl := ddl || (SELECT format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', qualified, c.relname)
                       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                       WHERE i.indrelid = parent AND i.indisreplident);
    ELSIF p.relreplident IN ('f', 'n') THEN
        ddl := ddl || format('ALTER TABLE %s REPLICA IDENTITY %s', qualified,
                             CASE p.relreplident WHEN 'f' THEN 'FULL' ELSE 'NOTHING' END);
    END IF;
    -- Extended statistics.
    FOR r IN SELECT s.oid, pg_get_statisticsobjdef(s.oid) AS def, s.stxstattarget,
                    format('%I.%I', s.stxnamespace::regnamespace, s.stxname) AS name,
                    obj_description(s.oid, 'pg_statistic_ext') AS comment
             FROM pg_statistic_ext s WHERE s.stxrelid = parent LOOP
        ddl := ddl || r.def;
        IF r.stxstattarget >= 0 THEN
            ddl := ddl || format('ALTER STATISTICS %s SET STATISTICS %s', r.name, r.stxstattarget);
        END IF;
        IF r.comment IS NOT NULL THEN
            ddl := ddl || format('COMMENT ON STATISTICS %s IS %L', r.name, r.comment);
        END IF;
    END LOOP;
    -- Columns: statistics targets, options; comments come with LIKE.
    FOR r IN SELECT a.attname, a.attstattarget,
                    nullif(array(SELECT o FROM unnest(a.attoptions) AS o WHERE o NOT LIKE 'pg\_attver=%'), '{}') AS attoptions
             FROM pg_attribute a
             WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum LOOP
        IF r.attstattarget >= 0 THEN
            ddl := ddl || format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', qualified, r.attname, r.attstattarget);
        END IF;
        IF r.attoptions IS NOT NULL THEN
            ddl := ddl || format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', qualified, r.attname, array_to_string(r.attoptions, ', '));
        END IF;
    END LOOP;
    IF obj_description(parent, 'pg_class') IS NOT NULL THEN
        ddl := ddl || format('COMMENT ON TABLE %s IS %L', qualified, obj_description(parent, 'pg_class'));
    END IF;
    -- Privileges, as the owner: the table's and the columns'.
    IF p.relacl IS NOT NULL THEN
        ddl := ddl || format('REVOKE ALL ON TABLE %s FROM %s', qualified, plan->>'owner');
        FOR r IN SELECT a.grantee, a.privilege_type, a.is_grantable FROM aclexplode(p.relacl) a ORDER BY 1, 2 LOOP
            ddl := ddl || format('GRANT %s ON TABLE %s TO %s%s', r.privilege_type, qualified,
                                 CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                                 CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
    END IF;
    FOR r IN SELECT att.attname, a.grantee, a.privilege_type, a.is_grantable
             FROM pg_attribute att CROSS JOIN LATERAL aclexplode(att.attacl) a
             WHERE att.attrelid = parent AND att.attnum > 0 AND NOT att.attisdropped AND att.attacl IS NOT NULL
             ORDER BY 1, 2, 3 LOOP
        ddl := ddl || format('GRANT %s (%I) ON TABLE %s TO %s%s', r.privilege_type, r.attname, qualified,
                             CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                             CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
    -- Publications (with their column lists and row filters).
    FOR r IN SELECT pb.pubname, pr.prattrs, pg_get_expr(pr.prqual, pr.prrelid) AS qual
             FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
             WHERE pr.prrelid = parent LOOP
        caller_ddl := caller_ddl || format('ALTER PUBLICATION %I ADD TABLE %s%s%s', r.pubname, qualified,
            CASE WHEN r.prattrs IS NULL THEN ''
                 ELSE ' (' || (SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
                               WHERE attrelid = parent AND attnum = ANY (r.prattrs::int2[])) || ')' END,
            CASE WHEN r.qual IS NULL THEN '' ELSE ' WHERE (' || r.qual || ')' END);
    END LOOP;
    -- Foreign keys of other tables to this one: dropped now, created again
    -- NOT VALID after the swap and validated after the clean-up, so the
    -- swap does not read those tables.
    FOR r IN SELECT c.conrelid::regclass AS rel, c.conname, pg_get_constraintdef(c.oid) AS def, c.convalidated,
                    obj_description(c.oid, 'pg_constraint') AS comment
             FROM pg_constraint c
             WHERE c.confrelid = parent AND c.contype = 'f' AND c.conparentid = 0 AND c.conrelid <> parent LOOP
        EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname);
        EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
        caller_ddl := caller_ddl || format('ALTER TABLE %s ADD CONSTRAINT %I %s%s', r.rel, r.conname, r.def,
                                           CASE WHEN r.def LIKE '% NOT VALID' THEN '' ELSE ' NOT VALID' END);
        IF r.comment IS NOT NULL THEN
            caller_ddl := caller_ddl || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.rel, r.comment);
        END IF;
        IF r.convalidated THEN
            validate := validate || jsonb_build_array(format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.rel, r.conname));
        END IF;
    END LOOP;

    -- Adding: the copies are verified, and the moved rows deleted from the
    -- partitions on this server, before the swap (which checks each
    -- partition against its new bound), after the foreign keys to the
    -- parent are dropped (a moved row is not in the parent meanwhile).
    IF plan->>'operation' = 'add' THEN
        EXECUTE format('CALL %I.reshard_move($1, NULL)', plan->>'ext') INTO moved USING plan;
    END IF;

    -- The swap: a new parent, the same partitions under it.
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING COMMENTS INCLUDING COMPRESSION INCLUDING DEFAULTS
                                        INCLUDING GENERATED INCLUDING STORAGE)
                    PARTITION BY %s%s',
                   plan->>'schema', staging, parent, plan->>'partition_by',
                   CASE WHEN p.reltablespace <> 0
                        THEN format(' TABLESPACE %I', (SELECT spcname FROM pg_tablespace WHERE oid = p.reltablespace))
                        ELSE '' END);
    FOR r IN SELECT inhrelid::regclass AS rel FROM pg_inherits WHERE inhparent = parent ORDER BY inhrelid LOOP
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, r.rel);
    END LOOP;
    EXECUTE format('DROP TABLE %s', parent);
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', plan->>'schema', staging, plan->>'name');
    FOREACH stmt IN ARRAY ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOREACH stmt IN ARRAY fk_ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    FOR t IN SELECT * FROM jsonb_array_elements(plan->'partitions') LOOP
        started := clock_timestamp();
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', qualified, t->>'rel', format(plan->>'bound', t->>'bucket'));
        RAISE NOTICE 'attached % as bucket %', t->>'rel', t->>'bucket'
            USING DETAIL = format('Elapsed: %s ms.', round(1000 * extract(epoch FROM clock_timestamp() - started)));
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, true)', plan->>'ext') USING plan;
    FOREACH stmt IN ARRAY caller_ddl LOOP
        EXECUTE stmt;
    END LOOP;
    EXECUTE format('CALL %I.reshard_enter($1, false)', plan->>'ext') USING plan;
    -- Removing: the targets are under the new parent now, where the moving
    -- rows belong; the removed partition is detached.
    IF plan->>'operation' = 'remove' THEN
        EXECUTE format('CALL %I.reshard_move($1, NULL)', plan->>'ext') INTO moved USING plan;
    END IF;
    PERFORM set_config('lock_timeout', saved_timeout, true);
    plan := plan || jsonb_build_object('moved', moved, 'validate', validate, 'parent', qualified);
END
$function$;

COMMENT ON PROCEDURE reshard_swap(jsonb, interval, int) IS
'resharding phase 2: locks the table, verifies the copies, deletes the moved rows from local partitions, and puts a new parent over the new layout (internal)';
