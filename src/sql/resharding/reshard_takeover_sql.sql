-- src/sql/resharding/reshard_takeover_sql.sql
--	reshard_takeover_sql: the statements that put a shadow table in the place of the table it replaces (internal)

-- The cutover of 1.2's engine (docs/resharding-engine.md) drops each old
-- local partition and puts its shadow in its place, and the old parent and
-- puts the new one in its place (two partitioned tables: their partitions
-- are the engine's business).  The shadow was created
-- CREATE TABLE shadow (LIKE old INCLUDING ALL) in old's tablespace, with
-- old's persistence and access method, by old's owner.  This reads, from
-- the catalogs, what LIKE did not give the shadow and returns the
-- statements that give it, to be executed in order after DROP TABLE old in
-- the same transaction (so call it before the drop):
--   - old's schema and name;
--   - owner;
--   - indexes: each of old's is paired with the shadow's of the same
--     definition, which takes its name (and so does the constraint the index
--     belongs to), comment, storage parameters and statistics targets; the
--     tablespace must be old's already (moving an index copies it);
--   - CHECK constraints (and, on PostgreSQL 18, NOT NULL constraints):
--     names, NOT VALID state (dropped and added again NOT VALID, which reads
--     no row); comments of every constraint;
--   - columns: statistics targets, options (n_distinct, ...), storage,
--     compression, comments;
--   - storage parameters of the table and of its TOAST table, comment,
--     replica identity, the index it is clustered on, row-level security
--     flags;
--   - extended statistics objects: schema, name, owner, target, comment;
--   - privileges of the table and of its columns, exactly, the grantor being
--     the owner (WITH GRANT OPTION, the owner's own revoked privileges,
--     MAINTAIN on PostgreSQL 17 and later);
--   - membership in publications FOR TABLE, with column list and row filter.
-- Everything is read from the catalogs and written schema-qualified and
-- quoted; the cost grows with the number of catalog objects, never with
-- rows, and no code of the table's runs (nor any but built-in functions).
-- Refused with an error, as what no statement gives without reading rows
-- or would be lost: a shadow that is not LIKE old (columns, an index or
-- constraint missing, another tablespace, persistence or access method, an
-- index in another tablespace than its counterpart), and an old table that
-- owns a sequence, a table that has foreign keys of its own, rules,
-- policies, security labels or inheritance other than partitioning (the
-- engine refuses them before it starts).  Not carried over: triggers (the
-- engine's own is on old), foreign keys and other constraints a partition
-- inherits (they come back when the shadow is attached), a partitioned
-- table's own foreign keys (the engine adds them to the partitions and to
-- the new parent after the cutover), planner statistics (until the next
-- ANALYZE), pg_stat counters, OIDs.  An index or constraint of the shadow
-- that old does not have (the engine's own) is left alone.
--
-- The checks and the pairs are reshard_takeover_pairs's; the statements,
-- in this order: the table's schema, name and owner (here), its indexes
-- and constraints (reshard_takeover_indexes), its columns, its own
-- properties and its statistics objects (reshard_takeover_table), its
-- privileges (reshard_takeover_privileges) and its publications (here).
CREATE FUNCTION reshard_takeover_sql(old regclass, shadow regclass) RETURNS text[]
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
-- (called once a partition, its catalog queries planned once: at 128
-- partitions, planning them again each call took a third of its time)
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    orel pg_class;
    srel pg_class;
    nsp name;                   -- old's schema: the shadow's in the end
    tbl text;                   -- the shadow under old's name, qualified
    sql text[] := '{}';
    pairs record;               -- indexes, constraints and statistics objects paired: old's, the shadow's
    -- (of the names objects go through: random, so that no other role can
    -- take one first in the schema)
    temp_suffix text := '_' || left(replace(gen_random_uuid()::text, '-', ''), 16);
BEGIN
    SELECT * INTO pairs FROM @extschema@.reshard_takeover_pairs(old, shadow);
    SELECT * INTO orel FROM pg_class WHERE oid = old;
    SELECT * INTO srel FROM pg_class WHERE oid = shadow;
    nsp := (SELECT nspname FROM pg_namespace WHERE oid = orel.relnamespace);
    tbl := format('%I.%I', nsp, orel.relname);

    -- The table: old's schema and name, old's owner.
    IF srel.relnamespace <> orel.relnamespace THEN
        sql := sql || format('ALTER TABLE %I.%I SET SCHEMA %I',
                             (SELECT nspname FROM pg_namespace WHERE oid = srel.relnamespace), srel.relname, nsp);
    END IF;
    IF srel.relname <> orel.relname THEN
        sql := sql || format('ALTER TABLE %I.%I RENAME TO %I', nsp, srel.relname, orel.relname);
    END IF;
    IF srel.relowner <> orel.relowner THEN
        sql := sql || format('ALTER TABLE %s OWNER TO %I', tbl, pg_get_userbyid(orel.relowner));
    END IF;

    sql := sql || @extschema@.reshard_takeover_indexes(old, shadow, pairs.old_indexes, pairs.shadow_indexes,
                                                       pairs.old_constraints, pairs.shadow_constraints, temp_suffix)
               || @extschema@.reshard_takeover_table(old, shadow, pairs.old_indexes, pairs.shadow_indexes,
                                                     pairs.old_statistics, pairs.shadow_statistics, temp_suffix)
               || @extschema@.reshard_takeover_privileges(old, shadow);

    -- Publications FOR TABLE old, with its column list and row filter.
    SELECT sql || coalesce(array_agg(format('ALTER PUBLICATION %I ADD TABLE %s%s%s', pb.pubname, tbl,
               CASE WHEN pr.prattrs IS NULL THEN ''
                    ELSE ' (' || (SELECT string_agg(format('%I', attname), ', ' ORDER BY attnum) FROM pg_attribute
                                  WHERE attrelid = old AND attnum = ANY (pr.prattrs::int2[])) || ')' END,
               CASE WHEN pr.prqual IS NULL THEN '' ELSE format(' WHERE (%s)', pg_get_expr(pr.prqual, pr.prrelid)) END)
                                     ORDER BY pb.pubname), '{}')
    INTO sql
    FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    WHERE pr.prrelid = old
      AND NOT EXISTS (SELECT FROM pg_publication_rel sr WHERE sr.prpubid = pr.prpubid AND sr.prrelid = shadow);
    RETURN sql;
END
$function$;

COMMENT ON FUNCTION reshard_takeover_sql(regclass, regclass) IS
'the statements that, run in order after DROP TABLE old in the same transaction, give shadow (created LIKE old) old''s name, owner, privileges, options, comments, statistics targets, index and constraint names, replica identity and publications: resharding''s cutover (internal)';

REVOKE ALL ON FUNCTION reshard_takeover_sql(regclass, regclass) FROM PUBLIC;
