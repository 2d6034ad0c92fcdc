# test/t/021_reshard_shard_views_lock_order.pl
#	With shard_views, the capture points the old foreign partitions at
#	their shards' views under ACCESS EXCLUSIVE: it must not deadlock with
#	a writer through the parent that read a foreign partition and writes
#	next, the usual transaction of an application (a point read, then an
#	insert).  It took SHARE ROW EXCLUSIVE on the parent first, which let
#	such a writer's read through and then kept its write waiting while the
#	capture waited for the read's lock on the partition: a deadlock, one
#	failed attempt each time (at 100 such transactions a second, every
#	default attempt failed).  Now the writer's write goes through, and the
#	call goes on once the writer commits.
#
#	A writer (superuser) begins, reads one row through items (its
#	partitions locked ACCESS SHARE), and waits; the call (shard_views, one
#	attempt, a budget as long as a wait of the test's, $WAIT_BUDGET, so
#	that the writer's deadlock_timeout of 1 s comes first and the attempt
#	outlasts the writer's next steps) starts and waits for a lock; the
#	writer then inserts through items, must not fail, and commits; the call
#	must succeed, and every row, the writer's included, be there once, in
#	its bucket.
#
# suite: shard views lock order
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest qw(:DEFAULT start_sql finish_sql);

my $coordinator = new_server('coordinator');
my @shards = map { new_server("shard$_") } 0 .. 3;
shard_table($coordinator, \@shards, 'items', 'id bigint NOT NULL, v text', 3);
$coordinator->safe_psql('postgres',
	"CREATE EXTENSION dblink; INSERT INTO items SELECT i, 'v' || i FROM generate_series(1, 3000) AS i");
my $checksum = "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(hashtext(id || v)) FROM items";
my $expected = $coordinator->safe_psql('postgres',
	"SELECT count(*) + 1 || ' ' || count(DISTINCT id) + 1 || ' ' || sum(hashtext(id || v)) + hashtext('3001w')
	 FROM items");
# a key, to read
my $key = $coordinator->safe_psql('postgres', "SELECT min(id) FROM items_1");

my $writer = background_session($coordinator, on_error_stop => 0);
session_query($writer, "BEGIN");
is(session_query($writer, "SELECT v FROM items WHERE id = $key"), "v$key", 'the writer read a row through items');

my $call = start_sql($coordinator,
	"CALL reshard_add_partition('items', 'items_3', cutover_budget => '$WAIT_BUDGET', cutover_attempts => 1, shard_views => true)");
wait_until($coordinator,
	"SELECT count(*) >= 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	 WHERE NOT l.granted AND a.query LIKE 'CALL reshard_add_partition%'",
	'the call to wait for a lock');
note($coordinator->safe_psql('postgres',
	"SELECT string_agg(locktype || ' ' || coalesce(relation::regclass::text, '') || ' ' || mode, ', ')
	 FROM pg_locks WHERE NOT granted"));

my ($out, $err) = ('', '');
$out = session_query($writer, "INSERT INTO items VALUES (3001, 'w') RETURNING id", 'query');
like($out, qr/^3001$/m, 'the writer inserts through items while the call waits for its lock');
like(session_query($writer, "COMMIT", 'query'), qr/^$/, 'and commits');
$writer->quit;

($out, $err) = finish_sql($call);
is($err, '', 'the call (shard_views, one attempt) succeeds');
is($coordinator->safe_psql('postgres', $checksum), $expected, "every row there once, the writer's too");
is($coordinator->safe_psql('postgres', "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"),
	'0', 'reshard_check finds no misplaced row');
done_testing();
