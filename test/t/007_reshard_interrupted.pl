# test/t/007_reshard_interrupted.pl
#	A resharding by the 1.2 engine (reshard_engine_run) cut short anywhere
#	loses nothing and can be finished.
#
#	Two tables of 30,000 rows, one PARTITION BY HASH with a jumpbackhash
#	operator class (6 partitions, a primary key), one PARTITION BY LIST
#	(jumpbackhash(id, 4)) (4 partitions, the key not unique, so that a row
#	doubled by the engine would stay doubled).  In each run, two writers go
#	through the parent of the table the whole time (server-side loops, one
#	transaction per round: an insert, an update of another column, an update
#	of the key, a delete, on rows of their own), each writing the same change
#	into a plain mirror table in the same transaction; a writer whose session
#	dies (a terminated backend, a crash, a restart) connects again.  The
#	resharding (add a bucket, or remove the last one: whichever takes the
#	table back to its first layout) runs in a background session; a watcher
#	polls reshard_progress in a server-side loop and, as soon as the state
#	row of that call shows the phase chosen for the run or a later one (a
#	short phase may be missed: the next one is cut), cuts the call short in
#	one of four ways: pg_cancel_backend, pg_terminate_backend, kill -9 of its
#	backend (the server's crash recovery), or an immediate stop and a start
#	of the server.  The 24 runs cross the six phases (setup, copy, catch up,
#	verify, cutover, finish) with the four ways, on both tables; which phase
#	the cut landed in is reported (note), never asserted: every check below
#	must hold wherever it landed.  Nothing checked depends on timing.
#
#	Checks, per run: once the cut call has ended, reshard_progress shows the
#	resharding interrupted, done or aborted (a cancel before the cutover
#	makes the call undo itself: then nothing of the engine is left and the
#	layout is the old one), with no backend running it; then, still under
#	the writers, either reshard_engine_run with the same arguments, which
#	must finish it (phase done), or, in 7 of the runs, reshard_abort, which
#	must undo one that has not cut over and finish one that has; then, with
#	the writers stopped: the table equals its mirror (EXCEPT ALL both ways:
#	no row), no key is there twice, reshard_check finds no row in the wrong
#	partition, sharding_layout shows the bucket count that the outcome
#	implies, the table of the bucket out of the layout (removed, or the new
#	one of an undone addition) is empty and not a partition, and nothing of
#	the engine is left (relations, triggers or constraints named reshard_*).
#	An undo waits for no lock on the old partitions: the capture triggers
#	on those a writer holds are left, inactive, with a WARNING naming each
#	partition, until the next resharding or reshard_abort drops them.  So,
#	the checks of what is left made while the writers run accept the
#	engine's triggers on the partitions warned of in this run, and nothing
#	else; once the writers stopped, reshard_abort must drop whichever of
#	them are still there (it says how many), and then nothing may be left.
#	At the end, the server log shows no PANIC, failed assertion or crash but
#	the kill -9s.  How many transactions the writers committed, and the
#	errors their transactions met, are reported.  So that a failed run does
#	not fail the next ones, a resharding it left is undone (reshard_abort)
#	before the next run of its table, and a mirror that differs is made
#	equal to its table again after the check.
#
# suite: interrupted resharding
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $started = time;
# PostgreSQL::Test::Cluster turns restart_after_crash off: a kill -9 must
# restart the server here.
my $node = new_server('interrupted', 'restart_after_crash = on');

# The tables and their first number of buckets: a run adds a bucket to a
# table in its first layout, else removes the last one.
my %first = (h => 6, l => 4);

