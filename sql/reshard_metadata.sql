--
-- What resharding carries over to the new parent, compared before and
-- after from the catalogs: owner, privileges (table and columns),
-- constraints and indexes under their own names, foreign keys, statistics
-- targets and objects, column options, comments, replica identity,
-- publications.  The partitions are the same tables, their indexes and
-- foreign keys attached again, not duplicated.  The parent's OID changes.
-- expected/reshard_metadata_1.out is PostgreSQL 18's: its NOT NULL
-- constraints are rows of pg_constraint, and the owner holds MAINTAIN (17).
--
SET client_min_messages = error;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE regress_meta_owner;
CREATE ROLE regress_meta_reader;
CREATE ROLE regress_meta_writer;
GRANT CREATE ON SCHEMA public TO regress_meta_owner;

CREATE TABLE tenants (id int PRIMARY KEY);
INSERT INTO tenants SELECT generate_series(0, 9);
CREATE TABLE orders (id bigint NOT NULL,
                     tenant int NOT NULL CONSTRAINT "Tenant known" REFERENCES tenants ON DELETE CASCADE DEFERRABLE,
                     note text DEFAULT 'none' COLLATE "C", amount numeric CONSTRAINT positive_amount CHECK (amount > 0),
                     doubled numeric GENERATED ALWAYS AS (amount * 2) STORED)
    PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE orders_0 PARTITION OF orders FOR VALUES IN (0);
CREATE TABLE orders_1 PARTITION OF orders FOR VALUES IN (1);
ALTER TABLE orders_0 ADD PRIMARY KEY (id);
ALTER TABLE orders_1 ADD PRIMARY KEY (id);
INSERT INTO orders (id, tenant, note, amount) SELECT i, i % 10, 'order ' || i, i FROM generate_series(1, 2000) AS i;
CREATE INDEX my_note_index ON orders (note);
CREATE INDEX orders_lower_note ON orders (lower(note)) WHERE amount > 10;
COMMENT ON INDEX my_note_index IS 'by note';
-- (a name that reads like part of an index definition: kept as it is)
CREATE INDEX "v ON ONLY x" ON orders (amount);
CREATE STATISTICS orders_stats (ndistinct) ON tenant, note FROM orders;
ALTER STATISTICS orders_stats SET STATISTICS 500;
COMMENT ON STATISTICS orders_stats IS 'tenant and note';
ALTER TABLE orders ALTER COLUMN note SET STATISTICS 1000;
ALTER TABLE orders ALTER COLUMN tenant SET (n_distinct_inherited = 10);
COMMENT ON TABLE orders IS 'one row per order';
COMMENT ON COLUMN orders.note IS 'free text';
COMMENT ON CONSTRAINT positive_amount ON orders IS 'no free orders';
COMMENT ON CONSTRAINT "Tenant known" ON orders IS 'every order has a tenant';
ALTER TABLE orders_1 RENAME CONSTRAINT "Tenant known" TO orders_1_tenant;
ALTER TABLE orders REPLICA IDENTITY FULL;
-- (Published through the parent: the rows that move between partitions are
-- not changes.  The table's owner owns them: the resharded table is added
-- to them again as the owner.)
CREATE PUBLICATION orders_pub FOR TABLE orders WITH (publish_via_partition_root = true);
CREATE PUBLICATION orders_cols FOR TABLE orders (id, tenant, amount)
    WITH (publish_via_partition_root = true, publish = 'insert');
ALTER PUBLICATION orders_pub OWNER TO regress_meta_owner;
ALTER PUBLICATION orders_cols OWNER TO regress_meta_owner;
GRANT SELECT ON orders TO regress_meta_reader;
GRANT INSERT, UPDATE ON orders TO regress_meta_writer WITH GRANT OPTION;
GRANT SELECT (id, note), UPDATE (note) ON orders TO PUBLIC;
GRANT REFERENCES ON tenants TO regress_meta_owner;
ALTER TABLE orders OWNER TO regress_meta_owner;
ALTER TABLE orders_0 OWNER TO regress_meta_owner;
ALTER TABLE orders_1 OWNER TO regress_meta_owner;
ALTER STATISTICS orders_stats OWNER TO regress_meta_owner;
REVOKE TRUNCATE ON orders FROM regress_meta_owner;

