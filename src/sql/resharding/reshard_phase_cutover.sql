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
-- copied from it (count, and row-image hashes of the copies found by key).  That work grows with the rows moved to and from shards,
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
    target_name name; -- moving: its name before it takes the partition's
    kind text;        -- moving: TABLE or FOREIGN TABLE, as the table that takes the partition's place is
    statement text;
    foreign_keys text[] := '{}';
    not_valid_keys text[] := '{}';   -- (and comments: after the partitions are attached)
    own_foreign_keys jsonb;
    fk jsonb;
    name text;
    replaced oid[];
    attached oid[];
    key_indexes text[] := '{}';
    ext text;
    cols text;
    insert_cols text;
    keys text;
    key_type text;
    moved_count bigint;
    moved_sum numeric;
    deleted_count bigint;
    deleted_sum numeric;
    copied_count bigint;
    copied_sum numeric;
    moving jsonb;
BEGIN
    EXECUTE format('SELECT %s.reshard_expect_phase($1, VARIADIC $2)',
                   (SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'subsetting'))
    USING s, ARRAY['cutover'];
    SELECT extnamespace::regnamespace::text INTO STRICT ext FROM pg_extension WHERE extname = 'subsetting';
    -- A move (partition_move; the engine applied the log and dropped its
    -- triggers under the lock, and gives the grants after): the partition
    -- detached and renamed away (the finish drops it), the foreign table
    -- on the server's copy given its name and comments and attached in its
    -- place (a foreign table is attached without a scan); the log and the
    -- table of its row type dropped.
    IF s.operation = 'move' THEN
        target := s.shadows[s.bucket + 1];
        SELECT relname INTO STRICT name FROM pg_class WHERE oid = s.partition;
        -- ('TABLE' or 'FOREIGN TABLE', as each is)
        SELECT CASE relkind WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, relname INTO STRICT kind, target_name
        FROM pg_class WHERE oid = target;
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', s.parent::regclass, s.partition::regclass);
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO statement USING s, 'old', s.partition;
        EXECUTE format('ALTER %s %s RENAME TO %I', CASE WHEN (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f'
                                                        THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                       s.partition::regclass, statement);
        EXECUTE format('ALTER %s %s RENAME TO %I', kind, target, name);
        FOR r IN SELECT d.objsubid, d.description, a.attname FROM pg_description d
                 LEFT JOIN pg_attribute a ON a.attrelid = d.objoid AND a.attnum = d.objsubid
                 WHERE d.classoid = 'pg_class'::regclass AND d.objoid = s.partition LOOP
            IF r.objsubid = 0 THEN
                EXECUTE format('COMMENT ON %s %s IS %L', kind, target, r.description);
            ELSE
                EXECUTE format('COMMENT ON COLUMN %s.%I IS %L', target, r.attname, r.description);
            END IF;
        END LOOP;
        -- (a table here is attached without a scan: its CHECK implies the
        -- bound, reshard_phase_verify; then its CHECK and its key's index
        -- of the engine's, if it has one, go)
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.parent::regclass, target, format(s.new_bound, s.bucket));
        IF kind = 'TABLE' THEN
            EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO statement USING s, 'bound', target;
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, statement);
            EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO statement USING s, 'key', target;
            IF EXISTS (SELECT FROM pg_class c WHERE c.relname = statement AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = target)) THEN
                EXECUTE format('DROP INDEX %I.%I', (SELECT relnamespace::regnamespace::name FROM pg_class WHERE oid = target), statement);
            END IF;
            -- (its indexes named after it, as PostgreSQL names a partition's)
            FOR r IN SELECT i.relname, left(name || substr(i.relname, length(target_name) + 1), 63) AS new_name
                     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                     WHERE x.indrelid = target AND starts_with(i.relname, target_name) LOOP
                CONTINUE WHEN EXISTS (SELECT FROM pg_class WHERE relname = r.new_name
                                                             AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = target));
                EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', (SELECT relnamespace::regnamespace::name FROM pg_class WHERE oid = target),
                               r.relname, r.new_name);
            END LOOP;
        END IF;
        EXECUTE format('DROP TABLE %s', s.log::regclass);
        EXECUTE format('DROP SEQUENCE %s', s.log_sequence::regclass);
        EXECUTE format('DROP TABLE %s', s.new_parent::regclass);
        RETURN s;
    END IF;
    SELECT string_agg('t.' || quote_ident(attname), ', ' ORDER BY attnum),
           string_agg(quote_ident(attname), ', ' ORDER BY attnum) FILTER (WHERE attgenerated = '')
    INTO cols, insert_cols
    FROM pg_attribute WHERE attrelid = s.parent AND attnum > 0 AND NOT attisdropped;
    -- The old local partitions that a shadow replaces.
    replaced := ARRAY(SELECT u.src FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src
                      WHERE c.relkind <> 'f' AND s.shadows[u.i] IS NOT NULL AND s.shadows[u.i] <> s.partition);
    -- A foreign partition removed: its rows must be exactly their copies
    -- (found by key: the rows of one key are all of one bucket).
    -- (With shard_views its server refuses direct writes: not read.)
    IF s.operation = 'remove' AND (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'f'
       AND s.shard_options[array_position(s.sources, s.partition)] IS NULL THEN
        EXECUTE format('SELECT array_agg((%1$s))::text, pg_typeof(array_agg((%1$s)))::text, count(*),
                               coalesce(sum(%2$s.reshard_row_image_hash(ROW(%3$s))), 0)
                        FROM ONLY %4$s AS t',
                       s.key, ext, cols, s.partition::regclass)
        INTO keys, key_type, moved_count, moved_sum;
        copied_count := 0;
        copied_sum := 0;
        FOR b IN 0 .. s.new_buckets - 1 LOOP
            CONTINUE WHEN s.shadows[b + 1] IS NULL OR moved_count = 0;
            EXECUTE format('SELECT count(*), coalesce(sum(%1$s.reshard_row_image_hash(ROW(%2$s))), 0)
                            FROM %3$s AS t WHERE (%4$s) = ANY (%5$L::%6$s)',
                           ext, cols, s.shadows[b + 1]::regclass, s.key, keys, key_type)
            INTO deleted_count, deleted_sum;
            copied_count := copied_count + deleted_count;
            copied_sum := copied_sum + deleted_sum;
        END LOOP;
        IF moved_count <> s.rows_to_move OR copied_count <> moved_count OR copied_sum <> moved_sum THEN
            RAISE EXCEPTION 'the rows of % in % were changed on its server during the resharding',
                            s.parent_name, s.partition::regclass
                USING ERRCODE = 'data_corrupted',
                      DETAIL = format('%s rows copied, %s in the partition (or the same count, other values): written directly on the shard, not through %s.  Nothing was swapped; the table is as it was.',
                                      s.rows_to_move, moved_count, s.parent_name);
        END IF;
    END IF;
    -- The foreign partitions: rows that moved out deleted, rows that moved in poured in.
    -- Adding: the copies in the new partition read once, grouped by the
    -- bucket they leave (their keys, count and sum of row-image hashes),
    -- not once per shard and again for the keys (a foreign new partition
    -- sends all its rows each time: its reads were most of the lock's time).
    IF s.operation = 'add' AND EXISTS (SELECT FROM unnest(s.sources) WITH ORDINALITY AS u(src, i) JOIN pg_class c ON c.oid = u.src
                                       WHERE c.relkind = 'f' AND s.hidden_keys[u.i] IS NULL) THEN
        EXECUTE format('SELECT jsonb_object_agg(g.b, jsonb_build_array(g.k, g.kt, g.n, g.h::text))
                        FROM (SELECT (%4$s) AS b, array_agg((%2$s))::text AS k, pg_typeof(array_agg((%2$s)))::text AS kt,
                                     count(*) AS n, coalesce(sum(%1$s.reshard_row_image_hash(ROW(%3$s))), 0) AS h
                              FROM %5$s AS t GROUP BY 1) AS g',
                       ext, s.key, cols, s.old_bucket_sql, s.partition::regclass)
        INTO moving;
    END IF;
    FOR r IN SELECT u.src, u.i - 1 AS bucket FROM unnest(s.sources) WITH ORDINALITY AS u(src, i)
             JOIN pg_class c ON c.oid = u.src
             WHERE c.relkind = 'f' AND NOT (s.operation = 'remove' AND u.src = s.partition) ORDER BY u.i LOOP
        -- With shard_views, the rows that leave it (adding) are hidden on its
        -- shard instead, and the rows that enter it (removing) are there,
        -- hidden: it is pointed at the view of the rows its bucket has from
        -- now on (reshard_shard_views).
        IF s.hidden_keys[r.bucket + 1] IS NOT NULL THEN
            EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name
            USING s, CASE s.operation WHEN 'add' THEN 'shown' ELSE 'all' END, r.src;
            EXECUTE format('ALTER FOREIGN TABLE %s OPTIONS (SET table_name %L)', r.src::regclass, name);
            CONTINUE;
        END IF;
        IF s.operation = 'add' THEN
            moved_count := coalesce((moving -> r.bucket::text ->> 2)::bigint, 0);
            moved_sum := coalesce((moving -> r.bucket::text ->> 3)::numeric, 0);
            IF moved_count > 0 THEN
                -- (the keys go to the shard's server as one array parameter)
                EXECUTE format('WITH d AS (DELETE FROM ONLY %1$s AS t WHERE (%2$s) = ANY (ARRAY(SELECT pg_catalog.unnest($1::%3$s))) RETURNING t.*)
                                SELECT count(*), coalesce(sum(%4$s.reshard_row_image_hash(ROW(%5$s))), 0) FROM d AS t',
                               r.src::regclass, s.key, moving -> r.bucket::text ->> 1, ext, cols)
                INTO deleted_count, deleted_sum
                USING moving -> r.bucket::text ->> 0;
                IF deleted_count <> moved_count OR deleted_sum <> moved_sum THEN
                    RAISE EXCEPTION 'the rows of % that move from % to % were changed on its server during the resharding',
                                    s.parent_name, r.src::regclass, s.partition::regclass
                        USING ERRCODE = 'data_corrupted',
                              DETAIL = format('%s rows copied, %s found to delete (or the same count, other values): written directly on the shard, not through %s.  Nothing was swapped; the table is as it was.',
                                              moved_count, deleted_count, s.parent_name);
                END IF;
            END IF;
        ELSIF s.shadows[r.bucket + 1] IS NOT NULL THEN
            -- (in batches: reshard_transfer_table)
            EXECUTE format('SELECT %s.reshard_transfer_table($1, $2)', ext) INTO target USING s, r.src;
            EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s',
                           target, insert_cols, insert_cols, s.shadows[r.bucket + 1]::regclass);
            EXECUTE format('DROP FOREIGN TABLE %s', target);
        END IF;
    END LOOP;
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
    -- to the new ones) and dropped by reshard_phase_finish after the commit:
    -- dropping them here took most of the time under the lock (and of the
    -- commit: their files).  No write reaches them: the parent's name is
    -- the new parent's.  With foreign keys of its own (their triggers on
    -- the tables they refer to would still check the old rows), or with no
    -- partition left to drop, dropped here.
    IF replaced <> '{}' AND own_foreign_keys IS NULL THEN
        FOR r IN SELECT CASE WHEN k = 's' THEN 'STATISTICS' WHEN k IN ('i', 'I') THEN 'INDEX' ELSE 'TABLE' END AS kind,
                        object_name, 'reshard_old_' || object_oid || CASE WHEN taken THEN '_' || md5(random()::text) ELSE '' END AS new_name
                 FROM (SELECT c.relkind::text, c.oid::regclass::text, c.oid,
                              EXISTS (SELECT FROM pg_class t WHERE t.relnamespace = c.relnamespace
                                      AND t.relname = 'reshard_old_' || c.oid)
                       FROM pg_class c
                       WHERE c.oid = ANY (s.parent || replaced)
                          OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = ANY (s.parent || replaced))
                       UNION ALL
                       SELECT 's', format('%I.%I', x.stxnamespace::regnamespace, x.stxname), x.oid,
                              EXISTS (SELECT FROM pg_statistic_ext t WHERE t.stxnamespace = x.stxnamespace
                                      AND t.stxname = 'reshard_old_' || x.oid)
                       FROM pg_statistic_ext x WHERE x.stxrelid = ANY (s.parent || replaced)) AS o(k, object_name, object_oid, taken)
                 ORDER BY object_oid LOOP
            EXECUTE format('ALTER %s %s RENAME TO %I', r.kind, r.object_name, r.new_name);
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
            EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name USING s, 'key', target;
            key_indexes := key_indexes || ARRAY(SELECT x.indexrelid::regclass::text FROM pg_index x
                                                JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = target AND c.relname = name);
        END IF;
        CONTINUE WHEN target = ANY (attached);
        EXECUTE format('ALTER TABLE %s ATTACH PARTITION %s %s', s.new_parent::regclass, target, format(s.new_bound, b));
        EXECUTE format('SELECT %s.reshard_object_name($1, $2, $3)', ext) INTO name USING s, 'bound', s.shadows[b + 1];
        IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = target AND conname = name) THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target, name);
        END IF;
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
