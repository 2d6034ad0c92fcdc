-- sql/src/resharding/reshard_phase_cutover.sql
--	reshard_phase_cutover: the shadows swapped in for the old partitions (internal)

-- As the table's owner, in the transaction that holds ACCESS EXCLUSIVE on
-- the parent, its partitions and the shadows, after reshard_phase_apply
-- has applied the whole log: catalog work only, whose cost depends on the
-- number of partitions, not of rows.  The old partitions are detached and
-- dropped, the old parent dropped, the new parent renamed, the shadows
-- renamed to the old partitions' names and attached (their CHECK
-- constraints imply their bounds: no scan), the helpers dropped.
-- Work in progress: the parent's and the partitions' properties (indexes,
-- constraints, privileges, comments, publications) are not carried over yet.
CREATE FUNCTION reshard_phase_cutover(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    schema_name name;
    parent_name name;
    names name[];
    b int;
    target regclass;
BEGIN
    SELECT relnamespace::regnamespace::name, relname INTO STRICT schema_name, parent_name FROM pg_class WHERE oid = s.parent;
    names := ARRAY(SELECT c.relname FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src ORDER BY u.i);
    EXECUTE format('DROP TABLE %s', s.log::regclass);
    EXECUTE format('DROP SEQUENCE %s', s.log_sequence::regclass);
    FOR b IN 1 .. cardinality(s.sources) LOOP
        CONTINUE WHEN s.sources[b] IS NULL;
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', s.parent::regclass, s.sources[b]::regclass);
        EXECUTE format('DROP TABLE %s', s.sources[b]::regclass);
    END LOOP;
    EXECUTE format('DROP TABLE %s', s.parent::regclass);
    EXECUTE format('ALTER TABLE %s RENAME TO %I', s.new_parent::regclass, parent_name);
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        target := s.shadows[b + 1];
        IF target <> s.partition THEN
            EXECUTE format('ALTER TABLE %s RENAME TO %I', target, names[b + 1]);
        END IF;
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.new_parent::regclass, target, format(s.new_bound, b));
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, 'reshard_bound_' || s.shadows[b + 1]);
        EXECUTE format('DROP INDEX %I.%I', schema_name, 'reshard_key_' || s.shadows[b + 1]);
    END LOOP;
    s.phase := 'done';
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_cutover(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_cutover(reshard_state) IS
'resharding, cutover: the shadows swapped in for the old partitions under the lock (internal, work in progress)';