-- Everything about a table that must survive, by name, from the catalogs.
CREATE FUNCTION pg_temp.describe(t regclass) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT 'owner ' || pg_get_userbyid(relowner) FROM pg_class WHERE oid = t
    UNION ALL SELECT 'comment ' || obj_description(t, 'pg_class')
    UNION ALL SELECT 'replica identity ' || relreplident::text FROM pg_class WHERE oid = t
    UNION ALL SELECT format('grant %s to %s%s by %s', a.privilege_type,
                           CASE WHEN a.grantee = 0 THEN 'public' ELSE pg_get_userbyid(a.grantee) END,
                           CASE WHEN a.is_grantable THEN ' with grant option' ELSE '' END, pg_get_userbyid(a.grantor))
              FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = t
    UNION ALL SELECT format('column %s %s not null %s default %s statistics %s options %s collation %s comment %s acl %s',
                            a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                            pg_get_expr(d.adbin, d.adrelid), coalesce(a.attstattarget, -1),	-- the default: NULL from 17 on
                            array(SELECT o FROM unnest(a.attoptions) AS o WHERE o NOT LIKE 'pg_attver=%'), a.attcollation::regcollation,
                            col_description(t, a.attnum), a.attacl)
              FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              WHERE a.attrelid = t AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT format('constraint %s %s comment %s', conname, pg_get_constraintdef(oid),
                            obj_description(oid, 'pg_constraint'))
              FROM pg_constraint WHERE conrelid = t
    UNION ALL SELECT format('index %s comment %s', pg_get_indexdef(indexrelid), obj_description(indexrelid, 'pg_class'))
              FROM pg_index WHERE indrelid = t
    UNION ALL SELECT format('statistics %s target %s comment %s', pg_get_statisticsobjdef(oid), stxstattarget,
                            obj_description(oid, 'pg_statistic_ext'))
              FROM pg_statistic_ext WHERE stxrelid = t
    UNION ALL SELECT format('publication %s columns %s filter %s', p.pubname,
                            (SELECT array_agg(attname ORDER BY attnum) FROM pg_attribute
                             WHERE attrelid = t AND attnum = ANY (r.prattrs::int2[])), pg_get_expr(r.prqual, r.prrelid))
              FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = t
    UNION ALL SELECT format('partition %s: index %s attached %s', i.indrelid::regclass, i.indexrelid::regclass,
                            EXISTS (SELECT FROM pg_inherits h WHERE h.inhrelid = i.indexrelid))
              FROM pg_index i WHERE i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = t)
    UNION ALL SELECT format('partition %s: constraint %s %s inherited %s attached %s', conrelid::regclass, conname,
                            pg_get_constraintdef(oid), coninhcount, conparentid <> 0)
              FROM pg_constraint WHERE conrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = t)
$$;
ANALYZE orders;
CREATE TEMP TABLE before AS SELECT pg_temp.describe('orders') AS line;
CREATE TEMP TABLE before_oid AS SELECT 'orders'::regclass::oid AS oid;
CREATE TEMP TABLE rows_before AS SELECT id, tenant, note, amount, doubled FROM orders;
SELECT line AS compared FROM before ORDER BY 1;

CREATE TABLE orders_2 (LIKE orders INCLUDING ALL);
ALTER TABLE orders_2 ADD PRIMARY KEY (id);
ALTER TABLE orders_2 OWNER TO regress_meta_owner;
-- A foreign key to a partition (one cannot refer to the parent: a table
-- partitioned by an expression has no unique constraint) stops it up front:
-- the rows it refers to may move.
CREATE TABLE order_lines (order_id bigint REFERENCES orders_0);
SET client_min_messages = warning;
CALL reshard_add_partition('orders', 'orders_2');
DROP TABLE order_lines;
SET client_min_messages = error;
CALL reshard_add_partition('orders', 'orders_2');

