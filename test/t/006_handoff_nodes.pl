# test/t/006_handoff_nodes.pl
#	ring_partition_handoff_nodes against OpenStack Swift's own
#	Ring.get_more_nodes (Debian's python3-swift, for /usr/bin/python3) on the
#	same assignments: random rings (node counts, zones, regions, replicas,
#	part powers on both sides of 16, zero weights, and rings rebalanced with
#	drained nodes that still hold partitions), built from a random seed
#	(reported; SUBSETTING_HANDOFF_SEED=N repeats a run), compared by
#	test/tools/swift_handoff.py on every partition of the small rings and on
#	random partitions of the large ones.  One check per ring.
#
# suite: handoff nodes
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $PYTHON = '/usr/bin/python3';

# Without python3-swift there is nothing to compare with: skipped, except in
# CI, where it is a failure (test/run-all-tests installs it).
my (undef, $missing) = run_command([ $PYTHON, '-c', 'import swift.common.ring.ring' ]);
if ($missing ne '')
{
	plan skip_all => 'python3-swift is not installed' if ($ENV{CI} // '') ne 'true';
	BAIL_OUT("python3-swift is not installed: $missing");
}

my $seed = $ENV{SUBSETTING_HANDOFF_SEED} // int(rand(1 << 30));
note "seed $seed (SUBSETTING_HANDOFF_SEED=$seed repeats this run)";

my $node = new_server('handoff');

# Twelve random rings, and each rebalanced with a third of its nodes drained
# (weight 0: they keep partitions until later rebalances move them all),
# if at least 4 (the most replicas a ring has) keep a weight.
$node->safe_psql('postgres', qq{
CREATE EXTENSION subsetting;
SELECT setseed(($seed % 1000000) / 1000000.0);
CREATE TABLE shapes AS
SELECT s, 2 + (random() * 60)::int AS nodes, 1 + (random() * 8)::int AS zones,
       1 + (random() * 3)::int AS regions, 1 + (random() * 3)::int AS replicas,
       (ARRAY[1, 3, 6, 8, 10, 12, 16, 17, 18])[1 + (random() * 8)::int] AS part_power,
       (random() * 1e9)::bigint AS seed
FROM generate_series(1, 12) AS s;
CREATE TABLE topology AS
SELECT s, i AS node, (1 + random() * 9)::int::float8 AS weight,
       (random() * (zones - 1))::int AS zone, (random() * (regions - 1))::int AS region
FROM shapes, generate_series(1, nodes) AS i;
CREATE TABLE handoff_rings (name text PRIMARY KEY, ring partition_ring);
INSERT INTO handoff_rings
SELECT 'random ' || s, ring_build(array_agg(node * 7 ORDER BY node), array_agg(weight ORDER BY node),
                                  array_agg(zone ORDER BY node), array_agg(region ORDER BY node),
                                  part_power => min(part_power), replicas => least(min(replicas), count(*)::int),
                                  seed => min(seed))
FROM topology JOIN shapes USING (s)
GROUP BY s;
INSERT INTO handoff_rings
SELECT 'drained ' || s, ring_rebalance(min(ring::text)::partition_ring, array_agg(node * 7 ORDER BY node),
                                      array_agg(CASE WHEN node % 3 = 0 THEN 0 ELSE weight END ORDER BY node),
                                      array_agg(zone ORDER BY node), array_agg(region ORDER BY node))
FROM topology JOIN handoff_rings ON name = 'random ' || s
WHERE s IN (SELECT s FROM topology GROUP BY s HAVING count(*) FILTER (WHERE node % 3 <> 0) >= 4)
GROUP BY s;
});

# swift_handoff.py reads the rings with psql, from PGHOST and PGPORT.
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
my $rings = $node->safe_psql('postgres',
	"SELECT name, (ring_info(ring)).part_power, (ring_info(ring)).nodes FROM handoff_rings ORDER BY name");
for my $line (split /\n/, $rings)
{
	my ($name, $part_power, $nodes) = split /\|/, $line;
	my $partitions = 'all';
	if ($part_power > 10)
	{
		$partitions = join(',', 0, (1 << $part_power) - 1,
			split(/\n/, $node->safe_psql('postgres',
				"SELECT (random() * ((1 << $part_power) - 1))::int FROM generate_series(1, 20)")));
	}
	my ($out, $err) = run_command(
		[
			$PYTHON, 'test/tools/swift_handoff.py', 'postgres',
			"SELECT ring FROM handoff_rings WHERE name = '$name'",
			$partitions, $nodes, '--compare'
		]);
	my @lines = split /\n/, "$out\n$err";
	note "    $_" for grep { $_ ne '' && !/ passed, / } @lines[ 0 .. ($#lines < 4 ? $#lines : 4) ];
	my ($summary) = grep { / passed, / } reverse @lines;
	like($summary // "$out$err", qr/^[0-9]+ passed, 0 failed$/,
		"$name (part power $part_power, $nodes nodes): handoffs equal Swift's");
}

done_testing();
