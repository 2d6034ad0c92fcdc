"""
test/bench/report.py
	Writes the performance report from the measurements test/run-benchmarks
	leaves in RESULTS_DIR: meta (key=value lines), figure3.csv, subsets.csv,
	ring.csv, figure2.txt, sql_overhead.csv, partition_routing.csv, pgbench.csv and (when
	present) reshard_stall.csv, test/bench/reshard_stall's, and
	partition_move.csv, test/bench/partition_move's.  The report is
	Markdown: the machine and the commands, the project's performance targets
	with what was measured, then every table; the plots (made by gnuplot,
	next to the CSV files) are linked from it.  The blocks of REPORT.md
	measured by hand (between KEPT_BEGIN and KEPT_END lines) are kept, each
	at the end of the section it was in.

	usage: python3 report.py RESULTS_DIR REPORT.md
"""
import csv
import os
import sys



def read_csv(results, name):
	with open(os.path.join(results, name), newline='') as f:
		return list(csv.DictReader(f))


def read_meta(results):
	meta = {}
	with open(os.path.join(results, 'meta')) as f:
		for line in f:
			key, _, value = line.rstrip('\n').partition('=')
			meta[key] = value
	return meta


def number(value, digits=None):
	"""A measured value for a table: thousands separated, `digits` decimals."""
	if value in ('', None):
		return ''
	value = float(value)
	if digits is None:
		digits = 0 if value >= 100 else 1 if value >= 10 else 2
	return f'{value:,.{digits}f}'


def duration_ns(ns):
	ns = float(ns)
	for unit, scale in (('ms', 1e6), ('µs', 1e3)):
		if ns >= scale:
			return f'{number(ns / scale)} {unit}'
	return f'{number(ns)} ns'


def table(header, rows, align=None):
	align = align or ['---'] * len(header)
	lines = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join(align) + '|']
	lines += ['| ' + ' | '.join(str(cell) for cell in row) + ' |' for row in rows]
	return '\n'.join(lines)


def ratio(value):
	return f'{float(value):.2f}×'


