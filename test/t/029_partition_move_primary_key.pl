# test/t/029_partition_move_primary_key.pl
#	A table with a PRIMARY KEY and a UNIQUE constraint (issue 44, item 1;
#	docs/scaling-out.md, "Tables with a primary key") goes from one server
#	to three, has a partition moved from one server to another, and comes
#	back to one, while writers insert, update, delete and change keys
#	through the parent and one tries to insert a copy of an existing row:
#	unique_constraints_to_partitions hands the constraints to the
#	partitions under the writers; after each step the table equals its
#	mirror, no key is there twice, and a duplicate is refused on every
#	server, through the parent and directly there; the partitions' tables
#	on the servers, and those that came back, have the constraints; at the
#	end unique_constraints_to_parent gives them back to the table.  Moves
#	cut short in each phase and called again leave the constraints made
#	all the same.
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $PARTITIONS = 16;
my $ROWS = 4800;
my $coordinator = new_server('coordinator');
my %servers = (a => new_server('server_a'), b => new_server('server_b'));

link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE items (id bigint PRIMARY KEY, v text DEFAULT 'new', n int NOT NULL DEFAULT 0,
	                     CONSTRAINT items_id_v UNIQUE (id, v))
	         PARTITION BY HASH (id jumpbackhash${PARTITIONS}_int8_ops);
	     SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS $PARTITIONS, REMAINDER %s)', i, i)
	     FROM generate_series(0, $PARTITIONS - 1) AS i \\gexec
	     INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, $ROWS) AS i;
	     CREATE TABLE mirror AS SELECT * FROM items;
	     CREATE SEQUENCE ids START " . ($ROWS + 1) . ";");

# The writers through the parent (mirrored_writers), and one that inserts a
# copy of a row it reads: refused while the row is there (else, deleted
# meanwhile, it is a row like another, mirrored).
my %writers = mirrored_writers(sub { "SELECT count(*) FROM items WHERE id = $_[0]" });
$writers{duplicate} =
  "BEGIN; WITH i AS (INSERT INTO items SELECT id, 'copy', n FROM items WHERE id = 1 + (random() * $ROWS)::bigint RETURNING *)
          INSERT INTO mirror SELECT * FROM i; SELECT pg_advisory_xact_lock_shared(4242); COMMIT";