$node->safe_psql('postgres', q{
CREATE EXTENSION subsetting;
CREATE TABLE h (id bigint PRIMARY KEY, v text NOT NULL, c int NOT NULL DEFAULT 0)
    PARTITION BY HASH (id jumpbackhash6_int8_ops);
SELECT format('CREATE TABLE h_%s PARTITION OF h FOR VALUES WITH (MODULUS 6, REMAINDER %s)', b, b)
FROM generate_series(0, 5) AS b \gexec
CREATE TABLE l (id bigint NOT NULL, v text NOT NULL, c int NOT NULL DEFAULT 0)
    PARTITION BY LIST (jumpbackhash(id, 4));
SELECT format('CREATE TABLE l_%s PARTITION OF l FOR VALUES IN (%s)', b, b) FROM generate_series(0, 3) AS b \gexec
CREATE INDEX l_id ON l (id);
INSERT INTO h SELECT i, 'v' || i FROM generate_series(1, 30000) AS i;
INSERT INTO l SELECT i, 'v' || i FROM generate_series(1, 30000) AS i;
CREATE TABLE h_mirror (id bigint NOT NULL, v text NOT NULL, c int NOT NULL);
CREATE TABLE l_mirror (id bigint NOT NULL, v text NOT NULL, c int NOT NULL);
CREATE INDEX ON h_mirror (id);
CREATE INDEX ON l_mirror (id);
INSERT INTO h_mirror SELECT * FROM h;
INSERT INTO l_mirror SELECT * FROM l;
-- New keys: nextval * 2 + the writer's number (0 or 1), above the first ones.
CREATE SEQUENCE h_ids START 15001;
CREATE SEQUENCE l_ids START 15001;
CREATE TABLE writer_control (tbl text PRIMARY KEY, stop bool NOT NULL);
INSERT INTO writer_control VALUES ('h', false), ('l', false);
CREATE TABLE writer_commits (tbl text, writer int, commits bigint NOT NULL DEFAULT 0, PRIMARY KEY (tbl, writer));
INSERT INTO writer_commits VALUES ('h', 0), ('h', 1), ('l', 0), ('l', 1);
CREATE TABLE writer_errors (tbl text, sqlstate text, message text, detail text, phase text);

-- The rows of the table that its mirror does not have, and the other way.
CREATE FUNCTION differences(t text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT (SELECT count(*) FROM (SELECT * FROM %1$I EXCEPT ALL SELECT * FROM %2$I) AS a)
                         + (SELECT count(*) FROM (SELECT * FROM %2$I EXCEPT ALL SELECT * FROM %1$I) AS b)',
                   t, t || '_mirror') INTO n;
    RETURN n;
END $$;
CREATE FUNCTION doubled_keys(t text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (SELECT id FROM %I GROUP BY id HAVING count(*) > 1) AS d', t) INTO n;
    RETURN n;
END $$;

});

# A writer of each table: write_<t>(w, writers, pause), a loop of one
# transaction per round on the keys k with k % writers = w (so that the
# writers of a table never wait for each other), until writer_control says
# stop.  A round that fails is rolled back whole (table and mirror) and
# recorded in writer_errors.
for my $t (sort keys %first)
{
	my $procedure = q{
CREATE PROCEDURE write_@T@(w int, writers int, pause float8) LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    top bigint;
    k bigint;
    new_id bigint;
BEGIN
    LOOP
        EXIT WHEN (SELECT stop FROM writer_control WHERE tbl = '@T@');
        BEGIN
            top := (SELECT last_value FROM @T@_ids);
            new_id := nextval('@T@_ids') * writers + w;
            INSERT INTO @T@ VALUES (new_id, 'new ' || new_id);
            INSERT INTO @T@_mirror VALUES (new_id, 'new ' || new_id, 0);
            k := w + writers * floor(random() * top)::bigint;
            UPDATE @T@ SET c = c + 1, v = 'updated ' || c WHERE id = k;
            UPDATE @T@_mirror SET c = c + 1, v = 'updated ' || c WHERE id = k;
            k := w + writers * floor(random() * top)::bigint;
            new_id := nextval('@T@_ids') * writers + w;
            UPDATE @T@ SET id = new_id WHERE id = k;
            UPDATE @T@_mirror SET id = new_id WHERE id = k;
            k := w + writers * floor(random() * top)::bigint;
            DELETE FROM @T@ WHERE id = k;
            DELETE FROM @T@_mirror WHERE id = k;
            UPDATE writer_commits SET commits = commits + 1 WHERE tbl = '@T@' AND writer = w;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            INSERT INTO writer_errors
            SELECT '@T@', SQLSTATE, SQLERRM, detail, (SELECT min(phase) FROM reshard_progress WHERE "table" = 'public.@T@');
        END;
        COMMIT;
        PERFORM pg_sleep(pause);
    END LOOP;
END $$;
};
	$procedure =~ s/\@T\@/$t/g;
	$node->safe_psql('postgres', $procedure);
}
$node->safe_psql('postgres', $CUT_AT);
note sprintf("set-up: %.1f s", time - $started);

# start_writers(T): two writers of table T (write_T, see
# start_writer_loops); returns when both have committed.
sub start_writers
{
	my ($t) = @_;
	$node->safe_psql('postgres', "UPDATE writer_control SET stop = false WHERE tbl = '$t'");
	my $before = $node->safe_psql('postgres', "SELECT string_agg(commits::text, ',' ORDER BY writer) FROM writer_commits WHERE tbl = '$t'");
	my ($n0, $n1) = split /,/, $before;
	start_writer_loops($node, map { ("${t}_$_" => "CALL write_$t($_, 2, 0.01)") } 0, 1);
	wait_until($node,
		"SELECT bool_and(commits > CASE writer WHEN 0 THEN $n0 ELSE $n1 END) FROM writer_commits WHERE tbl = '$t'",
		"each writer of $t to commit");
	return $n0 + $n1;
}

# stop_writers(T): the writers of T stopped; their sessions have ended.
sub stop_writers
{
	my ($t) = @_;
	stop_writer_loops(sub { $node->safe_psql('postgres', "UPDATE writer_control SET stop = true WHERE tbl = '$t'") });
	wait_until($node,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'CALL write\\_%' AND pid <> pg_backend_pid())",
		"the sessions of the writers of $t to end");
}

