# test/t/023_partition_move_back.pl
#	A table of 64 partitions goes from one server to three and back to one
#	(rebalance, each move a partition_move), with a move from one server to
#	another in between, while writers insert, update, delete and change keys
#	through the parent, readers read it, and a writer on a server writes
#	directly into the table of a partition that leaves that server: each
#	of its writes is refused while the partition moves, or is kept.  After
#	each step the table equals a mirror the writers change in the same
#	statements, the parent keeps its OID, a view and a grant on it work,
#	and nothing of the engine or of a moved partition is left anywhere.
#	The calls have the default budget and attempts: one that runs out of
#	attempts on a busy machine is called again (reported, not checked).
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $PARTITIONS = 64;
my $ROWS = 19200;
my $coordinator = new_server('coordinator');
# (server a logs its statements: the verification's reads of the copies)
my %servers = (a => new_server('server_a', "log_statement = 'all'"), b => new_server('server_b'));

link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE items (id bigint NOT NULL, v text DEFAULT 'new', n int NOT NULL DEFAULT 0 CHECK (n >= 0))
	         PARTITION BY LIST (jumpbackhash(id, $PARTITIONS));
	     SELECT format('CREATE TABLE items_%s PARTITION OF items FOR VALUES IN (%s)', i, i)
	     FROM generate_series(0, $PARTITIONS - 1) AS i \\gexec
	     CREATE INDEX ON items (id);
	     CREATE INDEX ON items (n) WHERE n > 0;
	     INSERT INTO items SELECT i, md5(i::text), 0 FROM generate_series(1, $ROWS) AS i;
	     CREATE TABLE mirror AS SELECT * FROM items;
	     CREATE SEQUENCE ids START " . ($ROWS + 1) . ";
	     CREATE VIEW item_count AS SELECT count(*) AS n FROM items;
	     CREATE FUNCTION item_v(bigint) RETURNS text LANGUAGE sql STABLE AS 'SELECT v FROM items WHERE id = \$1';
	     CREATE ROLE reader;
	     GRANT SELECT ON items, item_count TO reader;");
my $parent_oid = on($coordinator, "SELECT 'items'::regclass::oid");
# (a role that reads a foreign partition needs a user mapping of its own)
on($coordinator, "CREATE USER MAPPING FOR reader SERVER $_ OPTIONS (user 'postgres', password_required 'false')")
  for sort keys %servers;

# The writers through the parent, and readers (mirrored_writers).
my %writers = mirrored_writers(sub { "SELECT count(*), item_v($_[0]) FROM items WHERE id = $_[0]" });

# checked(WHAT): the table is its mirror, the parent the same table, the
# view and the grant on it work, nothing of the engine is left here.
sub checked
{
	my ($what) = @_;
	items_equal_mirror($coordinator, $what);
	is(on($coordinator, "SELECT 'items'::regclass::oid"), $parent_oid, "$what: the parent keeps its OID");
	is(on($coordinator, "SET ROLE reader; SELECT n = (SELECT count(*) FROM items) FROM item_count"), 't',
		"$what: a role granted SELECT on the parent and the view counts every row through the view");
	is(on($coordinator, $ENGINE_LEFTOVERS), 'none', "$what: nothing of the engine is left here");
	return;
}

