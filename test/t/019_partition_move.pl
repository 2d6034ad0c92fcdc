# test/t/019_partition_move.pl
#	partition_move: partitions of a table sharded by the extension moved,
#	whole, from the coordinator to two postgres_fdw servers, between them
#	and back, while writers insert, update and delete through the parent
#	and readers read it; the call cut short in each phase (cancelled: it
#	undoes itself; terminated or killed: called again it goes on, or
#	reshard_abort undoes it); a server stopped during a move.  Each time the
#	table equals a mirror the writers change in the same transactions
#	(EXCEPT ALL both ways), the parent keeps its OID, and what depends on it
#	(a view, a grant) works.  Before a kill or a server's stop, the writers'
#	gate closes (mirrored_writers says why).
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $ROWS = 20000;
# (PostgreSQL::Test::Cluster turns restart_after_crash off: a backend
# killed must restart the coordinator, not stop it)
my $coordinator = new_server('coordinator', 'restart_after_crash = on');
my %servers = (a => new_server('server_a'), b => new_server('server_b'));

$coordinator->safe_psql('postgres', $CUT_AT);
link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text DEFAULT 'new', n int NOT NULL DEFAULT 0 CHECK (n >= 0))
	         PARTITION BY HASH (id jumpbackhash8_int8_ops);
	     SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES WITH (MODULUS 8, REMAINDER %s)', i, i)
	     FROM generate_series(0, 7) AS i \\gexec
	     CREATE INDEX ON items (id);
	     INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, $ROWS) AS i;
	     CREATE TABLE mirror AS SELECT * FROM items;
	     CREATE SEQUENCE ids START " . ($ROWS + 1) . ";
	     CREATE VIEW item_count AS SELECT count(*) AS n FROM items;
	     CREATE ROLE reader;
	     GRANT SELECT ON items, item_count, items_3 TO reader;
	     COMMENT ON TABLE items_3 IS 'bucket three'");
my $parent_oid = on($coordinator, "SELECT 'items'::regclass::oid");

# The writers through the parent, and readers (mirrored_writers).
my %writers = mirrored_writers(sub { "SELECT count(*) FROM items WHERE id = $_[0]" });

# placement(): "partition:server" of each partition, in bucket order.
sub placement
{
	return on($coordinator,
		"SELECT string_agg(partition::text || ':' || coalesce(server, 'here'), ' ' ORDER BY bucket)
		 FROM partition_placement WHERE \"table\" = 'items'::regclass");
}

# moved(CALL): the rows CALL, a move of a partition of items with the
# default budget and attempts, moved; with call_until_done (on a busy
# machine the attempts can run out: called again, at most 5 times).
sub moved
{
	my ($call) = @_;
	my ($ret, $out, $err, $calls) = call_until_done($coordinator, $call, 'public.items');
	note("$call: $calls calls") if $calls > 1;
	return $ret == 0 ? $out : $err;
}

# A move under the writers, done.
start_writer_loops($coordinator, %writers);
my $moved = moved("CALL partition_move('items_3', 'a')");
like($moved, qr/^[1-9][0-9]*$/, "items_3 moved to server a under writers ($moved rows)");
is(placement(), 'items_0:here items_1:here items_2:here items_3:a items_4:here items_5:here items_6:here items_7:here',
	"partition_placement shows items_3 on server a");
my $moved_b = moved("CALL partition_move('items_5', 'b')");
like($moved_b, qr/^[1-9][0-9]*$/, "items_5 moved to server b under writers ($moved_b rows)");
my $moved_6 = moved("CALL partition_move('items_6', 'a')");
like($moved_6, qr/^[1-9][0-9]*$/, "items_6 moved to server a under writers ($moved_6 rows)");
stop_writer_loops(sub { });
items_equal_mirror($coordinator, 'after three moves under writers');
is(on($coordinator, "SELECT 'items'::regclass::oid"), $parent_oid, "the parent keeps its OID");
is(on($coordinator, "SELECT n = (SELECT count(*) FROM mirror) FROM item_count"), 't', "the view on the parent counts every row");
# (a role that reads a foreign partition needs a user mapping of its own)
on($coordinator, "CREATE USER MAPPING FOR reader SERVER $_ OPTIONS (user 'postgres', password_required 'false')")
  for sort keys %servers;
