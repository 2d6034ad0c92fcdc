# test/t/010_reshard_large_row.pl
#	Resharding by the 1.2 engine never builds a row's text form: a row
#	whose text form would exceed PostgreSQL's 1 GB limit on one allocation
#	is copied, verified and moved like any other, and comes out identical.
#
#	One server; a table t (id bigint, v bytea) PARTITION BY LIST
#	(jumpbackhash(id, 2)), two local partitions, with 2000 ordinary rows (a
#	few of them with a NULL or a 100 kB value) and ONE row whose v is
#	540,000,000 random bytes (written to a file by the test, read by
#	pg_read_binary_file: no text form is built to make it either).  Its text
#	form, hex, would take 2 * 540,000,000 + 2 bytes, more than 1 GB
#	(1,073,741,823): first it is checked that v::text and the row's own text
#	form (record_out) fail for that reason, so that any use of a text form
#	by the engine (a copy through text, a comparison of text, an error
#	message quoting the row) would make it fail.  Its id has jumpbackhash(id,
#	3) = 2, so that it moves in both calls: to the new partition t_2 when
#	adding (2 -> 3), back when removing t_2 (3 -> 2).
#
#	Checks after each call: it succeeded; the big row is in the partition
#	of its bucket, with its length and its SHA-256 equal to those of the
#	file, computed by Perl (Digest::SHA: independent of the server); the
#	other rows are exactly those of before (EXCEPT ALL both ways against a
#	copy made before: a row lost, doubled or changed shows); moved_rows is
#	the number of rows whose bucket changes (counted by jumpbackhash over
#	that copy); reshard_check finds no misplaced row; nothing of the engine
#	is left.  Autovacuum is off: it is not what this test is about
#	(011_reshard_autovacuum.pl is).
#	The run time of each step is reported (note); on a 2-core machine the
#	test took about 35 s, and one backend at most 1.7 GB of memory.
#
# suite: large row
use strict;
use warnings FATAL => 'all';

use Digest::SHA;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest qw(:DEFAULT !on);

my $BIG = 540_000_000;    # bytes; its text form: 2 * $BIG + 2 > 1,073,741,823
my $started = time;
my $node = new_server('large_row', "autovacuum = off\n");

# on(SQL): runs SQL, returns its result unaligned; dies on error.
sub on
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# attempt(SQL): runs SQL, returns (stdout, stderr) whether it fails or not.
sub attempt
{
	my ($sql) = @_;
	my ($out, $err);
	$node->psql('postgres', $sql, stdout => \$out, stderr => \$err);
	return ($out, $err);
}

my $t = time;
# timed(WHAT): notes the time since the last one.
sub timed
{
	my ($what) = @_;
	note sprintf("%s: %.1f s", $what, time - $t);
	$t = time;
}

on(q{
CREATE EXTENSION subsetting;
CREATE TABLE t (id bigint NOT NULL, v bytea) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE t_0 PARTITION OF t FOR VALUES IN (0);
CREATE TABLE t_1 PARTITION OF t FOR VALUES IN (1);
INSERT INTO t SELECT i, CASE WHEN i % 500 = 0 THEN NULL
                             WHEN i % 500 = 1 THEN decode(repeat(md5(i::text), 6400), 'hex')  -- 102,400 bytes
                             ELSE convert_to('row ' || i, 'UTF8') END
FROM generate_series(1, 2000) AS i;
CREATE TABLE t_2 (LIKE t INCLUDING ALL);
});

# The big value: random bytes in a file, its SHA-256 computed here.
my $file = PostgreSQL::Test::Utils::tempdir() . '/big.bin';
my $sha = Digest::SHA->new(256);
{
	open(my $random, '<:raw', '/dev/urandom') or die "could not open /dev/urandom: $!";
	open(my $out, '>:raw', $file) or die "could not create $file: $!";
	my $left = $BIG;
	while ($left > 0)
	{
		my $chunk = '';
		my $want = $left < 1 << 20 ? $left : 1 << 20;
		while (length($chunk) < $want)
		{
			my $got = sysread($random, $chunk, $want - length($chunk), length($chunk));
			die "could not read /dev/urandom: $!" unless $got;
		}
		$sha->add($chunk);
		print $out $chunk or die "could not write $file: $!";
		$left -= $want;
	}
	close($out) or die "could not write $file: $!";
}
my $big_digest = '\\x' . $sha->hexdigest;
is(-s $file, $BIG, "the big value's file has $BIG bytes");
timed('the big value written to a file');