# spread(): "here N, a N, b N", the partitions on each server.
sub spread
{
	return on($coordinator,
		"SELECT string_agg(coalesce(server, 'here') || ' ' || n, ', ' ORDER BY server NULLS FIRST)
		 FROM (SELECT server, count(*) AS n FROM partition_placement WHERE \"table\" = 'items'::regclass GROUP BY server) AS s");
}

# tables_on(SERVER): the tables named items_% on a server.
sub tables_on
{
	my ($server) = @_;
	return on($servers{$server}, "SELECT count(*) FROM pg_class WHERE relname LIKE 'items\\_%' AND relkind = 'r'");
}

# rebalanced(SERVERS): CALL rebalance('items', SERVERS), with the default
# budget and attempts, under the writers: on a busy machine they can run
# out in one of its moves (a timing, not a result), and it is called again
# (at most 5 times in all, with a larger budget each time, as
# call_until_done), which finishes that move
# first and then makes the others.  Returns what the last call said, and
# "A M": the moves the calls announced (a move finished by the next call
# is not announced again), and the moves made (those the last call counts,
# and those each call that ran out made before the one it was in, which
# the next one finishes).
sub rebalanced
{
	my ($servers) = @_;
	my ($announced, $made, $calls, $ret, $out, $err) = (0, 0, 0);
	while (1)
	{
		$calls++;
		($ret, $out, $err) =
		  $coordinator->psql('postgres', again_with_larger_budget("CALL rebalance('items', $servers)", $calls));
		my $moving = () = $err =~ /NOTICE:  rebalance of public\.items: moving/g;
		my $finishing = () = $err =~ /NOTICE:  rebalance of public\.items: finishing the interrupted move/g;
		$announced += $moving;
		last if $ret == 0 || $calls == 5 || !ran_out_of_attempts($err, 'public.items');
		note "rebalance('items', $servers), call $calls, ran out of attempts in a move: called again";
		$made += $finishing + $moving - 1;
	}
	$made += $out if $ret == 0;
	return ($err, "$announced $made");
}

# One server to three, under the writers and readers.
start_writer_loops($coordinator, %writers);
my ($err, $moves) = rebalanced("ARRAY[NULL, 'a', 'b']");
unlike($err, qr/ERROR/, "rebalance from one server to three under writers");
is($moves, '42 42', "rebalance made 42 moves, each announced");
is(spread(), 'here 22, a 21, b 21', "64 partitions: 22 here, 21 on a, 21 on b");
is(tables_on('a') . ' ' . tables_on('b'), '21 21', "servers a and b hold a table for each of their partitions");
stop_writer_loops(sub { });
# Server a has the extension, of the same version: each move's verification
# read the count and sum of the copy computed there, never the copy's rows
# (nor did anything else read a partition whole, until the checks below).
my $a_log = slurp_file($servers{a}->logfile);
my $sums_read = () = $a_log =~ /SELECT n, total FROM public\.reshard_images_\d+_[0-9a-f]+/g;
my $copies_read = () = $a_log =~ /DECLARE \S+ CURSOR FOR\s+SELECT id, v, n FROM public\.items_\d+\s*(?:\n|$)/g;
is("$sums_read $copies_read", '21 0', "the 21 verifications of the moves to server a read its sums, no copy whole");
checked('one server to three');

# From one server to another (a to b), and from a server back here, while a
# writer on server a writes directly into the table of the partition that
# leaves it (ids below zero of its bucket; each write it was told was
# committed is recorded there): refused while the partition moves, kept
# if done before.
my ($across, $across_bucket) = split /\|/, on($coordinator,
	"SELECT partition, bucket FROM partition_placement WHERE \"table\" = 'items'::regclass AND server = 'a'
	 ORDER BY bucket LIMIT 1");
my ($back, $back_bucket) = split /\|/, on($coordinator,
	"SELECT partition, bucket FROM partition_placement WHERE \"table\" = 'items'::regclass AND server = 'a'
	 ORDER BY bucket DESC LIMIT 1");
on($servers{a}, "CREATE TABLE direct_ok (id bigint); CREATE SEQUENCE direct_ids");
my %direct;
for my $target ([ $across, $across_bucket ], [ $back, $back_bucket ])
{
	my ($table, $bucket) = @$target;
	$direct{"direct_$table"} =
	  "WITH i AS (INSERT INTO $table (id, v, n)
	              SELECT x, 'direct', 0 FROM (SELECT -nextval('direct_ids') AS x FROM generate_series(1, 256)) AS s
	              WHERE jumpbackhash(x, $PARTITIONS) = $bucket LIMIT 1 RETURNING id)
	   INSERT INTO direct_ok SELECT id FROM i";
}
start_writer_loops($coordinator, %writers);
start_writer_loops($servers{a}, %direct);
# (with the default budget and attempts, under the writers: on a busy
# machine they can run out, and the move is called again, at most 5 times:
# call_until_done)
for my $move ([ $across, "'b'", 'from server a to server b' ], [ $back, 'NULL', 'from server a back here' ])
{
	my ($partition, $target, $what) = @$move;
	my ($ret, $moved, $said, $calls) = call_until_done($coordinator, "CALL partition_move('$partition', $target)", 'public.items');
	note "$partition: $calls calls" if $calls > 1;
	is($ret == 0 && $moved > 0 ? 'moved' : $said, 'moved', "$partition moved $what under writers");
}
stop_writer_loops(sub { });
my $direct_ids = on($servers{a}, "SELECT coalesce(string_agg(id::text, ','), '0') FROM direct_ok");
my $direct_count = on($servers{a}, "SELECT count(*) FROM direct_ok");
note "direct writes on server a acknowledged: $direct_count";
is(on($coordinator, "SELECT count(*) FROM items WHERE id IN ($direct_ids) AND v = 'direct'"), $direct_count,
	"every direct write on server a that was acknowledged is in the table after the moves");
on($coordinator, "INSERT INTO mirror SELECT * FROM items WHERE id IN ($direct_ids)");
my $refused = 0;
for my $name (keys %direct)
{
	my $log = slurp_file("$PostgreSQL::Test::Utils::log_path/writer_$name.log");
	$refused += () = $log =~ /cannot write to \S+ directly/g;
}
note "direct writes on server a refused while their partition moved: $refused";
is(on($coordinator, "SELECT string_agg(coalesce(server, 'here'), ' ' ORDER BY partition::text)
	FROM partition_placement WHERE partition IN ('$across'::regclass, '$back'::regclass)"),
	($across lt $back ? 'b here' : 'here b'), "$across is on server b, $back here");
is(on($servers{a}, "SELECT count(*) FROM pg_class WHERE relname IN ('$across', '$back')")
	  . ' ' . on($servers{b}, "SELECT count(*) FROM pg_class WHERE relname = '$across' AND relkind = 'r'"),
	'0 1', "server a no longer holds either; server b holds $across");
is(on($servers{a}, $ENGINE_LEFTOVERS), 'none', "nothing of the moves is left on server a");
is(on($coordinator, "SELECT relkind::text || ' ' || (SELECT count(*) FROM pg_index WHERE indrelid = '$back'::regclass)
	|| ' ' || (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
	           WHERE oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = '$back'::regclass))
	FROM pg_class WHERE oid = '$back'::regclass"),
	"r 2 ${back}_id_idx,${back}_n_idx", "$back is a table here again, with the parent's indexes named after it");
checked('a move across servers and one back');

# What the server a partition leaves must allow, checked there before
# anything is made: nothing of its own depends on the table (the move drops
# it).
my $kept = on($coordinator,
	"SELECT partition FROM partition_placement WHERE \"table\" = 'items'::regclass AND server = 'b' ORDER BY bucket LIMIT 1");
on($servers{b}, "CREATE VIEW kept_rows AS SELECT * FROM $kept");
like(result_or_error($coordinator, 'postgres', "CALL partition_move('$kept', NULL)"),
	qr/cannot move public\.$kept from server "b": view public\.kept_rows depends on public\.$kept there/,
	"a view on server b of the table of $kept: its move back is refused, naming the view");
on($servers{b}, "DROP VIEW kept_rows");
is(on($coordinator, $ENGINE_LEFTOVERS) . ' ' . on($coordinator, "SELECT coalesce(server, 'here') FROM partition_placement WHERE partition = '$kept'::regclass"),
	'none b', "the refused moves made nothing: $kept is on server b");

# Three servers to one, under the writers and readers.
start_writer_loops($coordinator, %writers);
($err, $moves) = rebalanced('ARRAY[NULL]::name[]');
unlike($err, qr/ERROR/, "rebalance from three servers to one under writers");
is($moves, '41 41', "rebalance made 41 moves, each announced");
is(spread(), 'here 64', "all 64 partitions are here");
is(tables_on('a') . ' ' . tables_on('b'), '0 0', "servers a and b hold no partition's table");
is(on($coordinator, "SELECT count(*) FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
	WHERE i.inhparent = 'items'::regclass AND c.relkind = 'r'
	  AND (SELECT count(*) FROM pg_index x WHERE x.indrelid = c.oid) = 2"),
	$PARTITIONS, "every partition is a table here with the parent's two indexes");
stop_writer_loops(sub { });
checked('three servers to one');
is(result_or_error($coordinator, 'postgres', "CALL rebalance('items', ARRAY[NULL]::name[])"), '0',
	"called once more, rebalance has nothing to move");

done_testing();
