# test/t/009_reshard_shard_down.pl
#	A shard server that goes down in the middle of a resharding by the 1.2
#	engine: nothing is lost, the table stays usable on the other shards, and
#	once the shard is back the resharding is finished or undone and done
#	again.
#
#	A coordinator and four shard servers (postgres_fdw, as in
#	001_sharding_fdw.pl; made by shard_table of SubsettingTest.pm); the
#	table items (id bigint, v text) PARTITION BY LIST (jumpbackhash(id, n)),
#	partition items_b a foreign table on shard b; n goes 3 -> 4 -> 3 -> 4 ->
#	3 -> 4, adding or removing items_3 (on shard 3).  The resharding is
#	driven one step at a time (reshard_begin, reshard_step, as superuser),
#	and a shard is stopped (pg_ctl stop -m immediate) between two steps, so
#	where it stops is known, not timed:
#
#	A. adding, after the copy of items_0 and before that of items_1, shard 1
#	   stops: the next step fails with SQLSTATE class 08 (connection
#	   exception) naming the foreign server shard_1, and leaves the
#	   resharding resumable (phase copy, one partition copied, no backend:
#	   interrupted, the old layout).  While shard 1 is down, keys on shards 0
#	   and 2 are read, inserted, updated and deleted through the parent
#	   (each query pruned to one shard by jumpbackhash(id, 3) = b; keys of
#	   rows that move, so that their changes must reach the copies; a key of
#	   shard 1 fails, so shard 1 is really down); the writes are captured.
#	   Shard 1 back, CALL reshard_add_partition with the same arguments
#	   continues and finishes.
#	B. removing, all copies done and caught up, before the verification,
#	   shard 2 stops: the verification step fails naming shard_2; while it
#	   is down, CALL reshard_remove_partition (the public call) continues,
#	   fails the same way and undoes itself (docs/resharding.md: a failure
#	   before the cutover leaves the table as it was): phase aborted, the
#	   4-bucket layout with the same partitions, nothing of the engine left.
#	   Shard 2 back, the same call again finishes.
#	C. adding, verified, just before the cutover step, shard 0 stops: the
#	   cutover fails naming shard_0, and the table is as it was (layout,
#	   the same partitions with the same OIDs, items_3 not attached, every
#	   row); shard 0 back, CALL reshard_add_partition finishes.
#	D. removing, with two writers writing through the parent the whole
#	   time (server-side loops: inserts, updates and deletes of their own
#	   keys, each round in one transaction with the same writes to the
#	   mirror), to keys that are not on shard 1; after the copy of items_0,
#	   shard 1 stops; the writers go on (they are waited for to commit rounds
#	   while it is down: the check is that they did, not how many); the next
#	   step fails naming shard_1; shard 1 back, the steps go on to the end,
#	   still under the writers; the writers are stopped, and every round
#	   they committed is there.
#	E. adding, all partitions copied, a row of the new bucket written
#	   through the parent (captured, to be applied to items_3 on shard 3),
#	   before the catch-up shard 3 stops: the catch-up fails naming shard_3;
#	   items_3 is not yet a partition, so the whole table stays readable
#	   and writable; shard 3 back, reshard_abort undoes it (phase aborted,
#	   shard 3 emptied of the copies), and the call again finishes.
#
#	Checks after each: the table equals the mirror, a plain table on the
#	coordinator that received the same writes (EXCEPT ALL both ways: a row
#	lost, doubled or changed would show), no key twice; the layout is
#	LIST (jumpbackhash(id, n)) over items_0 .. items_{n-1}; each shard,
#	asked directly, holds only rows of its own bucket (computed on the
#	shard) and the shards together hold as many rows as the mirror, a
#	shard out of the layout none; reshard_check finds no misplaced row;
#	nothing of the engine (relations, triggers or constraints named
#	reshard_*) is left on the coordinator or on any shard.  Nothing waits
#	for a time: a stop happens between two steps, and the writers are
#	waited for by their committed rounds.
#
# suite: shard down
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $started = time;
my $ROWS = 6000;

