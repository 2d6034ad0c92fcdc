# test/t/018_reshard_mutual_foreign_keys.pl
# suite: two sharded tables that refer to each other
#	Two tables sharded by the extension, each with a foreign key to the
#	other, resharded at the same time from two sessions under a writer
#	through both parents.  a and b are HASH (id jumpbackhash2_int8_ops) with
#	a primary key on id (a foreign key to a partitioned table needs a unique
#	key that includes its partition key: the primary key is it).  a.b_id
#	REFERENCES b ON DELETE CASCADE; b.a_id REFERENCES a (NO ACTION).  The
#	writer, one transaction at a time: a row of b referring to a row of a,
#	a row of a referring to it, an update of a row of a through the parent,
#	and every third time a delete of an earlier row of b that cascades to
#	the row of a referring to it; the same statements on two plain tables
#	with the same keys (the mirror) in the same transaction, so that every
#	acknowledged write is in the mirror.  A write that fails is recorded
#	with its SQLSTATE (a deadlock PostgreSQL detects would be one: reported).
#
#	First one at a time, each stopped in a phase (reshard_begin,
#	reshard_step) while the other is called: b stopped after its cutover
#	(phase finish), then a called; a stopped in its copy, then b called.
#	The second call is refused at once, saying that the other table is being
#	resharded, and writes nothing (before, it failed in its checks with an
#	error that blamed a's partitions, or went on and failed at its cutover,
#	its whole copy thrown away); once the first is done, calling it again
#	succeeds.  Then at once from two sessions: adding a partition to each
#	(a_2, b_2), then removing them.  Each call ends done, or fails with a
#	clear error (the other table is being resharded; on a busy machine, out
#	of attempts, its work kept) and leaves no resharding running; calling it
#	again alone succeeds (called again while it runs out of attempts, at
#	most 5 times: call_until_done).  A deadlock left undetected would hang a
#	call past the test's timeout.  After each round: both tables equal their mirrors
#	(EXCEPT ALL both ways: every acknowledged row there once), each row in
#	the partition of its bucket, every foreign key validated (the
#	constraints and the rows PostgreSQL keeps for each partition) with the
#	definitions of before, no row referring to a row that is not there, and
#	nothing of the engine left; at the end the keys still enforced and no
#	write failed.  No check depends on timing: which of the two calls
#	begins first is reported, not checked.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest qw(:DEFAULT start_sql finish_sql);

