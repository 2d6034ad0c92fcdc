-- src/sql/placement/partition_foreign_keys.sql
--	A foreign key between co-located tables kept by each partition, to the
--	partition of the same bucket of the table it refers to
--	(docs/scaling-out.md, "Foreign keys between co-located tables")

-- PostgreSQL enforces no foreign key on a foreign table, and makes none that
-- refers to one: a table whose foreign key refers to another, or that
-- another's refers to, can have no partition on a server.  Between
-- co-located tables (colocate) whose key is part of the foreign key, a row
-- and the row it refers to have the same key, so the same bucket: the
-- foreign key holds if each partition of the table refers to the
-- partition of the same bucket of the other (order_items_3 to orders_3),
-- which a server can enforce where it holds both.  foreign_keys_to_partitions
-- hands a table's foreign keys to its partitions so, and records each here,
-- by which foreign_keys_to_parent gives them back.  Each row: the table (the
-- one that refers), the constraint's name, the table it refers to, and its
-- definition in three parts: its columns and the columns it refers to
-- (quoted, separated by ", ") and what follows them (MATCH, ON UPDATE, ON
-- DELETE, DEFERRABLE), as pg_get_constraintdef wrote them.  Written only by
-- those two procedures (C, as this table's owner), guarded and dumped as
-- partition_unique_constraints is; a dropped table takes its rows with it
-- (placement_records_drop, colocation.sql).
CREATE TABLE partition_foreign_keys (
    parent regclass NOT NULL,       -- (by name in a dump: pg_dump dumps the rows)
    name name NOT NULL,
    referenced regclass NOT NULL,
    columns text NOT NULL,
    referenced_columns text NOT NULL,
    options text NOT NULL,
    PRIMARY KEY (parent, name)
);
REVOKE ALL ON partition_foreign_keys FROM PUBLIC;
GRANT SELECT ON partition_foreign_keys TO PUBLIC;
CREATE TRIGGER only_the_engine_writes BEFORE INSERT OR UPDATE OR DELETE ON partition_foreign_keys
FOR EACH ROW EXECUTE FUNCTION placement_records_guard('foreign_keys_to_partitions and foreign_keys_to_parent write it.');
ALTER TABLE partition_foreign_keys ENABLE ALWAYS TRIGGER only_the_engine_writes;

SELECT pg_catalog.pg_extension_config_dump('partition_foreign_keys', '');

COMMENT ON TABLE partition_foreign_keys IS
'the foreign keys between co-located tables that their partitions keep, each to the partition of the same bucket (foreign_keys_to_partitions): table, name, table referred to, columns, columns referred to, options';

-- The checks of foreign_keys_to_partitions (to_partitions) and
-- foreign_keys_to_parent, as the table's owner, and what they run: rows
-- (step, statement, and for a foreign key handed to the partitions, its
-- record), step being
--   hand      the statements of the one transaction that hands the foreign
--             keys over (in their order): to the partitions, the table's
--             foreign key dropped and each partition's added NOT VALID (no
--             row read); to the table, each partition's dropped and the
--             table's added (PostgreSQL checks every row meanwhile);
--   validate  a partition's foreign key validated (VALIDATE CONSTRAINT),
--             each in a transaction of its own, which blocks no writer.
-- To the partitions: a table partitioned by the extension, each foreign
-- key of which refers to a table co-located with it (or to itself) by
-- columns that include the key, in the same place (the key refers to the
-- key: the row referred to is in the same bucket), of a deterministic
-- collation, ON DELETE NO ACTION or RESTRICT (a key changed through the
-- table referred to moves its row to another partition: a delete for a
-- partition's foreign key, which would cascade where the table's refuses
-- the change), and not ON UPDATE SET NULL or SET DEFAULT (they set the key
-- of the rows that refer, which the partition's action cannot move to
-- another partition); the tables of the same owner, every partition of
-- both here, no operation of the engine in progress on either.  Called
-- again, it validates what a call cut short left NOT VALID.  To the table:
-- every partition of both here, with its foreign keys, and the table
-- referred to with a unique constraint on the columns referred to
-- (unique_constraints_to_parent gives it back).  Not revoked from PUBLIC:
-- the procedures call it as the table's owner, any role; it reads the
-- catalog and raises errors.
CREATE FUNCTION partition_foreign_key_plan(parent regclass, to_partitions boolean)
RETURNS TABLE (step text, statement text, name name, referenced regclass, columns text, referenced_columns text,
               options text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    bad text;
    keys record;
    head text;
    definition text;
    key_column int2;
BEGIN
    IF NOT EXISTS (SELECT FROM @extschema@.sharding_layout(parent, true) WHERE bucket IS NOT NULL) THEN
        RAISE EXCEPTION 'table % is not partitioned by the extension', parent
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'sharded_tables lists the tables partitioned by its functions and operator classes.';
    END IF;
    -- (the tables it refers to, or that the recorded keys refer to)
    SELECT string_agg(DISTINCT format('%s is in an operation in progress', p."table"), '; ') INTO bad
    FROM @extschema@.reshard_progress p
    WHERE p.phase NOT IN ('done', 'aborted')
      AND (p.relid = partition_foreign_key_plan.parent
           OR p.relid IN (SELECT c.confrelid FROM pg_constraint c WHERE c.conrelid = partition_foreign_key_plan.parent
                                                                      AND c.contype = 'f' AND c.conparentid = 0)
           OR p.relid IN (SELECT k.referenced FROM @extschema@.partition_foreign_keys k
                          WHERE k.parent = partition_foreign_key_plan.parent));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'cannot hand the foreign keys of % over: %', parent, bad
            USING ERRCODE = 'object_in_use',
                  HINT = 'See reshard_progress; finish it (call it again) or reshard_abort it first.';
    END IF;
    IF to_partitions THEN
        SELECT a.attnum INTO key_column
        FROM @extschema@.sharding_layout(parent) AS l
        JOIN pg_attribute a ON a.attrelid = parent AND quote_ident(a.attname) = l.key AND a.attnum > 0
        LIMIT 1;
        SELECT string_agg(x, '; ') INTO bad FROM (
            SELECT format('foreign key %I refers to %s, which is not co-located with it', c.conname, c.confrelid::regclass) AS x
            FROM pg_constraint c
            WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0
              AND c.confrelid <> parent AND c.confrelid <> ALL (@extschema@.colocated_with(parent))
            UNION ALL
            SELECT format('foreign key %I does not refer to the key of %s by its key', c.conname, c.confrelid::regclass)
            FROM pg_constraint c
            WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0
              AND (key_column IS NULL OR NOT EXISTS (
                      SELECT FROM unnest(c.conkey, c.confkey) AS k(mine, theirs)
                      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.theirs
                      JOIN @extschema@.sharding_layout(c.confrelid) AS l ON quote_ident(a.attname) = l.key
                      WHERE k.mine = key_column))
            UNION ALL
            -- (a key changed through the table moves the row to another
            -- partition: for the foreign keys of partitions that is a delete,
            -- which must refuse, as the table's refuses the change, not
            -- delete or change the rows that refer to it)
            SELECT format('foreign key %I is ON DELETE %s', c.conname,
                          CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END)
            FROM pg_constraint c
            WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0 AND c.confdeltype IN ('c', 'n', 'd')
            UNION ALL
            -- (the partition's action would update the rows that refer in
            -- their partition, which the key they get may not belong to)
            SELECT format('foreign key %I is ON UPDATE %s', c.conname,
                          CASE c.confupdtype WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END)
            FROM pg_constraint c
            WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0 AND c.confupdtype IN ('n', 'd')
            UNION ALL
            SELECT format('its key is of collation %s, which is not deterministic', o.collname)
            FROM pg_attribute a JOIN pg_collation o ON o.oid = a.attcollation
            WHERE a.attrelid = parent AND a.attnum = key_column AND NOT o.collisdeterministic
            UNION ALL
            SELECT format('%s is owned by %s, not by %s, the owner of %s', c.confrelid::regclass, r.relowner::regrole,
                          t.relowner::regrole, parent)
            FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid JOIN pg_class t ON t.oid = c.conrelid
            WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0 AND r.relowner <> t.relowner
            UNION ALL
            SELECT format('partition %s is on server "%s"', i.inhrelid::regclass, v.srvname)
            FROM pg_inherits i JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
            JOIN pg_foreign_server v ON v.oid = f.ftserver
            WHERE i.inhparent = parent
               OR i.inhparent IN (SELECT c.confrelid FROM pg_constraint c
                                  WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0)) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot hand the foreign keys of % to its partitions: %', parent, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Each partition keeps a foreign key to the partition of the same bucket of the table it refers to, which must be co-located with it (colocate), refer to it by its key, and be here; a key changed through the table it refers to is a delete for it, so it must refuse deletes (NO ACTION or RESTRICT), as the table''s refuses the change, and not set the key of the rows that refer on update (SET NULL, SET DEFAULT).',
                      HINT = 'See docs/scaling-out.md, "Foreign keys between co-located tables".';
        END IF;
        FOR keys IN SELECT c.oid, c.conname, c.confrelid,
                           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS mine,
                           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS theirs
                    FROM pg_constraint c
                    WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0 ORDER BY c.conname LOOP
            -- (what follows the columns referred to, as PostgreSQL writes it)
            definition := pg_get_constraintdef(keys.oid);
            head := format('FOREIGN KEY (%s) REFERENCES %s(%s)', keys.mine, keys.confrelid::regclass, keys.theirs);
            IF NOT starts_with(definition, head) THEN
                RAISE EXCEPTION 'cannot read foreign key % of %: % does not begin with %', keys.conname, parent, definition, head;
            END IF;
            RETURN QUERY SELECT 'hand', format('ALTER TABLE %s DROP CONSTRAINT %I', parent, keys.conname),
                                keys.conname, keys.confrelid::regclass, keys.mine, keys.theirs,
                                substr(definition, length(head) + 1);
            RETURN QUERY
                SELECT 'hand', format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%s) REFERENCES %s(%s)%s NOT VALID',
                                      mine.partition, keys.conname, keys.mine, theirs.partition, keys.theirs,
                                      regexp_replace(substr(definition, length(head) + 1), ' NOT VALID$', '')),
                       NULL::name, keys.confrelid::regclass, NULL, NULL, NULL
                FROM @extschema@.sharding_layout(parent) AS mine
                JOIN @extschema@.sharding_layout(keys.confrelid) AS theirs USING (bucket)
                ORDER BY bucket;
        END LOOP;
        -- (the partitions' foreign keys left NOT VALID, by this call or one cut short)
        RETURN QUERY
            SELECT 'validate', format('ALTER TABLE %s VALIDATE CONSTRAINT %I', mine.partition, k.name),
                   NULL::name, NULL::regclass, NULL, NULL, NULL
            FROM (SELECT c.conname AS name, true AS handed FROM pg_constraint c
                  WHERE c.conrelid = parent AND c.contype = 'f' AND c.conparentid = 0
                  UNION ALL
                  SELECT k.name, false FROM @extschema@.partition_foreign_keys k WHERE k.parent = partition_foreign_key_plan.parent) AS k
            CROSS JOIN @extschema@.sharding_layout(parent) AS mine
            WHERE k.handed
               OR NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = mine.partition AND c.conname = k.name
                                                            AND c.contype = 'f' AND c.convalidated)
            ORDER BY mine.bucket, k.name;
        IF NOT FOUND THEN
            RAISE NOTICE 'table % has no foreign key%', parent,
                CASE WHEN EXISTS (SELECT FROM @extschema@.partition_foreign_keys k WHERE k.parent = partition_foreign_key_plan.parent)
                     THEN ' of its own: its partitions keep them already' ELSE '' END;
        END IF;
    ELSE
        SELECT string_agg(x, '; ') INTO bad FROM (
            SELECT format('partition %s is on server "%s"', i.inhrelid::regclass, v.srvname) AS x
            FROM pg_inherits i JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
            JOIN pg_foreign_server v ON v.oid = f.ftserver
            WHERE i.inhparent = partition_foreign_key_plan.parent
               OR i.inhparent IN (SELECT k.referenced FROM @extschema@.partition_foreign_keys k
                                  WHERE k.parent = partition_foreign_key_plan.parent)
            UNION ALL
            SELECT format('partition %s lacks foreign key %I', mine.partition, k.name)
            FROM @extschema@.partition_foreign_keys k CROSS JOIN @extschema@.sharding_layout(partition_foreign_key_plan.parent) AS mine
            WHERE k.parent = partition_foreign_key_plan.parent
              AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = mine.partition AND c.conname = k.name
                                                            AND c.contype = 'f')
            UNION ALL
            SELECT format('%s has no PRIMARY KEY or UNIQUE constraint on (%s) for foreign key %I', k.referenced,
                          k.referenced_columns, k.name)
            FROM @extschema@.partition_foreign_keys k
            WHERE k.parent = partition_foreign_key_plan.parent
              AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = k.referenced AND c.contype IN ('p', 'u')
                                AND (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attname)
                                     FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey))
                                    = (SELECT string_agg(x, ', ' ORDER BY x) FROM unnest(string_to_array(k.referenced_columns, ', ')) AS x))
            UNION ALL
            SELECT format('it has a constraint %I already', c.conname)
            FROM pg_constraint c JOIN @extschema@.partition_foreign_keys k
                 ON k.parent = partition_foreign_key_plan.parent AND k.name = c.conname
            WHERE c.conrelid = partition_foreign_key_plan.parent) AS t;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot give % its foreign keys back: %', parent, bad
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'The table''s foreign key refers to the table its partitions'' refer to, which needs a unique constraint on the columns referred to; every partition of both must be here.',
                      HINT = 'Move their partitions here first (CALL partition_move(partition, NULL)), and give the table referred to its unique constraints back (CALL unique_constraints_to_parent(table)).';
        END IF;
        RETURN QUERY
            SELECT 'hand', format('ALTER TABLE %s DROP CONSTRAINT %I', mine.partition, k.name),
                   NULL::name, k.referenced, NULL, NULL, NULL
            FROM @extschema@.partition_foreign_keys k CROSS JOIN @extschema@.sharding_layout(partition_foreign_key_plan.parent) AS mine
            WHERE k.parent = partition_foreign_key_plan.parent
            ORDER BY k.name, mine.bucket;
        RETURN QUERY
            SELECT 'hand', format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%s) REFERENCES %s(%s)%s', partition_foreign_key_plan.parent, k.name,
                                  k.columns, k.referenced, k.referenced_columns, k.options),
                   NULL::name, k.referenced, NULL, NULL, NULL
            FROM @extschema@.partition_foreign_keys k
            WHERE k.parent = partition_foreign_key_plan.parent
            ORDER BY k.name;
        IF NOT FOUND THEN
            RAISE NOTICE 'the partitions of % keep no foreign key of it', parent;
        END IF;
    END IF;