my $big_id = on("SELECT min(i) FROM generate_series(1000000, 1001000) AS i WHERE jumpbackhash(i, 3) = 2");
on("INSERT INTO t VALUES ($big_id, pg_read_binary_file('$file'))");
unlink $file;
timed('the big row inserted');

# What the rows are before: all but the big one as they are, and the big
# one's bucket of 2 (where it is, and must come back to).
on("CREATE TABLE small_before AS SELECT id, v FROM t WHERE id <> $big_id");
my $home = on("SELECT jumpbackhash(${big_id}::bigint, 2)");
is(on("SELECT tableoid::regclass || ' ' || length(v) || ' ' || sha256(v) FROM t WHERE id = $big_id"),
	"t_$home $BIG $big_digest", "the big row is in t_$home, with the file's length and SHA-256");
timed('its SHA-256 on the server');

# The premise: its text forms cannot be built.
my ($out, $err) = attempt("SELECT length(v::text) FROM t WHERE id = $big_id");
like($err, qr/invalid memory alloc request size (\d+)/, "its text form (bytea_out) fails: more than 1 GB");
($out, $err) = attempt("SELECT length(t::text) FROM t WHERE id = $big_id");
like($err, qr/invalid memory alloc request size (\d+)/, "so does the row's text form (record_out)");
timed('the text forms tried');

# check(NAME, BUCKETS, MOVED): after a call that reported MOVED rows.
sub check
{
	my ($name, $buckets, $moved) = @_;
	my $bucket = on("SELECT jumpbackhash(${big_id}::bigint, $buckets)");
	is(on("SELECT tableoid::regclass || ' ' || length(v) || ' ' || sha256(v) FROM t WHERE id = $big_id"),
		"t_$bucket $BIG $big_digest",
		"$name: the big row is in t_$bucket, its bucket of $buckets, with the file's length and SHA-256");
	is(on("SELECT count(*) FROM t WHERE id = $big_id"), '1', "$name: once");
	is(on("SELECT (SELECT count(*) FROM (SELECT id, v FROM t WHERE id <> $big_id EXCEPT ALL SELECT * FROM small_before) AS a)
	           || ' ' || (SELECT count(*) FROM (SELECT * FROM small_before EXCEPT ALL SELECT id, v FROM t WHERE id <> $big_id) AS b)"),
		'0 0', "$name: the other rows are those of before, each once");
	is($moved,
		on("SELECT count(*) FROM (SELECT id FROM small_before UNION ALL SELECT $big_id) AS r
		    WHERE jumpbackhash(id, 2) <> jumpbackhash(id, 3)"),
		"$name: moved_rows is the number of rows whose bucket changes ($moved)");
	is(on("SELECT pg_get_partkeydef('t'::regclass) || ' ' || count(*) FROM pg_inherits WHERE inhparent = 't'::regclass"),
		"LIST (jumpbackhash(id, $buckets)) $buckets", "$name: the table has $buckets buckets, $buckets partitions");
	is(on("SELECT coalesce(sum(misplaced_rows), -1) FROM reshard_check('t')"), '0', "$name: no misplaced row");
	is(on($ENGINE_LEFTOVERS),
		'none', "$name: nothing of the engine is left");
}

($out, $err) = attempt("CALL reshard_add_partition('t', 't_2')");
is($err, '', "adding t_2 (2 -> 3) succeeds");
timed('reshard_add_partition');
check('2 -> 3', 3, $out);
timed('the checks');

($out, $err) = attempt("CALL reshard_remove_partition('t', 't_2')");
is($err, '', "removing t_2 (3 -> 2) succeeds");
timed('reshard_remove_partition');
check('3 -> 2', 2, $out);
is(on("SELECT count(*) FROM t_2"), '0', "3 -> 2: the removed t_2 is emptied");
timed('the checks');

note sprintf("total: %.1f s", time - $started);
done_testing();