my $key = on($coordinator, "SELECT id FROM items_3 ORDER BY id LIMIT 1");
is(on($coordinator, "SET ROLE reader; SELECT count(*) FROM items WHERE id = $key"), '1',
	"a role granted SELECT on the parent reads a moved row through it");
is(on($coordinator, "SET ROLE reader; SELECT count(*) > 0 FROM items_3"), 't',
	"the grant on the partition itself is the foreign table's now");
is(on($coordinator, "SELECT obj_description('items_3'::regclass, 'pg_class') || ' / ' || relkind::text FROM pg_class WHERE oid = 'items_3'::regclass"),
	'bucket three / f', "items_3 is a foreign table with the partition's comment");
is(on($servers{a}, "SELECT count(*) FROM items_3 WHERE jumpbackhash(id, 8) <> 3")
	  . ' ' . on($servers{a}, "SELECT count(*) > 0 FROM items_3"),
	'0 t', "server a holds bucket 3's rows as public.items_3, only those");
is(on($servers{a}, "SELECT obj_description('items_3'::regclass, 'pg_class')"), 'bucket three',
	"the table on server a has the partition's comment");
is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "nothing of the engine is left here");
is(on($coordinator, "SELECT count(*) FROM pg_class WHERE relname IN ('items_3', 'items_5', 'items_6') AND relkind = 'r'"),
	'0', "the moved partitions are no longer here");

# Moves cut short, under the writers: cancelled in a phase (the call undoes
# itself, and the table made on the server goes too), terminated (called
# again, it goes on; or reshard_abort undoes it), or its backend killed
# (the server restarts; then the same).  Out: from here to a server; back:
# from a server here; across: from one server to the other.  A cut that
# comes after the call ended changes nothing: the checks hold either way.
my @cuts = (
	[ 'cancel', 'capture', '', 'out' ], [ 'cancel', 'copy', '', 'out' ], [ 'cancel', 'catch up', '', 'out' ],
	[ 'cancel', 'verify', '', 'out' ], [ 'cancel', 'cutover', '', 'out' ], [ 'terminate', 'copy', 'again', 'out' ],
	[ 'terminate', 'verify', 'abort', 'out' ], [ 'terminate', 'cutover', 'again', 'out' ],
	[ 'terminate', 'finish', 'abort', 'out' ],
	[ 'cancel', 'copy', '', 'back' ], [ 'cancel', 'cutover', '', 'across' ], [ 'terminate', 'catch up', 'abort', 'back' ],
	[ 'terminate', 'verify', 'again', 'across' ], [ 'terminate', 'finish', 'again', 'back' ],
	[ 'kill', 'copy', 'again', 'back' ], [ 'kill', 'cutover', 'abort', 'across' ], [ 'kill', 'finish', 'again', 'back' ],
	[ 'kill', 'capture', 'again', 'out' ], [ 'kill', 'catch up', 'abort', 'across' ], [ 'kill', 'verify', 'again', 'out' ]);