class Results:
	def __init__(self, results):
		self.meta = read_meta(results)
		self.figure3 = read_csv(results, 'figure3.csv')
		self.subsets = read_csv(results, 'subsets.csv')
		self.ring = read_csv(results, 'ring.csv')
		self.sql = read_csv(results, 'sql_overhead.csv')
		self.pgbench = read_csv(results, 'pgbench.csv')
		self.routing = read_csv(results, 'partition_routing.csv')
		with open(os.path.join(results, 'figure2.txt')) as f:
			self.figure2 = f.read().split()
		stall = os.path.join(results, 'reshard_stall.csv')
		self.stall = read_csv(results, 'reshard_stall.csv') if os.path.exists(stall) else []
		move = os.path.join(results, 'partition_move.csv')
		self.move = read_csv(results, 'partition_move.csv') if os.path.exists(move) else []
		clients = os.path.join(results, 'clients.csv')
		self.clients = read_csv(results, 'clients.csv') if os.path.exists(clients) else []
		joins = os.path.join(results, 'colocated_join.csv')
		self.joins = read_csv(results, 'colocated_join.csv') if os.path.exists(joins) else []

	def jump_at(self, n):
		return next(row for row in self.figure3 if int(row['n']) == n)

	def subsets_at(self, backends):
		return next(row for row in self.subsets if int(row['backends']) == backends)

	def sql_case(self, function):
		return next(row for row in self.sql if row['function'] == function)

	def pgbench_case(self, case):
		return next(row for row in self.pgbench if row['case'] == case)

	def ring_case(self, implementation, operation, part_power):
		return next((row for row in self.ring if row['implementation'] == implementation and
					 row['operation'] == operation and int(row['part_power']) == part_power), None)

	def targets(self):
		"""(target, measured, met) for each of the project's performance targets."""
		out = []
		slowest = min((float(r['jumphash_ns']) / float(r['jumpbackhash_ns']), int(r['n']))
					  for r in self.figure3 if int(r['n']) >= 8)
		out.append(('`jumpbackhash` faster than `jumphash` for every n ≥ 8 (C)',
					f'{ratio(slowest[0])} faster at the least (n = {slowest[1]:,})', slowest[0] > 1))
		million = self.jump_at(1000000)
		speedup = float(million['jumphash_ns']) / float(million['jumpbackhash_ns'])
		out.append(('`jumpbackhash` ≥ 10× faster than `jumphash` at n = 10^6 (C)', f'{ratio(speedup)}',
					speedup >= 10))
		jump_sql = float(self.sql_case('jumpbackhash(i, 1000)')['ratio'])
		out.append(('`jumpbackhash(i, 1000)` ≤ 1.05× `hashint8(i)` through SQL', ratio(jump_sql),
					jump_sql <= 1.05))
		small, large = self.subsets_at(1000), self.subsets_at(2147483647)
		growth = float(large['ringsteady_ns']) / float(small['ringsteady_ns'])
		out.append(('`ringsteady_subset`, k = 20: N = 2^31 − 1 within 2× of N = 1000 (C)',
					f'{ratio(growth)} ({duration_ns(small["ringsteady_ns"])} → '
					f'{duration_ns(large["ringsteady_ns"])})', growth <= 2))
		at_million = self.subsets_at(1000000)
		speedup = float(at_million['post_linear_time_ns']) / float(at_million['ringsteady_ns'])
		out.append(('`ringsteady_subset` ≥ 100× faster than the post\'s linear-time method at N = 10^6 (C)',
					f'{speedup:,.0f}×', speedup >= 100))
		growth = float(at_million['rocksteadier_ns']) / float(small['rocksteadier_ns'])
		out.append(('`rocksteadier_subset`, k = 20, L = 10: N = 10^6 within 2× of N = 1000 (C)',
					f'{ratio(growth)} ({duration_ns(small["rocksteadier_ns"])} → '
					f'{duration_ns(at_million["rocksteadier_ns"])})', growth <= 2))
		seconds = float(self.figure2[0])
		out.append(('the whole Figure 2 sweep in under a minute (C)', f'{seconds:.1f} s', seconds < 60))
		build_power = max(int(r['part_power']) for r in self.ring
						  if r['implementation'] == 'swift' and r['operation'] == 'build')
		ours, swift = (self.ring_case(i, 'build', build_power) for i in ('subsetting', 'swift'))
		speedup = float(swift['ms']) / float(ours['ms'])
		out.append((f'ring build, p = {build_power}, R = 3, {int(ours["nodes"]):,} nodes in 5 zones, '
					'≥ 50× faster than Swift\'s builder',
					f'{speedup:,.0f}× ({number(ours["ms"])} ms against {number(swift["ms"])} ms)',
					speedup >= 50))
		rebalance = 'rebalance after adding a node to zone 0'
		ours, swift = (self.ring_case(i, rebalance, build_power) for i in ('subsetting', 'swift'))
		moved, balance = float(ours['moved_vs_minimum']), float(ours['balance_percent'])
		out.append(('adding a node to one zone moves ≤ 1.05× the minimum, balance ≤ 1% after',
					f'{moved:.3f}×, {balance:.3f}% (Swift: {float(swift["moved_vs_minimum"]):.2f}×, '
					f'{float(swift["balance_percent"]):.1f}%)', moved <= 1.05 and balance <= 1))
		lookups = self.sql_case('ring_nodes(ring, key), p = 22')
		rows = int(self.meta['sql_rows'])
		out.append(('`ring_nodes` through SQL: a p = 22 ring within 1.2× of a p = 10 ring',
					f"{ratio(lookups['ratio'])} ({rows / float(lookups['function_ms']) * 1000:,.0f} against "
					f"{rows / float(lookups['baseline_ms']) * 1000:,.0f} rows per second)",
					float(lookups['ratio']) <= 1.2))
		inserts = self.pgbench_case('insert_jump.sql')
		out.append(('pgbench inserts, `PARTITION BY LIST (jumpbackhash(id, 16))` ≥ 0.95× native '
					'`PARTITION BY HASH`', ratio(inserts['ratio']), float(inserts['ratio']) >= 0.95))
		for case, what in (('insert_opclass', 'inserts'), ('select_opclass', 'point selects `WHERE id = $1`')):
			row = next(p for p in self.pgbench
					   if p['case'] == case + '.sql' and p['baseline'] in ('insert_native.sql', 'select_native.sql'))
			out.append((f'pgbench {what}, `PARTITION BY HASH (id jumpbackhash16_int8_ops)` ≥ 0.95× native '
						'`PARTITION BY HASH (id)`', ratio(row['ratio']), float(row['ratio']) >= 0.95))
		out += self.stall_targets()
		return out

	def stall_targets(self):
		"""The longest write during reshard_add_partition: ≤ 1 s, and 10^7 rows within 2× of 10^5."""
		calls = {(row['case'], int(row['rows'])): row for row in self.stall
				 if row['method'] == 'reshard_add_partition'}
		out = []
		for (case, rows, method), row in sorted({(row['case'], int(row['rows']), row['method']): row
												 for row in self.stall if row['method'] in STALL_TARGETS}.items()):
			where = '8 local partitions' if case == 'local' else '4 `postgres_fdw` shards'
			what = f'the longest write during {stall_call(case, method)}, {where}, {rows:,} rows: ≤ 1 s'
			if row['error']:
				out.append((what, f"the call failed: {row['error']}", False))
			else:
				out.append((what, milliseconds(row['writer_max_ms']), float(row['writer_max_ms']) <= 1000))
		small, large = calls.get(('local', 10 ** 5)), calls.get(('local', 10 ** 7))
		if small and large and not small['error'] and not large['error']:
			growth = float(large['writer_max_ms']) / float(small['writer_max_ms'])
			out.append(('the longest write, 10^7 rows within 2× of 10^5 rows (local)',
						f"{ratio(growth)} ({milliseconds(small['writer_max_ms'])} → "
						f"{milliseconds(large['writer_max_ms'])})", growth <= 2))
		return out

	def pgbench_noise(self):
		"""How far apart three insert ratios that measure one another are: the noise of a ratio."""
		def insert_ratio(case, baseline):
			return float(next(p['ratio'] for p in self.pgbench
							  if p['case'] == case and p['baseline'] == baseline))
		direct = insert_ratio('insert_opclass.sql', 'insert_native.sql')
		via_list = insert_ratio('insert_opclass.sql', 'insert_jump.sql')
		list_native = insert_ratio('insert_jump.sql', 'insert_native.sql')
		product = via_list * list_native
		return ('\nHow noisy these ratios are, from the run itself: the inserts of the operator class against native '
				'hash partitioning were measured directly and also through the LIST form, so the ratio '
				f'{ratio(direct)} should equal {ratio(via_list)} × {ratio(list_native)} = {ratio(product)}; '
				f'the two differ by {abs(direct / product - 1) * 100:.0f}%. Differences smaller than that are '
				'not resolved by this run.\n')

	def targets_table(self):
		return table(['target', 'measured', 'met'],
					 [(t, m, 'yes' if ok else '**no**') for t, m, ok in self.targets()],
					 ['---', '---', ':---:'])


