"""
test/bench/swift_ring.py
	OpenStack Swift's ring builder on the fleets of test/bench/bench_ring.c, for
	a side-by-side comparison: build time and balance, then one rebalance after
	adding a node to zone 0 (data moved as a multiple of the minimum
	R * 2^p / (n + 1), and balance after).  Needs Debian's python3-swift.

	usage: /usr/bin/python3 swift_ring.py PART_POWER REPLICAS NODES ZONES

Prints CSV rows in bench_ring's columns: implementation, operation,
part_power, replicas, nodes, zones, ms, balance_percent, moved_vs_minimum
(Swift's own get_balance(), the largest |held / share - 1| in percent).  Swift's min_part_hours is 1, its usual setting: like the
project's ring, one rebalance moves at most one replica of a partition.
"""
import sys
import time

from swift.common.ring import RingBuilder


def device(i, zones):
	return {'id': i, 'region': 0, 'zone': i % zones, 'weight': 1.0,
			'ip': '10.%d.%d.%d' % (i >> 16, (i >> 8) & 255, i & 255), 'port': 6200,
			'device': 'd%d' % i}


def assignment(builder):
	return [list(row) for row in builder._replica2part2dev]


def main():
	part_power, replicas, nodes, zones = map(int, sys.argv[1:5])
	builder = RingBuilder(part_power, replicas, 1)
	for i in range(nodes):
		builder.add_dev(device(i, zones))
	start = time.monotonic()
	builder.rebalance(seed=1)
	build_ms = (time.monotonic() - start) * 1000
	print('swift,build,%d,%d,%d,%d,%.1f,%.4f,' % (
		part_power, replicas, nodes, zones, build_ms, builder.get_balance()))

	before = assignment(builder)
	added = device(nodes, zones)
	added['zone'] = 0
	builder.add_dev(added)
	builder.pretend_min_part_hours_passed()
	start = time.monotonic()
	builder.rebalance(seed=2)
	rebalance_ms = (time.monotonic() - start) * 1000
	after = assignment(builder)
	moved = sum(a != b for row_a, row_b in zip(before, after) for a, b in zip(row_a, row_b))
	minimum = replicas * 2 ** part_power / (nodes + 1)
	print('swift,rebalance after adding a node to zone 0,%d,%d,%d,%d,%.1f,%.4f,%.4f' % (
		part_power, replicas, nodes, zones, rebalance_ms, builder.get_balance(), moved / minimum))


main()