start_writer_loops($coordinator, %writers);
my $run = 0;
my %inactive;
for my $cut (@cuts)
{
	my ($how, $wanted, $then, $direction) = @$cut;
	$run++;
	my ($partition, $from) = split /\|/, on($coordinator,
		"SELECT partition, server FROM partition_placement WHERE \"table\" = 'items'::regclass
		 AND " . ($direction eq 'out' ? 'server IS NULL' : 'server IS NOT NULL') . "
		 ORDER BY bucket DESC LIMIT 1");
	my $server = $direction eq 'out' ? ($run % 2 ? 'b' : 'a') : $direction eq 'back' ? '' : $from eq 'a' ? 'b' : 'a';
	my $target = $server eq '' ? 'NULL' : "'$server'";
	my $name = "run $run ($partition from " . ($from || 'here') . ' to ' . ($server || 'here')
	  . ", $how in $wanted" . ($then ? ", then $then" : '') . ')';
	my $call = start_sql($coordinator,
		[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())",
		  "CALL partition_move('$partition', $target, cutover_budget => '1 s', cutover_attempts => 20)" ]);
	my ($seen, $err) = cut_call($coordinator, $call, 'public.items', $run, $wanted, $how, "the end of the call of $name");
	my ($seen_phase, $pid) = split /\|/, $seen;
	note "$name: " . ($pid ? "cut in phase $seen_phase" : "too late (phase $seen_phase)") . '; the call said: ' . ($err || '(nothing)');
	wait_until($coordinator,
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity a JOIN engine_calls c USING (pid) WHERE c.run = $run)",
		"the backend of the call of $name to end");
	my $phase = on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
	if ($phase ne 'done' && $phase ne 'aborted')
	{
		my $elsewhere = $server eq 'a' ? "'b'" : "'a'";
		like(result_or_error($coordinator, 'postgres', "CALL partition_move('$partition', $elsewhere)"),
			qr/an interrupted resharding of public\.items is in phase/,
			"$name: interrupted, a move of the partition to another server is refused");
		my $finish = $then eq 'abort' ? "CALL reshard_abort('items')"
		  : "CALL partition_move('$partition', $target, cutover_budget => '1 s', cutover_attempts => 20)";
		my ($o, $e) = ('', '');
		$coordinator->psql('postgres', $finish, stdout => \$o, stderr => \$e);
		unlike($e, qr/ERROR|FATAL/, "$name: interrupted in phase $phase, then $finish");
		inactive_triggers_heard(\%inactive, $e);
		$phase = on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
	}
	my $where = on($coordinator, "SELECT coalesce(server, '') FROM partition_placement WHERE partition = '$partition'::regclass");
	my %there = map { $_ => on($servers{$_}, "SELECT to_regclass('public.$partition') IS NOT NULL") } sort keys %servers;
	my $expected = $phase eq 'done' ? $server : $from;
	is("$phase $where " . join(' ', map { "$_:$there{$_}" } sort keys %there),
		($phase eq 'done' ? 'done' : 'aborted') . " $expected " . join(' ', map { "$_:" . ($_ eq $expected ? 't' : 'f') } sort keys %there),
		"$name: " . ($phase eq 'done' ? 'moved' : 'undone') . ', the partition is ' . ($expected ? "on server $expected" : 'here')
		  . ', its table on no other server');
	is(on($coordinator, "SELECT count(*) FROM pg_class WHERE relname = '$partition'"), '1',
		"$name: one table of that name here");
	inactive_triggers_heard(\%inactive, $err);
	is((engine_leftovers_but($coordinator, \%inactive))[0], 'none',
		"$name: nothing of the engine is left (but the inactive triggers an undo warned of)");
	is(join(' ', map { on($servers{$_}, $ENGINE_LEFTOVERS) } sort keys %servers), 'none none',
		"$name: nothing of the engine is left on the servers");
}
stop_writer_loops(sub { });
items_equal_mirror($coordinator, 'after the moves cut short');

# A server stopped during a move to it: the call fails (and cannot drop
# what it made there: a WARNING); the table stays whole and writable here;
# once the server is back, reshard_abort undoes the rest.
my $partition = on($coordinator,
	"SELECT partition FROM partition_placement WHERE \"table\" = 'items'::regclass AND server IS NULL ORDER BY bucket LIMIT 1");