# The methods of test/bench/reshard_stall that call the extension, as the report names them; those of
# the targets (adding a partition).  On shards the plain methods say shard_views => false, and the
# _shard_views ones are the defaults, which use it there.
STALL_TARGETS = {'reshard_add_partition': '`reshard_add_partition`',
				 'reshard_add_partition_shard_views': '`reshard_add_partition` (the defaults: `shard_views`)'}
STALL_CALLS = dict(STALL_TARGETS,
				   reshard_remove_partition='`reshard_remove_partition`',
				   reshard_remove_partition_shard_views='`reshard_remove_partition` (the defaults: `shard_views`)')


def stall_call(case, method):
	"""How the report names a call of test/bench/reshard_stall, in its case."""
	name = STALL_CALLS.get(method, method)
	if case.startswith('fdw') and method in ('reshard_add_partition', 'reshard_remove_partition'):
		name = name.replace('`' + method + '`', f'`{method}(..., shard_views => false)`')
	return name


def seconds(value):
	value = float(value)
	return f'{value * 1000:,.0f} ms' if value < 1 else f'{value:,.2f} s'


def milliseconds(value):
	return '–' if value in ('', '-', None) else f'{number(value)} ms'


def stall_section(r, m):
	"""Resharding's write stall (test/bench/reshard_stall), or nothing when it did not run."""
	if not r.stall:
		return ''
	first = r.stall[0]
	topologies = {row['case']: row['topology'].replace('->', '→') for row in r.stall}
	rows = []
	notes = []
	# (with --partitions, the local table's partitions before and after in each row)
	several = len({row['topology'] for row in r.stall if row['case'] == 'local'}) > 1
	for row in r.stall:
		what = {'local': 'local', 'fdw': 'shards', 'fdw-remove': 'shards'}.get(row['case'], row['case'])
		if several and row['case'] == 'local':
			what = 'local, ' + row['topology'].split(' partitions')[0].replace('->', '→') + ' partitions'
		method = stall_call(row['case'], row['method'])
		if row['error']:
			rows.append((what, number(row['rows'], 0), method, f"failed: {row['error']}") + ('',) * 9)
			continue
		rows.append((what, number(row['rows'], 0), method, number(row['moved_rows'], 0), seconds(row['seconds']),
					 number(row['writer_transactions'], 0), milliseconds(row['writer_p50_ms']),
					 milliseconds(row['writer_p99_ms']), f"**{milliseconds(row['writer_max_ms'])}**",
					 milliseconds(row['writer_p99_before_ms']), row['rows_written_per_moved_row'],
					 f"{float(row['wal_bytes_per_moved_row']):,.0f} B" if row['wal_bytes_per_moved_row'] else '–',
					 f"{row['load_before']} → {row['load_after']}"))
		trouble = [f"{label}: {row[c]}" for c, label in
				   (('writer_retries', 'retries (after a deadlock or a serialization failure)'),
					('writer_failed', 'transactions failed after 10 tries'),
					('writer_aborted_clients', 'clients aborted by an error')) if int(row[c]) > 0]
		if trouble:
			notes.append(f"{what}, {number(row['rows'], 0)} rows, {row['method']}, the writer's "
						 f"{'; '.join(trouble)}.")
	version = f"version {first['extension']} as built from commit `{first['commit']}`"
	arguments = m.get('reshard_stall_arguments', '')
	when = f" (run on its own on {m['reshard_stall_date']})" if m.get('reshard_stall_date') else ''
	return ('\n## Resharding\'s write stall\n\n'
			f'`test/bench/reshard_stall{arguments}`{when}: `CALL reshard_add_partition` '
			+ ('(and `reshard_remove_partition` on the shards) ' if 'fdw-remove' in topologies else '') +
			f'of the extension ({version}) while '
			'a steady writer writes through the parent, against a plain move of the same rows; each on a fresh table '
			'of the same rows. The table: `t (id bigint NOT NULL, payload text, counter int)` with an index on `id`, '
			f"`PARTITION BY HASH (id jumpbackhash<n>_int8_ops)`. *local*: {topologies.get('local', 'not run')}; "
			f"*shards*: {topologies.get('fdw', 'not run')}"
			+ (f" (and removing: {topologies['fdw-remove']})" if 'fdw-remove' in topologies else '') +
			", reached by `postgres_fdw` over a Unix socket, with "
			"`extensions 'subsetting'`.\n\n"
			f"- **The writer**: pgbench, {first['writer_clients']} clients paced with `--rate {first['writer_rate']}` "
			'(transactions per second in all), each transaction inserting a new row, adding 1 to the counter of a '
			'random row and deleting a random row; deadlocks and serialization failures retried (`--max-tries=10`). '
			'pgbench counts a paced '
			'transaction\'s latency from its scheduled start, so transactions queued behind a blocked one count '
			'their wait too. *p50, p99, max*: the writer\'s transactions that overlap the statement; *p99 before*: '
			'those before it, the machine\'s own noise.\n'
			'- **The baseline**: `WITH moved AS (DELETE FROM t WHERE jumpbackhash(id, n + 1) = n RETURNING *) '
			'INSERT INTO t_new SELECT * FROM moved`, the plain `INSERT ... SELECT` and `DELETE` of the rows that '
			'move, in one statement so that none of the writer\'s rows is lost, into the new partition (not '
			'attached). On the shards, the same statement on one old partition and 10,000 ids at a time, each in a '
			'transaction of its own, retried after a serialization failure: `postgres_fdw` runs it on the shards in '
			'`REPEATABLE READ`, so one statement over a whole shard fails as soon as the writer changes a row it has '
			'not reached yet, and one over all shards at once deadlocks with the writer across servers, where no '
			'server sees it. In a deadlock, the writer\'s transaction is the one cancelled.\n'
			'- **Rows written**: `pg_stat_database` rows inserted, updated and deleted on every server (the '
			'catalogs too), less the writer\'s own (`pg_stat_statements`). **WAL**: `pg_stat_statements` '
			'`wal_bytes` of the statement\'s role on every server. Both methods start right after a `CHECKPOINT`: '
			'the first change to each page writes its full image, most of the WAL at these sizes.\n'
			f"- **Machine**: {first['nproc']} cores; *load*: the 1-minute load average before → after each "
			'measurement (other work on the machine shows here).\n\n' +
			table(['table', 'rows', 'method', 'moved rows', 'duration', 'writer transactions', 'p50', 'p99', 'max',
				   'p99 before', 'rows written per moved row', 'WAL per moved row', 'load'], rows,
				  ['---', '---:', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:',
				   '---']) + '\n' + ''.join(f'\n{note}\n' for note in notes))


