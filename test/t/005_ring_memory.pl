# test/t/005_ring_memory.pl
#	Peak memory of a backend that reads the largest partition ring (2^24
#	partitions x 4 replicas over 65,535 nodes: 136 MB stored, toasted) in
#	queries that call ring functions many times in one row and over many
#	rows.  Each query runs in a fresh session; the backend's peak resident
#	memory (VmHWM of /proc/<pid>/status, read by the backend itself with
#	pg_read_file) is taken before and after.  The server runs with
#	shared_buffers of 16 MB, so that the shared pages a backend touches add
#	little, and without JIT, whose compiler alone takes 50 MB.  Checks, for
#	each query: the peak grew by less than what one decode needs (the stored
#	value, read whole once, and the decoded ring: 2.5 times the ring's size),
#	or, for the text form, by less than the text, its one copy into the
#	result, and that.  (1.0 decoded the ring once per call: 8 calls took 1.16
#	GB, (ring_info(r)).* 1.67 GB.)  Memory, not time, is checked; times are
#	reported.
#
# suite: ring memory
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;
use Time::HiRes qw(time);

my $started = time;
my $node = new_server('ring_memory', "shared_buffers = 16MB\njit = off\n");

is($node->safe_psql('postgres', q{
CREATE EXTENSION subsetting;
CREATE FUNCTION peak_kb() RETURNS bigint LANGUAGE sql AS
$$ SELECT substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s*(\d+) kB')::bigint $$;
CREATE TABLE big AS
SELECT ring_build(array_agg(i), array_agg((1 + i % 7)::float8), array_agg(i % 1000), array_agg(i % 10),
                  part_power => 24, replicas => 4) AS ring
FROM generate_series(1, 65535) AS i;
SELECT (ring_info(ring)).partitions * (ring_info(ring)).replicas FROM big;
}), '67108864', "set-up: the largest ring");
my $ring_kb = $node->safe_psql('postgres', "SELECT pg_column_size(ring) / 1024 FROM big");
note sprintf("set-up: %.0f s; the ring takes %d kB stored", time - $started, $ring_kb);

# memory_case(NAME, BOUND_KB, QUERY): QUERY, in a fresh session, raises the
# backend's peak by less than BOUND_KB.
sub memory_case
{
	my ($name, $bound, $query) = @_;
	my $t0 = time;
	my ($out, $err);
	$node->psql('postgres', "SELECT peak_kb();\nCOPY ($query) TO '/dev/null';\nSELECT peak_kb();",
		stdout => \$out, stderr => \$err);
	my ($before, $after) = split(/\n/, $out // '');
	if (!defined $after || $before !~ /^\d+$/ || $after !~ /^\d+$/)
	{
		is("$out$err", '(two peaks)', "$name: runs");
		return;
	}
	my $grew = $after - $before;
	note sprintf("%s: peak grew by %d MB (bound %d MB), %.0f s", $name, $grew / 1024, $bound / 1024, time - $t0);
	ok($grew < $bound, "$name: peak memory within one decode ($grew kB, bound $bound kB)");
}

my $one_decode = int($ring_kb * 5 / 2);
memory_case("ring_dispersion 8 times in one row", $one_decode,
	"SELECT ring_dispersion(ring, 'zone'), ring_dispersion(ring, 'zone'), ring_dispersion(ring, 'region'),
	        ring_dispersion(ring, 'node'), ring_dispersion(ring, 'zone'), ring_dispersion(ring, 'region'),
	        ring_dispersion(ring, 'zone'), ring_dispersion(ring, 'region') FROM big");
memory_case("(ring_info(ring)).*", $one_decode, "SELECT (ring_info(ring)).* FROM big");
memory_case("lookups in one row, and over 10,000 rows", $one_decode,
	"SELECT ring_nodes(ring, 1), ring_nodes(ring, -1), ring_partition_nodes(ring, 7), ring_partition(ring, 5),
	        (SELECT count(DISTINCT ring_nodes(b.ring, k * 922337203685477)) FROM generate_series(-5000, 5000) AS k)
	 FROM big b");
memory_case("a ring larger than subsetting.ring_cache_size, over 10,000 rows", $one_decode,
	"SELECT count(DISTINCT ring_nodes(ring, k * 922337203685477))
	 FROM big, generate_series(-5000, 5000) AS k, (SELECT set_config('subsetting.ring_cache_size', '64MB', false)) s");
memory_case("ring_node_stats and ring_moves of the ring with itself", $one_decode,
	"SELECT (SELECT count(*) FROM ring_node_stats(ring)), (SELECT count(*) FROM ring_moves(ring, ring)) FROM big");
my $text_kb = $node->safe_psql('postgres', "SELECT length(ring::text) / 1024 FROM big");
note "the text form takes $text_kb kB";
memory_case("text output (COPY of the text form)", 2 * $text_kb + $one_decode, "SELECT ring FROM big");

note sprintf("total: %.0f s", time - $started);
done_testing();
