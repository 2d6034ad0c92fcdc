# test/t/012_reshard_interrupted_shards.pl
#	A resharding by the 1.2 engine of a table sharded with postgres_fdw,
#	cut short anywhere on the coordinator, loses nothing and can be
#	finished: the sharded counterpart of 007_reshard_interrupted.pl.
#
#	A coordinator and four shard servers, set up as in
#	009_reshard_shard_down.pl (shard_table of SubsettingTest.pm): the table
#	items (id bigint, v text, c int) PARTITION BY LIST (jumpbackhash(id, n)),
#	its partition items_b a foreign table on shard b, 20,000 rows; n goes
#	3 -> 4 -> 3 -> ..., each run adding items_3 (on shard 3) to a table of
#	three buckets or removing it from one of four, so that each run starts
#	from the layout the previous one left.  In each run, two writers go
#	through the parent on the coordinator the whole time (server-side loops,
#	one transaction per round, on keys of their own: an insert, an update
#	of another column, a key changed by a delete and an insert (an UPDATE of
#	the key would leave the row on its shard: docs/resharding.md), a
#	delete; each UPDATE and DELETE pruned to one shard by the bucket count
#	of the moment), each writing the same change into a plain mirror table
#	on the coordinator in the same transaction; a writer whose session dies
#	connects again.  CALL reshard_add_partition or reshard_remove_partition
#	runs in a background session of the coordinator (every other run with
#	shard_views: the rows that leave or enter the shards hidden on them
#	until or from the cutover, through dblink); a watcher polls
#	reshard_progress in a server-side loop and, as soon as the state row of
#	that call shows the phase chosen for the run or a later one (a short
#	phase may be missed: the next one is cut), cuts the call short in one of
#	four ways: pg_cancel_backend, pg_terminate_backend, kill -9 of its
#	backend (the coordinator's crash recovery), or an immediate stop and a
#	start of the coordinator.  The 16 runs spread the six phases (setup,
#	copy, catch up, verify, cutover, finish) over the four ways; which phase
#	the cut landed in is reported (note), never asserted: every check below
#	must hold wherever it landed.  Nothing checked depends on timing.
#
#	postgres_fdw commits a writer's transaction on the shards before it
#	commits on the coordinator, without two-phase commit: a crash of the
#	coordinator in between would leave the writer's rows on a shard but not
#	in the mirror, a difference that is postgres_fdw's, not the engine's.
#	So before a kill -9 or an immediate stop, the watcher closes a gate: an
#	advisory lock that each writer round takes, shared, just before its
#	COMMIT, and holds until the COMMIT is done on the coordinator too.  The
#	crash then finds no writer committing; a round it cuts short is rolled
#	back on the shards and on the coordinator alike.  The engine's own
#	transactions are not gated: they are what is tested.
#
#	Checks, per run: once the cut call has ended, reshard_progress shows the
#	resharding interrupted, done or aborted, with no backend running it (a
#	cancel before the cutover makes the call undo itself: then nothing of
#	the engine is left, on the coordinator or on a shard, and the layout is
#	the old one); then, still under the writers, either the same call again,
#	which must finish it (phase done; one interrupted in its undo is undone
#	to the end and done again), or, in 4 of the runs, reshard_abort, which must
#	undo one that has not cut over and finish one that has; then, with the
#	writers stopped: the table equals its mirror (EXCEPT ALL both ways: no
#	row; a row lost, doubled or changed by the engine would show), no key
#	is there twice; each shard of the layout, asked directly, holds only
#	rows of its own bucket (jumpbackhash computed on the shard), and the
#	shards together as many rows as the mirror (a row left behind on a shard
#	the table no longer reads, or poured twice, would show); reshard_check
#	finds no misplaced row; the partition key and the partitions are those
#	of the outcome (LIST (jumpbackhash(id, n)) over items_0 .. items_{n-1},
#	also as sharding_layout sees them); shard 3, out of the layout after a
#	removal or an undone addition, holds no row; nothing of the engine
#	(relations, triggers or constraints named reshard_*) is left on the
#	coordinator or on any shard.  An undo waits for no lock on the old
#	partitions: the capture triggers on those a writer holds are left,
#	inactive, with a WARNING naming each partition, until the next
#	resharding or reshard_abort drops them.  So the checks of what is left
#	accept the engine's triggers on the partitions warned of in this run,
#	and nothing else; once the writers stopped, reshard_abort must drop
#	whichever of them are still there (it says how many), and then nothing
#	may be left.  At the end, no server log shows a PANIC, a failed
#	assertion or a crash but the kill -9s.  How many transactions the
#	writers committed, and the errors their transactions met, are reported.
#	So that a failed run does not fail the next ones, a resharding it left
#	is undone (reshard_abort) before the next run, and a mirror that differs
#	is made equal to the table again after the check.
#
# suite: interrupted resharding on shards
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $started = time;
my $ROWS = 20000;