def move_section(r, m):
	"""Moving a partition to a server (test/bench/partition_move), or nothing when it did not run."""
	if not r.move:
		return ''
	cost = []
	pipes = {}	# (each move against the pipe of its rows just before it)
	for row in r.move:
		if row['case'] != 'cost':
			continue
		move = row['method'] == 'move'
		if not move:
			pipes[row['rows']] = float(row['seconds'])
		cost.append((number(row['rows'], 0), '`partition_move`' if move else 'pipe', seconds(row['seconds']),
					 row['rows_written_per_row'], f"{int(row['peak_extra_bytes']) / 1e6:,.1f} MB",
					 f"{int(row['partition_bytes']) / 1e6:,.1f} MB",
					 f"**{ratio(float(row['seconds']) / pipes[row['rows']])}**" if move and row['rows'] in pipes else '',
					 row['load']))
	stall = [(row['partitions'], seconds(row['seconds']), f"**{milliseconds(row['longest_write_ms'])}**",
			  row['failed'], row['load']) for row in r.move if row['case'] == 'stall']
	return ('\n## Moving a partition to a server\n\n'
			f"`test/bench/partition_move{m.get('partition_move_arguments', '')}`: a coordinator and a server `a` on "
			'this machine (Unix sockets), a table of 8 partitions (`HASH (id jumpbackhash8_int8_ops)`, an index on '
			'`id`) with all its rows in `t_0`, side by side: *pipe*, `COPY (SELECT * FROM t_0) TO STDOUT | COPY c '
			'FROM STDIN` into a table on `a` with the same columns and index, and `CALL partition_move(\'t_0\', '
			'\'a\')`, no writer. *Rows written*: `pg_stat_database` inserted + updated + deleted on both servers per '
			'row moved; *peak extra disk*: both databases\' size, sampled every 0.1 s, over their size before. '
			'Targets: at most 1.5× the pipe\'s time, 1.1 rows written per row moved, the partition\'s size of extra '
			'disk ([scaling-out.md](scaling-out.md)).\n\n'
			+ table(['rows', 'method', 'duration', 'rows written per row moved', 'peak extra disk',
					 "partition's size", 'move / pipe', 'load'], cost,
					['---:', '---', '---:', '---:', '---:', '---:', '---:', '---:']) + '\n'
			+ ('\nThe longest write through the parent during a move (a pgbench writer, 2 clients at 100 '
			   'transactions/s in all, each updating a row through the parent and inserting one; a partition of '
			   '10^5 rows, 10^3 in each other one; target: under 0.5 s):\n\n'
			   + table(['partitions', 'the move', 'longest write', 'failed transactions', 'load'], stall,
					   ['---:', '---:', '---:', '---:', '---:']) + '\n' if stall else ''))


