# test/t/004_query_cancel.pl
#	Query cancel (pg_cancel_backend) of the extension's longest-running
#	calls: a large ring build, a large rebalance, each measuring function at
#	a large job, the ring's text output and input, decoding, dispersion and
#	ring_info, batch and handoff ring lookups, and the subset functions at
#	their largest arguments (each call would run for a second or more, most
#	for many; the arguments stay within the documented limits).
#
#	Nothing here depends on timing.  Each call runs in a PL/pgSQL block that
#	first reads its inputs into variables (detoasted: reading a toasted value
#	checks for interrupts), then cancels its own statement while it evaluates
#	an argument of the call, so that the cancel is pending when the call
#	starts, and advances a sequence right after the call returns, in the same
#	row (nextval is not undone by the error).  Checks, for each call: the
#	statement fails with SQLSTATE 57014; the sequence was not advanced, so the
#	call itself stopped at the cancel (a call that never checks for interrupts
#	runs to its end first: the first case, md5 of a large text, shows that
#	this is seen); and the same session then runs its next statement.  Then
#	the server is up and its log shows no crash.  How long each call took to
#	stop is reported, not checked.
#
#	(statement_timeout is tested by pg_regress, in sql/ring_errors.sql and
#	sql/subset_metrics.sql.)
#
# suite: query cancel
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;
use Time::HiRes qw(time);

my $node = new_server('cancel');

