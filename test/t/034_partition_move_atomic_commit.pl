# test/t/034_partition_move_atomic_commit.pl
#	A move's cutover with atomic commit on (docs/scaling-out.md,
#	"Transactions that write on several servers"): a coordinator and two
#	servers a and b, set up with atomic_commit_add_server; a table sharded
#	by jumpbackhash over them, written through its parent by writers that
#	keep a mirror.  A partition moves from one server to the other, and its
#	cutover (which writes here, on the server the partition leaves and on
#	the one it goes to) stops between the phases of its commit where
#	subsetting.atomic_commit_test_stop says: the coordinator is killed
#	there, or the server the partition leaves, or the one it goes to.  After
#	recovery and the move called again, the partition's rows are all on the
#	server it went to, once, the table's other rows where they were, every
#	writer's transaction whole or absent, nothing left prepared, nothing of
#	the engine left.
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;
use PostgreSQL::Test::Utils;
use Test::More;

# (the keys of the writers' rows above those of the rows of k 0)
my ($coordinator, $servers) = atomic_commit_cluster('CREATE TABLE t (id bigint NOT NULL, k int NOT NULL, v text)', 3001);
my %servers = %$servers;
on($coordinator, q{
	INSERT INTO t SELECT id, 0, md5(id::text) FROM generate_series(1, 3000) AS id;
	CREATE SEQUENCE ks;
	-- transaction k: a row in bucket 0 (here), one in bucket 2 (on b) and
	-- one in the mirror here (none in t_1: a write there the move would
	-- catch up through postgres_fdw, in transactions of its own on two
	-- servers, before its cutover's)
	CREATE FUNCTION write_k(k int) RETURNS void LANGUAGE sql AS $$
		INSERT INTO t SELECT id, k, 'x' FROM keys WHERE n = k AND bucket IN (0, 2);
		INSERT INTO mirror VALUES (k);
	$$;
});
my $rows_before = on($coordinator, 'SELECT count(*) || md5(string_agg(id || v, \',\' ORDER BY id)) FROM t WHERE k = 0');

# Once the writers stopped: the table's first rows unchanged; every
# writer's transaction whole or absent; t_1 on SERVER, its rows in the
# tables there, once, and none on the other server; nothing left prepared,
# nothing of the engine left, here or on the servers.
sub check_table
{
	my ($what, $server) = @_;
	stop_writer_loops(sub { });
	is(on($coordinator, 'SELECT count(*) || md5(string_agg(id || v, \',\' ORDER BY id)) FROM t WHERE k = 0'),
		$rows_before, "$what: the table's rows as before");
	is(on($coordinator, 'SELECT count(*) FROM mirror m WHERE (SELECT count(*) FROM t WHERE t.k = m.k) <> 2'), '0',
		"$what: each writer's transaction committed whole");
	is(on($coordinator, 'SELECT count(*) FROM t WHERE k > 0 AND k NOT IN (SELECT k FROM mirror)'), '0',
		"$what: none of a failed one");
	is(on($coordinator, "SELECT server FROM partition_placement WHERE partition = 't_1'::regclass"), $server,
		"$what: t_1 on $server");
	# (bucket 1's rows in the tables of a server: no writer writes there)
	my $t_1_rows_on = sub {
		my ($node) = @_;
		my $rows = 0;
		$rows += on($node, "SELECT count(*) FROM $_ WHERE jumpbackhash(id, 3) = 1")
		  for split /\n/, on($node,
			"SELECT c.oid::regclass FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id'
			 WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace");
		return $rows;
	};
	my $t_1_rows = on($coordinator, 'SELECT count(*) FROM t_1');
	for my $name (sort keys %servers)
	{
		is($t_1_rows_on->($servers{$name}), $name eq $server ? $t_1_rows : 0,
			"$what: the rows of t_1 in the tables of $name: " . ($name eq $server ? 'all, once' : 'none'));
		is(on($servers{$name}, 'SELECT count(*) FROM pg_prepared_xacts'), '0', "$what: nothing left prepared on $name");
		is(on($servers{$name}, $ENGINE_LEFTOVERS), 'none', "$what: nothing of the engine left on $name");
	}
	is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "$what: nothing of the engine left here");
	return;
}

# The move of t_1 to TO held before its cutover: a reader on the server
# t_1 leaves holds its table there while the first call's one attempt
# waits; the move keeps its work, and the next call, made with
# subsetting.atomic_commit_test_stop = STOP, has the cutover's commit as its
# first on two servers.  The writers write meanwhile (start_writers).
# Returns that call once the coordinator logs its stop.
sub cutover_stopped_at
{
	my ($to, $stop) = @_;
	start_writers();
	my ($from, $table) = split /\|/, on($coordinator,
		"SELECT s.srvname, (SELECT quote_ident(o.option_value) FROM pg_options_to_table(f.ftoptions) AS o WHERE o.option_name = 'table_name')
		 FROM pg_foreign_table f JOIN pg_foreign_server s ON s.oid = f.ftserver WHERE f.ftrelid = 't_1'::regclass");
	my $reader = background_session($servers{$from});
	session_query($reader, "BEGIN; LOCK TABLE $table IN ACCESS SHARE MODE");
	# (its one attempt at the locks of its capture can also run out, behind a
	# writer's transaction: called again, it goes on)
	my $err;
	for (1 .. 5)
	{
		(undef, undef, $err) = $coordinator->psql('postgres',
			"CALL partition_move('t_1', '$to', cutover_budget => '300 ms', cutover_attempts => 1)");
		last unless $err =~ /could not lock the partitions of public\.t to run its phase capture/;
	}
	like($err, qr/could not cut public\.t over within 300 ms in 1 attempts/, "the move of t_1 to $to waits for its cutover");
	session_query($reader, 'COMMIT');
	$reader->quit;
	my $offset = -s $coordinator->logfile;
	my $h = start_sql($coordinator,
		[ "SET subsetting.atomic_commit_test_stop = '$stop'", "CALL partition_move('t_1', '$to')" ]);
	$coordinator->wait_for_log(qr/atomic commit stopped for a test at "\Q$stop\E"/, $offset);
	# (the cutover's transaction, prepared, is in phase cutover; committed
	# here, it has moved the move to its finish)
	is(on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.t'"),
		$stop eq 'prepared' ? 'cutover' : 'finish', "the move of t_1 to $to stopped at \"$stop\" in its cutover");
	return $h;
}

# The parts the stopped cutover has prepared: while it holds the table's
# locks, the writers wait, and every part prepared on a or b is the
# cutover's (one transaction: the same name but for the user mapping's
# OID).  Returns a pattern of their names, and how many are on a and on b.
sub cutover_parts
{
	my @gids = map { split /\n/, on($servers{$_}, 'SELECT gid FROM pg_prepared_xacts') } sort keys %servers;
	my %transactions = map { /^(subsetting_\d+_\d+_\d+_\d+)_\d+_(\d+)$/ or die "unexpected name $_"; ("$1|$2" => 1) } @gids;
	die 'the parts prepared are of ' . scalar(keys %transactions) . ' transactions' unless keys %transactions == 1;
	my ($transaction, $nonce) = split /\|/, (keys %transactions)[0];
	my $pattern = "^${transaction}_[0-9]+_${nonce}\$";
	return ($pattern, map { on($servers{$_}, "SELECT count(*) FROM pg_prepared_xacts WHERE gid ~ '$pattern'") } sort keys %servers);
}

# Recovery of the parts whose names match PATTERN, by a call (unless the
# worker, which the writers' first commits on two servers after a restart
# start, resolved them first): "server outcome" of each.
sub recover
{
	my ($pattern) = @_;
	return on($coordinator,
		"SELECT coalesce(string_agg(server || ' ' || outcome, ', ' ORDER BY server), '') FROM atomic_commit_recover() WHERE gid ~ '$pattern'");
}

sub cancel_move
{
	on($coordinator, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL partition_move%' AND pid <> pg_backend_pid()");
}

# Once the worker or a call resolved what was left, the move called again
# ends (or has ended) on TO.
sub move_again
{
	my ($to, $what) = @_;
	my ($ret, undef, $err) = call_until_done($coordinator, "CALL partition_move('t_1', '$to')", 'public.t');
	is($ret, 0, "$what: the move called again ends") or diag($err);
	return;
}

# Writers through the parent, from the start of each case to its checks.
sub start_writers
{
	start_writer_loops($coordinator, map { ("w$_" => "SELECT write_k(nextval('ks')::int)") } 1 .. 2);
	return;
}

# 1. The coordinator killed after every part of the cutover prepared: the
# cutover did not commit; recovery rolls both parts back; the move called
# again cuts over.
my $h = cutover_stopped_at('b', 'prepared');
my ($cutover, @prepared) = cutover_parts();
is("@prepared", '1 1', 'the cutover prepared its part on a and on b');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
like(recover($cutover), qr/^(a rolled back, b rolled back)?$/,
	'the coordinator killed before the cutover committed: both parts rolled back (or by the worker a writer started)');
wait_until($servers{$_}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', "the part on $_ rolled back")
  for sort keys %servers;
move_again('b', 'killed before the commit');
check_table('the coordinator killed before the cutover committed', 'b');

# 2. The coordinator killed after the cutover committed here, before the
# second phase: the recovery worker (started by the first commit on two
# servers) commits both parts; the move called again finishes.
$h = cutover_stopped_at('a', 'committed');
(undef, @prepared) = cutover_parts();
is("@prepared", '1 1', 'the cutover committed here, its parts on a and b prepared');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
is(on($coordinator, "SELECT server FROM partition_placement WHERE partition = 't_1'::regclass"), 'a',
	'the cutover committed here before the crash');
wait_until($servers{$_}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', "the recovery worker to commit the part on $_")
  for sort keys %servers;
move_again('a', 'killed after the commit');
check_table('the coordinator killed after the cutover committed', 'a');

# 3. The coordinator killed in the second phase: one part committed, the
# other by recovery.
$h = cutover_stopped_at('b', 'second phase');
($cutover, @prepared) = cutover_parts();
is($prepared[0] + $prepared[1], 1, 'in the second phase: one part of the cutover committed, the other still prepared');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
like(recover($cutover), qr/^(a committed|b committed)?$/,
	'the coordinator killed in the second phase: the other part committed (or by the worker a writer started)');
wait_until($servers{$_}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', "the part on $_ committed")
  for sort keys %servers;
move_again('b', 'killed in the second phase');
check_table('the coordinator killed in the second phase', 'b');

# 4. The server the partition leaves (b) killed after it prepared: the
# cutover, cancelled before its commit here, fails and its part on a rolls
# back; b's part, once b is back, by recovery; the move called again cuts
# over.
$h = cutover_stopped_at('a', 'prepared');
($cutover, @prepared) = cutover_parts();
is("@prepared", '1 1', 'the cutover prepared its part on a and on b');
$servers{b}->stop('immediate');
cancel_move();
my (undef, $err) = finish_sql($h);
like($err, qr/canceling statement/, 'the cutover, cancelled before its commit here, fails');
wait_until($servers{a}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', 'its part on a to roll back with the abort');
$servers{b}->start;
like(recover($cutover), qr/^(b rolled back)?$/, 'recovery (or the worker the abort started) rolls back the part b kept');
wait_until($servers{b}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', 'the part on b rolled back');
move_again('a', 'the server left killed after it prepared');
check_table('the server the partition leaves killed after it prepared', 'a');

# 5. The server the partition goes to (b) killed after the cutover
# committed here: the second phase cannot reach it (a warning); the call
# fails after it; the worker commits b's part once b is back, and the move
# called again finishes.
$h = cutover_stopped_at('b', 'committed');
(undef, @prepared) = cutover_parts();
is("@prepared", '1 1', 'the cutover committed here, its parts on a and b prepared');
$servers{b}->stop('immediate');
cancel_move();
(undef, $err) = finish_sql($h);
like($err, qr/WARNING:  could not commit the transaction's part prepared on server "b"/,
	'the cutover committed; its second phase warns that b was not reached');
$servers{b}->start;
wait_until($servers{b}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', 'the recovery worker to commit the part on b');
move_again('b', 'the server gone to killed after the commit');
check_table('the server the partition goes to killed after the cutover committed', 'b');

cmp_ok(on($coordinator, 'SELECT count(*) FROM mirror'), '>', 0, 'the writers committed transactions');

done_testing();