def clients_section(r):
	"""The clients' slowest calls against SQL (test/bench/clients), or nothing when it did not run."""
	if not r.clients:
		return ''
	rows = [(f"`{row['case']}`" if row['case'].startswith('rocksteadier') else row['case'], row['who'],
			 seconds(row['seconds']), f"**{ratio(float(row['over_sql']))}**" if row['who'] != 'sql' else '')
			for row in r.clients]
	return ('\n## The clients against SQL\n\n'
			'`test/bench/clients`: the best of 3 of each call in SQL (`clock_timestamp()` around it, in one session) and '
			'in each client\'s benchmark program (`clients/python/bench`, with NumPy and without it, `clients/js/bench.mjs`, '
			'`clients/go/bench`), '
			'the same inputs; the ring is built by `ring_build` (100 nodes, 5 zones, part power 20, 3 replicas) and its '
			'text parsed. Target: within 10× the SQL time (issue 45).\n\n'
			+ table(['call', 'who', 'seconds', 'over SQL'], rows, ['---', '---', '---:', '---:']) + '\n')


def joins_section(r, m):
	"""Joins of co-located tables over servers (test/bench/colocated_join), or nothing when it did not run."""
	if not r.joins:
		return ''
	cases = {'local': 'all here', 'spread': 'spread, co-located',
			 'spread_no_partitionwise': 'spread, partitionwise join and aggregate off'}
	rows = [(row['query'], cases[row['case']], milliseconds(row['milliseconds']),
			 f"**{ratio(float(row['over_local']))}**" if row['case'] != 'local' else '', row['load']) for row in r.joins]
	return ('\n## Joins of co-located tables over servers\n\n'
			f"`test/bench/colocated_join{m.get('colocated_join_arguments', '')}`: a coordinator and servers `a` and "
			'`b` on this machine (Unix sockets), `orders` (4 per customer) and `order_items` (3 per order), `HASH '
			'(customer_id jumpbackhash8_int8_ops)`, twice: all here, and co-located (`colocate`) and spread by '
			'`rebalance` (3 buckets here, 3 on `a`, 2 on `b`), `enable_partitionwise_join` and '
			'`enable_partitionwise_aggregate` on for the database; each figure the median of 7 runs, the cases '
			'alternating. *whole*: `count(*)` and a sum over the join on the key; *per_customer*: the same sum per '
			'customer (`GROUP BY` the key); *customer*: the join of one customer, per query (200 in a row). The three servers share the machine\'s cores: this measures what '
			'the servers cost, not what they add ([scaling-out.md](scaling-out.md#co-located-tables)).\n\n'
			+ table(['query', 'tables', 'per query', 'over all here', 'load'], rows,
					['---', '---', '---:', '---:', '---:']) + '\n')