# Nodes for the rings: 65,535 (the most a ring holds) in 1,000 zones and 10
# regions, as arrays; the same with nodes 1 .. 1,000 removed and every weight
# changed; a ring of part power 22 over them to rebalance, and its text form
# (about 90 MB).
my $started = time;
$node->safe_psql('postgres', q{
CREATE EXTENSION subsetting;
CREATE SEQUENCE finished;
CREATE TABLE nodes AS
SELECT i AS id, (1 + i % 7)::float8 AS weight, i % 1000 AS zone, i % 10 AS region
FROM generate_series(1, 65535) AS i;
CREATE TABLE node_arrays AS
SELECT array_agg(id ORDER BY id) AS ids, array_agg(weight ORDER BY id) AS weights,
       array_agg(zone ORDER BY id) AS zones, array_agg(region ORDER BY id) AS regions
FROM nodes;
CREATE TABLE changed_arrays AS
SELECT array_agg(id ORDER BY id) AS ids, array_agg((1 + id % 3)::float8 ORDER BY id) AS weights,
       array_agg(zone ORDER BY id) AS zones, array_agg(region ORDER BY id) AS regions
FROM nodes WHERE id > 1000;
CREATE TABLE rings AS
SELECT ring_build(ids, weights, zones, regions, part_power => 22, replicas => 3) AS ring FROM node_arrays;
CREATE TABLE ring_texts AS SELECT ring::text AS t FROM rings;
CREATE TABLE batch_keys AS
SELECT array_agg(i * 2654435761 # (i << 40)) AS keys FROM generate_series(1, 4194304) AS i;
});
note sprintf("set-up: %.1f s", time - $started);

# Evaluated as an argument of a call, in place of VALUE: cancels the
# session's own statement, then gives VALUE.
sub cancelling
{
	my ($value) = @_;
	return "CASE WHEN pg_cancel_backend(pg_backend_pid()) THEN $value END";
}

# The inputs of the calls, as PL/pgSQL declarations.
my $ring = "ring partition_ring := (SELECT ring FROM rings);";
my $text = "t text := (SELECT t FROM ring_texts);";
my $nodes = "ids int[] := (SELECT ids FROM node_arrays); weights float8[] := (SELECT weights FROM node_arrays);
	zones int[] := (SELECT zones FROM node_arrays); regions int[] := (SELECT regions FROM node_arrays);";

# cancel_case(NAME, DECLARATIONS, CALL[, CONTROL]): in a DO block with
# DECLARATIONS, PERFORM CALL, nextval('finished'), where one argument of
# CALL is given by cancelling() (the others constants or variables).  Checks
# that it fails with 57014 inside the call, and that the session goes on;
# for the CONTROL, only that the call runs to its end.
sub cancel_case
{
	my ($name, $declarations, $call, $control) = @_;
	my ($out, $err);
	$node->safe_psql('postgres', "ALTER SEQUENCE finished RESTART");
	my $t0 = time;
	$node->psql(
		'postgres',
		"SET subsetting.ring_cache_size = 0;
		 SELECT pg_backend_pid();
		 DO \$\$ DECLARE $declarations BEGIN PERFORM $call, nextval('finished'); END \$\$;
		 SELECT 'alive', pg_backend_pid();",
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 0,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	note sprintf("%s: stopped %.3f s after it started", $name, time - $t0);
	if ($control)
	{
		is($node->safe_psql('postgres', "SELECT is_called FROM finished"), 't',
			"$name: runs to its end (the control: a call that does not check for interrupts)");
		return;
	}
	like($err, qr/ERROR:  57014: canceling statement due to user request/, "$name: fails with SQLSTATE 57014");
	is($node->safe_psql('postgres', "SELECT is_called FROM finished"), 'f',
		"$name: stops inside the call, at the cancel");
	my ($pid, $alive) = split(/\n/, $out // '');
	is($alive, "alive|$pid", "$name: the same session runs its next statement");
}

cancel_case("md5 of a 90 MB text", $text, "md5(" . cancelling('t') . ")", 1);

# Uncancelled, on a shared 2-core machine: about 10 s.
cancel_case("ring_build, part power 24, 65,535 nodes", $nodes,
	"ring_build(" . cancelling('ids') . ", weights, zones, regions, part_power => 24, replicas => 3) IS NOT NULL");
# 3 to 5 s.
cancel_case("ring_rebalance, part power 22, 1,000 nodes removed",
	"$ring ids int[] := (SELECT ids FROM changed_arrays); weights float8[] := (SELECT weights FROM changed_arrays);
	 zones int[] := (SELECT zones FROM changed_arrays); regions int[] := (SELECT regions FROM changed_arrays);",
	"ring_rebalance(" . cancelling('ring') . ", ids, weights, zones, regions) IS NOT NULL");
# 0.5 to 0.8 s.
cancel_case("subset_balance, a job of 600,000 frontends", "",
	"subset_balance('rocksteadier', " . cancelling('600000') . ", 999999, 20)");
# 0.8 to 1.5 s (half of it sorting the hashes of 14 million subsets).
cancel_case("subset_diversity, a job of 14 million frontends", "",
	"subset_diversity('round_robin', " . cancelling('14000000') . ", 1001, 1)");
# About 1.1 s (two shuffles of 2^24 backends).
cancel_case("subset_churn, a job of 2^24 backends", "",
	"subset_churn('deterministic', " . cancelling('1') . ", 16777216, 1, 1, 16777215, 1, seed => 1)");
# About 0.7 s.
cancel_case("subset_spread, a job of a million frontends", "",
	"subset_spread('random', " . cancelling('1000000') . ", 1000000, 20, 5, seed => 1)");

# The partition ring's own long loops (each checks for interrupts at least
# every 65,536 steps, whatever the size of the ring, so a ring of 2^22 x 3
# slots stands for the largest, 2^26): the text output (about 2 s), the text
# input (about 3 s), and decoding with its transpose, the dispersion count
# and ring_info, with no room in the cache, so that the call decodes.
cancel_case("partition_ring text output, 2^22 x 3 slots", $ring,
	"length((" . cancelling('ring') . ")::text)");
cancel_case("partition_ring text input, a text of 90 MB", $text,
	"(" . cancelling('t') . ")::partition_ring IS NOT NULL");
cancel_case("ring_nodes, decoding a large ring", $ring, "ring_nodes(" . cancelling('ring') . ", 1)");
cancel_case("ring_dispersion, a large ring", $ring, "ring_dispersion(" . cancelling('ring') . ", 'zone')");
cancel_case("ring_info, a large ring", $ring, "(ring_info(" . cancelling('ring') . ")).max_balance");

# The subset functions at their largest arguments (each call 0.3 to 2.5 s).
cancel_case("rocksteadier_subset, lots of 65,536 over 2^31 - 1 backends", "",
	"rocksteadier_subset(" . cancelling('123457') . ", 2147483647, 16382, 65536)");
cancel_case("consistent_subset, 2^20 of 2^24 backends", "",
	"consistent_subset(" . cancelling('1') . ", 16777216, 1048576)");
cancel_case("deterministic_subset, 2^24 backends", "",
	"deterministic_subset(" . cancelling('1') . ", 16777216, 16777215)");
cancel_case("random_subset, 2^22 of 2^31 - 1 backends", "",
	"random_subset(" . cancelling('1') . ", 2147483647, 4194304)");

# Ring lookups: a batch of 4 million keys (the most one call takes, 4 to 7
# s); the handoff list of every node of the part power 22 ring, a walk of
# 3 x 65,536 partitions.
cancel_case("ring_nodes(ring, keys[]), a batch of 4 million keys, part power 22",
	"$ring keys bigint[] := (SELECT keys FROM batch_keys);", "ring_nodes(" . cancelling('ring') . ", keys)");
cancel_case("ring_partition_handoff_nodes, every node, part power 22", $ring,
	"ring_partition_handoff_nodes(" . cancelling('ring') . ", 0, 65535)");

is($node->safe_psql('postgres', "SELECT 1"), '1', "the server is up");
my $log = slurp_file($node->logfile);
is(join("\n", grep {
			/PANIC|TRAP:|terminated by signal|was terminated|exited with exit code|database system is in recovery/
		} split(/\n/, $log)),
	'', "no crash, PANIC or failed assertion in the server log");
note sprintf("total: %.1f s", time - $started);

done_testing();
