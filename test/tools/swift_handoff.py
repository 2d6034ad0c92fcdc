#!/usr/bin/python3
"""
test/tools/swift_handoff.py
	OpenStack Swift's own Ring.get_more_nodes (Debian's python3-swift) on the
	assignment of a partition_ring, for comparison with
	ring_partition_handoff_nodes.  The ring is read from a server with psql
	(PGHOST and friends in the environment): its node table (ring_node_stats,
	in the ring's node order) and its assignment (ring_assignments).  Swift's
	device i is the ring's node i, alone on its own IP (a node of the
	partition_ring is its smallest failure domain: disk and server at once).

	usage: swift_handoff.py DATABASE RING_SQL PARTITIONS COUNT [--compare]

RING_SQL is an SQL expression giving the ring.  For each partition of the
comma-separated PARTITIONS ("all" for every partition), prints
"partition: id,id,..." with the node ids of the first COUNT handoffs Swift
yields.  With --compare, asks the server for ring_partition_handoff_nodes(ring,
partition, COUNT) too and prints one line per partition that differs, then
"N passed, N failed" (one check per partition).
"""
import array
import itertools
import os
import subprocess
import sys
import tempfile

import swift.common.ring.ring as swift_ring

# Swift refuses to load a ring without /etc/swift/swift.conf's hash path
# prefix and suffix, which only hash_path (object names) uses; the handoff
# walk does not.
swift_ring.validate_configuration = lambda: None


def psql(database, sql):
	out = subprocess.run(['psql', '-X', '-q', '-At', '-F', ',', '-v', 'ON_ERROR_STOP=1', '-d', database,
						  '-c', sql], check=True, capture_output=True, text=True).stdout
	return [line.split(',') for line in out.splitlines() if line]


def swift_ring_of(database, ring_sql, directory):
	nodes = psql(database, 'SELECT node, zone, region FROM ring_node_stats((%s))' % ring_sql)
	info = psql(database, 'SELECT part_power, replicas FROM ring_info((%s))' % ring_sql)[0]
	part_power, replicas = int(info[0]), int(info[1])
	index = {}
	devs = []
	for i, (node, zone, region) in enumerate(nodes):
		index[int(node)] = i
		devs.append({'id': i, 'node': int(node), 'zone': int(zone), 'region': int(region),
					 'weight': 1.0, 'ip': '10.%d.%d.%d' % (i >> 16, (i >> 8) & 255, i & 255),
					 'port': 6200, 'device': 'd%d' % i})
	rows = [array.array('H', [0] * (1 << part_power)) for _ in range(replicas)]
	for partition, replica, node in psql(database, 'SELECT * FROM ring_assignments((%s))' % ring_sql):
		rows[int(replica)][int(partition)] = index[int(node)]
	path = os.path.join(directory, 'object.ring.gz')
	swift_ring.RingData(rows, devs, 32 - part_power).save(path)
	return swift_ring.Ring(path), part_power


def main():
	args = [a for a in sys.argv[1:] if a != '--compare']
	compare = '--compare' in sys.argv[1:]
	database, ring_sql, partitions, count = args[0], args[1], args[2], int(args[3])
	with tempfile.TemporaryDirectory() as directory:
		ring, part_power = swift_ring_of(database, ring_sql, directory)
	if partitions == 'all':
		partitions = list(range(1 << part_power))
	else:
		partitions = [int(p) for p in partitions.split(',')]
	swift = {p: [d['node'] for d in itertools.islice(ring.get_more_nodes(p), count)] for p in partitions}
	if not compare:
		for p in partitions:
			print('%d: %s' % (p, ','.join(map(str, swift[p]))))
		return
	ours = {}
	for p, nodes in psql(database, "SELECT p, array_to_string(ring_partition_handoff_nodes((%s), p, %d), ' ') "
						 "FROM unnest('{%s}'::int[]) AS p" % (ring_sql, count, ','.join(map(str, partitions)))):
		ours[int(p)] = [int(n) for n in nodes.split()]
	passed = failed = 0
	for p in partitions:
		if ours.get(p) == swift[p]:
			passed += 1
		else:
			failed += 1
			print('partition %d: ours %s, Swift %s' % (p, ours.get(p), swift[p]))
	print('%d passed, %d failed' % (passed, failed))


main()