def report(r):
	m = r.meta
	parts = [f"""# Performance

Written by `make bench` (`test/run-benchmarks{m['arguments']}`) on {m['date']}; the whole run took {m['elapsed']}.
Every case runs side by side with its baseline, alternating, in the same run, and each figure is a median: read the
ratios. The machine is shared, so absolute times are indicative only. Benchmarks report; they never fail a test run.

| | |
|---|---|
| machine | {m['machine']} |
| PostgreSQL | {m['postgres']} |
| C compiler | {m['compiler']}, `-O2` |
| C benchmarks | median of {m['rounds']} rounds each; `test/build/bench/bench_jump {m['rounds']}`, `bench_subsets {m['rounds']}`, `bench_ring {m['rounds']}`, `test/build/bench/figure2` |
| Swift | OpenStack Swift's `RingBuilder` {m['swift']} (Debian's python3-swift), `test/bench/swift_ring.py` |
| SQL overhead | `psql --csv -v runs={m['sql_runs']} -v rows={m['sql_rows']} -f test/bench/sql_overhead.sql`: {int(m['sql_rows']):,} rows of `generate_series`, median of {m['sql_runs']} alternating runs |
| pgbench | `test/bench/pgbench/run {m['pgbench_seconds']} {m['pgbench_runs']}`: `pgbench -n -M prepared`, {m['pgbench_clients']} clients, {m['pgbench_seconds']} s a run, median of {m['pgbench_runs']} alternating runs |

## Targets

{r.targets_table()}
"""]

	parts.append('\n## pgbench\n\nTransactions per second, each case alternating with its baseline '
				 '(scripts in `test/bench/pgbench/`).\n\n' +
				 table(['what', 'case', 'baseline', 'case tps', 'baseline tps', 'ratio'],
					   [(p['what'], f"`{p['case']}`", f"`{p['baseline']}`", number(p['case_tps'], 0),
						 number(p['baseline_tps'], 0), ratio(p['ratio'])) for p in r.pgbench],
					   ['---', '---', '---', '---:', '---:', '---:']) + '\n' + r.pgbench_noise())

	parts.append(stall_section(r, m))
	parts.append(move_section(r, m))
	parts.append(clients_section(r))
	parts.append(joins_section(r, m))

	parts.append('\n## Partition routing in one session\n\n'
				 'What `PARTITION BY HASH (id jumpbackhash16_int8_ops)` costs where PostgreSQL computes a row\'s '
				 'partition, without the network and the noise of clients (`test/bench/partition_routing.sql`): '
				 'the partition hash through `satisfies_hash_partition`, and bulk inserts into 16 unlogged '
				 'partitions; ratios of median times (below 1: faster).\n\n' +
				 table(['what', 'case', 'baseline', 'case ms', 'baseline ms', 'ratio of times'],
					   [(p['what'], p['case'], p['baseline'], number(p['case_ms'], 0), number(p['baseline_ms'], 0),
						 ratio(p['ratio'])) for p in r.routing],
					   ['---', '---', '---', '---:', '---:', '---:']) + '\n')

	parts.append(f"\n## SQL overhead\n\n`SELECT count(f) FROM generate_series(1, {m['sql_rows']}) AS i`, "
				 'each function against the closest built-in (the text keys include building the strings, '
				 'the same on both sides; the subset functions are set against a built-in returning the same '
				 '20-element `int[]`). A part power 22 ring\'s assignment (24 MiB) does not fit the CPU caches, so a lookup '
				 'with a random key waits for memory; a part power 10 ring (6 kB) stays in cache.\n\n' +
				 table(['function', 'baseline', 'function ms', 'baseline ms', 'ratio of times'],
					   [(f"`{s['function']}`", f"`{s['baseline']}`", number(s['function_ms'], 0),
						 number(s['baseline_ms'], 0), ratio(s['ratio'])) for s in r.sql],
					   ['---', '---', '---:', '---:', '---:']) + '\n')

	selected = [n for n in (8, 9, 1024, 1025, 1000000) if any(int(row['n']) == n for row in r.figure3)]
	parts.append('\n## Consistent hashing in C: the JumpBackHash paper\'s Figure 3\n\n'
				 'Random 64-bit keys, n = 2^i, 2^i + 1, ⌊1.25·2^i⌋ and ⌊1.5·2^i⌋ up to 10^6 '
				 '(all values: [performance/figure3.csv](performance/figure3.csv)).\n\n'
				 '![time per call against the number of buckets](performance/figure3.png)\n\n' +
				 table(['buckets', 'jumpbackhash', 'jumphash', '`key % n`', 'multiply-shift',
						'jumphash / jumpbackhash'],
					   [(f'{n:,}',) + tuple(duration_ns(r.jump_at(n)[c]) for c in
											('jumpbackhash_ns', 'jumphash_ns', 'modulo_ns', 'lemire_ns')) +
						(ratio(float(r.jump_at(n)['jumphash_ns']) / float(r.jump_at(n)['jumpbackhash_ns'])),)
						for n in selected],
					   ['---:'] * 6) + '\n')

	methods = [('ringsteady_ns', '`ringsteady_subset`'), ('rocksteadier_ns', '`rocksteadier_subset`'),
			   ('random_ns', '`random_subset`'), ('round_robin_ns', '`round_robin_subset`'),
			   ('deterministic_ns', '`deterministic_subset`'), ('consistent_ns', '`consistent_subset`'),
			   ('post_linear_time_ns', 'the post\'s linear-time method')]
	parts.append('\n## Subsets as the fleet grows, in C\n\n'
				 'A subset of k = 20 backends for random frontends (`rocksteadier_subset` with L = 10). The '
				 'functions whose cost grows with N stop at N = 10^6 '
				 '([performance/subsets.csv](performance/subsets.csv)).\n\n'
				 '![time per call against the number of backends](performance/subsets.png)\n\n' +
				 table(['N'] + [name for _, name in methods],
					   [(f"{int(row['backends']):,}",) + tuple(duration_ns(row[c]) if row[c] else '–'
															   for c, _ in methods) for row in r.subsets],
					   ['---:'] * (len(methods) + 1)) + '\n')

	rows = []
	for ours in (row for row in r.ring if row['implementation'] == 'subsetting'):
		swift = r.ring_case('swift', ours['operation'], int(ours['part_power']))
		if swift is not None and int(swift['nodes']) != int(ours['nodes']):
			swift = None
		rows.append((ours['operation'], ours['part_power'], f"{int(ours['nodes']):,}",
					 f"{number(ours['ms'])} ms", f"{number(swift['ms'])} ms" if swift else '–',
					 f"{float(swift['ms']) / float(ours['ms']):,.0f}×" if swift else '–',
					 f"{float(ours['balance_percent']):.3f}%" if ours['balance_percent'] else '–',
					 f"{float(swift['balance_percent']):.3f}%" if swift else '–',
					 f"{float(ours['moved_vs_minimum']):.3f}×" if ours['moved_vs_minimum'] else '–',
					 f"{float(swift['moved_vs_minimum']):.3f}×" if swift and swift['moved_vs_minimum'] else '–'))
	parts.append('\n## The partition ring against OpenStack Swift\n\n'
				 'R = 3 replicas, equal weights, 5 zones, Swift with `min_part_hours` = 1 (one replica of a '
				 'partition moves per rebalance, as in this ring). Balance is the largest |held / share − 1| '
				 'after the operation; data moved is partition-replicas moved over the minimum R·2^p/(n + 1). '
				 'Lookups are 10^6 keys, 3 replicas each, in C.\n\n' +
				 table(['operation', 'p', 'nodes', 'subsetting', 'Swift', 'Swift / subsetting',
						'balance', 'Swift balance', 'moved', 'Swift moved'], rows,
					   ['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']) + '\n')

	parts.append(f"\n## The Figure 2 sweep\n\n`test/build/bench/figure2` computes the connection balance of five "
				 f"algorithms and the diversity of two over {int(r.figure2[1]):,} job sizes (k = 20, "
				 f"1 ≤ M ≤ 256, 20 ≤ N ≤ 256, M·k > N) in {float(r.figure2[0]):.1f} s; the plot is "
				 '[figure2.png](figure2.png).\n')
	parts.append('\n## Profiling\n\nWhat profiling found and what it changed: [profiling.md](profiling.md).\n')
	return ''.join(parts)