END
$function$;

COMMENT ON FUNCTION partition_foreign_key_plan(regclass, boolean) IS
'the checks of foreign_keys_to_partitions and foreign_keys_to_parent, and the statements they run (internal)';

CREATE PROCEDURE foreign_keys_to_partitions(parent regclass, cutover_budget interval DEFAULT '500 ms',
                                            cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'foreign_keys_to_partitions';

COMMENT ON PROCEDURE foreign_keys_to_partitions(regclass, interval, int) IS
'hands each foreign key of a table partitioned by the extension, which refers to a table co-located with it by its key, to its partitions: each partition refers to the partition of the same bucket of the other table, so that the partitions of a bucket can move to a server together; the table''s foreign key replaced in one transaction that holds both tables at most cutover_budget, tried at most cutover_attempts times (no row read), then each partition''s validated in a transaction of its own, which blocks no writer (see docs/scaling-out.md)';

CREATE PROCEDURE foreign_keys_to_parent(parent regclass, cutover_budget interval DEFAULT '500 ms',
                                        cutover_attempts int DEFAULT 10)
LANGUAGE C AS 'MODULE_PATHNAME', 'foreign_keys_to_parent';

COMMENT ON PROCEDURE foreign_keys_to_parent(regclass, interval, int) IS
'gives a table back the foreign keys that foreign_keys_to_partitions handed to its partitions, once every partition of both tables is on this server and the table referred to has its unique constraint: in one transaction, in which PostgreSQL checks every row (writers of both tables wait for it), tried at most cutover_attempts times, each waiting for the tables at most cutover_budget (see docs/scaling-out.md)';

-- Whether a foreign key (a constraint's OID) is one of those that
-- foreign_keys_to_partitions handed to the partitions: of a partition of
-- a table whose record names it, to a partition of the table it records.
-- A move takes it with the partitions of the bucket (move_foreign_keys).
CREATE FUNCTION partition_foreign_key_kept(constraint_oid oid) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT EXISTS (
        SELECT FROM pg_constraint c
        JOIN pg_inherits i ON i.inhrelid = c.conrelid
        JOIN pg_inherits r ON r.inhrelid = c.confrelid
        JOIN @extschema@.partition_foreign_keys k
             ON k.parent = i.inhparent AND k.name = c.conname AND k.referenced = r.inhparent
        WHERE c.oid = constraint_oid AND c.contype = 'f')
$function$;

COMMENT ON FUNCTION partition_foreign_key_kept(oid) IS
'whether a foreign key is one that foreign_keys_to_partitions handed to a partition (internal)';

-- The foreign keys that a moved partition keeps (partition_foreign_keys,
-- s's table the one that refers), made where it went, as the table's
-- owner.  action:
--   cutover  in the transaction that cuts over the partitions of the
--            bucket of every table linked (moving: their tables), after
--            each one's cutover routine: refused unless every table that
--            such a foreign key links to s's is among them; each made NOT
--            VALID between the tables that took the partitions' places
--            (here by ALTER TABLE; on a server in the same remote
--            transaction as the cutover's writes there: move_destination_guard
--            'link'), and dropped from the partition left here (the
--            finish drops it, and the one it referred to);
--   finish   each validated, here or on the server (through dblink), which
--            blocks no writer.
-- Not revoked from PUBLIC: the move's routines call it as the table's
-- owner, any role; it does only what its caller may do.
CREATE FUNCTION move_foreign_keys(s reshard_state, action text, moving regclass[]) RETURNS reshard_state
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    fk record;
    bad text;
    mine regclass;      -- the partition of s's bucket, after the cutover
BEGIN
    PERFORM @extschema@.reshard_expect_phase(s, VARIADIC ARRAY['cutover', 'finish']);
    IF action = 'cutover' THEN
        SELECT string_agg(DISTINCT l.t::text, ', ') INTO bad
        FROM (SELECT k.referenced AS t FROM @extschema@.partition_foreign_keys k WHERE k.parent = s.parent
              UNION SELECT k.parent FROM @extschema@.partition_foreign_keys k WHERE k.referenced = s.parent) AS l
        WHERE l.t <> s.parent AND l.t <> ALL (coalesce(moving, '{}'));
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'cannot cut the partition of bucket % of % over without those of %, which foreign keys link to it',
                            s.bucket, s.parent::regclass, bad
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'partition_move and rebalance move the partitions of a bucket of co-located tables together.';
        END IF;
    END IF;
    SELECT l.partition INTO STRICT mine FROM @extschema@.sharding_layout(s.parent) AS l WHERE l.bucket = s.bucket;
    FOR fk IN SELECT * FROM @extschema@.partition_foreign_keys k WHERE k.parent = s.parent ORDER BY k.name LOOP
        IF action = 'cutover' THEN
            IF (SELECT relkind FROM pg_class WHERE oid = s.partition) = 'r' THEN
                EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I', s.partition::regclass, fk.name);
            END IF;
            IF s.server IS NULL THEN
                EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%s) REFERENCES %s(%s)%s NOT VALID', mine,
                               fk.name, fk.columns,
                               (SELECT l.partition FROM @extschema@.sharding_layout(fk.referenced) AS l WHERE l.bucket = s.bucket),
                               fk.referenced_columns, fk.options);
            END IF;
        ELSIF action = 'finish' THEN
            IF s.server IS NULL THEN
                EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', mine, fk.name);
            ELSE
                EXECUTE @extschema@.reshard_remote_sql(s.server,
                    (SELECT format('SET TRANSACTION READ WRITE; SET LOCAL statement_timeout = 0; ALTER TABLE %I.%I VALIDATE CONSTRAINT %I',
                                   coalesce(o.schema_name, n.nspname), coalesce(o.table_name, c.relname), fk.name)
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     LEFT JOIN LATERAL (
                         SELECT max(t.option_value) FILTER (WHERE t.option_name = 'schema_name') AS schema_name,
                                max(t.option_value) FILTER (WHERE t.option_name = 'table_name') AS table_name
                         FROM pg_foreign_table f, pg_options_to_table(f.ftoptions) AS t WHERE f.ftrelid = c.oid) AS o ON true
                     WHERE c.oid = mine));
            END IF;
        ELSE
            RAISE EXCEPTION 'unknown action %', action;
        END IF;
    END LOOP;
    IF action = 'cutover' AND s.server IS NOT NULL
       AND EXISTS (SELECT FROM @extschema@.partition_foreign_keys k WHERE k.parent = s.parent) THEN
        PERFORM @extschema@.move_destination_guard(s, 'link');
    END IF;
    RETURN s;
END
$function$;

COMMENT ON FUNCTION move_foreign_keys(reshard_state, text, regclass[]) IS
'partition move: the foreign keys a partition keeps made where it went at the cutover, validated at the finish (internal)';
