-- An index of the parent on the key alone, and a new partition without
-- one: the engine's index on the key of the new partition (made for the
-- catch-up) is the index ATTACH PARTITION takes as the partition's of the
-- parent's.  The cutover keeps it, named after the partition (numbered
-- where the name is taken), instead of dropping it (which PostgreSQL
-- refused: "cannot drop index ... because index items_id_idx requires it",
-- and every addition failed and was undone).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
DROP SCHEMA IF EXISTS adopted CASCADE;
RESET client_min_messages;
CREATE SCHEMA adopted;
CREATE TABLE adopted.items (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 3));
SELECT format('CREATE TABLE adopted.items_%s PARTITION OF adopted.items FOR VALUES IN (%s)', b, b)
FROM generate_series(0, 2) AS b \gexec
CREATE TABLE adopted.items_3 (id bigint NOT NULL, v text);
CREATE INDEX items_id_idx ON adopted.items (id);
INSERT INTO adopted.items SELECT i, 'v' || i FROM generate_series(1, 3000) AS i;
-- (a relation already of the name the kept index gets first)
CREATE TABLE adopted.items_3_key_idx ();

CALL reshard_add_partition('adopted.items', 'adopted.items_3');
-- Every row once, in its partition; each partition has its index of
-- items_id_idx, and items_3's is the engine's, renamed.
SELECT count(*), count(DISTINCT id), sum(id) FROM adopted.items;
SELECT sum(misplaced_rows) AS misplaced FROM reshard_check('adopted.items');
SELECT x.indrelid::regclass AS partition, x.indexrelid::regclass AS index, h.inhparent::regclass AS index_of
FROM pg_index x LEFT JOIN pg_inherits h ON h.inhrelid = x.indexrelid
WHERE x.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'adopted.items'::regclass)
ORDER BY x.indrelid::regclass::text;
SELECT count(*) AS engine_relations_left FROM pg_class
WHERE relnamespace = 'adopted'::regnamespace AND relname LIKE 'reshard\_%';
-- Removed again: the rows back in three partitions.
CALL reshard_remove_partition('adopted.items', 'adopted.items_3');
SELECT count(*), count(DISTINCT id), sum(id) FROM adopted.items;

SET client_min_messages = warning;
DROP SCHEMA adopted CASCADE;
DELETE FROM reshard_state WHERE parent_name LIKE 'adopted.%';