my $node = new_server('mutual');
$node->safe_psql('postgres', q{
CREATE EXTENSION subsetting;
CREATE TABLE a (id bigint PRIMARY KEY, b_id bigint, note text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE a_0 PARTITION OF a FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE a_1 PARTITION OF a FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE b (id bigint PRIMARY KEY, a_id bigint, note text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE b_0 PARTITION OF b FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE b_1 PARTITION OF b FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO b SELECT i, NULL, 'b' || i FROM generate_series(1, 2000) AS i;
INSERT INTO a SELECT i, i, 'a' || i FROM generate_series(1, 2000) AS i;
UPDATE b SET a_id = id;
ALTER TABLE a ADD CONSTRAINT a_b FOREIGN KEY (b_id) REFERENCES b ON DELETE CASCADE;
ALTER TABLE b ADD CONSTRAINT b_a FOREIGN KEY (a_id) REFERENCES a;
CREATE TABLE a_2 (LIKE a INCLUDING ALL);
CREATE TABLE b_2 (LIKE b INCLUDING ALL);
-- the mirror: plain tables, the same keys
CREATE TABLE ma (id bigint PRIMARY KEY, b_id bigint, note text);
CREATE TABLE mb (id bigint PRIMARY KEY, a_id bigint, note text);
INSERT INTO mb SELECT * FROM b;
INSERT INTO ma SELECT * FROM a;
ALTER TABLE ma ADD FOREIGN KEY (b_id) REFERENCES mb ON DELETE CASCADE;
ALTER TABLE mb ADD FOREIGN KEY (a_id) REFERENCES ma;
CREATE TABLE writer_errors (n bigint, sqlstate text, message text);
CREATE TABLE writer_stop (stop boolean);
CREATE TABLE keys_before AS
    SELECT conrelid::regclass::text AS on_table, conname, pg_get_constraintdef(oid) AS definition
    FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('a'::regclass, 'b'::regclass);
});

# The writer: until writer_stop has a row, one transaction per round (the
# statements in a block whose errors are recorded, the COMMIT outside it).
my $writer_sql = q{
DO $$
DECLARE
    n bigint := 0;
    k bigint;
BEGIN
    WHILE NOT EXISTS (SELECT FROM writer_stop) LOOP
        n := n + 1;
        k := 100000 + n;
        BEGIN
            INSERT INTO b VALUES (k, n % 2000 + 1, 'w');
            INSERT INTO mb VALUES (k, n % 2000 + 1, 'w');
            INSERT INTO a VALUES (k, k, 'w');
            INSERT INTO ma VALUES (k, k, 'w');
            UPDATE a SET note = note || '+' WHERE a.id = n % 2000 + 1;
            UPDATE ma SET note = note || '+' WHERE ma.id = n % 2000 + 1;
            IF n % 3 = 0 THEN
                DELETE FROM b WHERE b.id = k - 2;
                DELETE FROM mb WHERE mb.id = k - 2;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO writer_errors VALUES (n, SQLSTATE, SQLERRM);
        END;
        COMMIT;
        PERFORM pg_sleep(0.002);
    END LOOP;
END
$$};

# The writes so far, and the errors of the writer.
sub writer_progress
{
	return $node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM ma) || \' \' || (SELECT count(*) FROM writer_errors)');
}

# Waits until the writer has committed N more rows of a.
sub wait_for_writes
{
	my ($n) = @_;
	my $count = $node->safe_psql('postgres', 'SELECT count(*) FROM ma');
	wait_until($node, "SELECT count(*) >= $count + $n FROM ma", "the writer to commit $n more rows of a");
	return;
}

# The state of the resharding of TABLE: phase, error.
sub state_of
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT phase || '|' || coalesce(error, '') FROM reshard_state WHERE parent_name = 'public.$table'");
}

# Runs the two calls (table => call) at once; each that fails is reported
# and checked: a clear error (the other table is being resharded: refused
# before anything was made, the calls beginning one after the other; or,
# on a busy machine, out of attempts), and the table left whole (no
# resharding of it running: refused, or its work kept to continue).  Once both ended, each that failed is called again
# alone (call_until_done), and must succeed.
sub at_once
{
	my ($what, %calls) = @_;
	my %running = map { ($_ => start_sql($node, "CALL $calls{$_}")) } sort keys %calls;
	my @again;
	for my $table (sort keys %calls)
	{
		my ($out, $err) = finish_sql($running{$table});
		my $state = state_of($table);
		if ($err !~ /ERROR:/)
		{
			like($state, qr/^done\|/, "$what: $table: the call ends done");
			next;
		}
		note("$what: $table: the call failed: $err (state: $state)");
		like($err,
			qr/ERROR:  (cannot reshard public\.$table while public\.[ab] \(phase [a-z ]+\), linked to it by a foreign key, is being resharded|could not cut public\.$table over within)/,
			"$what: $table: the call that failed says why clearly");
		like($state, qr/^(|done|aborted|cutover|catch up)\|/,
			"$what: $table: the call that failed left no resharding running");
		push @again, $table;
	}
	for my $table (@again)
	{
		my ($ret, $again_out, $again_err, $again) = call_until_done($node, "CALL $calls{$table}", "public.$table");
		is($ret, 0, "$what: $table: calling it again succeeds") or diag($again_err);
		note("$what: $table: called again $again times");
		like(state_of($table), qr/^done\|/, "$what: $table: done");
	}
	return;
}