# PostgreSQL::Test::Cluster turns restart_after_crash off: a kill -9 must
# restart the coordinator here.
my $coordinator = new_server('coordinator', 'restart_after_crash = on');
my @shards = map { new_server("shard$_") } 0 .. 3;

# --- Set-up.
shard_table($coordinator, \@shards, 'items', 'id bigint NOT NULL, v text NOT NULL, c int NOT NULL', 3);
$coordinator->safe_psql('postgres', 'CREATE EXTENSION dblink');
on($coordinator, qq{
INSERT INTO items SELECT i, 'v' || i, 0 FROM generate_series(1, $ROWS) AS i;
CREATE TABLE items_mirror (id bigint NOT NULL, v text NOT NULL, c int NOT NULL);
CREATE INDEX ON items_mirror (id);
INSERT INTO items_mirror SELECT i, 'v' || i, 0 FROM generate_series(1, $ROWS) AS i;
-- New keys: nextval * 2 + the writer's number (0 or 1), above the first ones.
CREATE SEQUENCE item_ids START @{[ $ROWS / 2 + 1 ]};
});
on($coordinator, q{
CREATE TABLE writer_control (stop bool NOT NULL);
INSERT INTO writer_control VALUES (false);
CREATE TABLE writer_commits (writer int PRIMARY KEY, commits bigint NOT NULL DEFAULT 0);
INSERT INTO writer_commits VALUES (0), (1);
CREATE TABLE writer_errors (sqlstate text, message text, detail text, phase text);

-- The rows of the table that its mirror does not have, and the other way.
CREATE FUNCTION differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (SELECT * FROM items EXCEPT ALL SELECT * FROM items_mirror) AS a)
         + (SELECT count(*) FROM (SELECT * FROM items_mirror EXCEPT ALL SELECT * FROM items) AS b)
$$;


-- A writer: write_items(w, writers, pause), a loop of one transaction per
-- round on the keys k with k % writers = w (so that the writers never wait
-- for each other), until writer_control says stop.  Each statement on items
-- names the bucket of its key for the partitions items has at the start of
-- the round (pruned to one shard while that is the layout; a condition
-- that holds whatever the layout).  A round that fails is rolled back whole
-- (table and mirror) and recorded in writer_errors.
CREATE PROCEDURE write_items(w int, writers int, pause float8) LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    n int;
    top bigint;
    k bigint;
    new_id bigint;
    moved_v text;
    moved_c int;
    moved bigint;
BEGIN
    LOOP
        EXIT WHEN (SELECT stop FROM writer_control);
        BEGIN
            n := (SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass('public.items'));
            top := (SELECT last_value FROM item_ids);
            new_id := nextval('item_ids') * writers + w;
            INSERT INTO items VALUES (new_id, 'new ' || new_id, 0);
            INSERT INTO items_mirror VALUES (new_id, 'new ' || new_id, 0);
            k := w + writers * floor(random() * top)::bigint;
            EXECUTE format('UPDATE items SET c = c + 1, v = %L || c WHERE jumpbackhash(id, %s) = %s AND id = %s',
                           'updated ', n, jumpbackhash(k, n), k);
            UPDATE items_mirror SET c = c + 1, v = 'updated ' || c WHERE id = k;
            -- A key changed: the row deleted and inserted with the new key.
            k := w + writers * floor(random() * top)::bigint;
            new_id := nextval('item_ids') * writers + w;
            EXECUTE format('DELETE FROM items WHERE jumpbackhash(id, %s) = %s AND id = %s RETURNING v, c',
                           n, jumpbackhash(k, n), k) INTO moved_v, moved_c;
            GET DIAGNOSTICS moved = ROW_COUNT;
            IF moved > 0 THEN
                INSERT INTO items VALUES (new_id, moved_v, moved_c);
            END IF;
            UPDATE items_mirror SET id = new_id WHERE id = k;
            k := w + writers * floor(random() * top)::bigint;
            EXECUTE format('DELETE FROM items WHERE jumpbackhash(id, %s) = %s AND id = %s', n, jumpbackhash(k, n), k);
            DELETE FROM items_mirror WHERE id = k;
            UPDATE writer_commits SET commits = commits + 1 WHERE writer = w;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            INSERT INTO writer_errors
            SELECT SQLSTATE, SQLERRM, detail, (SELECT min(phase) FROM reshard_progress WHERE "table" = 'public.items');
        END;
        -- The gate: held until the COMMIT is done here too.
        PERFORM pg_advisory_xact_lock_shared(4242);
        COMMIT;
        PERFORM pg_sleep(pause);
    END LOOP;
END $$;
});
$coordinator->safe_psql('postgres', $CUT_AT);
note sprintf("set-up: %.1f s", time - $started);