KEPT_BEGIN = '<!-- measured by hand: make bench keeps this block -->'
KEPT_END = '<!-- end of the block measured by hand -->'


def kept_blocks(path):
	"""The blocks of an earlier report measured by hand: (title of the ## section it is in, its lines)."""
	if not os.path.exists(path):
		return []
	blocks, section, block = [], None, None
	with open(path, encoding='utf-8') as f:
		for line in f:
			if block is not None:
				block.append(line)
				if line.strip() == KEPT_END:
					blocks.append((section, ''.join(block)))
					block = None
			elif line.strip() == KEPT_BEGIN:
				block = [line]
			elif line.startswith('## '):
				section = line.strip()
	if block is not None:
		sys.exit(f'{path}: a block measured by hand has no end ({KEPT_END})')
	return blocks


def with_kept(text, blocks):
	"""text with each kept block at the end of the ## section of its title, or at the end if there is none."""
	titles = {line.strip() for line in text.splitlines() if line.startswith('## ')}
	out, section = [], None

	def add(block):
		if out and out[-1].strip():
			out.append('\n')
		out.extend([block, '\n'])

	def close(section):
		for title, block in blocks:
			if title == section:
				add(block)

	for line in text.splitlines(keepends=True):
		if line.startswith('## '):
			close(section)
			section = line.strip()
		out.append(line)
	close(section)
	for title, block in blocks:
		if title is not None and title not in titles:
			add(block)
	return ''.join(out)


def main():
	if len(sys.argv) != 3:
		sys.exit(__doc__)
	results = Results(sys.argv[1])
	blocks = kept_blocks(sys.argv[2])
	with open(sys.argv[2], 'w') as f:
		f.write(with_kept(report(results), blocks))


main()
