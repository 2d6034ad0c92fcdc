# test/t/014_reshard_unlogged_crash.pl
# suite: unlogged tables and a crash
#	A crash empties unlogged tables (crash recovery resets them): a
#	resharding that copied into unlogged tables, interrupted by a crash
#	before its cutover, must not continue from its state row (its copies may
#	be gone, and only the verification would see it) but be undone and done
#	again when it is called again.
#
#	One server; a table LIST (jumpbackhash(id, 2)) of 20,000 rows whose
#	partition of bucket 1 is UNLOGGED, and an UNLOGGED new partition t_2
#	(so both a shadow and the new partition are unlogged).  For each phase
#	after the copy and before the cutover commits (catch up, verify,
#	cutover), the resharding is driven to it step by step (reshard_begin,
#	reshard_step), the server crashes (immediate stop, start: crash
#	recovery), and reshard_add_partition is called again.  Checks, each
#	time: the call says it is done again, ends done, and the table holds
#	every row it held when it was called (after the crash: crash recovery
#	empties the unlogged partition t_1 too, as it empties any unlogged
#	table), each once, in the partition of its bucket; nothing of the
#	engine is left.  Then the partition is removed again for the next
#	round.  Nothing checked depends on timing: the steps are driven one by
#	one, and the crash comes between two of them.
#	Then a move of the unlogged partition t_1 to a server (partition_move),
#	the server crashing while the move waits for its cutover (a reader
#	holds the table): called again, the move must not bring back on the
#	server the rows the crash emptied here, but be undone and done again
#	from what t_1 holds then.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $node = new_server('unlogged', 'restart_after_crash = on');
my $server = new_server('server_a');
link_servers($node, { a => $server });
$node->safe_psql('postgres', q{
CREATE TABLE t (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE t_0 PARTITION OF t FOR VALUES IN (0);
CREATE UNLOGGED TABLE t_1 PARTITION OF t FOR VALUES IN (1);
CREATE UNLOGGED TABLE t_2 (LIKE t INCLUDING ALL);
INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 20000) AS i;
CREATE TABLE before AS SELECT * FROM t;
CHECKPOINT;
});

my $same = q{SELECT (SELECT count(*) FROM (TABLE t EXCEPT ALL TABLE before) AS a)
                  + (SELECT count(*) FROM (TABLE before EXCEPT ALL TABLE t) AS b)};
my $misplaced = q{SELECT count(*) FROM t
                  WHERE tableoid <> format('t_%s', jumpbackhash(id, (SELECT count(*)::int FROM pg_inherits
                                                                     WHERE inhparent = 't'::regclass)))::regclass};

for my $phase ('catch up', 'verify', 'cutover')
{
	# t_1 holds rows again (a crash before emptied it)
	$node->safe_psql('postgres', q{INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 20000) AS i
	                               WHERE jumpbackhash(i, 2) = 1 AND NOT EXISTS (SELECT FROM t WHERE id = i)});
	$node->safe_psql('postgres', qq{
CALL reshard_begin('t', 'add', 't_2');
DO \$\$
BEGIN
    WHILE (SELECT phase FROM reshard_state WHERE parent = 't'::regclass) <> '$phase' LOOP
        CALL reshard_step('t');
    END LOOP;
END
\$\$;
});
	is($node->safe_psql('postgres', "SELECT phase FROM reshard_progress"), $phase, "$phase: the resharding is there");
	$node->stop('immediate');
	$node->start;
	# what the table holds after the crash (its unlogged partition t_1 is
	# empty now, as PostgreSQL empties any): what the call must keep
	$node->safe_psql('postgres', 'DROP TABLE before; CREATE TABLE before AS SELECT * FROM t');
	my ($ret, $out, $err, $calls, $said) = call_until_done($node, "CALL reshard_add_partition('t', 't_2')", 'public.t');
	is($ret, 0, "$phase: after the crash, called again, it ends") or diag($err);
	like($said, qr/copies from or into unlogged tables, which a crash empties: it is undone and done again/,
		"$phase: it says it is done again");
	is($node->safe_psql('postgres', "SELECT phase FROM reshard_progress"), 'done', "$phase: done");
	is($node->safe_psql('postgres', $same), '0', "$phase: every row of before, each once");
	is($node->safe_psql('postgres', $misplaced), '0', "$phase: each in the partition of its bucket");
	is($node->safe_psql('postgres', $ENGINE_LEFTOVERS), 'none', "$phase: nothing of the engine is left");
	($ret, $out, $err) = call_until_done($node, "CALL reshard_remove_partition('t', 't_2')", 'public.t');
	is($ret, 0, "$phase: removed again") or diag($err);
	is($node->safe_psql('postgres', $same), '0', "$phase: removed again, every row there");
	$node->safe_psql('postgres', 'CHECKPOINT');
}

# The move: t_1 (unlogged) to server a, cut short in its cutover by a
# crash.  A reader holds the table, so that each cutover attempt runs out of
# its budget and the call stays in its cutover until the crash.
$node->safe_psql('postgres', q{INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 20000) AS i
                               WHERE jumpbackhash(i, 2) = 1 AND NOT EXISTS (SELECT FROM t WHERE id = i)});
# (The reader holds the table until the crash ends it: its sleep outlasts
# any wait of the test's.)
my $reader = start_sql($node,
	'BEGIN; SELECT count(*) FROM t; SELECT pg_sleep(' . 10 * $PostgreSQL::Test::Utils::timeout_default . ')');
my $move = start_sql($node, "CALL partition_move('t_1', 'a', cutover_budget => '1 s', cutover_attempts => 100)");
wait_until($node, "SELECT phase = 'cutover' AND cutover_attempts > 0 FROM reshard_progress",
	'the move of t_1 to fail a cutover attempt (a reader holds t)');
$node->stop('immediate');
finish_sql($_) for $reader, $move;
$node->start;
# (after the crash, t_1 is empty; a row is written to it, through the parent)
my $new_id = $node->safe_psql('postgres', 'SELECT i FROM generate_series(-100, -1) AS i WHERE jumpbackhash(i, 2) = 1 LIMIT 1');
$node->safe_psql('postgres', "INSERT INTO t VALUES ($new_id, 'after the crash')");
$node->safe_psql('postgres', 'DROP TABLE before; CREATE TABLE before AS SELECT * FROM t');
is($node->safe_psql('postgres', "SELECT count(*) FROM t_1"), '1', "move: after the crash, t_1 holds only the row written since");
my ($ret, $out, $err) = $node->psql('postgres', "CALL partition_move('t_1', 'a', cutover_budget => '1 s', cutover_attempts => 20)");
is($ret, 0, "move: after the crash, called again, it ends") or diag($err);
like($err, qr/copies from or into unlogged tables, which a crash empties: it is undone and done again/,
	"move: it says it is done again");
is($node->safe_psql('postgres', "SELECT phase || ' ' || coalesce(server, 'here') FROM reshard_progress, partition_placement
                                  WHERE partition = 't_1'::regclass"),
	'done a', "move: done, t_1 is on server a");
is($node->safe_psql('postgres', $same), '0', "move: every row of before, each once");
is($server->safe_psql('postgres', "SELECT string_agg(id || ' ' || v, ', ') FROM t_1"), "$new_id after the crash",
	"move: server a holds the row written after the crash, and none of those the crash emptied");
is($node->safe_psql('postgres', $ENGINE_LEFTOVERS) . ' ' . $server->safe_psql('postgres', $ENGINE_LEFTOVERS),
	'none none', "move: nothing of the engine is left, here or on server a");

done_testing();