my $coordinator = new_server('coordinator');
my @shards = map { new_server("shard$_") } 0 .. 3;
my @writers;

# The writers' loops end when the test does, however it ends.
END
{
	eval { $coordinator->safe_psql('postgres', 'INSERT INTO writer_stop VALUES (true)') } if @writers;
	$_->{run}->kill_kill for @writers;
}

# attempt(NODE, SQL): runs SQL with verbose errors (SQLSTATE in them),
# returns (stdout, stderr) whether it fails or not.
sub attempt
{
	my ($node, $sql) = @_;
	my ($out, $err);
	$node->psql('postgres', "\\set VERBOSITY verbose\n$sql", stdout => \$out, stderr => \$err);
	return ($out, $err);
}

# --- Set-up.
shard_table($coordinator, \@shards, 'items', 'id bigint NOT NULL, v text NOT NULL', 3);
on($coordinator,
	"INSERT INTO items SELECT i, 'v' || i FROM generate_series(1, $ROWS) AS i;
	 -- The mirror: every write to items is made to it too.
	 CREATE TABLE truth (id bigint NOT NULL, v text NOT NULL);
	 INSERT INTO truth SELECT i, 'v' || i FROM generate_series(1, $ROWS) AS i;
	 CREATE INDEX ON truth (id);
	 CREATE SEQUENCE new_ids START 1000000;");
my $buckets = 3;
note sprintf("set-up: %.1f s", time - $started);

# layout(): the partition key and the partitions with their bounds and OIDs.
sub layout
{
	return on($coordinator,
		"SELECT pg_get_partkeydef('items'::regclass) || ': '
		     || string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) || ' ' || c.oid, ', ' ORDER BY c.relname)
		 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'items'::regclass");
}

# phase_now(): phase|sources_copied|interrupted of the resharding of items.
sub phase_now
{
	return on($coordinator,
		"SELECT s.phase, s.sources_copied, p.interrupted FROM reshard_state s
		 JOIN reshard_progress p ON p.\"table\" = s.parent_name WHERE s.parent_name = 'public.items'");
}

# steps_until(PHASE[, COPIED]): reshard_step until the resharding of items is
# in PHASE (with COPIED partitions copied, in phase copy).
sub steps_until
{
	my ($phase, $copied) = @_;
	for (1 .. 200)
	{
		my ($p, $c) = split /\|/, phase_now();
		return if $p eq $phase && (!defined $copied || $c == $copied);
		die "the resharding of items reached phase $p (copied $c), not $phase" if $p =~ /^(done|aborted)$/;
		on($coordinator, "CALL reshard_step('items', '2 s', 20)");
	}
	die "the resharding of items does not reach phase $phase";
}

# mirrored(SQL): SQL run on items (TBL in it replaced), then on the mirror;
# fails the test (and does not touch the mirror) if it fails on items.
sub mirrored
{
	my ($sql, $name) = @_;
	(my $on_items = $sql) =~ s/\bTBL\b/items/g;
	(my $on_truth = $sql) =~ s/\bTBL\b/truth/g;
	my ($out, $err) = attempt($coordinator, $on_items);
	if (is($err, '', $name))
	{
		on($coordinator, $on_truth);
	}
}

# new_keys(N): N keys not used yet, as an SQL set.
sub new_keys
{
	my ($n) = @_;
	my $keys = on($coordinator, "SELECT string_agg(nextval('new_ids')::text, ',') FROM generate_series(1, $n)");
	return "unnest('{$keys}'::bigint[])";
}

