# test/t/015_reshard_cutover_budget.pl
#	The cutover's budget running out at any moment of an attempt on
#	postgres_fdw shards: calls with budgets from a few milliseconds (shorter
#	than an attempt) upwards, each either done or failed as out of attempts
#	with the table as it was, never failed otherwise (a budget that runs out
#	while postgres_fdw ends the attempt's subtransaction on a shard must not
#	leave a connection unusable for the next attempt or for the undo).
#
# suite: cutover budget
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
$coordinator->safe_psql('postgres', "INSERT INTO items SELECT i, 'v' || i FROM generate_series(1, 3000) AS i");
my $checksum = "SELECT count(*) || ' ' || sum(hashtext(id || v)) FROM items";
my $before = $coordinator->safe_psql('postgres', $checksum);

my %outcomes;
my $unexpected = 0;
my $buckets = 3;
for my $round (1 .. 40)
{
	my $budget = 2 + ($round * 7) % 90;    # 2 .. 91 ms, spread over the rounds
	my $call = $buckets == 3
	  ? "CALL reshard_add_partition('items', 'items_3', cutover_budget => '$budget ms', cutover_attempts => 3, shard_views => false)"
	  : "CALL reshard_remove_partition('items', 'items_3', cutover_budget => '$budget ms', cutover_attempts => 3, shard_views => false)";
	my ($out, $err) = ('', '');
	$coordinator->psql('postgres', $call, stdout => \$out, stderr => \$err);
	if ($err eq '')
	{
		$outcomes{done}++;
		$buckets = $buckets == 3 ? 4 : 3;
	}
	elsif ($err =~ /could not cut public\.items over within $budget ms in 3 attempts/)
	{
		$outcomes{'out of attempts'}++;
		# calling again continues it, or reshard_abort undoes it: undone here
		$coordinator->safe_psql('postgres', "CALL reshard_abort('items')");
	}
	else
	{
		$unexpected++;
		diag("round $round ($budget ms): $err");
		$coordinator->psql('postgres', "CALL reshard_abort('items')");
	}
	my $now = $coordinator->safe_psql('postgres', $checksum);
	if ($now ne $before)
	{
		$unexpected++;
		diag("round $round ($budget ms): the table holds $now, not $before");
	}
}
note(join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes));
is($unexpected, 0, "40 calls with budgets of 2 to 91 ms: each done or out of attempts, the table whole after each");
is($coordinator->safe_psql('postgres', "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"), '0',
	"reshard_check finds no misplaced row");
done_testing();