$run++;
my $call = start_sql($coordinator,
	[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", "CALL partition_move('$partition', 'b')" ]);
my ($seen, $gate) = close_gate($coordinator, 'public.items', $run, 'catch up');
$servers{b}->stop('immediate');
open_gate($gate);
my ($out, $err) = finish_sql($call);
note "a move of $partition to server b, which stopped in phase " . (split /\|/, $seen)[0] . ": the call said: " . ($err || '(nothing)');
is(on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = '$partition'::regclass"),
	'here', "server b stopped during the move: $partition is still here");
# (a row written meanwhile, to that partition: server b is down)
my $new_id = on($coordinator,
	"SELECT i FROM generate_series(-1000, -1) AS i
	 WHERE jumpbackhash(i, 8) = (SELECT bucket FROM partition_placement WHERE partition = '$partition'::regclass) LIMIT 1");
on($coordinator, "INSERT INTO items (id) VALUES ($new_id); INSERT INTO mirror (id, v, n) VALUES ($new_id, 'new', 0)");
$servers{b}->start;
my $phase = on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'");
if ($phase ne 'aborted' && $phase ne 'done')
{
	on($coordinator, "CALL reshard_abort('items')");
}
is(on($coordinator, "SELECT phase FROM reshard_progress WHERE \"table\" = 'public.items'")
	  . ' ' . on($servers{b}, "SELECT to_regclass('public.$partition') IS NOT NULL"),
	($phase eq 'done' ? 'done t' : 'aborted f'), "once server b is back, nothing of the move is left there");
items_equal_mirror($coordinator, 'after a server stopped during a move');

# rebalance: 12 partitions here spread over here and servers a and b, 4
# each, under a reader; cut short in its first move (terminated), then
# called again: it finishes that move and makes the others.
on($coordinator,
	"CREATE TABLE spread (id bigint NOT NULL, v text) PARTITION BY LIST (jumpbackhash(id, 12));
	 SELECT format('CREATE TABLE spread_%s PARTITION OF spread FOR VALUES IN (%s)', i, i) FROM generate_series(0, 11) AS i \\gexec
	 INSERT INTO spread SELECT i, md5(i::text) FROM generate_series(1, 12000) AS i");
my $spread_sum = "SELECT count(*) || ' ' || sum(hashtext(id || v)) FROM spread";
my $spread_before = on($coordinator, $spread_sum);
$run++;
$call = start_sql($coordinator,
	[ "INSERT INTO engine_calls VALUES ($run, pg_backend_pid())", "CALL rebalance('spread', ARRAY[NULL, 'a', 'b'])" ]);
$seen = on($coordinator, "SELECT cut_at('public.spread', $run, 'copy', 'terminate')");
($out, $err) = finish_sql($call);
note "rebalance cut short: " . ($seen =~ /\|\d/ ? "in phase " . (split /\|/, $seen)[0] : 'too late') . '; it said: ' . ($err || '(nothing)');
($out, $err) = ('', '');
$coordinator->psql('postgres', "CALL rebalance('spread', ARRAY[NULL, 'a', 'b'])", stdout => \$out, stderr => \$err);
unlike($err, qr/ERROR/, "rebalance called again goes on");
my @notices = $err =~ /NOTICE:  rebalance of public.spread: moving/g;
note "rebalance called again: $out moves; " . scalar(@notices) . " announced";
is(on($coordinator, "SELECT string_agg(coalesce(server, 'here') || ' ' || n, ', ' ORDER BY server NULLS FIRST)
	FROM (SELECT server, count(*) AS n FROM partition_placement WHERE \"table\" = 'spread'::regclass GROUP BY server) AS s"),
	'here 4, a 4, b 4', "rebalance leaves 4 partitions here, 4 on a, 4 on b");
is(on($coordinator, $spread_sum), $spread_before, "every row of spread is there once");
is(result_or_error($coordinator, 'postgres', "CALL rebalance('spread', ARRAY[NULL, 'a', 'b'])"), '0',
	"called once more, rebalance has nothing to move");
is(on($coordinator, "CALL rebalance('spread', ARRAY[NULL]::name[])"), '8',
	"rebalance back to this server alone moves the 8 partitions of servers a and b");
is(on($coordinator, "SELECT count(*) FROM partition_placement WHERE \"table\" = 'spread'::regclass AND server IS NULL")
	  . ' ' . on($coordinator, $spread_sum),
	"12 $spread_before", "all 12 partitions of spread are here again, every row once");
is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "nothing of the engine is left after the rebalance");

# A superuser moves a partition of alice's table.  The move runs as alice
# (her user mapping, her rights, in a security-restricted operation): her
# function in a generated column (which tries RESET ROLE, then to make her a
# superuser, and swallows the errors) is refused first, since the server would compute it;
# with one of built-in functions, the move is done, the server computes it
# (the verification compares the values), and alice has gained nothing.
# She logs in to the servers with her password (dblink and postgres_fdw ask
# one of a role that is not a superuser).
for my $node (values %servers)
{
	on($node, "CREATE ROLE alice LOGIN PASSWORD 'alice secret'; GRANT CREATE ON SCHEMA public TO alice");
	password_logins($node, 'alice');
}
on($coordinator,
	"CREATE ROLE alice;
	 GRANT CREATE ON SCHEMA public TO alice;
	 GRANT USAGE ON FOREIGN SERVER a, b TO alice;
	 CREATE USER MAPPING FOR alice SERVER a OPTIONS (user 'alice', password 'alice secret');
	 CREATE USER MAPPING FOR alice SERVER b OPTIONS (user 'alice', password 'alice secret');
	 SET ROLE alice;
	 CREATE FUNCTION climb(v text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS \$\$
	 BEGIN
	     BEGIN
	         EXECUTE 'RESET ROLE';
	     EXCEPTION WHEN OTHERS THEN NULL;
	     END;
	     BEGIN
	         EXECUTE 'ALTER ROLE alice SUPERUSER';
	     EXCEPTION WHEN OTHERS THEN NULL;
	     END;
	     RETURN upper(v);
	 END \$\$;
	 CREATE TABLE owned (id bigint NOT NULL, v text, shout text GENERATED ALWAYS AS (climb(v)) STORED)
	     PARTITION BY HASH (id jumpbackhash2_int8_ops);
	 CREATE TABLE owned_0 PARTITION OF owned FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	 CREATE TABLE owned_1 PARTITION OF owned FOR VALUES WITH (MODULUS 2, REMAINDER 1);
	 INSERT INTO owned (id, v) SELECT i, 'v' || i FROM generate_series(1, 2000) AS i;
	 RESET ROLE");
like(result_or_error($coordinator, 'postgres', "CALL partition_move('owned_1', 'b')"),
	qr/generated column shout, computed by function public\.climb\(text\), which the server would have to have/,
	"a generated column computed by alice's function is refused");
on($coordinator,
	"SET ROLE alice;
	 ALTER TABLE owned DROP COLUMN shout;
	 ALTER TABLE owned ADD COLUMN shout text GENERATED ALWAYS AS (upper(v) || '!') STORED;
	 RESET ROLE");
my $owned_sum = "SELECT count(*) || ' ' || sum(hashtext(id || v || shout)) FROM owned";
my $owned_before = on($coordinator, $owned_sum);
is(result_or_error($coordinator, 'postgres', "CALL partition_move('owned_1', 'b')") =~ s/^\d+$/moved/r, 'moved',
	"a superuser moves a partition of alice's table to server b");
is(on($coordinator, "SELECT rolsuper FROM pg_roles WHERE rolname = 'alice'"), 'f', "alice is not a superuser after it");
is(on($servers{b}, "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'public.owned_1'::regclass")
	  . ' ' . on($coordinator, "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'owned_1'::regclass"),
	'alice alice', "the table on server b and the foreign table here are alice's");
is(on($coordinator, "SET ROLE alice; $owned_sum"), $owned_before, "every row of alice's table is there, as she reads it");
on($coordinator, "SET ROLE alice; INSERT INTO owned (id, v) VALUES (2001, 'late'), (2002, 'later')");
is(on($coordinator, "SET ROLE alice; SELECT string_agg(shout, ' ' ORDER BY id) FROM owned WHERE id > 2000"), 'LATE! LATER!',
	"rows written after the move get their generated column, wherever they live");

# And back: the superuser moves it here again.  Alice's index on the table
# calls her function, which tries to make her a superuser: the move builds
# it on the table it fills here as alice, in a security-restricted
# operation, and she gains nothing; her table on server b is dropped.
on($coordinator, "SET ROLE alice; CREATE INDEX owned_climb ON owned (climb(v))");
$owned_before = on($coordinator, "SET ROLE alice; $owned_sum");
is(result_or_error($coordinator, 'postgres', "CALL partition_move('owned_1', NULL)") =~ s/^\d+$/moved/r, 'moved',
	"a superuser moves the partition of alice's table back here");
is(on($coordinator, "SELECT rolsuper FROM pg_roles WHERE rolname = 'alice'"), 'f',
	"alice is not a superuser after it, though her function ran to build her index");
is(on($coordinator, "SELECT pg_get_userbyid(relowner) || ' ' || relkind::text || ' '
	|| (SELECT count(*) FROM pg_index WHERE indrelid = 'owned_1'::regclass)
	FROM pg_class WHERE oid = 'owned_1'::regclass")
	  . ' ' . on($servers{b}, "SELECT to_regclass('public.owned_1') IS NULL"),
	'alice r 1 t', "owned_1 is alice's table here again, with her index; server b no longer has it");
is(on($coordinator, "SET ROLE alice; $owned_sum"), $owned_before, "every row of alice's table is there, as she reads it");

done_testing();