# new_key(B, TO): a key not used yet whose bucket of the current layout is
# B, and whose bucket of TO buckets differs if one such is found.
sub new_key
{
	my ($b, $to) = @_;
	return on($coordinator,
		"SELECT i FROM (SELECT nextval('new_ids') AS i FROM generate_series(1, 1000)) AS k
		 WHERE jumpbackhash(i, $buckets) = $b ORDER BY jumpbackhash(i, $to) <> $b DESC, i LIMIT 1");
}

# use_live_shards(DOWN, TO, NAME): while shard DOWN is down, in a
# resharding to TO buckets, the other shards of the layout answer through
# the parent: for keys on each (rows that move, where the shard has some:
# their changes must reach the copies), a read, an update, a delete and an
# insert, each pruned to that shard, all succeed (and are made to the
# mirror); a key of shard DOWN fails.
sub use_live_shards
{
	my ($down, $to, $name) = @_;
	for my $b (grep { $_ != $down } 0 .. $buckets - 1)
	{
		my $prune = "jumpbackhash(id, $buckets) = $b";
		my ($k, $l) = split /\n/, on($coordinator,
			"SELECT id FROM truth WHERE jumpbackhash(id, $buckets) = $b AND v LIKE 'v%'
			 ORDER BY jumpbackhash(id, $to) <> $b DESC, id LIMIT 2");
		my ($out, $err) = attempt($coordinator, "SELECT v FROM items WHERE $prune AND id = $k");
		is("$out$err", on($coordinator, "SELECT v FROM truth WHERE id = $k"),
			"$name: with shard $down down, a key of shard $b is read through the parent");
		mirrored("UPDATE TBL SET v = 'updated while shard $down was down' WHERE $prune AND id = $k",
			"$name: with shard $down down, a key of shard $b is updated through the parent");
		mirrored("DELETE FROM TBL WHERE $prune AND id = $l",
			"$name: with shard $down down, a key of shard $b is deleted through the parent");
		my $new = new_key($b, $to);
		mirrored("INSERT INTO TBL VALUES ($new, 'inserted while shard $down was down')",
			"$name: with shard $down down, a key of shard $b is inserted through the parent");
	}
	my $k = on($coordinator, "SELECT min(id) FROM truth WHERE jumpbackhash(id, $buckets) = $down");
	my ($out, $err) = attempt($coordinator, "SELECT v FROM items WHERE jumpbackhash(id, $buckets) = $down AND id = $k");
	like($err, qr/could not connect to server "shard_$down"/, "$name: a key of shard $down fails: it is down");
}

# check(NAME, PHASE): after a scenario, the checks of the head comment.
sub check
{
	my ($name, $phase) = @_;
	is(on($coordinator,
			"SELECT (SELECT count(*) FROM (SELECT id, v FROM items EXCEPT ALL SELECT id, v FROM truth) AS a) || ' '
			     || (SELECT count(*) FROM (SELECT id, v FROM truth EXCEPT ALL SELECT id, v FROM items) AS b) || ' '
			     || (SELECT count(*) FROM (SELECT id FROM items GROUP BY id HAVING count(*) > 1) AS d)"),
		'0 0 0', "$name: the table equals its mirror (no row missing, extra or changed), no key twice");
	is(layout() =~ s/ \d+(,|$)/$1/gr,
		"LIST (jumpbackhash(id, $buckets)): "
		  . join(', ', map { "items_$_ FOR VALUES IN ($_)" } 0 .. $buckets - 1),
		"$name: the layout has $buckets buckets, items_0 .. items_" . ($buckets - 1));
	my $total = 0;
	for my $b (0 .. 3)
	{
		my ($n, $wrong) = split /\|/,
		  on($shards[$b], "SELECT count(*), count(*) FILTER (WHERE jumpbackhash(id, $buckets) <> $b) FROM items");
		$total += $n;
		if ($b < $buckets)
		{
			is($wrong, '0', "$name: shard $b holds only rows of bucket $b (computed on the shard)");
		}
		else
		{
			is($n, '0', "$name: shard $b, out of the layout, holds no row");
		}
	}
	is($total, on($coordinator, "SELECT count(*) FROM truth"), "$name: the shards together hold every row once");
	is(on($coordinator, "SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('items')"),
		'0', "$name: reshard_check finds no misplaced row");
	is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "$name: nothing of the engine is left on the coordinator");
	is(on($shards[$_], $ENGINE_LEFTOVERS), 'none', "$name: nothing of the engine is left on shard $_") for 0 .. 3;
	is(on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'"),
		$phase, "$name: the resharding is $phase");
}

# step_fails(DOWN, NAME): the next step fails, naming shard DOWN's server,
# with a connection exception (SQLSTATE class 08).
sub step_fails
{
	my ($down, $name) = @_;
	my ($out, $err) = attempt($coordinator, "CALL reshard_step('items', '2 s', 20)");
	like($err, qr/ERROR:  08\d\d\d: could not connect to server "shard_$down"/,
		"$name: the step fails with a connection exception naming shard_$down");
	note "$name: the step said: $err";
}

# --- A. Adding 3 -> 4; shard 1 stops after the copy of items_0.
my $name = 'A (add, shard 1 down in the copy)';
my $t = time;
on($coordinator, "CALL reshard_begin('items', 'add', 'items_3')");
steps_until('copy', 1);
mirrored("INSERT INTO TBL SELECT k, 'before the stop' FROM " . new_keys(50) . " AS k",
	"$name: 50 rows inserted through the parent after the copy of items_0");
$shards[1]->stop('immediate');
step_fails(1, $name);
is(phase_now(), 'copy|1|t', "$name: the resharding is resumable: phase copy, one partition copied, interrupted");
like(layout(), qr/^LIST \(jumpbackhash\(id, 3\)\): items_0 FOR VALUES IN \(0\) \d+, items_1 FOR VALUES IN \(1\) \d+, items_2 FOR VALUES IN \(2\) \d+$/,
	"$name: the table keeps its three buckets");
use_live_shards(1, 4, $name);
step_fails(1, "$name, again");
$shards[1]->start;
my ($out, $err) = attempt($coordinator, "CALL reshard_add_partition('items', 'items_3')");
is($err, '', "$name: shard 1 back, CALL reshard_add_partition with the same arguments finishes");
like($out, qr/^[1-9][0-9]*$/, "$name: and reports the rows moved ($out)");
$buckets = 4;
check($name, 'done');
note sprintf("%s: %.1f s", $name, time - $t);

# --- B. Removing 4 -> 3; shard 2 stops before the verification.
$name = 'B (remove, shard 2 down before the verification)';
$t = time;
my $layout_before = layout();
on($coordinator, "CALL reshard_begin('items', 'remove', 'items_3')");
steps_until('verify');
mirrored("INSERT INTO TBL SELECT k, 'caught up' FROM " . new_keys(50) . " AS k",
	"$name: 50 rows inserted through the parent before the verification");
$shards[2]->stop('immediate');
step_fails(2, $name);
is(phase_now(), 'verify|5|t', "$name: the resharding is resumable: phase verify, interrupted");
($out, $err) = attempt($coordinator, "CALL reshard_remove_partition('items', 'items_3')");
like($err, qr/ERROR:  08\d\d\d: could not connect to server "shard_2"/,
	"$name: with shard 2 down, CALL reshard_remove_partition continues and fails naming shard_2");
is(phase_now() =~ s/\|\d+\|/||/r, 'aborted||f', "$name: the call undid itself (phase aborted)");
like(on($coordinator, "SELECT error FROM reshard_progress WHERE \"table\" = 'public.items'"),
	qr/could not connect to server "shard_2"/, "$name: reshard_progress shows the error");
is(layout(), $layout_before, "$name: the table is as it was: four buckets, the same partitions");
is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "$name: the undo left nothing of the engine on the coordinator");
use_live_shards(2, 3, $name);
$shards[2]->start;
($out, $err) = attempt($coordinator, "CALL reshard_remove_partition('items', 'items_3', shard_views => false)");
is($err, '', "$name: shard 2 back, the call again finishes");
$buckets = 3;
check($name, 'done');
note sprintf("%s: %.1f s", $name, time - $t);

# --- C. Adding 3 -> 4; shard 0 stops just before the cutover.
$name = 'C (add, shard 0 down at the cutover)';
$t = time;
$layout_before = layout();
on($coordinator, "CALL reshard_begin('items', 'add', 'items_3')");
steps_until('cutover');
mirrored("INSERT INTO TBL SELECT k, 'verified' FROM " . new_keys(50) . " AS k",
	"$name: 50 rows inserted through the parent after the verification");
$shards[0]->stop('immediate');
step_fails(0, $name);
is(phase_now(), 'cutover|4|t', "$name: the cutover failed and rolled back: phase cutover, interrupted");
is(layout(), $layout_before, "$name: the table is as it was: three buckets, the same partitions (same OIDs)");
use_live_shards(0, 4, $name);
$shards[0]->start;
is(on($coordinator,
		"SELECT (SELECT count(*) FROM (SELECT id, v FROM items EXCEPT ALL SELECT id, v FROM truth) AS a) || ' '
		     || (SELECT count(*) FROM (SELECT id, v FROM truth EXCEPT ALL SELECT id, v FROM items) AS b)"),
	'0 0', "$name: shard 0 back, before the call: every row is there, as the mirror has it");
is(layout(), $layout_before, "$name: and the layout is still the old one");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('items', 'items_3')");
is($err, '', "$name: CALL reshard_add_partition with the same arguments finishes");
$buckets = 4;
check($name, 'done');
note sprintf("%s: %.1f s", $name, time - $t);

# --- D. Removing 4 -> 3 under writers through the parent; shard 1 stops
# between two copy steps.
$name = 'D (remove under writers, shard 1 down in the copy)';
$t = time;
on($coordinator, q{
CREATE TABLE writer_stop (stop boolean);
CREATE TABLE writer_rounds (writer int PRIMARY KEY, rounds bigint NOT NULL DEFAULT 0);
INSERT INTO writer_rounds VALUES (0), (1);
CREATE TABLE writer_errors (writer int, sqlstate text, message text);
-- A writer: rounds of one transaction each, on keys of its own whose bucket
-- of 4 is not avoid: an insert; every third round an update of the key it
-- inserted two rounds before, every fifth a delete of the key of four
-- rounds before; the same writes to the mirror.  The statements on items
-- are built with the keys in their text, so that each is pruned when
-- planned and reaches one shard (while the layout is the one of 4
-- buckets).  A round that fails is rolled back whole and recorded.
CREATE PROCEDURE write_items(w int, first_id bigint, avoid int) LANGUAGE plpgsql AS $$
DECLARE
    next_id bigint := first_id;
    mine bigint[] := '{}';
    round bigint := 0;
    k bigint;
    msg text;
BEGIN
    WHILE NOT EXISTS (SELECT FROM writer_stop) LOOP
        WHILE jumpbackhash(next_id, 4) = avoid LOOP
            next_id := next_id + 1;
        END LOOP;
        round := round + 1;
        mine := mine || next_id;
        BEGIN
            EXECUTE format('INSERT INTO items VALUES (%s, %L)', next_id, 'writer ' || w);
            INSERT INTO truth VALUES (next_id, 'writer ' || w);
            IF round % 3 = 0 THEN
                k := mine[round - 2];
                EXECUTE format('UPDATE items SET v = v || %L WHERE jumpbackhash(id, 4) = %s AND id = %s',
                               ' updated', jumpbackhash(k, 4), k);
                UPDATE truth SET v = v || ' updated' WHERE id = k;
            END IF;
            IF round % 5 = 0 THEN
                k := mine[round - 4];
                EXECUTE format('DELETE FROM items WHERE jumpbackhash(id, 4) = %s AND id = %s', jumpbackhash(k, 4), k);
                DELETE FROM truth WHERE id = k;
            END IF;
            UPDATE writer_rounds SET rounds = rounds + 1 WHERE writer = w;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
            INSERT INTO writer_errors VALUES (w, SQLSTATE, msg);
        END;
        COMMIT;
        next_id := next_id + 1;
        PERFORM pg_sleep(0.005);
    END LOOP;
END $$;
});

# rounds(): the rounds the writers committed, together.
sub rounds
{
	return on($coordinator, "SELECT sum(rounds) FROM writer_rounds");
}

# wait_for_rounds(N): returns once each writer committed N more rounds.
sub wait_for_rounds
{
	my ($n, $what) = @_;
	my $before = on($coordinator, "SELECT string_agg(rounds::text, ',' ORDER BY writer) FROM writer_rounds");
	my ($r0, $r1) = split /,/, $before;
	wait_until($coordinator,
		"SELECT bool_and(rounds >= CASE writer WHEN 0 THEN $r0 ELSE $r1 END + $n) FROM writer_rounds",
		"each writer to commit $n rounds $what");
	pass("$name: each writer committed $n rounds $what");
}

@writers = map { start_sql($coordinator, "CALL write_items($_, " . (2000000 + 1000000 * $_) . ", 1)") } 0 .. 1;
wait_for_rounds(5, 'before the resharding');
on($coordinator, "CALL reshard_begin('items', 'remove', 'items_3')");
steps_until('copy', 1);
$shards[1]->stop('immediate');
wait_for_rounds(20, 'while shard 1 is down');
step_fails(1, $name);
is(phase_now(), 'copy|1|t', "$name: the resharding is resumable: phase copy, one partition copied, interrupted");
wait_for_rounds(20, 'while shard 1 is down, after the failed step');
$shards[1]->start;
steps_until('cutover');
wait_for_rounds(5, 'after the restart, before the cutover');
steps_until('done');
$buckets = 3;
wait_for_rounds(5, 'after the cutover');
on($coordinator, "INSERT INTO writer_stop VALUES (true)");
for my $w (0 .. 1)
{
	($out, $err) = finish_sql($writers[$w]);
	is($err, '', "$name: writer $w stops when told, without an error");
}
@writers = ();
note "$name: the writers committed " . rounds() . " rounds; their failed rounds: "
  . on($coordinator,
	"SELECT coalesce(string_agg(format('%s %s (%s times)', sqlstate, message, n), '; '), 'none')
	 FROM (SELECT sqlstate, message, count(*) AS n FROM writer_errors GROUP BY 1, 2) AS e");
check($name, 'done');
note sprintf("%s: %.1f s", $name, time - $t);

# --- E. Adding 3 -> 4; shard 3 (the new partition's) stops before the
# catch-up, which has a row to write there.
$name = 'E (add, shard 3 down before the catch-up)';
$t = time;
$layout_before = layout();
on($coordinator, "CALL reshard_begin('items', 'add', 'items_3')");
steps_until('catch up');
my $to_3 = on($coordinator,
	"SELECT i FROM (SELECT nextval('new_ids') AS i FROM generate_series(1, 1000)) AS k
	 WHERE jumpbackhash(i, 4) = 3 LIMIT 1");
mirrored("INSERT INTO TBL VALUES ($to_3, 'of the new bucket')",
	"$name: a row of the new bucket inserted through the parent after the copy");
$shards[3]->stop('immediate');
step_fails(3, $name);
is(phase_now(), 'catch up|4|t', "$name: the resharding is resumable: phase catch up, interrupted");
is(on($coordinator,
		"SELECT (SELECT count(*) FROM (SELECT id, v FROM items EXCEPT ALL SELECT id, v FROM truth) AS a) || ' '
		     || (SELECT count(*) FROM (SELECT id, v FROM truth EXCEPT ALL SELECT id, v FROM items) AS b)"),
	'0 0', "$name: with shard 3 down, the whole table is read through the parent, every row there");
mirrored("INSERT INTO TBL SELECT k, 'shard 3 down' FROM " . new_keys(30) . " AS k",
	"$name: with shard 3 down, 30 rows inserted through the parent");
$shards[3]->start;
($out, $err) = attempt($coordinator, "CALL reshard_abort('items')");
is($err, '', "$name: shard 3 back, reshard_abort undoes it");
is(phase_now() =~ s/\|\d+\|/||/r, 'aborted||f', "$name: phase aborted");
is(layout(), $layout_before, "$name: the table is as it was: three buckets, the same partitions");
is(on($shards[3], "SELECT count(*) FROM items"), '0', "$name: shard 3 emptied of the copies");
is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "$name: nothing of the engine left on the coordinator");
($out, $err) = attempt($coordinator, "CALL reshard_add_partition('items', 'items_3', shard_views => false)");
is($err, '', "$name: CALL reshard_add_partition again finishes");
$buckets = 4;
check($name, 'done');
note sprintf("%s: %.1f s", $name, time - $t);

note sprintf("total: %.1f s", time - $started);
done_testing();
