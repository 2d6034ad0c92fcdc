-- src/sql/partition_hash/jumpbackhash_drop_operator_classes.sql
--	jumpbackhash_drop_operator_classes: the extension's operator classes
--	dropped a few families per transaction, before DROP EXTENSION on a server
--	whose lock table is small

-- DROP EXTENSION locks every object it drops, in one transaction: about
-- 9,600 objects, 37 per number of buckets N (docs/sharding.md).  This drops
-- the classes of families_per_transaction values of N at a time (about 50
-- locks each), committing after each batch, so that DROP EXTENSION then
-- has about 130 objects left.  A procedure that commits cannot have a SET
-- clause: everything it names is qualified.
CREATE PROCEDURE jumpbackhash_drop_operator_classes(families_per_transaction int DEFAULT 16)
LANGUAGE plpgsql
AS $procedure$
DECLARE
    extension oid;
    extension_owner oid;
    -- what it drops, one element per object
    classids oid[];
    objids oid[];
    families oid[];
    owners oid[];
    -- the statements that drop each family, from the greatest N down
    family_statements text[];
    problems text;
    i int;
BEGIN
    IF families_per_transaction IS NULL OR families_per_transaction < 1 THEN
        RAISE EXCEPTION 'families per transaction must be at least 1, got %',
                        coalesce(families_per_transaction::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT e.oid, e.extowner INTO extension, extension_owner
    FROM pg_catalog.pg_extension e WHERE e.extname = 'subsetting';
    -- What it drops: the member families jumpbackhash<N>_ops, their classes
    -- and their support functions 2 (functions 1 are PostgreSQL's).
    SELECT pg_catalog.array_agg(o.classid), pg_catalog.array_agg(o.objid), pg_catalog.array_agg(o.family),
           pg_catalog.array_agg(o.owner)
    INTO classids, objids, families, owners
    FROM (SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass::oid AS classid, f.oid AS objid, f.oid AS family,
                 f.opfowner AS owner
          FROM pg_catalog.pg_opfamily f WHERE f.opfname ~ '^jumpbackhash[1-9][0-9]*_ops$'
          UNION ALL
          SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass::oid, c.oid, c.opcfamily, c.opcowner
          FROM pg_catalog.pg_opclass c WHERE c.opcname ~ '^jumpbackhash[1-9][0-9]*_[a-z0-9]+_ops$'
          UNION ALL
          SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass::oid, p.oid, a.amprocfamily, p.proowner
          FROM pg_catalog.pg_amproc a JOIN pg_catalog.pg_proc p ON p.oid = a.amproc
          WHERE a.amprocnum = 2) AS o
    WHERE EXISTS (SELECT FROM pg_catalog.pg_depend d
                  WHERE (d.classid, d.objid) = (o.classid, o.objid) AND d.deptype = 'e'
                    AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = extension)
      AND EXISTS (SELECT FROM pg_catalog.pg_depend d
                  WHERE (d.classid, d.objid) = ('pg_catalog.pg_opfamily'::pg_catalog.regclass, o.family)
                    AND d.deptype = 'e'
                    AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = extension);
    IF classids IS NULL THEN
        RETURN;
    END IF;
    -- Dropping them takes the rights DROP EXTENSION takes, and those of
    -- their owner (a superuser, when a role that is not one created the
    -- extension).
    SELECT pg_catalog.string_agg(DISTINCT t.owner::pg_catalog.regrole::text, ', ') INTO problems
    FROM (SELECT extension_owner AS owner UNION ALL SELECT pg_catalog.unnest(owners)) AS t
    WHERE NOT pg_catalog.pg_has_role(current_user, t.owner, 'USAGE');
    IF problems IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to drop the operator classes of extension subsetting'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('The extension or its classes belong to %s.', problems),
                  HINT = 'A superuser can call it.';
    END IF;
    -- Nothing is dropped while anything that is not theirs depends on them
    -- (a table partitioned by a class, another family using a function):
    -- the list, as DROP EXTENSION would give it.
    SELECT pg_catalog.string_agg(pg_catalog.format('%s depends on %s',
                                                   pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid),
                                                   pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0)),
                                 E'\n' ORDER BY pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid),
                                                 pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0))
    INTO problems
    FROM pg_catalog.pg_depend d
    JOIN ROWS FROM (pg_catalog.unnest(classids), pg_catalog.unnest(objids)) AS t(classid, objid)
      ON (d.refclassid, d.refobjid) = (t.classid, t.objid)
    WHERE d.deptype = 'n'
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend o
                      JOIN ROWS FROM (pg_catalog.unnest(classids), pg_catalog.unnest(objids)) AS u(classid, objid)
                        ON (o.refclassid, o.refobjid) = (u.classid, u.objid)
                      WHERE (o.classid, o.objid) = (d.classid, d.objid) AND o.deptype IN ('i', 'a'));
    IF problems IS NOT NULL THEN
        RAISE EXCEPTION 'cannot drop the operator classes of extension subsetting because other objects depend on them'
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = problems,
                  HINT = 'Drop those objects first, then call it again: it dropped nothing.';
    END IF;
    -- Each family: its members taken out of the extension, then the family
    -- (and with it its classes) and the support functions dropped.  From the
    -- greatest N down, so that an interrupted call leaves the classes of 1
    -- to some N (call it again to go on).
    SELECT pg_catalog.array_agg(f.statements ORDER BY f.buckets DESC) INTO family_statements
    FROM (SELECT pg_catalog.substring(pg_catalog.max(fam.opfname), '[0-9]+')::int AS buckets,
                 pg_catalog.string_agg(x.statement, '; ' ORDER BY x.step, x.statement) AS statements
          FROM ROWS FROM (pg_catalog.unnest(classids), pg_catalog.unnest(objids), pg_catalog.unnest(families))
               AS t(classid, objid, family)
          JOIN pg_catalog.pg_opfamily fam ON fam.oid = t.family,
          LATERAL (SELECT 1, pg_catalog.format('ALTER EXTENSION subsetting DROP %s %s',
                                               CASE t.classid
                                               WHEN 'pg_catalog.pg_opclass'::pg_catalog.regclass THEN 'OPERATOR CLASS'
                                               WHEN 'pg_catalog.pg_opfamily'::pg_catalog.regclass THEN 'OPERATOR FAMILY'
                                               ELSE 'FUNCTION' END,
                                               (pg_catalog.pg_identify_object(t.classid, t.objid, 0)).identity)
                   UNION ALL
                   SELECT 2, pg_catalog.format('DROP OPERATOR FAMILY %s',
                                               (pg_catalog.pg_identify_object(t.classid, t.objid, 0)).identity)
                   WHERE t.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass
                   UNION ALL
                   SELECT 3, pg_catalog.format('DROP FUNCTION %s', t.objid::pg_catalog.regprocedure)
                   WHERE t.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass) AS x(step, statement)
          GROUP BY t.family) AS f;
    FOR i IN 1 .. pg_catalog.cardinality(family_statements) LOOP
        EXECUTE family_statements[i];
        IF i % families_per_transaction = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END
$procedure$;

COMMENT ON PROCEDURE jumpbackhash_drop_operator_classes(int) IS
'drops the extension''s operator classes jumpbackhash<N>_<type>_ops (N = 1 to 256), their families and support functions, families_per_transaction values of N per transaction, so that DROP EXTENSION subsetting then takes few locks (for a server whose lock table cannot hold its 9,600); drops nothing if anything depends on them; CALL it outside a transaction block';