# What must hold after each round, BUCKETS each.
sub check
{
	my ($what, $buckets) = @_;
	is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM (TABLE a EXCEPT ALL TABLE ma) AS d) || ' ' || (SELECT count(*) FROM (TABLE ma EXCEPT ALL TABLE a) AS d)
       || ' ' || (SELECT count(*) FROM (TABLE b EXCEPT ALL TABLE mb) AS d) || ' ' || (SELECT count(*) FROM (TABLE mb EXCEPT ALL TABLE b) AS d)}),
		'0 0 0 0', "$what: a and b equal their mirrors (every acknowledged write, once)");
	is($node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM a WHERE tableoid <> format('a_%s', jumpbackhash(id, $buckets))::regclass)
       + (SELECT count(*) FROM b WHERE tableoid <> format('b_%s', jumpbackhash(id, $buckets))::regclass) || ' '
       || (SELECT count(*) FROM pg_inherits WHERE inhparent = 'a'::regclass) || ' '
       || (SELECT count(*) FROM pg_inherits WHERE inhparent = 'b'::regclass)}),
		"0 $buckets $buckets", "$what: $buckets partitions each, every row in its bucket's");
	is($node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE NOT convalidated) || ' '
       || count(*) FILTER (WHERE conparentid = 0 AND conrelid IN ('a'::regclass, 'b'::regclass))
FROM pg_constraint WHERE contype = 'f'
  AND (conrelid IN (SELECT relid FROM pg_partition_tree('a') UNION ALL SELECT relid FROM pg_partition_tree('b'))
       OR confrelid IN (SELECT relid FROM pg_partition_tree('a') UNION ALL SELECT relid FROM pg_partition_tree('b')))}),
		'0 2', "$what: both foreign keys (and their rows for each partition) validated");
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM (SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
                      WHERE contype = 'f' AND conrelid IN ('a'::regclass, 'b'::regclass) AND conparentid = 0
                      EXCEPT SELECT * FROM keys_before) AS d}),
		'0', "$what: the foreign keys as they were defined");
	# (each partition of a referring table has one row per foreign key
	# inherited from its parent, and the referring parent one per partition
	# of the table referred to)
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conparentid <> 0
  AND conrelid IN (SELECT relid FROM pg_partition_tree('a') UNION ALL SELECT relid FROM pg_partition_tree('b'))}),
		2 * 2 * $buckets, "$what: PostgreSQL's rows of the foreign keys, for each partition, as for a table never resharded");
	is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM a WHERE b_id IS NOT NULL AND NOT EXISTS (SELECT FROM b WHERE b.id = a.b_id))
       + (SELECT count(*) FROM b WHERE a_id IS NOT NULL AND NOT EXISTS (SELECT FROM a WHERE a.id = b.a_id))}),
		'0', "$what: no row refers to a row that is not there");
	is($node->safe_psql('postgres', $ENGINE_LEFTOVERS), 'none', "$what: nothing of the engine left");
	return;
}

check('before', 2);
my $writer = start_sql($node, $writer_sql);
wait_for_writes(50);

