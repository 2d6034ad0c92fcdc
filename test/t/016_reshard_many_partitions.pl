# test/t/016_reshard_many_partitions.pl
# suite: resharding 256 partitions
#	The cutover's work under its lock must not grow with the partitions
#	(docs/resharding-engine.md, phase cutover): a table of 255 partitions
#	(BY HASH, jumpbackhash255_int8_ops, a primary key and an index on
#	payload, 10,000 rows) gets its 256th with the default cutover_budget
#	(500 ms) and cutover_attempts (10).  Checks: the call succeeds, every
#	row once in the partition of its bucket, 256 partitions bound to their
#	buckets, nothing of the engine left (no reshard_ index, constraint or
#	trigger on the partitions, no relation reshard_..._<oid>, the old ones
#	renamed away by the cutover included), the properties of partitions
#	carried over (a grant, a comment, a storage parameter, a column's
#	statistics target).  The cutover attempts it took are reported, not
#	checked: no timing is asserted (on a 2-core machine at a load of about
#	10, even this can run out of attempts: the call is then made again, as
#	the docs say, at most 5 times, and the calls are reported).  Here
#	rather than in the regression tests, which must pass on a busy machine.
#	The longest write through the parent at 8, 64 and 256 partitions:
#	test/bench/reshard_stall --partitions.
#	Then partition_move at 256 partitions, with the default budget and
#	attempts (called again the same way, and reported, if they run out):
#	a table items of 256 partitions (BY HASH, jumpbackhash256_int8_ops),
#	under the mirrored writers through the parent, two partitions moved to
#	a postgres_fdw server and one of them back.  Checks: each move done,
#	the table equal to its mirror, the parent's OID and a view on it kept,
#	where each partition is, nothing of the engine left on either server.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $node = new_server('many');
my $server = new_server('server_a');
link_servers($node, { a => $server });
$node->safe_psql('postgres', q{
CREATE ROLE many_reader;
CREATE TABLE many (id bigint PRIMARY KEY, payload text, counter int DEFAULT 0)
    PARTITION BY HASH (id jumpbackhash255_int8_ops);
SELECT format('CREATE TABLE many_%s PARTITION OF many FOR VALUES WITH (MODULUS 255, REMAINDER %s)', r, r)
FROM generate_series(0, 254) AS r \gexec
CREATE INDEX many_payload ON many (payload);
INSERT INTO many (id, payload) SELECT i, md5(i::text) FROM generate_series(1, 10000) AS i;
GRANT SELECT ON many_7 TO many_reader;
COMMENT ON TABLE many_200 IS 'the two hundredth';
ALTER TABLE many_254 SET (fillfactor = 90);
ALTER TABLE many_3 ALTER COLUMN payload SET STATISTICS 500;
CREATE TABLE before AS SELECT * FROM many;
CREATE TABLE many_255 (LIKE many INCLUDING ALL);
CREATE TABLE engine_relations_before AS SELECT oid FROM pg_class WHERE relname ~ '^reshard_[a-z_]+_[0-9]+';
VACUUM ANALYZE;
});

# The calls with the default budget and attempts: call_until_done (on a
# busy machine the attempts can run out: called again, at most 5 times).
my ($ret, $out, $err, $calls) = call_until_done($node, "CALL reshard_add_partition('many', 'many_255')", 'public.many');
is($ret, 0, 'the call on 255 -> 256 partitions succeeds with the default budget and attempts (called again while '
	  . 'it runs out of attempts)') or diag($err);
my $attempts = $node->safe_psql('postgres', q{SELECT phase || ', ' || cutover_attempts FROM reshard_progress});
note("calls: $calls; phase, cutover attempts of the last: $attempts (load: " . (`cat /proc/loadavg` =~ s/\n//r) . ')');
like($attempts, qr/^done, /, 'done');
is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM many) || ' ' || (SELECT count(*) FROM (SELECT * FROM many EXCEPT ALL SELECT * FROM before) AS t)
       || ' ' || (SELECT count(*) FROM (SELECT * FROM before EXCEPT ALL SELECT * FROM many) AS t)}),
	'10000 0 0', 'every row once');
is($node->safe_psql('postgres', q{SELECT count(*) FROM many
                                  WHERE tableoid <> format('many_%s', jumpbackhash(id, 256))::regclass}),
	'0', 'each in the partition of its bucket');
