-- src/sql/resharding/reshard_phase_cutover.sql
--	reshard_phase_cutover: the new layout put in the place of the old one (internal)

-- As the table's owner, in the transaction that holds ACCESS EXCLUSIVE on
-- the parent, its partitions, the tables filled and the tables whose
-- foreign keys refer to the parent, after the whole log was applied and
-- the engine's triggers dropped.  Catalog work only, whose cost depends on
-- the number of partitions and catalog objects, not of rows: the change
-- log dropped (it is empty, and of the old parent's row type), the foreign
-- keys that refer to the parent dropped, the partitions that are not
-- replaced detached (the removed one, the foreign ones), the old parent
-- and the old local partitions renamed away (reshard_phase_finish drops
-- them), takeover (reshard_takeover_sql, read before the lock) run to give
-- the new parent and the shadows the old ones' names and properties, the
-- new partition and the foreign ones attached (the shadows were attached
-- by reshard_phase_verify; a CHECK implies the bound: no scan) and the
-- helpers dropped, the foreign keys added again NOT
-- VALID (validated by reshard_phase_finish).  The table's own foreign keys
-- (also locked: the tables they refer to) are added to each partition NOT
-- VALID, under the name the old partition gave them: they hold for every
-- write from the cutover on; reshard_phase_finish validates them and adds
-- them to the new parent, which then attaches them (no scan).  The state's
-- parent becomes the new parent.
--
-- Foreign partitions (shards on other servers) cannot be replaced by a
-- shadow: the rows that move out of one are deleted from it here, found by
-- their keys (one statement per shard, sent whole to its server when the
-- key is a column), and must be exactly the copies made of them (count and
-- sum of row-image hashes: else a direct write on that server changed them,
-- an error; the copies in a foreign new partition are read once for all
-- shards); the rows that move into one are poured into it from its
-- incoming table, in batches (reshard_transfer_table).  With shard_views, the rows that
-- leave a shard are not deleted: the engine points its foreign partition
-- at a view on the shard that leaves them out (reshard_shard_views).  A foreign partition removed must hold exactly the rows
-- copied from it (count, and row-image hashes of the copies found by key).  That work (reshard_cutover_shard_rows) grows with the rows moved to and from shards,
-- not with the table.
CREATE FUNCTION reshard_phase_cutover(s reshard_state, takeover text[]) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET default_tablespace = ''   -- (the tables it makes go where the ones they copy are)
AS $function$
DECLARE
    r record;
    b int;
    target regclass;
    statement text;
    foreign_keys text[] := '{}';
    not_valid_keys text[] := '{}';   -- (and comments: after the partitions are attached)
    own_foreign_keys jsonb;
    fk jsonb;
    name text;
    replaced oid[];
    attached oid[];
    key_indexes text[] := '{}';
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['cutover']);
    -- The old local partitions that a shadow replaces.
    replaced := ARRAY(SELECT u.src FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src
                      WHERE c.relkind <> 'f' AND s.shadows[u.i] IS NOT NULL AND s.shadows[u.i] <> s.partition);
    -- The foreign partitions: a foreign partition removed checked against
    -- its copies; rows that moved out deleted, rows that moved in poured
    -- in; or with shard_views, each pointed at its view on its shard.
    PERFORM @extschema@.reshard_cutover_shard_rows(s);
    s.validate := '{}';
    s.foreign_keys := '{}';
    EXECUTE format('DROP TABLE %s', s.log::regclass);
    EXECUTE format('DROP SEQUENCE %s', s.log_sequence::regclass);
    -- The foreign keys of other tables that refer to the parent: dropped
    -- (with what PostgreSQL made of each for the referring table's
    -- partitions), then added again as they were, each on the table it was
    -- on, under its name.  On a table that is not partitioned: here, NOT
    -- VALID, before the new parent has partitions (PostgreSQL then makes its
    -- rows for the referenced partitions valid as it attaches them), and
    -- validated by reshard_phase_finish; one that was not valid, after the
    -- partitions are attached (those rows not valid either, as they were).
    -- On a partitioned one (PostgreSQL 15 to 17 have no NOT VALID there):
    -- by reshard_phase_finish after the validation, deepest first, which
    -- attaches its partitions' (no scan).
    FOR r IN WITH RECURSIVE tree AS (
                 SELECT n.oid, n.oid AS top, 0 AS depth FROM pg_constraint n
                 WHERE n.confrelid = s.parent AND n.contype = 'f' AND n.conparentid = 0 AND n.conrelid <> s.parent
                 UNION ALL
                 SELECT c.oid, t.top, t.depth + 1 FROM tree t
                 JOIN pg_constraint c ON c.conparentid = t.oid AND c.confrelid = s.parent AND c.contype = 'f')
             SELECT n.conrelid::regclass AS rel, n.conname, pg_get_constraintdef(n.oid) AS def, n.convalidated,
                    obj_description(n.oid, 'pg_constraint') AS comment, t.depth = 0 AS is_top,
                    (SELECT relkind FROM pg_class WHERE oid = n.conrelid) = 'p' AS partitioned
             FROM tree t JOIN pg_constraint n ON n.oid = t.oid
             ORDER BY t.top, t.depth DESC, n.oid LOOP
        IF r.is_top THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname);
        END IF;
        IF r.partitioned THEN
            s.foreign_keys := s.foreign_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.rel, r.conname, r.def);
        ELSIF r.convalidated THEN
            foreign_keys := foreign_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s NOT VALID', r.rel, r.conname, r.def);
            s.validate := s.validate || format('ALTER TABLE %s VALIDATE CONSTRAINT %I', r.rel, r.conname);
        ELSE
            not_valid_keys := not_valid_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.rel, r.conname, r.def);
        END IF;
        IF r.comment IS NOT NULL THEN
            IF r.partitioned THEN
                s.foreign_keys := s.foreign_keys || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.rel, r.comment);
            ELSE
                not_valid_keys := not_valid_keys || format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.rel, r.comment);
            END IF;
        END IF;
    END LOOP;
    -- The table's own foreign keys, and the names its partitions gave them
    -- (read before the old parent is dropped).
    SELECT jsonb_agg(jsonb_build_object(
               'name', n.conname, 'definition', pg_get_constraintdef(n.oid),
               'valid', n.convalidated, 'enforced', coalesce((to_jsonb(n) ->> 'conenforced')::boolean, true),
               'comment', obj_description(n.oid, 'pg_constraint'),
               'names', (SELECT jsonb_object_agg(c.conrelid::text, c.conname) FROM pg_constraint c
                         WHERE c.conparentid = n.oid AND c.conrelid <> n.conrelid))
           ORDER BY n.oid)
    INTO own_foreign_keys
    -- (not the rows PostgreSQL keeps for each partition of a partitioned
    -- table referred to: they come with the foreign key)
    FROM pg_constraint n WHERE n.conrelid = s.parent AND n.contype = 'f' AND n.conparentid = 0;
    FOR r IN SELECT inhrelid::regclass AS rel FROM pg_inherits
             WHERE inhparent = s.parent AND inhrelid <> ALL (replaced) ORDER BY inhrelid LOOP
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', s.parent::regclass, r.rel);
    END LOOP;
    -- (ANALYZE reads a foreign partition whole on PostgreSQL 15: not then)
    s.analyze_parent := (SELECT reltuples >= 0 FROM pg_class WHERE oid = s.parent)
                        AND NOT EXISTS (SELECT FROM unnest(s.shadows || s.sources) AS u(rel)
                                        JOIN pg_class c ON c.oid = u.rel WHERE c.relkind = 'f');
    -- The old parent and its old local partitions are renamed away (with
    -- their indexes and statistics objects, whose names the takeover gives
    -- to the new ones) and dropped by the finish after the commit (the old
    -- parent recorded, policy on_success: the cleaner drops it, and its
    -- partitions with it):
    -- dropping them here took most of the time under the lock (and of the
    -- commit: their files).  No write reaches them: the parent's name is
    -- the new parent's.  With foreign keys of its own (their triggers on
    -- the tables they refer to would still check the old rows), or with no
    -- partition left to drop, dropped here.
    IF replaced <> '{}' AND own_foreign_keys IS NULL THEN
        FOR r IN SELECT CASE WHEN k = 's' THEN 'STATISTICS' WHEN k IN ('i', 'I') THEN 'INDEX' ELSE 'TABLE' END AS kind,
                        object_name, object_oid,
                        'reshard_old_' || object_oid || CASE WHEN taken THEN '_' || md5(random()::text) ELSE '' END AS new_name
                 FROM (SELECT c.relkind::text, c.oid::regclass::text, c.oid,
                              EXISTS (SELECT FROM pg_class t WHERE t.relnamespace = c.relnamespace
                                      AND t.relname = 'reshard_old_' || c.oid)
                       FROM pg_class c
                       WHERE c.oid = ANY (s.parent || replaced)
                          OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = ANY (s.parent || replaced))
                       UNION ALL
                       SELECT 's', format('%s.%I', x.stxnamespace::regnamespace, x.stxname), x.oid,
                              EXISTS (SELECT FROM pg_statistic_ext t WHERE t.stxnamespace = x.stxnamespace
                                      AND t.stxname = 'reshard_old_' || x.oid)
                       FROM pg_statistic_ext x WHERE x.stxrelid = ANY (s.parent || replaced)) AS o(k, object_name, object_oid, taken)
                 ORDER BY object_oid LOOP
            EXECUTE format('ALTER %s %s RENAME TO %I', r.kind, r.object_name, r.new_name);
            IF r.kind = 'TABLE' AND r.object_oid = s.parent THEN
                s := @extschema@.reshard_cleanup_record(s, 'table', format('%I.%I', (SELECT n.nspname FROM pg_class c
                                                                                    JOIN pg_namespace n ON n.oid = c.relnamespace
                                                                                    WHERE c.oid = s.parent), r.new_name),
                                                        NULL, 'on_success');
            END IF;
        END LOOP;
    ELSE
        EXECUTE format('DROP TABLE %s', s.parent::regclass);
    END IF;
    FOREACH statement IN ARRAY takeover LOOP
        EXECUTE statement;
    END LOOP;
    FOREACH statement IN ARRAY foreign_keys LOOP
        EXECUTE statement;
    END LOOP;
    -- The shadows were attached at the verification (reshard_phase_verify):
    -- here the new partition and the foreign ones; the engine's indexes on
    -- the key, all in one statement.
    attached := ARRAY(SELECT inhrelid FROM pg_inherits WHERE inhparent = s.new_parent);
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        target := s.shadows[b + 1];
        IF target <> s.partition AND (SELECT relkind FROM pg_class WHERE oid = s.sources[b + 1]) = 'f' THEN
            -- a foreign partition keeps its place; its incoming table was
            -- poured into it (with shard_views: a foreign table on its
            -- incoming rows, which are in it already)
            EXECUTE format('DROP %sTABLE %s', CASE WHEN (SELECT relkind FROM pg_class WHERE oid = target) = 'f'
                                                   THEN 'FOREIGN ' ELSE '' END, target);
            target := s.sources[b + 1];
        ELSIF (SELECT relkind FROM pg_class WHERE oid = target) <> 'f' THEN
            name := @extschema@.reshard_object_name(s, 'key', target);
            key_indexes := key_indexes || ARRAY(SELECT x.indexrelid::regclass::text FROM pg_index x
                                                JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = target AND c.relname = name);
        END IF;
        CONTINUE WHEN target = ANY (attached);
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.new_parent::regclass, target, format(s.new_bound, b));
        name := @extschema@.reshard_object_name(s, 'bound', s.shadows[b + 1]);
        IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = target AND conname = name) THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, name);
        END IF;
    END LOOP;
    -- (an index of the engine's on the key that ATTACH PARTITION took as
    -- the partition's of an index of the parent on the key alone stays,
    -- named after its table, as PostgreSQL names a partition's index)
    FOR r IN SELECT i.oid AS index_oid, i.relnamespace, t.relname AS table_name
             FROM unnest(key_indexes) AS u(index_name) JOIN pg_class i ON i.oid = u.index_name::regclass
             JOIN pg_index x ON x.indexrelid = i.oid JOIN pg_class t ON t.oid = x.indrelid
             WHERE EXISTS (SELECT FROM pg_inherits h WHERE h.inhrelid = i.oid) LOOP
        key_indexes := array_remove(key_indexes, r.index_oid::regclass::text);
        EXECUTE format('ALTER INDEX %s RENAME TO %I', r.index_oid::regclass,
                       @extschema@.reshard_free_name(r.relnamespace, r.table_name, '_key_idx'));
    END LOOP;
    IF key_indexes <> '{}' THEN
        EXECUTE 'DROP INDEX ' || array_to_string(key_indexes, ', ');
    END IF;
    FOREACH statement IN ARRAY not_valid_keys LOOP
        EXECUTE statement;
    END LOOP;
    FOR fk IN SELECT * FROM jsonb_array_elements(coalesce(own_foreign_keys, '[]')) LOOP
        FOR b IN 0 .. s.new_buckets - 1 LOOP
            CONTINUE WHEN s.shadows[b + 1] IS NULL;
            target := s.shadows[b + 1];   -- (a table with foreign keys has no foreign partition)
            name := coalesce(fk -> 'names' ->> s.sources[b + 1]::text, fk ->> 'name');
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', target, name,
                           CASE WHEN (fk ->> 'enforced')::boolean
                                THEN regexp_replace(fk ->> 'definition', ' NOT VALID$', '') || ' NOT VALID'
                                ELSE fk ->> 'definition' END);
            IF (fk ->> 'valid')::boolean AND (fk ->> 'enforced')::boolean THEN
                s.validate := s.validate || format('ALTER TABLE %s VALIDATE CONSTRAINT %I', target, name);
            END IF;
        END LOOP;
        s.foreign_keys := s.foreign_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s',
                                                   s.new_parent::regclass, fk ->> 'name', fk ->> 'definition');
        IF fk ->> 'comment' IS NOT NULL THEN
            s.foreign_keys := s.foreign_keys || format('COMMENT ON CONSTRAINT %I ON %s IS %L',
                                                       fk ->> 'name', s.new_parent::regclass, fk ->> 'comment');
        END IF;
    END LOOP;
    s.parent := s.new_parent;
    RETURN s;
END
$function$;
REVOKE ALL ON FUNCTION reshard_phase_cutover(reshard_state, text[]) FROM PUBLIC;

COMMENT ON FUNCTION reshard_phase_cutover(reshard_state, text[]) IS
'resharding, cutover: the new layout put in the place of the old one under the lock, catalog work only (internal)';