# The partitions on which an undo of this run left the engine's triggers,
# inactive (its WARNINGs).
my %left_inactive;

# call_ok(CALL, NAME): the procedure call succeeds; what it said is reported.
sub call_ok
{
	my ($call, $name) = @_;
	my ($out, $err);
	my $ret = $node->psql('postgres', $call, stdout => \$out, stderr => \$err);
	is($ret, 0, $name) or diag($err);
	note "$name: $err" if $err ne '';
	inactive_triggers_heard(\%left_inactive, $err);
	return $err;
}

# The runs: the phase to cut in, how, the table, and what finishes it: the
# same call again ('run') or reshard_abort ('abort').
my @runs = (
	[ 'setup', 'cancel', 'h', 'run' ],
	[ 'copy', 'terminate', 'l', 'run' ],
	[ 'catch up', 'kill9', 'h', 'abort' ],
	[ 'verify', 'immediate', 'l', 'run' ],
	[ 'cutover', 'cancel', 'h', 'run' ],
	[ 'finish', 'terminate', 'l', 'abort' ],
	[ 'setup', 'kill9', 'l', 'run' ],
	[ 'copy', 'immediate', 'h', 'abort' ],
	[ 'catch up', 'cancel', 'l', 'run' ],
	[ 'verify', 'terminate', 'h', 'run' ],
	[ 'cutover', 'kill9', 'l', 'abort' ],
	[ 'finish', 'immediate', 'h', 'run' ],
	[ 'setup', 'terminate', 'h', 'abort' ],
	[ 'copy', 'kill9', 'h', 'run' ],
	[ 'catch up', 'immediate', 'l', 'run' ],
	[ 'verify', 'cancel', 'l', 'abort' ],
	[ 'cutover', 'terminate', 'h', 'run' ],
	[ 'finish', 'kill9', 'h', 'run' ],
	[ 'setup', 'immediate', 'l', 'run' ],
	[ 'copy', 'cancel', 'l', 'run' ],
	[ 'catch up', 'terminate', 'h', 'run' ],
	[ 'verify', 'kill9', 'h', 'run' ],
	[ 'cutover', 'immediate', 'l', 'run' ],
	[ 'finish', 'cancel', 'h', 'abort' ]);

