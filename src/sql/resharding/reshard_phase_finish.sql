-- src/sql/resharding/reshard_phase_finish.sql
--	reshard_phase_finish: what follows the cutover (internal)

-- As the table's owner, after the cutover committed, in two calls, each
-- in a transaction of its own.  The first validates the foreign keys
-- that refer to the table and those of its own that the cutover added to
-- the partitions, and gathers the new parent's planner statistics if the
-- old one had some (autovacuum never analyzes a partitioned table; ANALYZE
-- reads a sample of rows): SHARE UPDATE EXCLUSIVE, writers go on.  The
-- second (the engine waits at most the budget for each lock) adds the
-- table's own foreign keys to the new parent (a short SHARE ROW EXCLUSIVE:
-- PostgreSQL attaches the partitions' validated ones and reads no row),
-- empties the removed partition (detached at the cutover; its rows are in
-- the others), and, after an addition, warns of rows on a foreign
-- partition that belong to the new one: written directly on the shard's
-- server during the resharding, not through the table, the engine did not
-- see them (reshard_check lists them).  (Then the engine's cleaner drops
-- the old parent with the old local partitions, which the cutover renamed
-- away instead of dropping them under its lock, and recorded.)
CREATE FUNCTION reshard_phase_finish(s reshard_state) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    statement text;
    r record;
    misplaced bigint;
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['finish']);
    IF s.validate IS NOT NULL THEN
        FOREACH statement IN ARRAY s.validate LOOP
            EXECUTE statement;
        END LOOP;
        s.validate := NULL;
        IF s.analyze_parent THEN
            EXECUTE format('ANALYZE %s', s.parent::regclass);
        END IF;
        RETURN s;
    END IF;
    FOREACH statement IN ARRAY coalesce(s.foreign_keys, '{}') LOOP
        EXECUTE statement;
    END LOOP;
    s.foreign_keys := NULL;
    IF s.operation = 'remove' AND EXISTS (SELECT FROM pg_class WHERE oid = s.partition) THEN
        EXECUTE format('TRUNCATE %s', s.partition::regclass);
    END IF;
    IF s.operation = 'add' THEN
        FOR r IN SELECT u.src, u.i - 1 AS bucket FROM unnest(s.sources) WITH ORDINALITY AS u(src, i)
                 JOIN pg_class c ON c.oid = u.src WHERE c.relkind = 'f' ORDER BY u.i LOOP
            EXECUTE format('SELECT count(*) FROM ONLY %s WHERE (%s) <> %s',
                           r.src::regclass, s.new_bucket_sql, r.bucket)
            INTO misplaced;
            IF misplaced > 0 THEN
                RAISE WARNING '% rows of % in % belong to another partition', misplaced, s.parent_name, r.src::regclass
                    USING DETAIL = 'They were written directly on the shard''s server during the resharding, not through the table.',
                          HINT = format('reshard_check(%L) lists them; move each by DELETE and INSERT through the table.', s.parent_name);
            END IF;
        END LOOP;
    END IF;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_finish(reshard_state) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_finish(reshard_state) IS
'resharding, finish: foreign keys validated and added to the new parent, the new parent analyzed, the removed partition emptied, rows written directly on shards reported (internal)';
