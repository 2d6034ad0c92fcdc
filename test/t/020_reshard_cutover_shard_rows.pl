# test/t/020_reshard_cutover_shard_rows.pl
#	What the cutover does with the rows that leave or enter postgres_fdw
#	shards (without shard_views), under its lock (docs/resharding.md,
#	"Locks and how long"): work whose time writers wait, and that the
#	default cutover_budget must fit.  Counted, not timed:
#
#	A. Adding: the cutover reads the new foreign partition once (the
#	   copies of the rows that leave the old shards: their keys, count and
#	   row-image hashes), not once per old shard and again for the keys of
#	   each.  Measured as the scans of the new shard's table on its server
#	   (pg_stat_user_tables, after the postgres_fdw connections that made
#	   them have ended) across the cutover step alone (reshard_begin,
#	   reshard_step: each phase on its own).
#	B. Removing: the rows that enter each shard are poured into it in
#	   batches of 1,000 (reshard_transfer_table), not one INSERT per row,
#	   even where the foreign partition sets a batch_size of its own (100
#	   here); the foreign tables' options are the same after the call.
#	   Measured by a statement-level trigger on each shard's table that
#	   counts the INSERT statements its server runs.
#	Both: every row still there, each once, in its bucket.
#
# suite: resharding on shards
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $coordinator = new_server('coordinator');
my @shards = map { new_server("shard$_") } 0 .. 3;
shard_table($coordinator, \@shards, 'items', 'id bigint NOT NULL, v text', 3);
$coordinator->safe_psql('postgres', "INSERT INTO items SELECT i, 'v' || i FROM generate_series(1, 30000) AS i");
my $checksum = "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(hashtext(id || v)) FROM items";
my $before = $coordinator->safe_psql('postgres', $checksum);

# quiet(NODE): waits until no other client is connected to NODE (a backend
# reports its statistics when it exits), then returns.
sub quiet
{
	my ($node) = @_;
	wait_until($node,
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
		'the other clients of ' . $node->name . ' to disconnect');
	return;
}

# scans(NODE): the scans of items on NODE so far (sequential and index).
sub scans
{
	my ($node) = @_;
	quiet($node);
	return $node->safe_psql('postgres',
		"SELECT pg_stat_force_next_flush(); SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relid = 'items'::regclass"
	);
}

# phase(): the phase of the resharding of items.
sub phase
{
	return $coordinator->safe_psql('postgres', "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
}

# A. Adding items_3 (shard 3), one step at a time up to the cutover.
$coordinator->safe_psql('postgres', "CALL reshard_begin('items', 'add', 'items_3')");
for (my $i = 0; phase() ne 'cutover'; $i++)
{
	die "the resharding of items does not reach its cutover: " . phase() if $i > 50 || phase() =~ /^(done|aborted)$/;
	$coordinator->safe_psql('postgres', "CALL reshard_step('items', '1 min', 1)");
}
my $scans_before = scans($shards[3]);
$coordinator->safe_psql('postgres', "CALL reshard_step('items', '1 min', 1)");
is(phase(), 'finish', 'A. the cutover step cut items over');
is(scans($shards[3]) - $scans_before, 1, 'A. the cutover read the new shard\'s table once (3 old shards)');
for (my $i = 0; phase() ne 'done'; $i++)
{
	die "the resharding of items does not end: " . phase() if $i > 10;
	$coordinator->safe_psql('postgres', "CALL reshard_step('items', '1 min', 1)");
}
is($coordinator->safe_psql('postgres', $checksum), $before, 'A. every row there, each once');
is($coordinator->safe_psql('postgres', "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"),
	'0', 'A. reshard_check finds no misplaced row');

# B. Removing items_3 again: the rows of shard 3 enter shards 0 to 2.
for my $s (0 .. 2)
{
	$shards[$s]->safe_psql('postgres',
		"CREATE TABLE inserts (n int);
		 CREATE FUNCTION count_insert() RETURNS trigger LANGUAGE plpgsql AS
		     \$\$ BEGIN INSERT INTO public.inserts VALUES (1); RETURN NULL; END \$\$;
		 CREATE TRIGGER count_insert AFTER INSERT ON items FOR EACH STATEMENT EXECUTE FUNCTION count_insert()");
}
$coordinator->safe_psql('postgres', "ALTER FOREIGN TABLE items_1 OPTIONS (ADD batch_size '100')");
my $options = "SELECT string_agg(ftrelid::regclass || ' ' || ftoptions::text, '; ' ORDER BY ftrelid::regclass::text)
               FROM pg_foreign_table WHERE ftrelid::regclass::text LIKE 'items\\_%'";
my $options_before = $coordinator->safe_psql('postgres', $options);
my @entering = map {
	$coordinator->safe_psql('postgres', "SELECT count(*) FROM items_3 WHERE jumpbackhash(id, 3) = $_")
} 0 .. 2;
# (the rows enter the shards in the cutover, within its budget: on a busy
# machine its attempts can run out, and calling again continues; an attempt
# that fails rolls its INSERTs back on the shards)
my ($ret, $out, $err) = call_until_done($coordinator, "CALL reshard_remove_partition('items', 'items_3')", 'public.items');
die "B. reshard_remove_partition failed: $err" if $ret != 0;
for my $s (0 .. 2)
{
	my $batch = 1000;
	my $expected = int(($entering[$s] + $batch - 1) / $batch);
	is($shards[$s]->safe_psql('postgres', "SELECT count(*) FROM inserts"),
		$expected, "B. shard $s: $entering[$s] rows entered it in $expected INSERT statements (batches of $batch)");
}
is($coordinator->safe_psql('postgres', $options), $options_before, 'B. the foreign tables\' options are as they were');
is($coordinator->safe_psql('postgres', $checksum), $before, 'B. every row there, each once');
is($coordinator->safe_psql('postgres', "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"),
	'0', 'B. reshard_check finds no misplaced row');
is($coordinator->safe_psql('postgres', "SELECT count(*) FROM pg_inherits WHERE inhparent = 'items'::regclass"),
	'3', 'B. items has 3 partitions again');
done_testing();
