/*
 * test/bench/bench_ring.c
 *		Benchmark of the partition ring core: build and rebalance times, and
 *		their quality (balance, data moved as a multiple of the minimum), and
 *		lookups, on the fleets of the project's targets (equal weights);
 *		lookups one key at a time against batches that prefetch
 *		(ring_lookup_keys), both on the partition-major layout the server
 *		keeps.
 *		test/bench/swift_ring.py runs OpenStack Swift's builder on the same
 *		fleets, in the same columns.
 *
 *	usage: bench_ring [ROUNDS]
 *
 * Prints CSV: implementation, operation, part_power, replicas, nodes, zones,
 * ms (median of ROUNDS), balance_percent (the largest |held / share - 1|,
 * after the operation), moved_vs_minimum (partition-replicas moved over the
 * minimum R * 2^p / (n + 1)).  Benchmarks report, never assert.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/ring.h"
#include "core/ring_lookup.h"

static void *
b_alloc(void *ctx, size_t n)
{
	(void) ctx;
	return malloc(n);
}

static void
b_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

static ring_env env = {b_alloc, b_free, NULL, NULL, NULL};

static ring_node *
fleet(uint32_t n, uint32_t zones, int random_weights)
{
	ring_node  *nodes = calloc(n, sizeof(ring_node));
	uint64_t	state = 88172645463325252ull;
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		nodes[i].id = (int32_t) i + 1;
		nodes[i].zone = (int32_t) (i % zones);
		nodes[i].weight = random_weights ? (double) (1 + bench_random(&state) % 100) : 1.0;
	}
	return nodes;
}

static double
max_rel_dev(const ring *r)
{
	size_t		slots = (size_t) r->replicas << r->part_power;
	int64_t    *held = calloc(r->node_count, sizeof(int64_t));
	double		W = 0,
				worst = 0;
	size_t		i;

	for (i = 0; i < slots; i++)
		held[r->assignment[i]]++;
	for (i = 0; i < r->node_count; i++)
		W += r->nodes[i].weight;
	for (i = 0; i < r->node_count; i++)
	{
		double		share = (double) slots * r->nodes[i].weight / W;

		if (share > 0 && fabs(held[i] / share - 1) > worst)
			worst = fabs(held[i] / share - 1);
	}
	free(held);
	return worst;
}

static uint64_t
moved(const ring *a, const ring *b)
{
	uint64_t	m = 0;
	uint32_t	x,
				r;

	for (x = 0; x < (1u << a->part_power); x++)
		for (r = 0; r < a->replicas; r++)
			if (a->nodes[ring_slot(a, r, x)].id != b->nodes[ring_slot(b, r, x)].id)
				m++;
	return m;
}

static void
bench_build(uint32_t pp, uint32_t R, uint32_t n, uint32_t zones, int rounds)
{
	ring_node  *nodes = fleet(n, zones, 0);
	double	   *t = calloc(rounds, sizeof(double));
	ring		r;
	ring_error	err;
	int			i;

	for (i = 0; i < rounds; i++)
	{
		double		t0 = bench_now_ns();

		if (ring_core_build(&env, nodes, n, pp, R, i, &r, &err) != RING_OK)
		{
			printf("build failed: %s\n", ring_problem_name(err.problem));
			exit(1);
		}
		t[i] = (bench_now_ns() - t0) / 1e6;
		if (i + 1 < rounds)
			ring_free(&env, &r);
	}
	printf("subsetting,build,%u,%u,%u,%u,%.1f,%.4f,\n",
		   pp, R, n, zones, bench_median(t, rounds), 100 * max_rel_dev(&r));
	ring_free(&env, &r);
	free(t);
	free(nodes);
}

/* rebalance after adding one node to zone 0 */
static void
bench_rebalance(uint32_t pp, uint32_t R, uint32_t n, uint32_t zones, int rounds)
{
	ring_node  *nodes = fleet(n + 1, zones, 0);
	double	   *t = calloc(rounds, sizeof(double));
	ring		a,
				b;
	ring_error	err;
	double		minimum = (double) ((size_t) R << pp) / (n + 1);
	int			i;

	nodes[n].zone = 0;
	if (ring_core_build(&env, nodes, n, pp, R, 1, &a, &err) != RING_OK)
		exit(1);
	for (i = 0; i < rounds; i++)
	{
		double		t0 = bench_now_ns();

		if (ring_core_rebalance(&env, &a, nodes, n + 1, i, &b, &err) != RING_OK)
		{
			printf("rebalance failed: %s\n", ring_problem_name(err.problem));
			exit(1);
		}
		t[i] = (bench_now_ns() - t0) / 1e6;
		if (i + 1 < rounds)
			ring_free(&env, &b);
	}
	printf("subsetting,rebalance after adding a node to zone 0,%u,%u,%u,%u,%.1f,%.4f,%.4f\n",
		   pp, R, n, zones, bench_median(t, rounds), 100 * max_rel_dev(&b), moved(&a, &b) / minimum);
	ring_free(&env, &a);
	ring_free(&env, &b);
	free(t);
	free(nodes);
}