# checked(WHAT): the table is its mirror, no key twice, and on each server
# that holds a partition a duplicate of one of its rows is refused, through
# the parent and directly there.
sub checked
{
	my ($what) = @_;
	items_equal_mirror($coordinator, $what);
	is(on($coordinator, "SELECT count(*) - count(DISTINCT id) FROM items"), '0', "$what: no key is there twice");
	for my $server (sort keys %servers)
	{
		my $partition = on($coordinator,
			"SELECT partition FROM partition_placement WHERE \"table\" = 'items'::regclass AND server = '$server'
			 ORDER BY bucket LIMIT 1");
		next if $partition eq '';
		my $id = on($coordinator, "SELECT min(id) FROM $partition");
		like(result_or_error($coordinator, 'postgres', "INSERT INTO items VALUES ($id, 'again', 0)"),
			qr/duplicate key value violates unique constraint "${partition}_pkey"|duplicate key value violates unique constraint "${partition}_items_pkey"/,
			"$what: a duplicate of a row of $partition on server $server is refused through the parent");
		like(result_or_error($servers{$server}, 'postgres', "INSERT INTO $partition VALUES ($id, 'again', 0)"),
			qr/duplicate key value violates unique constraint/,
			"$what: and directly on server $server");
	}
	return;
}

# constraints_on(NODE): how many tables named items_% there have a PRIMARY
# KEY, and how many a UNIQUE constraint.
sub constraints_on
{
	my ($node) = @_;
	return on($node,
		"SELECT count(*) FILTER (WHERE c.contype = 'p') || ' ' || count(*) FILTER (WHERE c.contype = 'u')
		 FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
		 WHERE t.relname LIKE 'items\\_%' AND t.relkind = 'r'");
}

# Handed to the partitions under the writers.
start_writer_loops($coordinator, %writers);
my ($ret, $out, $err) =
  $coordinator->psql('postgres', "CALL unique_constraints_to_partitions('items', cutover_attempts => 100)");
is($ret, 0, "unique_constraints_to_partitions under writers") or diag $err;
is(on($coordinator, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'items'::regclass AND contype IN ('p', 'u')")
	  . ' ' . constraints_on($coordinator), "0 $PARTITIONS $PARTITIONS",
	"the table has no unique constraint left; each of its $PARTITIONS partitions both");

# One server to three.
($ret, $out, $err) = call_until_done($coordinator, "CALL rebalance('items', ARRAY[NULL, 'a', 'b'])", 'public.items');
is($ret, 0, "rebalance from one server to three under writers") or diag $err;
is(constraints_on($servers{a}) . ', ' . constraints_on($servers{b}), '5 5, 5 5',
	"the five tables on each server have the PRIMARY KEY and the UNIQUE constraint");
stop_writer_loops(sub { });
checked('one server to three');

# From server a to server b, and from server a back here.
my @on_a = split /\n/, on($coordinator,
	"SELECT partition FROM partition_placement WHERE \"table\" = 'items'::regclass AND server = 'a' ORDER BY bucket LIMIT 2");
start_writer_loops($coordinator, %writers);
for my $move ([ $on_a[0], "'b'" ], [ $on_a[1], 'NULL' ])
{
	my ($partition, $target) = @$move;
	($ret, $out, $err) = call_until_done($coordinator, "CALL partition_move('$partition', $target)", 'public.items');
	is($ret, 0, "$partition moved to $target under writers") or diag $err;
}
stop_writer_loops(sub { });
is(constraints_on($servers{a}) . ', ' . constraints_on($servers{b}), '3 3, 6 6',
	"server a keeps 3 tables with both constraints, server b 6, the one from a too");
is(on($coordinator, "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint
	WHERE conrelid = '$on_a[1]'::regclass AND contype IN ('p', 'u')"),
	"$on_a[1]_items_id_v,$on_a[1]_items_pkey", "$on_a[1], back here, has both, named after it");
checked('a move across servers and one back');

# Moves cut short in each phase (the backend terminated), then called
# again: the table made on the server, or here, has the constraints all
# the same (made once the copy is done, all or none, and skipped when they
# are there), and the table is its mirror.
on($coordinator, $CUT_AT);
my $run = 0;
start_writer_loops($coordinator, %writers);
for my $cut ([ 'copy', 'out' ], [ 'catch up', 'across' ], [ 'verify', 'back' ], [ 'cutover', 'out' ], [ 'finish', 'across' ])
{
	my ($wanted, $direction) = @$cut;
	$run++;
	my ($partition, $from) = split /\|/, on($coordinator,
		"SELECT partition, server FROM partition_placement WHERE \"table\" = 'items'::regclass
		 AND " . ($direction eq 'out' ? 'server IS NULL' : 'server IS NOT NULL') . " ORDER BY bucket DESC LIMIT 1");
	my $server = $direction eq 'out' ? ($run % 2 ? 'b' : 'a') : $direction eq 'back' ? '' : $from eq 'a' ? 'b' : 'a';
	my $target = $server eq '' ? 'NULL' : "'$server'";
	my $name = "run $run ($partition from " . ($from || 'here') . ' to ' . ($server || 'here') . ", cut in $wanted)";
	my $call = start_sql($coordinator,
		[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())",
		  "CALL partition_move('$partition', $target, cutover_budget => '1 s', cutover_attempts => 20)" ]);
	my $seen = on($coordinator, "SELECT cut_at('public.items', $run, '$wanted', 'terminate')");
	finish_sql($call, "the end of the call of $name");
	note "$name: cut at $seen";
	wait_until($coordinator,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity a JOIN engine_calls c USING (pid) WHERE c.run = $run)",
		"the backend of the call of $name to end");
	($ret, $out, $err) = call_until_done($coordinator,
		"CALL partition_move('$partition', $target, cutover_budget => '1 s', cutover_attempts => 20)", 'public.items');
	is($ret, 0, "$name: called again, it is done") or diag $err;
	my $node = $server eq '' ? $coordinator : $servers{$server};
	is(on($node, "SELECT count(*) FILTER (WHERE contype = 'p') || ' ' || count(*) FILTER (WHERE contype = 'u')
		FROM pg_constraint WHERE conrelid = 'public.$partition'::regclass"), '1 1',
		"$name: its table " . ($server eq '' ? 'here' : "on server $server") . ' has the PRIMARY KEY and the UNIQUE constraint');
}
stop_writer_loops(sub { });
checked('moves cut short and called again');

# Three servers to one, and the constraints back to the table.
start_writer_loops($coordinator, %writers);
($ret, $out, $err) = call_until_done($coordinator, "CALL rebalance('items', ARRAY[NULL]::name[])", 'public.items');
is($ret, 0, "rebalance from three servers to one under writers") or diag $err;
($ret, $out, $err) =
  $coordinator->psql('postgres', "CALL unique_constraints_to_parent('items', cutover_attempts => 100)");
is($ret, 0, "unique_constraints_to_parent under writers") or diag $err;
stop_writer_loops(sub { });
is(constraints_on($servers{a}) . ', ' . constraints_on($servers{b}), '0 0, 0 0', "no table of a partition is left on the servers");
is(on($coordinator, "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint
	WHERE conrelid = 'items'::regclass AND contype IN ('p', 'u')")
	  . ' ' . on($coordinator, "SELECT count(*) FROM pg_index x JOIN pg_inherits i ON i.inhrelid = x.indexrelid
	  WHERE x.indrelid IN (SELECT relid FROM pg_partition_tree('items') WHERE isleaf)"),
	'items_id_v,items_pkey ' . (2 * $PARTITIONS), "the table has its constraints back, each partition's index attached");
checked('three servers to one');
is(on($coordinator, "SELECT count(*) FROM partition_unique_constraints"), '0', "no record is left");

done_testing();