# start_writers(): two writers (write_items, see start_writer_loops);
# returns when both have committed, with the rounds committed before.
sub start_writers
{
	on($coordinator, "UPDATE writer_control SET stop = false");
	my ($n0, $n1) = split /,/, on($coordinator, "SELECT string_agg(commits::text, ',' ORDER BY writer) FROM writer_commits");
	start_writer_loops($coordinator, map { ($_ => "CALL write_items($_, 2, 0.01)") } 0, 1);
	wait_until($coordinator, "SELECT bool_and(commits > CASE writer WHEN 0 THEN $n0 ELSE $n1 END) FROM writer_commits",
		'each writer to commit');
	return $n0 + $n1;
}

# stop_writers(): the writers stopped; their sessions have ended.
sub stop_writers
{
	stop_writer_loops(sub { on($coordinator, "UPDATE writer_control SET stop = true") });
	wait_until($coordinator,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE query LIKE 'CALL write\\_%' AND pid <> pg_backend_pid())",
		"the writers' sessions to end");
}

# The partitions on which an undo of this run left the engine's triggers,
# inactive (its WARNINGs).
my %left_inactive;

# on_shards(): what of the engine is left on the shards: 'none' for each.
sub on_shards
{
	return join(', ', map { "shard $_: " . on($shards[$_], $ENGINE_LEFTOVERS) } 0 .. 3);
}
my $none_on_shards = join(', ', map { "shard $_: none" } 0 .. 3);

# call_ok(CALL, NAME): the procedure call succeeds; what it said is reported.
sub call_ok
{
	my ($call, $name) = @_;
	my ($out, $err);
	my $ret = $coordinator->psql('postgres', $call, stdout => \$out, stderr => \$err);
	is($ret, 0, $name) or diag($err);
	note "$name: $err" if $err ne '';
	inactive_triggers_heard(\%left_inactive, $err);
	return $err;
}

# progress(): phase and whether a backend runs it, of the resharding of items.
sub progress
{
	return on($coordinator, "SELECT phase || ' ' || (pid IS NULL)::int FROM reshard_progress WHERE \"table\" = 'public.items'");
}

# layout(): the partition key and the partitions with their bounds.
sub layout
{
	return on($coordinator,
		"SELECT pg_get_partkeydef('items'::regclass) || ': '
		     || string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid), ', ' ORDER BY c.relname)
		 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'items'::regclass");
}

# The runs: the phase to cut in, how, and what finishes it: the same call
# again ('run') or reshard_abort ('abort').  Each way cuts in four
# phases; each phase is cut two or three ways.
my @runs = (
	[ 'setup', 'cancel', 'run' ],
	[ 'copy', 'terminate', 'run' ],
	[ 'catch up', 'kill9', 'abort' ],
	[ 'verify', 'immediate', 'run' ],
	[ 'cutover', 'cancel', 'run' ],
	[ 'finish', 'terminate', 'abort' ],
	[ 'setup', 'kill9', 'run' ],
	[ 'copy', 'immediate', 'abort' ],
	[ 'catch up', 'cancel', 'run' ],
	[ 'verify', 'terminate', 'run' ],
	[ 'cutover', 'kill9', 'run' ],
	[ 'finish', 'immediate', 'run' ],
	[ 'cutover', 'terminate', 'abort' ],
	[ 'copy', 'cancel', 'run' ],
	[ 'finish', 'kill9', 'run' ],
	[ 'setup', 'immediate', 'run' ]);