/* ring_nodes-style lookups in C: ns per lookup at part power pp */
static void
bench_lookup(uint32_t pp, int rounds)
{
	ring_node  *nodes = fleet(1000, 5, 1);
	ring		r;
	ring_error	err;
	double	   *t = calloc(rounds, sizeof(double));
	uint64_t	state = 1;
	int			i;
	const int	lookups = 4000000;

	if (ring_core_build(&env, nodes, 1000, pp, 3, 0, &r, &err) != RING_OK)
		exit(1);
	for (i = 0; i < rounds; i++)
	{
		double		t0 = bench_now_ns();
		uint64_t	acc = 0;
		int			k;

		for (k = 0; k < lookups; k++)
		{
			uint32_t	x = ring_partition_of(&r, bench_random(&state));
			uint32_t	rep;

			for (rep = 0; rep < 3; rep++)
				acc += (uint64_t) r.nodes[ring_slot(&r, rep, x)].id;
		}
		bench_sink = acc;
		t[i] = (bench_now_ns() - t0) / lookups;
	}
	printf("subsetting,10^6 lookups of 3 replicas,%u,3,1000,5,%.1f,,\n", pp, bench_median(t, rounds));	/* ns per lookup = ms per 10^6 */
	ring_free(&env, &r);
	free(t);
	free(nodes);
}

/*
 * The server's lookups, in C: on the partition-major assignment, 4 * 10^6
 * random keys one at a time (as ring_nodes(ring, key) reads them), then in
 * batches of 21845 keys (as ring_nodes(ring, keys[]) hands them to
 * ring_lookup_keys, which prefetches the rows of the keys ahead).  ns per
 * lookup, in the ms column (ms per 10^6).
 */
static void
bench_lookup_batch(uint32_t pp, int rounds)
{
	ring_node  *nodes = fleet(1000, 5, 1);
	ring		r;
	ring_error	err;
	double	   *single = calloc(rounds, sizeof(double));
	double	   *batch = calloc(rounds, sizeof(double));
	uint64_t	state = 1;
	const size_t lookups = 4000000;
	const size_t chunk = 65536 / 3;
	uint64_t   *keys = malloc(sizeof(uint64_t) * lookups);
	int32_t    *ids = malloc(sizeof(int32_t) * 3 * chunk);
	int32_t    *partitions = malloc(sizeof(int32_t) * chunk);
	uint16_t   *by_partition;
	size_t		k;
	int			i;

	if (ring_core_build(&env, nodes, 1000, pp, 3, 0, &r, &err) != RING_OK)
		exit(1);
	by_partition = malloc(sizeof(uint16_t) * ((size_t) 3 << pp));
	ring_lookup_transpose(&r, by_partition);
	for (k = 0; k < lookups; k++)
		keys[k] = bench_random(&state);
	for (i = 0; i < rounds; i++)
	{
		double		t0 = bench_now_ns();
		uint64_t	acc = 0;
		size_t		from;

		for (k = 0; k < lookups; k++)
		{
			const uint16_t *row = by_partition + (size_t) ring_partition_of(&r, keys[k]) * 3;
			uint32_t	rep;

			for (rep = 0; rep < 3; rep++)
				acc += (uint64_t) r.nodes[row[rep]].id;
		}
		bench_sink = acc;
		single[i] = (bench_now_ns() - t0) / lookups;

		t0 = bench_now_ns();
		for (from = 0; from < lookups; from += chunk)
		{
			size_t		n = lookups - from < chunk ? lookups - from : chunk;

			ring_lookup_keys(&r, by_partition, keys + from, n, partitions, ids, NULL);
			bench_sink = (uint64_t) ids[3 * (n - 1)];
		}
		batch[i] = (bench_now_ns() - t0) / lookups;
	}
	printf("subsetting,10^6 lookups of 3 replicas one key at a time (partition-major),%u,3,1000,5,%.1f,,\n",
		   pp, bench_median(single, rounds));
	printf("subsetting,10^6 lookups of 3 replicas in batches (ring_lookup_keys with prefetch),%u,3,1000,5,%.1f,,\n",
		   pp, bench_median(batch, rounds));
	ring_free(&env, &r);
	free(by_partition);
	free(keys);
	free(ids);
	free(partitions);
	free(single);
	free(batch);
	free(nodes);
}

int
main(int argc, char **argv)
{
	int			rounds = argc > 1 ? atoi(argv[1]) : 5;

	if (rounds < 1)
		rounds = 1;
	printf("implementation,operation,part_power,replicas,nodes,zones,ms,balance_percent,moved_vs_minimum\n");
	bench_build(16, 3, 100, 5, rounds);
	bench_build(20, 3, 1000, 5, rounds);
	bench_build(22, 3, 1000, 5, rounds > 3 ? 3 : rounds);
	bench_rebalance(16, 3, 100, 5, rounds);
	bench_rebalance(20, 3, 1000, 5, rounds > 3 ? 3 : rounds);
	bench_lookup(10, rounds);
	bench_lookup(22, rounds);
	bench_lookup_batch(10, rounds);
	bench_lookup_batch(22, rounds);
	return 0;
}
