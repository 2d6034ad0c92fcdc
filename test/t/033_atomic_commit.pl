# test/t/033_atomic_commit.pl
#	Atomic commit across servers (docs/scaling-out.md, "Transactions that
#	write on several servers"): a coordinator and two servers a and b, set
#	up with atomic_commit_add_server; a table sharded by jumpbackhash over
#	them (bucket 0 here, 1 on a, 2 on b).  Each transaction k of the test
#	writes a row of k on a, one on b and one in the mirror here, or, for
#	the failures, tries to: in the end, after recovery, the rows of k are on
#	a, on b and in the mirror, or nowhere, and nothing is left prepared.
#	The coordinator stops between the phases where
#	subsetting.atomic_commit_test_stop says (until it is killed, or the
#	query cancelled): a server refusing at commit, a server killed after it
#	prepared, the coordinator killed before its commit, after it and during
#	the second phase; then pgbench writing through the table while a
#	partition moves, the table is rebalanced and resharded, each call
#	killed into twice (a server stopped while it runs) and made again until
#	it ends.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($coordinator, $servers) = atomic_commit_cluster(q{
	CREATE TABLE t (id bigint PRIMARY KEY, k int NOT NULL, v text);
	CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
	$$BEGIN IF NEW.v = 'refuse' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END$$;
	CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW EXECUTE FUNCTION refuse();
}, 1);
my %servers = %$servers;
on($coordinator, q{
	-- transaction k: its row on a, on b and in the mirror; v 'refuse' is refused by the servers at commit
	CREATE FUNCTION write_k(k int, v text DEFAULT 'x') RETURNS void LANGUAGE sql AS $$
		INSERT INTO t SELECT id, k, v FROM keys WHERE n = k AND bucket IN (1, 2);
		INSERT INTO mirror VALUES (k);
	$$;
});

# Every k whole or absent: on a, on b and in the mirror alike; nothing left
# prepared anywhere.  Returns the number of transactions whole.
sub check_whole
{
	my ($what) = @_;
	my $on = sub {
		my ($where) = @_;
		return on($coordinator, "SELECT coalesce(string_agg(k::text, ',' ORDER BY k), '') FROM $where");
	};
	my ($a, $b, $mirror) = ($on->('t_1'), $on->('t_2'), $on->('mirror'));
	is($a, $mirror, "$what: the transactions on a are those committed here");
	is($b, $mirror, "$what: the transactions on b are those committed here");
	for my $name (sort keys %servers)
	{
		is(on($servers{$name}, 'SELECT count(*) FROM pg_prepared_xacts'), '0', "$what: nothing left prepared on $name");
	}
	return scalar(() = $mirror =~ /\d+/g);
}

# A transaction of k that stops at STOP, in the background; returns it once
# the coordinator logs the stop.
sub stopped_at
{
	my ($k, $stop) = @_;
	my $offset = -s $coordinator->logfile;
	my $h = start_sql($coordinator,
		"SET subsetting.atomic_commit_test_stop = '$stop'; SELECT write_k($k)");
	$coordinator->wait_for_log(qr/atomic commit stopped for a test at "\Q$stop\E"/, $offset);
	return $h;
}

# Recovery after the coordinator comes back, by a call (or by the worker a
# session's first commit on both servers starts).
sub recover
{
	return on($coordinator,
		"SELECT string_agg(server || ' ' || outcome, ', ' ORDER BY server) FROM atomic_commit_recover()");
}

# 1. Committed on both, and refused at commit by b: on neither.
on($coordinator, 'SELECT write_k(1)');
my ($ret, $out, $err) = $coordinator->psql('postgres', "SELECT write_k(2, 'refuse')");
like($err, qr/refused at commit/, 'b refuses at commit: the transaction fails');
check_whole('refused at commit');

# 2. A server killed after it prepared, before the commit here: the
# transaction fails; its part on the other server, prepared, is rolled back
# at once, and the killed server's by recovery once it is back.
my $h = stopped_at(3, 'prepared');
is(on($servers{$_}, 'SELECT count(*) FROM pg_prepared_xacts'), '1', "$_ prepared its part")
  for sort keys %servers;