my %landed;
my $run = 0;
for my $r (@runs)
{
	my ($wanted, $how, $finish) = @$r;
	$run++;
	my $run_started = time;
	%left_inactive = ();

	# A resharding that an earlier run failed to finish is undone first, so
	# that each run starts from a table with no resharding going on.
	if (on($coordinator, "SELECT count(*) FROM reshard_progress WHERE \"table\" = 'public.items' AND interrupted"))
	{
		my ($ret, $stdout, $stderr) = $coordinator->psql('postgres', "CALL reshard_abort('items')");
		inactive_triggers_heard(\%left_inactive, $stderr);
		note "run $run: the resharding left by an earlier run: reshard_abort: " . ($stderr || 'done');
	}
	my $old = on($coordinator, "SELECT DISTINCT buckets FROM sharding_layout('items')");
	my $operation = $old == 3 ? 'add' : 'remove';
	my $new = $operation eq 'add' ? 4 : 3;
	# every other run hides the rows that leave or enter the shards (shard_views)
	my $views = $run % 4 >= 2;    # runs 2, 3, 6, 7, ...: additions and removals
	my $name = "run $run ($operation $old -> $new" . ($views ? ' with shard_views' : '') . ", $how in $wanted, then $finish)";
	my $call = "CALL reshard_${operation}_partition('items', 'items_3', NULL, '2 s', 20"
	  . ', shard_views => ' . ($views ? 'true' : 'false') . ')';

	my $commits_before = start_writers();

	# The resharding in the background, cut short by the watcher, which runs
	# in a session of its own that stays open until the cut (for a kill -9
	# or an immediate stop, it holds the writers' gate).
	# (Before a kill -9, the session waits a little after the call, so that
	# the kill finds its backend even if the call has just ended.)
	my $engine = start_sql($coordinator,
		[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", $call, $how eq 'kill9' ? ('SELECT pg_sleep(1)') : () ]);
	my ($seen, $watcher) =
	  watch_and_cut($coordinator, 'public.items', $run, $wanted, $how eq 'cancel' || $how eq 'terminate' ? $how : 'gate');
	my ($seen_phase, $pid, $done) = split /\|/, $seen, 3;
	if ($pid)
	{
		if ($how eq 'kill9')
		{
			my $offset = -s $coordinator->logfile;
			kill('KILL', $pid) or die "could not kill backend $pid: $!";
			wait_for_restart($coordinator, $offset);
		}
		elsif ($how eq 'immediate')
		{
			$coordinator->stop('immediate');
			$coordinator->start;
		}
	}
	end_watch($watcher);    # (its session may have died with the server)
	my (undef, $err) = finish_sql($engine, "the end of the call of run $run ($call)");
	$err =~ s/\s+$//;
	inactive_triggers_heard(\%left_inactive, $err);
	$landed{ $pid ? $seen_phase : 'none (the call had ended)' }++;
	note "$name: $how "
	  . ($pid ? "in phase $seen_phase ($done)" : "too late: the call had ended (phase $seen_phase)")
	  . "; the call said: " . ($err eq '' ? '(nothing)' : $err);

	# No backend runs it any more; it is interrupted, done or aborted.
	wait_until($coordinator,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity a JOIN engine_calls c USING (pid) WHERE c.run = $run)",
		"the backend of the call of run $run to end");
	my $after = on($coordinator,
		"SELECT phase, pid IS NULL, interrupted OR phase IN ('done', 'aborted'), coalesce(error, ''),
		        started >= (SELECT at FROM engine_calls WHERE run = $run)
		 FROM reshard_progress WHERE \"table\" = 'public.items'");
	my ($phase, $no_pid, $stopped, $error, $ours) = map { $_ // '' } split /\|/, $after;
	is("$no_pid $stopped", 't t', "$name: after the cut, no backend runs it (phase $phase)");
	$phase = 'not begun' unless $ours eq 't';    # the row is an earlier call's
	note "$name: after the cut: phase $phase" . ($error ne '' ? ", error: $error" : '');
	if ($phase eq 'aborted')
	{
		# The call undid itself (a cancel before the cutover): nothing left
		# but the inactive triggers it warned of, the old layout.
		is((engine_leftovers_but($coordinator, \%left_inactive))[0] . '; ' . on_shards() . '; '
			  . on($coordinator, "SELECT DISTINCT buckets FROM sharding_layout('items')"),
			"none; $none_on_shards; $old", "$name: the call undid itself: nothing left, the old layout");
	}

	# Finished or undone, still under the writers.
	my $expected_phase = 'done';
	if ($finish eq 'run')
	{
		# (interrupted in its undo, it is undone to the end and done again)
		call_ok($call, "$name: calling again finishes it") unless $phase eq 'done';
	}
	elsif ($phase eq 'done' || $phase eq 'aborted' || $phase eq 'not begun')
	{
		$expected_phase = $phase;    # nothing to undo
	}
	else
	{
		call_ok("CALL reshard_abort('items')", "$name: reshard_abort");
		$expected_phase = 'aborted' unless $phase eq 'finish';
	}
	is(progress(), "$expected_phase 1", "$name: $expected_phase, no backend runs it")
	  unless $expected_phase eq 'not begun';
	my $buckets = $expected_phase eq 'done' ? $new : $old;

	stop_writers();
	my $commits = on($coordinator, "SELECT sum(commits) FROM writer_commits") - $commits_before;

	# (After a failure, the mirror is made equal to the table again, so that
	# the next runs check their own writes.)
	if (!is(on($coordinator, "SELECT differences()"), '0', "$name: the table equals its mirror"))
	{
		diag "some of the differences (the table's rows first, then the mirror's):\n"
		  . on($coordinator,
			"(SELECT 'table', * FROM (SELECT * FROM items EXCEPT ALL SELECT * FROM items_mirror) AS a ORDER BY id LIMIT 5)
			 UNION ALL
			 (SELECT 'mirror', * FROM (SELECT * FROM items_mirror EXCEPT ALL SELECT * FROM items) AS b ORDER BY id LIMIT 5)");
		on($coordinator, "TRUNCATE items_mirror; INSERT INTO items_mirror SELECT * FROM items");
	}
	is(on($coordinator, "SELECT count(*) FROM (SELECT id FROM items GROUP BY id HAVING count(*) > 1) AS d"),
		'0', "$name: no key twice");

	# Each shard asked directly.
	my ($total, @wrong) = (0);
	for my $b (0 .. 3)
	{
		my ($n, $misplaced) = split /\|/,
		  on($shards[$b], "SELECT count(*), count(*) FILTER (WHERE jumpbackhash(id, $buckets) <> $b) FROM items");
		$total += $n;
		push @wrong, $b < $buckets ? "shard $b: $misplaced of other buckets" : "shard $b: $n rows";
	}
	is(join(', ', @wrong),
		join(', ', (map { "shard $_: 0 of other buckets" } 0 .. $buckets - 1), (map { "shard $_: 0 rows" } $buckets .. 3)),
		"$name: each shard of the $buckets holds only rows of its bucket (computed on the shard)"
		  . ($buckets < 4 ? ', shard 3 none' : ''));
	is($total, on($coordinator, "SELECT count(*) FROM items_mirror"), "$name: the shards together hold every row once");
	is(on($coordinator, "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"),
		'0', "$name: reshard_check finds no misplaced row");
	is(layout() . '; ' . on($coordinator, "SELECT string_agg(DISTINCT buckets::text, ',') || ' ' || count(*) FROM sharding_layout('items')"),
		"LIST (jumpbackhash(id, $buckets)): "
		  . join(', ', map { "items_$_ FOR VALUES IN ($_)" } 0 .. $buckets - 1)
		  . "; $buckets $buckets",
		"$name: the layout of $buckets buckets, items_0 .. items_" . ($buckets - 1));

	# The triggers an undo left (warned of), dropped by reshard_abort now
	# that nobody holds the partitions; nothing else may be left.
	my ($rest, $inactive) = engine_leftovers_but($coordinator, \%left_inactive);
	is("$rest; " . on_shards(), "none; $none_on_shards",
		"$name: nothing of the engine left but the inactive triggers warned of");
	if ($inactive)
	{
		my $said = call_ok("CALL reshard_abort('items')", "$name: reshard_abort drops the $inactive triggers an undo left");
		like($said, qr/dropped $inactive triggers an undone resharding of public\.items left/,
			"$name: reshard_abort says it dropped them");
	}
	is(on($coordinator, $ENGINE_LEFTOVERS) . '; ' . on_shards(), "none; $none_on_shards",
		"$name: nothing of the engine left on the coordinator or on a shard");
	note sprintf("%s: %d writer transactions; %.1f s", $name, $commits, time - $run_started);
}

note "the cuts landed in: " . join(', ', map { "$_ $landed{$_}" } sort keys %landed);
note "the writers' failed transactions: "
  . on($coordinator,
	"SELECT coalesce(string_agg(format('phase %s: %s %s (%s times)', phase, sqlstate, message, n), '; '), 'none')
	 FROM (SELECT phase, sqlstate, message, count(*) AS n FROM writer_errors GROUP BY 1, 2, 3) AS e");
note "  $_" for grep { $_ ne '' } split /\n/, on($coordinator, 'SELECT detail FROM writer_errors');

for my $node ($coordinator, @shards)
{
	my $log = slurp_file($node->logfile);
	is(join("\n", grep { /PANIC|TRAP:|terminated by signal (?!9:)/ } split(/\n/, $log)),
		'', "no PANIC, failed assertion or crash but the kill -9s in the log of " . $node->name);
}
note sprintf("total: %.1f s", time - $started);

done_testing();