is($node->safe_psql('postgres', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE bound = format('FOR VALUES WITH (modulus 256, remainder %s)', substr(relname, 6)))
FROM (SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'many'::regclass) AS p}),
	'256 256', '256 partitions, bound to their buckets');
is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        WHERE x.indrelid = ANY (p.parts) AND c.relname LIKE 'reshard\_%')
       || ' ' || (SELECT count(*) FROM pg_constraint WHERE conrelid = ANY (p.parts) AND conname LIKE 'reshard\_%')
       || ' ' || (SELECT count(*) FROM pg_trigger WHERE tgrelid = ANY (p.parts))
       || ' ' || (SELECT count(*) FROM pg_class WHERE relname ~ '^reshard_[a-z_]+_[0-9]+'
                  AND oid NOT IN (SELECT oid FROM engine_relations_before))
FROM (SELECT array_agg(inhrelid) AS parts FROM pg_inherits WHERE inhparent = 'many'::regclass) AS p}),
	'0 0 0 0', 'nothing of the engine left: indexes, constraints, triggers, relations');
is($node->safe_psql('postgres', q{
SELECT has_table_privilege('many_reader', 'many_7', 'SELECT') || ' ' || has_table_privilege('many_reader', 'many_8', 'SELECT')
       || ' ' || obj_description('many_200'::regclass, 'pg_class')
       || ' ' || (SELECT reloptions FROM pg_class WHERE oid = 'many_254'::regclass)::text
       || ' ' || (SELECT attstattarget FROM pg_attribute WHERE attrelid = 'many_3'::regclass AND attname = 'payload')}),
	'true false the two hundredth {fillfactor=90} 500', 'the properties of partitions carried over');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'many'::regclass
  AND (SELECT count(*) FROM pg_index x WHERE x.indrelid = i.inhrelid) = 2}),
	'256', 'each partition with its two indexes');

# Moves at 256 partitions, under the writers.
$node->safe_psql('postgres', q{
CREATE TABLE items (id bigint NOT NULL, v text DEFAULT 'new', n int NOT NULL DEFAULT 0)
    PARTITION BY HASH (id jumpbackhash256_int8_ops);
SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 256, REMAINDER %s)', r, r)
FROM generate_series(0, 255) AS r \gexec
CREATE INDEX ON items (id);
INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, 25600) AS i;
CREATE TABLE mirror AS SELECT * FROM items;
CREATE SEQUENCE ids START 25601;
CREATE VIEW item_count AS SELECT count(*) AS n FROM items;
VACUUM ANALYZE items;
});
my $items_oid = $node->safe_psql('postgres', "SELECT 'items'::regclass::oid");
start_writer_loops($node, mirrored_writers(sub { "SELECT count(*) FROM items WHERE id = $_[0]" }));
for my $move ([ 'items_255', "'a'" ], [ 'items_128', "'a'" ], [ 'items_255', 'NULL' ])
{
	my ($partition, $target) = @$move;
	my $name = "$partition to " . ($target eq 'NULL' ? 'here' : 'server a');
	my $started = time();
	($ret, $out, $err, $calls) = call_until_done($node, "CALL partition_move('$partition', $target)", 'public.items');
	is($ret, 0, "$name at 256 partitions: done with the default budget and attempts") or diag($err);
	note("$name: " . (time() - $started) . " s; calls: $calls; cutover attempts of the last: "
		  . $node->safe_psql('postgres', q{SELECT cutover_attempts FROM reshard_progress WHERE "table" = 'public.items'})
		  . ' (load: ' . (`cat /proc/loadavg` =~ s/\n//r) . ')');
}
stop_writer_loops(sub { });
items_equal_mirror($node, 'after the moves at 256 partitions');
is($node->safe_psql('postgres', "SELECT 'items'::regclass::oid || ' ' || (SELECT n = (SELECT count(*) FROM mirror) FROM item_count)"),
	"$items_oid true", 'the parent keeps its OID; the view on it counts every row');
is($node->safe_psql('postgres', q{SELECT count(*) || ' ' || string_agg(partition::text || ':' || server, ' ') FILTER (WHERE server IS NOT NULL)
                                  FROM partition_placement WHERE "table" = 'items'::regclass}),
	'256 items_128:a', '256 partitions: items_128 on server a, the others here');
is($node->safe_psql('postgres', $ENGINE_LEFTOVERS) . ' ' . $server->safe_psql('postgres', $ENGINE_LEFTOVERS), 'none none',
	'nothing of the engine is left, here or on server a');

done_testing();
