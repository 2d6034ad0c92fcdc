-- src/sql/resharding/reshard_plan_parent.sql
--	reshard_plan_parent: what a resharding refuses of the table, which it creates again (internal)

-- reshard_plan's checks of the parent, resharding (adding or removing a
-- bucket), after reshard_plan_bucket's: nothing that cannot be carried
-- over to the new parent, which the cutover puts in its place, and nothing
-- the table's owner could not carry over (foreign keys of other tables
-- that refer to it, publications, statistics objects: the owner's; the
-- right to refer to the tables of its foreign keys); and a foreign new
-- partition (s.partition) only for a table without foreign keys.  Not
-- revoked from PUBLIC: reshard_plan runs as the table's owner, any role,
-- and calls it in SQL (a privilege checked); it reads the catalog and
-- raises errors.
CREATE FUNCTION reshard_plan_parent(s reshard_state, operation text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    parent regclass := s.parent;
    partition regclass := s.partition;
    p pg_class;
    bad text;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['setup']);
    SELECT * INTO STRICT p FROM pg_class WHERE oid = parent;
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
END
$function$;

COMMENT ON FUNCTION reshard_plan_parent(reshard_state, text) IS
'resharding: the plan''s checks of the table, which the resharding creates again (internal)';
