# test/t/028_cleanup_records.pl
#	The cleanup records (reshard_state_cleanup; docs/resharding-engine.md,
#	"Cleanup records"): a call of each operation cut short anywhere, then
#	aborted, leaves nothing behind, here or on a server.
#
#	A coordinator and a server (postgres_fdw, dblink).  A table of 20,000
#	rows in 4 partitions (PARTITION BY HASH with a jumpbackhash operator
#	class) and its mirror, a plain copy.  For each operation (adding a
#	bucket, removing it again, moving a partition to the server and moving
#	it back here) and each phase (setup to finish), the call runs in a
#	session of its own; a watcher polls reshard_progress in a server-side
#	loop (cut_at) and terminates the call's backend (pg_terminate_backend)
#	as soon as its state row shows that phase or a later one (a short phase
#	may be missed: the next one is cut; where it landed is reported, never
#	asserted).  Then reshard_abort: the call is undone (aborted), or, cut
#	after its cutover, finished (done).  Checks, per run: the phase is
#	aborted or done, and so is the layout (an aborted move: the partition
#	where it was; a finished one: where it went; its table on one server
#	only); nothing of the engine is left on the coordinator nor on the
#	server ($ENGINE_LEFTOVERS on each), and no record either; the table
#	equals its mirror.  Last, a table a user makes on the server under the
#	name of the table a move makes there, between the move's plan and its
#	setup: the setup fails, and the undo, which finds that name recorded,
#	leaves the user's table (it does not carry the move's comment).
#
# suite: cleanup records
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $ROWS = 20000;
my $coordinator = new_server('coordinator');
my $server = new_server('server_a');

$coordinator->safe_psql('postgres', $CUT_AT);
link_servers($coordinator, { a => $server });
on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text, n int NOT NULL DEFAULT 0)
	         PARTITION BY HASH (id jumpbackhash4_int8_ops);
	     SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 4, REMAINDER %s)', i, i)
	     FROM generate_series(0, 3) AS i \\gexec
	     CREATE INDEX ON items (id);
	     CREATE TABLE items_4 (LIKE items INCLUDING ALL);
	     INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, $ROWS) AS i;
	     CREATE TABLE mirror AS SELECT * FROM items");