-- Differences, both ways, apart from the new partition.
SELECT line AS lost FROM before EXCEPT SELECT pg_temp.describe('orders') ORDER BY 1;
SELECT line AS new FROM (SELECT pg_temp.describe('orders') AS line EXCEPT SELECT line FROM before) AS n
WHERE line NOT LIKE 'partition orders_2:%' ORDER BY 1;
SELECT line AS new_partition FROM pg_temp.describe('orders') AS line WHERE line LIKE 'partition orders_2:%' ORDER BY 1;
SELECT pg_get_partkeydef('orders'::regclass) AS partition_key,
       'orders'::regclass::oid <> (SELECT oid FROM before_oid) AS new_oid,
       (SELECT count(*) FROM (SELECT id, tenant, note, amount, doubled FROM orders
                              EXCEPT ALL SELECT * FROM rows_before) AS d) AS rows_changed,
       (SELECT count(*) FROM orders) = (SELECT count(*) FROM rows_before) AS same_count;
-- The parent had planner statistics: the new one has them (autovacuum would
-- never gather them for a partitioned table).
SELECT count(*) AS parent_columns_with_statistics FROM pg_stats
WHERE schemaname = 'public' AND tablename = 'orders' AND inherited;

-- And the same back to two buckets.
CREATE TEMP TABLE at3 AS SELECT pg_temp.describe('orders') AS line;
CALL reshard_remove_partition('orders');
SELECT line AS lost FROM at3 WHERE line NOT LIKE 'partition orders_2:%'
EXCEPT SELECT pg_temp.describe('orders') ORDER BY 1;
SELECT line AS differs_from_the_start FROM (SELECT pg_temp.describe('orders') AS line EXCEPT SELECT line FROM before) AS n
ORDER BY 1;
SELECT (SELECT count(*) FROM orders_2) AS orders_2_rows,
       (SELECT count(*) FROM (SELECT id, tenant, note, amount, doubled FROM orders
                              EXCEPT ALL SELECT * FROM rows_before) AS d) AS rows_changed;

-- The table's own foreign key holds on the resharded table: its cascade
-- reaches every partition (the new one too), and a row without a tenant is
-- refused.  The other tables' triggers are the parent's only: no partition
-- kept one of its own.
DELETE FROM tenants WHERE id = 9;
SELECT count(*) FILTER (WHERE tenant = 9) AS orders_of_tenant_9, count(*) AS orders FROM orders;
INSERT INTO orders (id, tenant, amount) VALUES (5000, 9, 1);
SELECT t.tgrelid::regclass AS relation, count(*) AS foreign_key_triggers
FROM pg_trigger t JOIN pg_constraint c ON c.oid = t.tgconstraint
WHERE c.contype = 'f'
  AND c.conrelid IN (SELECT 'orders'::regclass UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = 'orders'::regclass)
GROUP BY 1 ORDER BY 1::text;

-- Refused before anything is made: a foreign key of the new partition's
-- own (orders_2 kept the one it had when it was detached), one of an old
-- partition's own (the table that takes its place would not have it), and
-- one whose table the owner may no longer refer to.
SET client_min_messages = warning;
CALL reshard_add_partition('orders', 'orders_2');
ALTER TABLE orders_2 DROP CONSTRAINT "Tenant known";
ALTER TABLE orders_0 ADD CONSTRAINT orders_0_tenant_again FOREIGN KEY (tenant) REFERENCES tenants;
CALL reshard_add_partition('orders', 'orders_2');
ALTER TABLE orders_0 DROP CONSTRAINT orders_0_tenant_again;
REVOKE REFERENCES ON tenants FROM regress_meta_owner;
CALL reshard_add_partition('orders', 'orders_2');
GRANT REFERENCES (id) ON tenants TO regress_meta_owner;
CALL reshard_add_partition('orders', 'orders_2');
SET client_min_messages = error;
SELECT count(*) AS relations_left FROM pg_class WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%'
  AND relname <> 'reshard_progress';
SELECT count(*) AS orders, count(*) FILTER (WHERE tableoid = 'orders_2'::regclass) AS in_orders_2,
       count(*) FILTER (WHERE tableoid <> format('orders_%s', jumpbackhash(id, 3))::regclass) AS misplaced FROM orders;

DROP PUBLICATION orders_pub, orders_cols;
DROP TABLE orders, orders_2, tenants;
REVOKE CREATE ON SCHEMA public FROM regress_meta_owner;
DROP ROLE regress_meta_owner, regress_meta_reader, regress_meta_writer;
DELETE FROM reshard_state;  -- the state of this test's reshardings (a row stays after the end)
