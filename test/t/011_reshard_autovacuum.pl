# test/t/011_reshard_autovacuum.pl
#	An autovacuum of a partition does not make a resharding fail.  The
#	engine waits for each of its locks at most cutover_budget (500 ms by
#	default); PostgreSQL cancels an autovacuum that holds a lock someone
#	waits for only once that wait reaches deadlock_timeout (1 s by default),
#	so unless the engine lowers deadlock_timeout for its waits, every
#	attempt gives up before the autovacuum is cancelled and the call fails
#	(could not lock the partitions of ... in 10 attempts).  Autovacuum is
#	likely on a table just resharded: every row of its rewritten
#	partitions is new.
#
#	One server whose autovacuum vacuums slowly (cost limit 1, delay 100
#	ms: a vacuum of a partition of 100,000 rows takes far longer than this
#	test) and looks every second.  A table LIST (jumpbackhash(id, 2)) of
#	100,000 rows; the test waits until pg_stat_progress_vacuum shows an
#	autovacuum of one of its partitions, then adds a partition with the
#	default budget and attempts, and removes it again once an autovacuum
#	of a partition runs again.  Checks: both calls succeed; the server log
#	says an autovacuum was cancelled; the rows are those of before, each
#	in the partition of its bucket; nothing of the engine is left.  No
#	check depends on timing: the vacuum is slower than any budget by
#	orders of magnitude, and the test waits for it to be running.
#
# suite: autovacuum
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $node = new_server('autovacuum', <<'CONF');
autovacuum_naptime = 1s
autovacuum_vacuum_cost_delay = 100ms
autovacuum_vacuum_cost_limit = 1
autovacuum_vacuum_insert_threshold = 1000
log_autovacuum_min_duration = 0
CONF

$node->safe_psql('postgres', q{
CREATE EXTENSION subsetting;
CREATE TABLE t (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE t_0 PARTITION OF t FOR VALUES IN (0);
CREATE TABLE t_1 PARTITION OF t FOR VALUES IN (1);
CREATE TABLE t_2 (LIKE t INCLUDING ALL);
INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 100000) AS i;
CREATE TABLE before AS SELECT * FROM t;
});

# Waits until an autovacuum of a partition of t runs.
sub wait_for_autovacuum
{
	wait_until($node,
		"SELECT EXISTS (SELECT FROM pg_stat_progress_vacuum p JOIN pg_stat_activity a USING (pid)
		                WHERE a.backend_type = 'autovacuum worker'
		                  AND p.relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 't'::regclass))",
		"an autovacuum of a partition of t");
}

# The rows against the copy made before (EXCEPT ALL both ways), the rows
# not in the partition of jumpbackhash(id, BUCKETS), what the engine left.
sub check
{
	my ($buckets, $what) = @_;
	is($node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM (TABLE t EXCEPT ALL TABLE before) AS d)
       + (SELECT count(*) FROM (TABLE before EXCEPT ALL TABLE t) AS d) || ' '
       || (SELECT count(*) FROM t WHERE tableoid <> format('t_%s', jumpbackhash(id, $buckets))::regclass)}),
		'0 0', "$what: every row once, in its bucket's partition");
	is($node->safe_psql('postgres', $ENGINE_LEFTOVERS), 'none', "$what: nothing of the engine left");
}

my $log_offset = -s $node->logfile;
wait_for_autovacuum();
my ($out, $err) = ('', '');
$node->psql('postgres', "CALL reshard_add_partition('t', 't_2')", stdout => \$out, stderr => \$err);
is($err, '', 'adding a partition while an autovacuum of a partition runs succeeds');
check(3, 'after the add');

wait_for_autovacuum();
$node->psql('postgres', "CALL reshard_remove_partition('t', 't_2')", stdout => \$out, stderr => \$err);
is($err, '', 'removing it while an autovacuum of a partition runs succeeds');
check(2, 'after the remove');

like(slurp_file($node->logfile, $log_offset), qr/canceling autovacuum task/,
	'the autovacuums the engine waited for were cancelled');

$node->stop;
done_testing();
