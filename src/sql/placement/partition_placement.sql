-- src/sql/placement/partition_placement.sql
--	the view partition_placement: where each partition of each sharded table lives

-- One row per partition of a table partitioned by the extension: its
-- bucket, the foreign server that holds it (NULL: this server) and the
-- table there (postgres_fdw's schema_name and table_name options, which
-- default to the foreign table's own schema and name), and what is known
-- of its size without reading it or another server: the planner's row
-- estimate (NULL before the first ANALYZE) and, for a table here, its
-- size on disk; and the group of tables placed with its table (colocate).
CREATE VIEW partition_placement AS
SELECT c.oid::regclass AS "table", l.partition, l.bucket, s.srvname AS server,
       CASE WHEN s.oid IS NOT NULL
            THEN pg_catalog.format('%I.%I', coalesce(o.schema_name, n.nspname), coalesce(o.table_name, p.relname))
       END AS remote_table,
       CASE WHEN p.reltuples >= 0 THEN p.reltuples::bigint END AS rows_estimate,
       CASE WHEN p.relkind <> 'f' THEN pg_catalog.pg_total_relation_size(p.oid) END AS bytes,
       g.colocation_group
FROM pg_catalog.pg_partitioned_table pt
JOIN pg_catalog.pg_class c ON c.oid = pt.partrelid
CROSS JOIN LATERAL sharding_layout(c.oid, true) AS l
JOIN pg_catalog.pg_class p ON p.oid = l.partition
JOIN pg_catalog.pg_namespace n ON n.oid = p.relnamespace
LEFT JOIN pg_catalog.pg_foreign_table ft ON ft.ftrelid = p.oid
LEFT JOIN pg_catalog.pg_foreign_server s ON s.oid = ft.ftserver
LEFT JOIN LATERAL (
    SELECT max(t.option_value) FILTER (WHERE t.option_name = 'schema_name') AS schema_name,
           max(t.option_value) FILTER (WHERE t.option_name = 'table_name') AS table_name
    FROM pg_catalog.pg_options_to_table(ft.ftoptions) AS t) AS o ON ft.ftrelid IS NOT NULL
LEFT JOIN colocated_tables g ON g.parent = c.oid;
-- (what it shows, everyone may read in the catalog: the DBA and the
-- application that plan and run moves need not be superusers)
GRANT SELECT ON partition_placement TO PUBLIC;

COMMENT ON VIEW partition_placement IS
'every partition of every table partitioned by the extension: its bucket, the foreign server that holds it (NULL: this server) and the table there, its estimated rows and, here, its size in bytes, and the group of co-located tables of its table (colocate)';