$servers{b}->stop('immediate');
on($coordinator, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%write_k(3)%' AND pid <> pg_backend_pid()");
(undef, $err) = finish_sql($h);
like($err, qr/canceling statement/, 'the transaction, cancelled before its commit here, fails');
$servers{b}->start;
like(recover(), qr/^(b rolled back)?$/, 'recovery (or the worker the abort started) rolls back the part b kept');
wait_until($servers{b}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', 'the part on b rolled back');
check_whole('a server killed after it prepared');

# 3. A server killed after the commit here: the second phase cannot reach
# it (a warning); the recovery worker commits its part once it is back.
$h = stopped_at(4, 'committed');
$servers{b}->stop('immediate');
on($coordinator, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%write_k(4)%' AND pid <> pg_backend_pid()");
my (undef, $said) = finish_sql($h);
like($said, qr/WARNING:  could not commit the transaction's part prepared on server "b"/, 'the commit warns that b was not reached');
$servers{b}->start;
wait_until($servers{b}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', 'the recovery worker to commit the part on b');
is(on($coordinator, 'SELECT count(*) FROM mirror WHERE k = 4'), '1', 'the transaction committed here');
check_whole('a server killed between the phases');

# 4. The coordinator killed after every part prepared, before its commit:
# after the restart, recovery rolls both back.
$h = stopped_at(5, 'prepared');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
is(recover(), 'a rolled back, b rolled back', 'the coordinator killed before its commit: both parts rolled back');
check_whole('the coordinator killed before its commit');

# 5. The coordinator killed after its commit, before the second phase: the
# worker that the first commit on both servers after the restart starts
# commits both.
$h = stopped_at(6, 'committed');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
is(on($coordinator, 'SELECT count(*) FROM mirror WHERE k = 6'), '1', 'the transaction committed here before the crash');
on($coordinator, 'SELECT write_k(7)');
wait_until($servers{$_}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', "the recovery worker to commit the part on $_")
  for sort keys %servers;
check_whole('the coordinator killed after its commit');

# 6. The coordinator killed during the second phase: one part committed,
# the other by recovery.
$h = stopped_at(8, 'second phase');
$coordinator->stop('immediate');
finish_sql($h);
$coordinator->start;
my $recovered = recover();
like($recovered, qr/^(a committed|b committed)$/, "the coordinator killed in the second phase: the other part committed ($recovered)");
check_whole('the coordinator killed in the second phase');

# 7. pgbench writing through the table (each transaction: two servers and
# the mirror) while a partition moves from a to b, the table is rebalanced
# over the three servers and resharded to four buckets, a server stopped
# and started again twice during each (each call made again after it
# failed, as a DBA would: it continues).  pgbench ends a client at its first
# error, and a run once every client ended: it runs again, in a loop.
on($coordinator, 'CREATE SEQUENCE ks START 100');
start_pgbench_loop($coordinator, 'writers', <<'PGBENCH', 4);
SELECT nextval('ks')::int AS k \gset
BEGIN;
INSERT INTO t SELECT id, :k, 'x' FROM keys WHERE n = :k AND bucket IN (1, 2);
INSERT INTO mirror VALUES (:k);
COMMIT;
PGBENCH
# (rows enough that each move and the resharding copy a while: the kills
# come during them; written where they belong, postgres_fdw would insert
# them one by one)
on($coordinator, "INSERT INTO t_0 SELECT id, 0, 'y' FROM keys WHERE id > 150000 AND bucket = 0");
for my $name (sort keys %servers)
{
	on($servers{$name}, "INSERT INTO t SELECT id, 0, 'y' FROM generate_series(150001, 300000) AS id
	                     WHERE jumpbackhash(id, 3) = " . ($name eq 'a' ? 1 : 2));
}
on($coordinator, 'CREATE TABLE t_new (id bigint NOT NULL, k int NOT NULL, v text)');
my $calls = start_calls_until_done($coordinator, 'engine',
	[ "CALL partition_move('t_1', 'b')", "CALL rebalance('t', ARRAY[NULL, 'a', 'b']::name[])",
	  "CALL reshard_add_partition('t', 't_new')" ]);
# (each call killed into twice: once it runs, a server is stopped, and
# started again a second later)
my %kills;
my $rounds = 0;
for my $op ('partition_move', 'rebalance', 'reshard_add_partition')
{
	for (1 .. 2)
	{
		my $running;
		while ($calls->{handle}{run}->pumpable)
		{
			$running = on($coordinator, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CALL $op(%' AND state = 'active'");
			last if $running;
			select(undef, undef, undef, 0.05);
		}
		last unless $running;
		my $victim = $servers{ (sort keys %servers)[ int(rand(2)) ] };
		select(undef, undef, undef, rand(0.5));
		$victim->stop('immediate');
		$kills{$op}++;
		$rounds++;
		sleep(1);
		$victim->start;
	}
}
my @made = finish_calls($calls);
note("the engine's calls, $rounds servers killed meanwhile ("
	  . join(', ', map { "$_ running: " . ($kills{$_} // 0) } sort keys %kills) . '): ' . join('; ', @made));
is(scalar(grep { /: \d+ calls$/ } @made), 3, 'the move, the rebalance and the resharding ended, servers killed meanwhile');
is(on($coordinator, "SELECT string_agg(coalesce(server, 'here'), ' ' ORDER BY coalesce(server, 'here')) FROM partition_placement WHERE \"table\" = 't'::regclass"),
	'a b here here', 'rebalanced over the three servers, then resharded to four buckets');
stop_writer_loops(sub { });
on($coordinator, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = 'postgres'");
recover();
wait_until($servers{$_}, 'SELECT count(*) = 0 FROM pg_prepared_xacts', "nothing left prepared on $_")
  for sort keys %servers;
my $committed = on($coordinator, 'SELECT count(*) FROM mirror WHERE k >= 100');
cmp_ok($committed, '>', 0, 'the writers committed transactions');
note("writers: $committed transactions committed, $rounds servers killed");
is(on($coordinator, 'SELECT count(*) || md5(string_agg(id::text, \',\' ORDER BY id)) FROM t WHERE k = 0'),
	on($coordinator, "SELECT count(*) || md5(string_agg(id::text, ',' ORDER BY id)) FROM generate_series(150001, 300000) AS id"),
	'the rows the engine moved, all there, once');
is(on($coordinator, 'SELECT count(*) FROM t WHERE k >= 100'), 2 * $committed,
	'every committed transaction has its two rows, none of a failed one');
is(on($coordinator, 'SELECT count(*) FROM mirror m LEFT JOIN (SELECT k, count(*) AS n FROM t GROUP BY k) AS w USING (k)
                     WHERE w.n IS DISTINCT FROM 2'), '0',
	'each committed transaction whole');

done_testing();
