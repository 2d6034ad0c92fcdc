# test/t/031_routing_direct_writes.pl
#	An application that writes each key straight to the server that holds
#	its partition (clients/python/examples/direct_writes.py: the Python
#	client's Router over routing_layout, psycopg) keeps writing while
#	partitions move: from a server to another, from a server back here, from
#	here to a server, and back.  A write by a route a move made stale fails
#	(the table of a moving partition refuses direct writes, the one it left
#	is dropped), and the application reloads the layout and writes again.
#	Every write it was told committed is in the table exactly once, in the
#	partition of its key's bucket; none it was not told of is there; and it
#	read each row back by its route (straight from the server, or through
#	the coordinator) right after writing it.  A second reader in it, whose
#	layout is reloaded only when a server says its route is stale, reads
#	each row too: across a move stopped after its cutover, its reads by the
#	route of the layout it had before the move fail (the table the partition
#	left was renamed away there at the cutover) instead of missing the rows
#	written since, and it reloads and finds them.
#
# suite: partition move
use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $PYTHON = '/usr/bin/python3';
my $APPLICATION = "$FindBin::RealBin/../../clients/python/examples/direct_writes.py";

my (undef, $missing) = run_command([ $PYTHON, '-c', 'import psycopg, xxhash' ]);
BAIL_OUT("python3-psycopg and python3-xxhash are needed (test/lib/common.sh installs them): $missing")
  if $missing ne '';

my $coordinator = new_server('coordinator');
my %servers = (a => new_server('server_a'), b => new_server('server_b'));

link_servers($coordinator, \%servers);
on($coordinator,
	"CREATE TABLE t (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash8_int8_ops);
	 SELECT format('CREATE TABLE t_%s PARTITION OF t FOR VALUES WITH (MODULUS 8, REMAINDER %s)', b, b)
	 FROM generate_series(0, 7) AS b \\gexec");
# buckets 0 to 2 on a, 3 to 5 on b, 6 and 7 here
on($coordinator, "CALL partition_move('t_$_', 'a')") for 0 .. 2;
on($coordinator, "CALL partition_move('t_$_', 'b')") for 3 .. 5;

# The application, writing ids 1, 2, ... until the stop file exists.
my $stop = tempdir(CLEANUP => 1) . '/stop';
my ($out, $err) = ('', '');
my $application = IPC::Run::start(
	[ $PYTHON, $APPLICATION, $coordinator->connstr('postgres'), 't', on($coordinator, 'SELECT current_user'), $stop ],
	'>', \$out, '2>', \$err);

# written_since(BUCKET, ID): waits until the application has written a key
# of BUCKET (undef: of any) above ID (it writes ids in order: after the
# move, by the route its layout had before it, or by one it reloaded; and
# has read each key below the last by both layouts).
sub written_since
{
	my ($bucket, $id) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my $query = "SELECT EXISTS (SELECT FROM t WHERE id > $id"
	  . (defined $bucket ? " AND jumpbackhash(id, 8) = $bucket)" : ')');
	while (on($coordinator, $query) ne 't')
	{
		$application->pump_nb;
		BAIL_OUT("the application ended: $err") unless $application->pumpable;
		BAIL_OUT(timed_out("the application to write a key of bucket " . ($bucket // 'any') . " after id $id"))
		  if time() > $deadline;
		select(undef, undef, undef, 0.05);
	}
	return;
}

# move(PARTITION, SERVER): the move, while the application writes, then a
# write of the application to that bucket after it.
sub move
{
	my ($bucket, $server) = @_;
	written_since($bucket, 0);
	on($coordinator, "CALL partition_move('t_$bucket', " . ($server // 'NULL') . ')');
	written_since($bucket, on($coordinator, 'SELECT coalesce(max(id), 0) FROM t'));
	return;
}

move(0, "'b'");    # from a server to another
move(3, undef);    # from a server back here
move(6, "'a'");    # from here to a server
move(0, "'a'");    # and back

# Bucket 1 from a to b, the call stopped after the cutover, until the
# application has written (through the coordinator: the layout says the
# bucket moves) and read a key of it and another key after it; then the
# call that finishes it.
written_since(1, 0);
on($coordinator, "CALL reshard_begin('t', 'move', 't_1', 'b')");
on($coordinator, "CALL reshard_step('t')")
  while on($coordinator, "SELECT phase FROM reshard_progress WHERE relid = 't'::regclass") ne 'finish';
written_since(1, on($coordinator, 'SELECT coalesce(max(id), 0) FROM t'));
written_since(undef, on($coordinator, 'SELECT max(id) FROM t WHERE jumpbackhash(id, 8) = 1'));
on($coordinator, "CALL partition_move('t_1', 'b')");

IPC::Run::run([ 'touch', $stop ]);
$application->finish;
is($?, 0, "the application ends without an error") or diag($err);

my @written = grep { /^\d+$/ } split /\n/, $out;
my ($summary) = $out =~ /^# (direct .*)$/m;
note "the application: $summary";
my ($direct, $stale, $reader_stale) = $summary =~ /direct (\d+), .*stale routes (\d+), .*reader: .*stale routes (\d+)/;
cmp_ok($direct, '>', 0, 'the application wrote keys straight to the servers');
cmp_ok($stale, '>', 0, 'moves made some of its routes stale');
is_deeply(\@written, [ 1 .. scalar(@written) ], 'it was told each of its writes committed, in order');
is(join("\n", $out =~ /^(# read back .*)$/mg), '', 'it read each row back by its route, once');
cmp_ok($reader_stale, '>', 0, "moves made some of the reader's routes stale");
is(join("\n", $out =~ /^(# reader read back .*)$/mg), '', 'the reader read each row by its route, once');

my $n = scalar @written;
is( on($coordinator, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t"),
	"$n|$n|1|$n", "each of its $n writes is in the table once, and nothing else is");
is( on($coordinator,
		"SELECT count(*) FROM t WHERE tableoid <> format('t_%s', jumpbackhash(id, 8))::regclass"),
	'0', 'each row is in the partition of its bucket');
is( on($coordinator,
		"SELECT string_agg(bucket || ':' || coalesce(server, 'here'), ' ' ORDER BY bucket)
		 FROM partition_placement WHERE \"table\" = 't'::regclass"),
	'0:a 1:b 2:a 3:here 4:b 5:b 6:a 7:here', 'the partitions are where the moves put them');

done_testing();