# buckets(): the table's number of partitions; placement(PARTITION): 'here' or its server.
sub buckets
{
	return on($coordinator, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'items'::regclass");
}

sub placement
{
	my ($partition) = @_;
	return on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = '$partition'::regclass");
}

# Each run: the operation and its call, the layout it starts from (set
# first, by calls that are not cut, if a run before ended otherwise), and
# what the layout is if it is undone and if it is done.
my %operation = (
	add => {
		call => "CALL reshard_add_partition('items', 'items_4', cutover_budget => '1 s', cutover_attempts => 20)",
		from => sub { on($coordinator, "CALL reshard_remove_partition('items')") if buckets() == 5 },
		layout => sub { buckets() },
		undone => 4, done => 5 },
	remove => {
		call => "CALL reshard_remove_partition('items', cutover_budget => '1 s', cutover_attempts => 20)",
		from => sub { on($coordinator, "CALL reshard_add_partition('items', 'items_4')") if buckets() == 4 },
		layout => sub { buckets() },
		undone => 5, done => 4 },
	out => {
		call => "CALL partition_move('items_2', 'a', cutover_budget => '1 s', cutover_attempts => 20)",
		from => sub { on($coordinator, "CALL partition_move('items_2', NULL)") if placement('items_2') ne 'here' },
		layout => sub { placement('items_2') . ' ' . on($server, "SELECT to_regclass('public.items_2') IS NOT NULL") },
		undone => 'here f', done => 'a t' },
	back => {
		call => "CALL partition_move('items_2', NULL, cutover_budget => '1 s', cutover_attempts => 20)",
		from => sub { on($coordinator, "CALL partition_move('items_2', 'a')") if placement('items_2') eq 'here' },
		layout => sub { placement('items_2') . ' ' . on($server, "SELECT to_regclass('public.items_2') IS NOT NULL") },
		undone => 'a t', done => 'here f' });

my $run = 0;
for my $op (qw(add remove out back))
{
	for my $wanted ('setup', 'capture', 'copy', 'catch up', 'verify', 'cutover', 'finish')
	{
		$run++;
		my $o = $operation{$op};
		$o->{from}->();
		my $name = "run $run ($op, terminated in $wanted, then reshard_abort)";
		my $call = start_sql($coordinator, [ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", $o->{call} ]);
		my ($seen) = on($coordinator, "SELECT cut_at('public.items', $run, '$wanted', 'terminate')");
		my ($seen_phase, $pid) = split /\|/, $seen;
		my (undef, $err) = finish_sql($call, "the end of the call of $name");
		note "$name: " . ($pid ? "cut in phase $seen_phase" : "too late (phase $seen_phase)") . '; the call said: '
		  . ($err || '(nothing)');
		wait_until($coordinator,
			"SELECT NOT EXISTS (SELECT FROM pg_stat_activity a JOIN engine_calls c USING (pid) WHERE c.run = $run)",
			"the backend of the call of $name to end");
		my $phase = on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
		# (a call that ended before it was cut leaves nothing to abort)
		if ($phase ne 'done' && $phase ne 'aborted')
		{
			my ($out, $said) = ('', '');
			$coordinator->psql('postgres', "CALL reshard_abort('items')", stdout => \$out, stderr => \$said);
			unlike($said, qr/ERROR|FATAL|WARNING/, "$name: interrupted in phase $phase, then reshard_abort");
			$phase = on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
		}
		like($phase, qr/^(aborted|done)$/, "$name: $phase");
		is($o->{layout}->(), $phase eq 'done' ? $o->{done} : $o->{undone},
			"$name: the layout is the " . ($phase eq 'done' ? 'new' : 'old') . ' one');
		is(on($coordinator, $ENGINE_LEFTOVERS) . ' / ' . on($server, $ENGINE_LEFTOVERS), 'none / none',
			"$name: nothing of the engine is left here / on the server");
		is(on($coordinator, 'SELECT count(*) FROM reshard_state_cleanup'), '0', "$name: no record is left");
		items_equal_mirror($coordinator, $name);
	}
}

# A user's table on the server under the name a move makes there, made
# after the move's plan (which refuses a table that exists) and before its
# setup: created in a transaction there that the setup's CREATE TABLE waits
# for, then committed.  The setup fails; the undo finds the name recorded
# (the plan's record, committed with the state row), but the table does not
# carry the move's comment: it stays, with its row.
$operation{out}{from}->();
my $user = background_session($server);
session_query($user, "BEGIN; CREATE TABLE public.items_2 (note text); INSERT INTO public.items_2 VALUES ('mine')");
my $call = start_sql($coordinator, "CALL partition_move('items_2', 'a')");
wait_while_running($server,
	"SELECT EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'transactionid' AND query LIKE '%subsetting\\_reshard.into\\_%')",
	"the move's setup to wait for the user's table on the server", $call);
is(on($coordinator, "SELECT count(*) FROM reshard_state_cleanup WHERE server = 'a' AND kind = 'table' AND marker IS NOT NULL"),
	'1', "the table the move makes on the server is recorded, with its comment, before the setup makes it");
session_query($user, "COMMIT");
$user->quit;
my (undef, $said) = finish_sql($call, "the end of the move onto the user's table");
like($said, qr/ERROR/, "the move's setup fails on the user's table");
is(on($server, "SELECT note FROM public.items_2"), 'mine', "the undo left the user's table on the server");
is(on($coordinator, $ENGINE_LEFTOVERS) . ' / ' . on($server, $ENGINE_LEFTOVERS), 'none / none',
	"nothing of the engine is left here / on the server after the failed move");
is(on($coordinator, 'SELECT count(*) FROM reshard_state_cleanup'), '0', "no record is left after the failed move");
is(placement('items_2'), 'here', "the partition stays here");
items_equal_mirror($coordinator, 'after the failed move');

$coordinator->stop;
$server->stop;
done_testing();
