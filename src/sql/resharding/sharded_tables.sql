-- src/sql/resharding/sharded_tables.sql
--	the view sharded_tables: every table partitioned by the extension

CREATE VIEW sharded_tables AS
SELECT c.oid::regclass AS parent, l.method, l.key, l.buckets, l.removed, l.operator_class,
       array_agg(l.partition ORDER BY l.bucket) FILTER (WHERE l.partition IS NOT NULL) AS partitions
FROM pg_catalog.pg_partitioned_table pt
JOIN pg_catalog.pg_class c ON c.oid = pt.partrelid
CROSS JOIN LATERAL sharding_layout(c.oid, true) AS l
GROUP BY 1, 2, 3, 4, 5, 6;

COMMENT ON VIEW sharded_tables IS
'the tables partitioned by the extension''s functions or operator classes: key, method, bucket count, removed buckets, operator class, partitions in bucket order';