my %landed;
my $run = 0;
for my $r (@runs)
{
	my ($wanted, $how, $t, $finish) = @$r;
	$run++;
	my $run_started = time;
	%left_inactive = ();

	# A resharding that an earlier run failed to finish is undone first, so
	# that each run starts from a table with no resharding going on.
	if ($node->safe_psql('postgres', "SELECT count(*) FROM reshard_progress WHERE \"table\" = 'public.$t' AND interrupted"))
	{
		my ($ret, $stdout, $stderr) = $node->psql('postgres', "CALL reshard_abort('$t')");
		inactive_triggers_heard(\%left_inactive, $stderr);
		note "run $run: the resharding of $t left by an earlier run: reshard_abort: " . ($stderr || 'done');
	}
	my $old = $node->safe_psql('postgres', "SELECT DISTINCT buckets FROM sharding_layout('$t')");
	my ($operation, $partition) =
	  $old == $first{$t} ? ('add', "${t}_$old") : ('remove', "${t}_" . ($old - 1));
	my $new = $operation eq 'add' ? $old + 1 : $old - 1;
	my $name = "run $run ($t $operation $old -> $new, $how in $wanted, then $finish)";

	$node->safe_psql('postgres',
		"SET client_min_messages = warning; CREATE TABLE IF NOT EXISTS $partition (LIKE $t INCLUDING ALL)")
	  if $operation eq 'add';
	my $commits_before = start_writers($t);

	# The resharding in the background, cut short by the watcher.
	my $call = "CALL reshard_engine_run('$t', '$operation', '$partition', '1 s', 20)";
	# (Before a kill -9, the session waits a little after the call, so that
	# the kill finds its backend even if the call has just ended.)
	my $engine = start_sql($node,
		[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", $call, $how eq 'kill9' ? ('SELECT pg_sleep(1)') : () ]);
	my $seen = $node->safe_psql('postgres',
		"SELECT cut_at('public.$t', $run, '$wanted', '"
		  . ($how eq 'cancel' || $how eq 'terminate' ? $how : 'none') . "')");
	my ($seen_phase, $pid, $done) = split /\|/, $seen, 3;
	if ($pid)
	{
		if ($how eq 'kill9')
		{
			my $offset = -s $node->logfile;
			kill('KILL', $pid) or die "could not kill backend $pid: $!";
			wait_for_restart($node, $offset);
		}
		elsif ($how eq 'immediate')
		{
			$node->stop('immediate');
			$node->start;
		}
	}
	my (undef, $err) = finish_sql($engine, "the end of the call of run $run ($call)");
	$err =~ s/\s+$//;
	inactive_triggers_heard(\%left_inactive, $err);
	$landed{ $pid ? $seen_phase : 'none (the call had ended)' }++;
	note "$name: $how "
	  . ($pid ? "in phase $seen_phase ($done)" : "too late: the call had ended (phase $seen_phase)")
	  . "; the call said: " . ($err eq '' ? '(nothing)' : $err);

	# No backend runs it any more; it is interrupted, done or aborted.
	wait_until($node,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity a JOIN engine_calls c USING (pid) WHERE c.run = $run)",
		"the backend of the call of run $run to end");
	my $after = $node->safe_psql('postgres',
		"SELECT phase, pid IS NULL, interrupted OR phase IN ('done', 'aborted'), coalesce(error, ''),
		        started >= (SELECT at FROM engine_calls WHERE run = $run)
		 FROM reshard_progress WHERE \"table\" = 'public.$t'");
	my ($phase, $no_pid, $stopped, $error, $ours) = map { $_ // '' } split /\|/, $after;
	is("$no_pid $stopped", 't t', "$name: after the cut, no backend runs it (phase $phase)");
	$phase = 'not begun' unless $ours eq 't';    # the row is an earlier call's
	note "$name: after the cut: phase $phase" . ($error ne '' ? ", error: $error" : '');
	if ($phase eq 'aborted')
	{
		# The call undid itself (a cancel before the cutover): nothing left
		# but the inactive triggers it warned of.
		is((engine_leftovers_but($node, \%left_inactive))[0] . ' ' . $node->safe_psql('postgres', "SELECT DISTINCT buckets FROM sharding_layout('$t')"),
			"none $old", "$name: the call undid itself: nothing left, the old layout");
	}

	# Finished or undone, still under the writers.
	my $expected_phase = 'done';
	if ($finish eq 'run')
	{
		call_ok($call, "$name: calling again finishes it") unless $phase eq 'done';
	}
	elsif ($phase eq 'done' || $phase eq 'aborted' || $phase eq 'not begun')
	{
		$expected_phase = $phase;    # nothing to undo
	}
	else
	{
		call_ok("CALL reshard_abort('$t')", "$name: reshard_abort");
		$expected_phase = 'aborted' unless $phase eq 'finish';
	}
	is($node->safe_psql('postgres',
			"SELECT phase || ' ' || (pid IS NULL)::int FROM reshard_progress WHERE \"table\" = 'public.$t'"),
		"$expected_phase 1", "$name: $expected_phase, no backend runs it")
	  unless $expected_phase eq 'not begun';
	my $buckets = $expected_phase eq 'done' ? $new : $old;

	stop_writers($t);
	my $commits = $node->safe_psql('postgres', "SELECT sum(commits) FROM writer_commits WHERE tbl = '$t'") - $commits_before;

	# (After a failure, the mirror is made equal to the table again, so that
	# the next runs check their own writes.)
	if (!is($node->safe_psql('postgres', "SELECT differences('$t')"), '0', "$name: the table equals its mirror"))
	{
		diag "some of the differences (the table's rows first, then the mirror's):\n"
		  . $node->safe_psql('postgres',
			"(SELECT 'table', * FROM (SELECT * FROM $t EXCEPT ALL SELECT * FROM ${t}_mirror) AS a ORDER BY id LIMIT 5)
			 UNION ALL
			 (SELECT 'mirror', * FROM (SELECT * FROM ${t}_mirror EXCEPT ALL SELECT * FROM $t) AS b ORDER BY id LIMIT 5)");
		$node->safe_psql('postgres', "TRUNCATE ${t}_mirror; INSERT INTO ${t}_mirror SELECT * FROM $t");
	}
	is($node->safe_psql('postgres', "SELECT doubled_keys('$t')"), '0', "$name: no key twice");
	is($node->safe_psql('postgres', "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('$t')"),
		'0', "$name: no row in the wrong partition");
	is($node->safe_psql('postgres',
			"SELECT string_agg(DISTINCT buckets::text, ',') || ' ' || count(*) FROM sharding_layout('$t')"),
		"$buckets $buckets", "$name: $buckets buckets, $buckets partitions");
	# In the first layout, the table of the next bucket is out of the
	# table (removed, or never added), and empty.
	if ($buckets == $first{$t})
	{
		is($node->safe_psql('postgres',
				"SELECT (SELECT count(*) FROM ${t}_$buckets) || ' '
				     || (SELECT count(*) FROM pg_inherits WHERE inhrelid = '${t}_$buckets'::regclass)"),
			'0 0', "$name: ${t}_$buckets is empty and not a partition");
	}
	# The triggers an undo left (warned of), dropped by reshard_abort now
	# that nobody holds the partitions; nothing else may be left.
	my ($rest, $inactive) = engine_leftovers_but($node, \%left_inactive);
	is($rest, 'none', "$name: nothing of the engine left but the inactive triggers warned of");
	if ($inactive)
	{
		my $said = call_ok("CALL reshard_abort('$t')", "$name: reshard_abort drops the $inactive triggers an undo left");
		like($said, qr/dropped $inactive triggers an undone resharding of public\.$t left/,
			"$name: reshard_abort says it dropped them");
	}
	is($node->safe_psql('postgres', $ENGINE_LEFTOVERS), 'none', "$name: nothing of the engine left");
	note sprintf("%s: %d writer transactions; %.1f s", $name, $commits, time - $run_started);
}

note "the cuts landed in: " . join(', ', map { "$_ $landed{$_}" } sort keys %landed);
note "the writers' failed transactions: "
  . $node->safe_psql('postgres',
	"SELECT coalesce(string_agg(format('%s, phase %s: %s %s (%s times)', tbl, phase, sqlstate, message, n), '; '), 'none')
	 FROM (SELECT tbl, phase, sqlstate, message, count(*) AS n FROM writer_errors GROUP BY 1, 2, 3, 4) AS e");
note "  $_" for split /\n/, $node->safe_psql('postgres', 'SELECT detail FROM writer_errors');

my $log = slurp_file($node->logfile);
is(join("\n", grep { /PANIC|TRAP:|terminated by signal (?!9:)/ } split(/\n/, $log)),
	'', "no PANIC, failed assertion or crash but the kill -9s in the server log");
note sprintf("total: %.1f s", time - $started);

done_testing();