# One after the other, each stopped in a phase while the other is called
# (reshard_begin, reshard_step): b stopped after its cutover (phase finish:
# the foreign keys between a and b are on b's new partitions, a's on its
# partitions only), then a called; a stopped in its copy, then b called.
# The second call is refused at once, saying why (it failed in its checks
# with an error that blamed a's partitions, or after its whole copy), and
# makes nothing; once the first is done, calling it again succeeds.
sub step_to
{
	my ($table, $phase) = @_;
	# (an error fails the check of the state it leaves: reported, not died of)
	$node->psql('postgres', qq{
DO \$\$
BEGIN
    FOR i IN 1 .. 50 LOOP
        EXIT WHEN (SELECT phase FROM reshard_state WHERE parent_name = 'public.$table') IN ('$phase', 'done', 'aborted');
        CALL reshard_step('$table');
    END LOOP;
END
\$\$});
	return state_of($table);
}
for my $order ([ 'b', 'a', 'finish', 'add' ], [ 'a', 'b', 'copy', 'remove' ])
{
	my ($first, $second, $phase, $operation) = @$order;
	$node->safe_psql('postgres', "CALL reshard_begin('$first', '$operation', '${first}_2')");
	is(step_to($first, $phase), "$phase|", "one at a time: $first stopped in phase $phase");
	my $second_state = state_of($second);
	my ($ret, $out, $err) = $node->psql('postgres', "CALL reshard_${operation}_partition('$second', '${second}_2')");
	like($err, qr/ERROR:  cannot reshard public\.$second while public\.$first \(phase $phase\), linked to it by a foreign key, is being resharded/,
		"one at a time: $second, called while $first is in phase $phase, is refused, saying why");
	is(state_of($second), $second_state, "one at a time: ${second}'s refused call wrote no state");
	is(step_to($first, 'done'), 'done|', "one at a time: $first done");
	($ret, $out, $err) = call_until_done($node, "CALL reshard_${operation}_partition('$second', '${second}_2')", "public.$second");
	is($ret, 0, "one at a time: $second called again succeeds") or diag($err);
	check("one at a time, after $first then $second ($operation)", $operation eq 'add' ? 3 : 2);
}
# (a partition detached keeps the foreign keys it had: new ones to add;
# dropping them may deadlock with the writer, which checks its keys: again)
for my $try (1 .. 10)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		'DROP TABLE a_2, b_2; CREATE TABLE a_2 (LIKE a INCLUDING ALL); CREATE TABLE b_2 (LIKE b INCLUDING ALL)');
	last if $ret == 0;
	die "could not make a_2 and b_2 again: $err" if $err !~ /deadlock detected/ || $try == 10;
}

at_once('adding',
	a => "reshard_add_partition('a', 'a_2')",
	b => "reshard_add_partition('b', 'b_2')");
wait_for_writes(50);
check('after adding (writer running)', 3);

at_once('removing',
	a => "reshard_remove_partition('a', 'a_2')",
	b => "reshard_remove_partition('b', 'b_2')");
wait_for_writes(50);

$node->safe_psql('postgres', 'INSERT INTO writer_stop VALUES (true)');
my ($writer_out, $writer_err) = finish_sql($writer);
is($writer_err, '', 'the writer ran to its end');
note('writer: rows of a written (mirror), errors: ' . writer_progress());
# A writer whose cascade locks the tables in another order than the engine
# can still be the one PostgreSQL cancels in a deadlock (rarely: one round
# in about 3,000, once in ten runs); its round is rolled back whole, table
# and mirror alike, as an application would retry it.  Any other error is a
# failure.
note('writer rounds lost to a deadlock: '
	  . $node->safe_psql('postgres', q{SELECT count(*) FROM writer_errors WHERE sqlstate = '40P01'}));
is($node->safe_psql('postgres',
		q{SELECT coalesce(string_agg(DISTINCT sqlstate || ' ' || message, '; '), 'none') FROM writer_errors WHERE sqlstate <> '40P01'}),
	'none', 'no write failed but for a deadlock');
check('after removing', 2);

# The keys are still enforced, both ways, and the cascade.
my ($ret, $out, $err) = $node->psql('postgres', 'INSERT INTO a VALUES (-1, -1)');
like($err, qr/violates foreign key constraint "a_b/, 'a.b_id still checked');
($ret, $out, $err) = $node->psql('postgres', 'INSERT INTO b VALUES (-1, -1)');
like($err, qr/violates foreign key constraint "b_a/, 'b.a_id still checked');
is($node->safe_psql('postgres', q{
INSERT INTO b VALUES (-2, NULL); INSERT INTO a VALUES (-2, -2); DELETE FROM b WHERE id = -2;
SELECT count(*) FROM a WHERE id = -2}), '0', 'the cascade from b to a');

$node->stop;
done_testing();
