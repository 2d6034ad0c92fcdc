/*
 * test/test_ring.c
 *		Tests of the partition ring core: the targets of the ring issue as
 *		properties (balance, dispersion, data moved, one move per partition,
 *		convergence, determinism), the encoded form and its validation, the
 *		JSON text form, argument errors, cancellation and allocation failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/splitmix64.h"
#include "ring_test_env.h"
#include "unit.h"


/* ---- helpers ---- */

/* lowercase hex of n bytes (n <= 64), in a static buffer */
static const char *
hex(const uint8_t *b, size_t n)
{
	static char out[129];
	size_t		i;

	for (i = 0; i < n && i < 64; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return out;
}

static uint64_t rs = 12345;

static uint64_t
rnd(void)
{
	return splitmix64_next(&rs);
}

/* n nodes with ids 1..n (listed in a scrambled order), zone = i % zones */
static ring_node *
make_nodes(uint32_t n, uint32_t zones, int random_weights)
{
	ring_node  *nodes = calloc(n, sizeof(ring_node));
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		uint32_t	k = (i * 7919u) % n;	/* scramble the input order */

		nodes[i].id = (int32_t) (k + 1);
		nodes[i].zone = (int32_t) (k % zones);
		nodes[i].region = 0;
		nodes[i].weight = random_weights ? (double) (1 + rnd() % 100) : 1.0;
	}
	return nodes;
}

static uint32_t
find_in(const ring_node *nodes, uint32_t n, int32_t id)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (nodes[i].id == id)
			return i;
	return UINT32_MAX;
}

/* held count per sorted node index */
static int64_t *
held_of(const ring *r)
{
	int64_t    *h = calloc(r->node_count, sizeof(int64_t));
	size_t		i,
				slots = (size_t) r->replicas << r->part_power;

	for (i = 0; i < slots; i++)
		h[r->assignment[i]]++;
	return h;
}

/*
 * The largest deviation of a node's holding from its exact share (from the
 * weights): |held - share| in slots, or with relative set |held / share - 1|
 * over the nodes with a positive share.
 */
static double
max_deviation(const ring *r, int relative)
{
	int64_t    *h = held_of(r);
	double		W = 0,
				S = (double) ((size_t) r->replicas << r->part_power),
				worst = 0;
	uint32_t	i;

	for (i = 0; i < r->node_count; i++)
		W += r->nodes[i].weight;
	for (i = 0; i < r->node_count; i++)
	{
		double		share = S * r->nodes[i].weight / W;
		double		d;

		if (relative && share <= 0)
			continue;
		d = relative ? fabs((double) h[i] / share - 1) : fabs((double) h[i] - share);
		if (d > worst)
			worst = d;
	}
	free(h);
	return worst;
}

static double
max_abs_dev(const ring *r)
{
	return max_deviation(r, 0);
}

static double
max_rel_dev(const ring *r)
{
	return max_deviation(r, 1);
}

/* independent count: partition-replicas in a zone (region, zone) already used */
static uint64_t
zone_repeats(const ring *r, int regions_only)
{
	uint32_t	parts = 1u << r->part_power;
	uint32_t	x,
				a,
				b;
	uint64_t	c = 0;

	for (x = 0; x < parts; x++)
		for (a = 0; a < r->replicas; a++)
			for (b = 0; b < a; b++)
			{
				const ring_node *na = &r->nodes[ring_slot(r, a, x)];
				const ring_node *nb = &r->nodes[ring_slot(r, b, x)];

				if (na->region == nb->region &&
					(regions_only || na->zone == nb->zone))
				{
					c++;
					break;
				}
			}
	return c;
}

typedef struct move_stats
{
	uint64_t	moved;			/* replicas whose node changed */
	uint64_t	moved_from_removed;
	uint64_t	bad_partitions; /* partitions breaking the one-move rule */
} move_stats;

static move_stats
moves_between(const ring *a, const ring *b)
{
	move_stats	m;
	uint32_t	parts = 1u << a->part_power;
	uint32_t	x,
				r;

	memset(&m, 0, sizeof(m));
	for (x = 0; x < parts; x++)
	{
		int			live_moves = 0,
					removed_moves = 0;

		for (r = 0; r < a->replicas; r++)
		{
			int32_t		ida = a->nodes[ring_slot(a, r, x)].id;
			int32_t		idb = b->nodes[ring_slot(b, r, x)].id;

			if (ida == idb)
				continue;
			m.moved++;
			if (ring_find_node(b, ida) < 0)
			{
				m.moved_from_removed++;
				removed_moves++;
			}
			else
				live_moves++;
		}
		/* at most one move of a live replica, and none beside removed ones */
		if (live_moves > 1 || (live_moves > 0 && removed_moves > 0))
			m.bad_partitions++;
	}
	return m;
}

static int
rings_equal(const ring *a, const ring *b)
{
	size_t		sa = ring_encoded_size(a->part_power, a->replicas, a->node_count);
	size_t		sb = ring_encoded_size(b->part_power, b->replicas, b->node_count);
	uint8_t    *ba,
			   *bb;
	int			eq;
	ring		ca = *a,
				cb = *b;

	if (sa != sb)
		return 0;
	ba = malloc(sa);
	bb = malloc(sb);
	CHECK(ring_encode(&env, &ca, ba, NULL) == RING_OK);
	CHECK(ring_encode(&env, &cb, bb, NULL) == RING_OK);
	eq = memcmp(ba, bb, sa) == 0;
	free(ba);
	free(bb);
	return eq;
}

/* max over nodes of |primaries - quota / R| */
static double
primary_dev(const ring *r)
{
	int64_t    *q = calloc(r->node_count, sizeof(int64_t));
	int64_t    *p = calloc(r->node_count, sizeof(int64_t));
	ring_error	err;
	double		worst = 0;
	uint32_t	i;

	ring_quotas(&env, r, q, &err);
	for (i = 0; i < (1u << r->part_power); i++)
		p[ring_slot(r, 0, i)]++;
	for (i = 0; i < r->node_count; i++)
		if (fabs((double) p[i] - (double) q[i] / r->replicas) > worst)
			worst = fabs((double) p[i] - (double) q[i] / r->replicas);
	free(q);
	free(p);
	return worst;
}

/* held == quota for every node */
static int
at_quota(const ring *r)
{
	int64_t    *h = held_of(r);
	int64_t    *q = calloc(r->node_count, sizeof(int64_t));
	ring_error	err;
	uint32_t	i;
	int			ok = ring_quotas(&env, r, q, &err) == RING_OK;

	for (i = 0; ok && i < r->node_count; i++)
		if (h[i] != q[i])
			ok = 0;
	free(h);
	free(q);
	return ok;
}

static ring
build_ok(const ring_node *nodes, uint32_t n, uint32_t pp, uint32_t R,
		 int64_t seed)
{
	ring		r;
	ring_error	err;
	ring_status st = ring_core_build(&env, nodes, n, pp, R, seed, &r, &err);

	CHECK_MSG(st == RING_OK, "ring_build failed: %s", ring_problem_name(err.problem));
	if (st == RING_OK)
		CHECK_MSG(ring_validate(&env, &r, &err) == RING_OK,
				  "built ring does not validate: %s", ring_problem_name(err.problem));
	return r;
}

static ring
rebalance_ok(const ring *old, const ring_node *nodes, uint32_t n, int64_t seed)
{
	ring		r;
	ring_error	err;
	ring_status st = ring_core_rebalance(&env, old, nodes, n, seed, &r, &err);

	CHECK_MSG(st == RING_OK, "ring_rebalance failed: %s", ring_problem_name(err.problem));
	if (st == RING_OK)
		CHECK_MSG(ring_validate(&env, &r, &err) == RING_OK,
				  "rebalanced ring does not validate: %s", ring_problem_name(err.problem));
	return r;
}

/* ---- arithmetic ---- */

TEST(muldiv_matches_wide_arithmetic)
{
	int			i;

	for (i = 0; i < 200000; i++)
	{
		uint64_t	a = rnd() >> (rnd() % 64);
		uint64_t	b = rnd() >> (rnd() % 64);
		uint64_t	c = (rnd() >> (rnd() % 64)) | 1;
		ring_u128	p = ring_mul64(a, b);

#ifdef __SIZEOF_INT128__
		unsigned __int128 w = (unsigned __int128) a * b;

		CHECK(p.hi == (uint64_t) (w >> 64) && p.lo == (uint64_t) w);
		if ((w / c) >> 64 == 0)
			CHECK(ring_muldiv(a, b, c) == (uint64_t) (w / c));
#else
		(void) p;
		(void) c;
#endif
	}
	/* hand-checked: (2^63 + 1) * 6 / 4 = 3 * 2^62 + 1 (floor of 1.5) */
	CHECK(ring_muldiv((UINT64_C(1) << 63) + 1, 6, 4) == (UINT64_C(3) << 62) + 1);
	CHECK(ring_muldiv(UINT64_MAX, UINT64_MAX, UINT64_MAX) == UINT64_MAX);
}

TEST(partition_is_top_bits_unsigned)
{
	ring		r;

	memset(&r, 0, sizeof(r));
	r.part_power = 4;
	CHECK_EQ_INT(ring_partition_of(&r, 0), 0);
	CHECK_EQ_INT(ring_partition_of(&r, (uint64_t) (int64_t) -1), 15);
	CHECK_EQ_INT(ring_partition_of(&r, UINT64_C(1) << 63), 8);
	CHECK_EQ_INT(ring_partition_of(&r, UINT64_C(0x0fffffffffffffff)), 0);
	CHECK_EQ_INT(ring_partition_of(&r, UINT64_C(0x1000000000000000)), 1);
	r.part_power = 24;
	CHECK_EQ_INT(ring_partition_of(&r, UINT64_C(0xabcdef0123456789)), 0xabcdef);
	r.part_power = 1;
	CHECK_EQ_INT(ring_partition_of(&r, (uint64_t) INT64_MIN), 1);
	CHECK_EQ_INT(ring_partition_of(&r, (uint64_t) INT64_MAX), 0);
}

/* ---- build: balance and dispersion ---- */

TEST(equal_nodes_balance_within_a_tenth_of_a_percent)
{
	ring_node  *nodes = make_nodes(100, 10, 0);
	ring		r;

	reset_ctx();
	r = build_ok(nodes, 100, 16, 3, 0);
	CHECK_MSG(max_rel_dev(&r) <= 0.001, "max |held/share - 1| = %g", max_rel_dev(&r));
	CHECK_MSG(max_abs_dev(&r) < 1.0, "max |held - share| = %g", max_abs_dev(&r));
	CHECK(at_quota(&r));
	CHECK_EQ_INT(zone_repeats(&r, 0), 0);
	/* primaries (replica 0) are spread by quota too */
	CHECK_MSG(primary_dev(&r) <= 2, "primaries off by %g", primary_dev(&r));
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
	free(nodes);
}

TEST(random_weights_within_one_slot_and_no_zone_twice)
{
	int			trial;

	for (trial = 0; trial < 6; trial++)
	{
		uint32_t	n = 40 + (uint32_t) (rnd() % 200);
		uint32_t	zones = 3 + (uint32_t) (rnd() % 6);
		uint32_t	pp = 8 + (uint32_t) (rnd() % 7);
		uint32_t	R = 1 + (uint32_t) (rnd() % 3);
		ring_node  *nodes = make_nodes(n, zones, 1);
		ring		r;
		double		zw[16] = {0},
					W = 0;
		uint32_t	i;
		int			capped = 0;

		for (i = 0; i < n; i++)
		{
			zw[nodes[i].zone] += nodes[i].weight;
			W += nodes[i].weight;
		}
		for (i = 0; i < zones; i++)
			if (zw[i] * R > W)
				capped = 1;
		reset_ctx();
		r = build_ok(nodes, n, pp, R, (int64_t) trial);
		CHECK(at_quota(&r));
		if (!capped)
			CHECK_MSG(max_abs_dev(&r) < 1.0 + 1e-6,
					  "trial %d: max |held - share| = %g", trial, max_abs_dev(&r));
		if (zones >= R)
			CHECK_MSG(zone_repeats(&r, 0) == 0, "trial %d: zone repeats %llu",
					  trial, (unsigned long long) zone_repeats(&r, 0));
		CHECK_MSG(primary_dev(&r) <= 2, "trial %d: primaries off by %g", trial, primary_dev(&r));
		ring_free(&env, &r);
		CHECK_EQ_INT(tctx.live, 0);
		free(nodes);
	}
}

/*
 * One zone holds 60% of the weight with R = 3: one replica per partition is
 * the most it may hold, so it gets exactly 2^p slots and the others share the
 * rest by weight; no partition has two replicas in a zone.
 */
TEST(heavy_zone_is_capped_at_one_replica_per_partition)
{
	ring_node	nodes[8];
	ring		r;
	int64_t    *h;
	int64_t		zone_held[4] = {0};
	uint32_t	i;
	uint32_t	parts = 1u << 12;
	ring_node_stat stats[8];
	ring_error	err;

	for (i = 0; i < 8; i++)
	{
		nodes[i].id = (int32_t) i + 10;
		nodes[i].zone = (int32_t) (i / 2);
		nodes[i].region = 7;
		/* zone 0: 2 x 30 = 60; zones 1..3: 2 x (40/6) each */
		nodes[i].weight = i < 2 ? 30.0 : 40.0 / 6;
	}
	reset_ctx();
	r = build_ok(nodes, 8, 12, 3, 1);
	h = held_of(&r);
	for (i = 0; i < 8; i++)
		zone_held[r.nodes[i].zone] += h[i];
	CHECK_EQ_INT(zone_held[0], parts);
	/* the other three zones share 2 * 4096 equally */
	for (i = 1; i < 4; i++)
		CHECK_MSG(llabs(zone_held[i] - (int64_t) (2 * parts / 3)) <= 1,
				  "zone %u holds %lld", i, (long long) zone_held[i]);
	CHECK_EQ_INT(zone_repeats(&r, 0), 0);
	CHECK(ring_core_node_stats(&env, &r, stats, &err) == RING_OK);
	/* the stats report the shortfall: wanted 0.3 * 3 * 4096, quota 2048 */
	CHECK(fabs(stats[0].wanted - 0.3 * 3 * parts) < 1e-6);
	CHECK_EQ_INT(stats[0].quota, parts / 2);
	CHECK_EQ_INT(stats[0].held, parts / 2);
	free(h);
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
}

/* fewer zones than replicas: each zone holds floor or ceil of its share */
TEST(two_zones_three_replicas_spread_two_and_one)
{
	ring_node  *nodes = make_nodes(10, 2, 0);
	ring		r;
	uint32_t	parts = 1u << 10,
				x,
				rep;
	int			bad = 0;
	uint64_t	rep_count;

	reset_ctx();
	r = build_ok(nodes, 10, 10, 3, 5);
	for (x = 0; x < parts; x++)
	{
		int			inzone0 = 0;

		for (rep = 0; rep < 3; rep++)
			inzone0 += r.nodes[ring_slot(&r, rep, x)].zone == 0;
		if (inzone0 < 1 || inzone0 > 2)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	/* exactly one repeat per partition */
	CHECK(ring_dispersion_count(&env, &r, RING_TIER_ZONE, &rep_count, NULL) == RING_OK);
	CHECK_EQ_INT(rep_count, parts);
	CHECK_EQ_INT(zone_repeats(&r, 0), parts);
	CHECK(at_quota(&r));
	CHECK(max_abs_dev(&r) < 1.0);
	ring_free(&env, &r);
	free(nodes);
	CHECK_EQ_INT(tctx.live, 0);
}

/* 2 regions (one with 3 zones, one with 1 zone), R = 3 */
TEST(regions_then_zones)
{
	ring_node	nodes[16];
	ring		r;
	uint32_t	i,
				x,
				rep;
	uint32_t	parts = 1u << 11;
	int			bad = 0;
	uint64_t	zc,
				rc;

	for (i = 0; i < 16; i++)
	{
		nodes[i].id = (int32_t) (100 - i);
		nodes[i].region = i < 12 ? 1 : 2;
		nodes[i].zone = (int32_t) (i / 4);
		nodes[i].weight = 1;
	}
	reset_ctx();
	r = build_ok(nodes, 16, 11, 3, 9);
	for (x = 0; x < parts; x++)
	{
		int			in2 = 0;

		for (rep = 0; rep < 3; rep++)
			in2 += r.nodes[ring_slot(&r, rep, x)].region == 2;
		if (in2 != 1)
			bad++;
	}
	/* region 2 would want 3/4 replica per partition: it gets exactly one */
	CHECK_EQ_INT(bad, 0);
	CHECK(ring_dispersion_count(&env, &r, RING_TIER_ZONE, &zc, NULL) == RING_OK);
	CHECK(ring_dispersion_count(&env, &r, RING_TIER_REGION, &rc, NULL) == RING_OK);
	CHECK_EQ_INT(zc, 0);
	CHECK_EQ_INT(rc, parts);	/* region 1 holds two of every partition */
	CHECK_EQ_INT(rc, zone_repeats(&r, 1));
	CHECK(at_quota(&r));
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
}

TEST(zero_weight_nodes_get_nothing)
{
	ring_node  *nodes = make_nodes(20, 5, 0);
	ring		r;
	int64_t    *h;
	uint32_t	i;

	nodes[3].weight = 0;
	nodes[7].weight = 0;
	reset_ctx();
	r = build_ok(nodes, 20, 9, 3, 2);
	h = held_of(&r);
	for (i = 0; i < 20; i++)
		if (r.nodes[i].weight == 0)
			CHECK_EQ_INT(h[i], 0);
	CHECK(max_abs_dev(&r) < 1.0);
	free(h);
	ring_free(&env, &r);
	free(nodes);
}

TEST(deterministic_and_seeded)
{
	ring_node  *nodes = make_nodes(50, 5, 1);
	ring_node  *rev = calloc(50, sizeof(ring_node));
	ring		a,
				b,
				c,
				d;
	uint32_t	i;

	for (i = 0; i < 50; i++)
		rev[i] = nodes[49 - i];
	reset_ctx();
	a = build_ok(nodes, 50, 12, 3, 42);
	b = build_ok(nodes, 50, 12, 3, 42);
	c = build_ok(rev, 50, 12, 3, 42);	/* input order does not matter */
	d = build_ok(nodes, 50, 12, 3, 43);
	CHECK(rings_equal(&a, &b));
	CHECK(rings_equal(&a, &c));
	CHECK(!rings_equal(&a, &d));
	ring_free(&env, &a);
	ring_free(&env, &b);
	ring_free(&env, &c);
	ring_free(&env, &d);
	CHECK_EQ_INT(tctx.live, 0);
	free(nodes);
	free(rev);
}

/*
 * Pinned: the fingerprint of a tiny ring, so that a change of the build or
 * of the encoding cannot go unnoticed (IMMUTABLE means forever).  The
 * assignment of this ring was checked by hand to satisfy every property:
 * 4 nodes in 2 zones, R = 2, 2^3 partitions, each partition in both zones,
 * each node 4 slots.
 */
TEST(golden_small_ring)
{
	ring_node	nodes[4] = {{1, 1, 0, 1.0}, {2, 1, 0, 1.0}, {3, 2, 0, 1.0}, {4, 2, 0, 1.0}};
	ring		r;
	int64_t    *h;
	uint32_t	x,
				i;

	reset_ctx();
	r = build_ok(nodes, 4, 3, 2, 0);
	h = held_of(&r);
	for (i = 0; i < 4; i++)
		CHECK_EQ_INT(h[i], 4);
	for (x = 0; x < 8; x++)
		CHECK(r.nodes[ring_slot(&r, 0, x)].zone != r.nodes[ring_slot(&r, 1, x)].zone);
	free(h);
	ring_free(&env, &r);
}

/* ---- rebalance ---- */

/* 100 equal nodes in 5 zones, p = 16, R = 3, seed 7 */
static ring
base_ring(ring_node **nodes_out)
{
	ring_node  *nodes = make_nodes(100, 5, 0);

	*nodes_out = nodes;
	return build_ok(nodes, 100, 16, 3, 7);
}

static void
check_after_rebalance(const ring *old, const ring *new, double min_moved,
					  double max_ratio, const char *what)
{
	move_stats	m = moves_between(old, new);

	CHECK_MSG(m.bad_partitions == 0, "%s: %llu partitions moved more than one replica",
			  what, (unsigned long long) m.bad_partitions);
	if (max_ratio > 0)
		CHECK_MSG(m.moved <= max_ratio * min_moved,
				  "%s: moved %llu, %.4fx the minimum %.1f", what,
				  (unsigned long long) m.moved, m.moved / min_moved, min_moved);
	CHECK_MSG(at_quota(new), "%s: not at quota after one rebalance", what);
	CHECK_MSG(max_rel_dev(new) <= 0.01, "%s: balance %.4f after", what, max_rel_dev(new));
	CHECK_MSG(zone_repeats(new, 0) == 0, "%s: zone repeats %llu", what,
			  (unsigned long long) zone_repeats(new, 0));
	printf("  %s: moved %llu = %.4fx the minimum, balance %.4f%%\n", what,
		   (unsigned long long) m.moved, m.moved / min_moved, 100 * max_rel_dev(new));
}

TEST(add_one_node_to_one_zone)
{
	ring_node  *nodes;
	ring		a = base_ring(&nodes);
	ring_node  *more = calloc(101, sizeof(ring_node));
	ring		b;
	double		S = 3.0 * 65536;

	memcpy(more, nodes, 100 * sizeof(ring_node));
	more[100].id = 1000;
	more[100].zone = 2;
	more[100].weight = 1;
	b = rebalance_ok(&a, more, 101, 1);
	check_after_rebalance(&a, &b, S * 1 / 101, 1.05, "add one node");
	ring_free(&env, &a);
	ring_free(&env, &b);
	free(nodes);
	free(more);
}

TEST(add_one_node_per_zone)
{
	ring_node  *nodes;
	ring		a = base_ring(&nodes);
	ring_node  *more = calloc(105, sizeof(ring_node));
	ring		b;
	double		S = 3.0 * 65536;
	int			z;

	memcpy(more, nodes, 100 * sizeof(ring_node));
	for (z = 0; z < 5; z++)
	{
		more[100 + z].id = 1000 + z;
		more[100 + z].zone = z;
		more[100 + z].weight = 1;
	}
	b = rebalance_ok(&a, more, 105, 1);
	check_after_rebalance(&a, &b, S * 5 / 105, 1.02, "add a node per zone");
	ring_free(&env, &a);
	ring_free(&env, &b);
	free(nodes);
	free(more);
}

TEST(remove_a_node_moves_exactly_its_replicas)
{
	ring_node  *nodes;
	ring		a = base_ring(&nodes);
	ring		b;
	int64_t    *h = held_of(&a);
	uint32_t	gone = find_in(nodes, 100, 37);
	int32_t		gone_idx = ring_find_node(&a, 37);
	ring_node  *fewer = calloc(99, sizeof(ring_node));
	move_stats	m;
	uint32_t	i,
				k = 0;

	for (i = 0; i < 100; i++)
		if (i != gone)
			fewer[k++] = nodes[i];
	b = rebalance_ok(&a, fewer, 99, 1);
	m = moves_between(&a, &b);
	CHECK_EQ_INT(m.moved, h[gone_idx]);
	CHECK_EQ_INT(m.moved_from_removed, h[gone_idx]);
	CHECK_EQ_INT(m.bad_partitions, 0);
	CHECK(at_quota(&b));
	CHECK_EQ_INT(zone_repeats(&b, 0), 0);
	printf("  remove a node: moved %llu, the node held %lld\n",
		   (unsigned long long) m.moved, (long long) h[gone_idx]);
	free(h);
	free(fewer);
	free(nodes);
	ring_free(&env, &a);
	ring_free(&env, &b);
}

/* a small fleet with tight zones: remove each node in turn */
TEST(remove_any_node_of_a_small_fleet)
{
	ring_node	nodes[12];
	ring_node	fewer[11];
	uint32_t	i,
				j,
				k;
	int			seed;

	for (i = 0; i < 12; i++)
	{
		nodes[i].id = (int32_t) i + 1;
		nodes[i].weight = (i + 1) % 3 == 0 ? 2 : 1;
		nodes[i].zone = (int32_t) ((i + 1) % 4);
		nodes[i].region = 0;
	}
	reset_ctx();
	for (seed = 0; seed < 3; seed++)
	{
		ring		a = build_ok(nodes, 12, 10, 3, seed);
		int64_t    *h = held_of(&a);

		for (i = 0; i < 12; i++)
		{
			ring		b;
			move_stats	m;

			for (j = 0, k = 0; j < 12; j++)
				if (j != i)
					fewer[k++] = nodes[j];
			b = rebalance_ok(&a, fewer, 11, seed);
			m = moves_between(&a, &b);
			CHECK_MSG(m.moved == (uint64_t) h[ring_find_node(&a, nodes[i].id)] &&
					  m.moved == m.moved_from_removed,
					  "seed %d, node %d removed: moved %llu, %llu of them from it, it held %lld",
					  seed, nodes[i].id, (unsigned long long) m.moved,
					  (unsigned long long) m.moved_from_removed,
					  (long long) h[ring_find_node(&a, nodes[i].id)]);
			CHECK_MSG(at_quota(&b), "seed %d, node %d removed: not at quota", seed, nodes[i].id);
			CHECK_EQ_INT(zone_repeats(&b, 0), 0);
			ring_free(&env, &b);
		}
		free(h);
		ring_free(&env, &a);
	}
	CHECK_EQ_INT(tctx.live, 0);
}

TEST(double_one_weight)
{
	ring_node  *nodes;
	ring		a = base_ring(&nodes);
	ring		b;
	double		S = 3.0 * 65536;

	nodes[10].weight = 2;
	b = rebalance_ok(&a, nodes, 100, 1);
	/* the minimum: R 2^p w / (W + w) with w the added weight */
	check_after_rebalance(&a, &b, S * 1 / 101, 1.05, "double one weight");
	ring_free(&env, &a);
	ring_free(&env, &b);
	free(nodes);
}

TEST(rebalance_of_a_balanced_ring_moves_nothing)
{
	ring_node  *nodes;
	ring		a = base_ring(&nodes);
	ring		b = rebalance_ok(&a, nodes, 100, 99);
	move_stats	m = moves_between(&a, &b);

	CHECK_EQ_INT(m.moved, 0);
	ring_free(&env, &a);
	ring_free(&env, &b);
	free(nodes);
}

/*
 * Large and mixed changes: several nodes removed, many added, weights and
 * zones changed, a zone added.  Each rebalance keeps the one-move rule;
 * repeated rebalances reach the quotas with no zone repeat, and then move
 * nothing more.
 */
TEST(repeated_rebalances_converge)
{
	int			trial;

	for (trial = 0; trial < 4; trial++)
	{
		uint32_t	n = 30 + (uint32_t) (rnd() % 40);
		ring_node  *nodes = make_nodes(n, 4, 1);
		ring_node  *next = calloc(n + 40, sizeof(ring_node));
		ring		cur;
		uint32_t	i,
					m = 0;
		int			round,
					converged = -1;

		reset_ctx();
		cur = build_ok(nodes, n, 10, 3, trial);
		for (i = 0; i < n; i++)
		{
			if (rnd() % 6 == 0)
				continue;		/* removed */
			next[m] = nodes[i];
			if (rnd() % 4 == 0)
				next[m].weight = (double) (1 + rnd() % 100);
			if (rnd() % 8 == 0)
				next[m].zone = (int32_t) (rnd() % 5);	/* moved to another zone */
			m++;
		}
		for (i = 0; i < 30; i++, m++)
		{
			next[m].id = (int32_t) (5000 + i);
			next[m].zone = (int32_t) (rnd() % 5);
			next[m].weight = (double) (1 + rnd() % 100);
		}
		for (round = 0; round < 12; round++)
		{
			ring		nr = rebalance_ok(&cur, next, m, round);
			move_stats	mv = moves_between(&cur, &nr);

			CHECK_MSG(mv.bad_partitions == 0, "trial %d round %d: %llu partitions broke the one-move rule",
					  trial, round, (unsigned long long) mv.bad_partitions);
			ring_free(&env, &cur);
			cur = nr;
			if (mv.moved == 0)
			{
				converged = round;
				break;
			}
		}
		CHECK_MSG(converged >= 0, "trial %d did not converge", trial);
		CHECK_MSG(at_quota(&cur), "trial %d: not at quota", trial);
		if (!at_quota(&cur))
		{
			int64_t    *h = held_of(&cur);
			int64_t    *q = calloc(cur.node_count, sizeof(int64_t));
			ring_error	err;

			ring_quotas(&env, &cur, q, &err);
			for (i = 0; i < cur.node_count; i++)
				if (h[i] != q[i])
					printf("  node %d zone %d: held %lld quota %lld\n", cur.nodes[i].id,
						   cur.nodes[i].zone, (long long) h[i], (long long) q[i]);
			free(h);
			free(q);
		}
		CHECK_MSG(zone_repeats(&cur, 0) == 0, "trial %d: zone repeats %llu", trial,
				  (unsigned long long) zone_repeats(&cur, 0));
		printf("  trial %d: converged after %d rebalances\n", trial, converged);
		ring_free(&env, &cur);
		CHECK_EQ_INT(tctx.live, 0);
		free(nodes);
		free(next);
	}
}

/*
 * Random topologies (regions, zones, zero weights, up to 6 replicas) and
 * random changes (nodes removed and added, weights and zones changed): the
 * build meets every quota, every rebalance gives a valid ring and keeps the
 * one-move rule, and repeated rebalances stop moving.
 */
TEST(random_topologies_and_changes)
{
	int			it;

	reset_ctx();
	for (it = 0; it < 300; it++)
	{
		uint32_t	n = 1 + (uint32_t) (rnd() % 60),
					pp = 1 + (uint32_t) (rnd() % 11);
		uint32_t	zones = 1 + (uint32_t) (rnd() % 8),
					regions = 1 + (uint32_t) (rnd() % 3);
		uint32_t	i,
					pos = 0,
					R,
					m = 0,
					p2 = 0,
					extra;
		ring_node  *nodes = calloc(n + 8, sizeof(ring_node));
		ring_node  *next = calloc(n + 8, sizeof(ring_node));
		ring		cur;
		int			round,
					moved = 1;

		for (i = 0; i < n; i++)
		{
			nodes[i].id = (int32_t) i * 3 - 20;
			nodes[i].zone = (int32_t) (rnd() % zones);
			nodes[i].region = (int32_t) (rnd() % regions);
			nodes[i].weight = rnd() % 5 == 0 ? 0 :
				(rnd() % 3 == 0 ? (double) (rnd() % 1000) / 7.0 : (double) (1 + rnd() % 10));
			pos += nodes[i].weight > 0;
		}
		if (pos == 0)
		{
			nodes[0].weight = 1;
			pos = 1;
		}
		R = 1 + (uint32_t) (rnd() % (pos < 6 ? pos : 6));
		cur = build_ok(nodes, n, pp, R, it);
		CHECK_MSG(at_quota(&cur), "iteration %d: build not at quota", it);
		for (i = 0; i < n; i++)
		{
			if (rnd() % 5 == 0)
				continue;
			next[m] = nodes[i];
			if (rnd() % 4 == 0)
				next[m].weight = rnd() % 4 == 0 ? 0 : (double) (1 + rnd() % 10);
			if (rnd() % 6 == 0)
				next[m].zone = (int32_t) (rnd() % (zones + 1));
			m++;
		}
		extra = (uint32_t) (rnd() % 8);
		for (i = 0; i < extra; i++, m++)
		{
			next[m].id = (int32_t) (1000000 + i);
			next[m].zone = (int32_t) (rnd() % (zones + 1));
			next[m].region = (int32_t) (rnd() % regions);
			next[m].weight = (double) (1 + rnd() % 10);
		}
		for (i = 0; i < m; i++)
			p2 += next[i].weight > 0;
		if (p2 < R)
		{
			/* too few nodes left for the replicas: refused */
			ring		nr;
			ring_error	err;

			CHECK(ring_core_rebalance(&env, &cur, next, m, 0, &nr, &err) == RING_EINVAL);
			moved = 0;
		}
		for (round = 0; round < 60 && moved; round++)
		{
			ring		nr = rebalance_ok(&cur, next, m, round);
			move_stats	mv = moves_between(&cur, &nr);

			CHECK_MSG(mv.bad_partitions == 0, "iteration %d round %d: one-move rule broken", it, round);
			moved = mv.moved > 0;
			ring_free(&env, &cur);
			cur = nr;
		}
		CHECK_MSG(!moved, "iteration %d: still moving after 60 rebalances", it);
		ring_free(&env, &cur);
		free(nodes);
		free(next);
	}
	CHECK_EQ_INT(tctx.live, 0);
}

/*
 * Every partition within the domain caps the builder aims for: a zone (or
 * region) whose quota is q holds at most ceil(q / 2^p) replicas of any
 * partition.  Quotas of zones and regions are the sums of their nodes'.
 */
static int
within_caps(const ring *r)
{
	uint32_t	n = r->node_count,
				parts = 1u << r->part_power;
	int64_t    *q = calloc(n, sizeof(int64_t));
	int64_t    *zq = calloc(n, sizeof(int64_t));
	int64_t    *gq = calloc(n, sizeof(int64_t));
	int64_t    *zc = calloc(n, sizeof(int64_t));
	int64_t    *gc = calloc(n, sizeof(int64_t));
	uint32_t   *zi = calloc(n, sizeof(uint32_t));
	uint32_t   *gi = calloc(n, sizeof(uint32_t));
	ring_error	err;
	uint32_t	i,
				j,
				x,
				a;
	int			ok = ring_quotas(&env, r, q, &err) == RING_OK;

	/* zi, gi: the first node of the same zone, of the same region */
	for (i = 0; i < n; i++)
	{
		zi[i] = gi[i] = i;
		for (j = i; j-- > 0;)
		{
			if (r->nodes[j].region != r->nodes[i].region)
				continue;
			gi[i] = gi[j];
			if (r->nodes[j].zone == r->nodes[i].zone)
				zi[i] = zi[j];
		}
		zq[zi[i]] += q[i];
		gq[gi[i]] += q[i];
	}
	for (x = 0; ok && x < parts; x++)
	{
		for (a = 0; a < r->replicas; a++)
		{
			uint32_t	k = ring_slot(r, a, x);

			zc[zi[k]] = gc[gi[k]] = 0;
		}
		for (a = 0; a < r->replicas; a++)
		{
			uint32_t	k = ring_slot(r, a, x);

			if (++zc[zi[k]] > (zq[zi[k]] + parts - 1) / parts ||
				++gc[gi[k]] > (gq[gi[k]] + parts - 1) / parts)
				ok = 0;
		}
	}
	free(q);
	free(zq);
	free(gq);
	free(zc);
	free(gc);
	free(zi);
	free(gi);
	return ok;
}

/*
 * Rebalance cur for next (seed = round) until a rebalance moves nothing,
 * checking the one-move rule on the way.  Returns the rebalances that moved
 * something, or -1 if they never stopped.
 */
static int
rebalance_until_still(ring *cur, const ring_node *next, uint32_t m,
					  int max_rounds, const char *what, int trial)
{
	int			round;

	for (round = 0; round < max_rounds; round++)
	{
		ring		nr = rebalance_ok(cur, next, m, round);
		move_stats	mv = moves_between(cur, &nr);

		CHECK_MSG(mv.bad_partitions == 0, "%s %d, round %d: %llu partitions broke the one-move rule",
				  what, trial, round, (unsigned long long) mv.bad_partitions);
		ring_free(&env, cur);
		*cur = nr;
		if (mv.moved == 0)
			return round;
	}
	return -1;
}

typedef struct stuck_case
{
	const char *what;
	uint32_t	pp,
				R;
	int64_t		seed;			/* of the build */
	uint32_t	n,
				m;
	ring_node	nodes[32];
	ring_node	next[32];
} stuck_case;

/*
 * Changes after which repeated rebalances used to stop short of the quotas:
 * every partition of the node above quota also held the node below quota (or
 * filled its zone to the cap), so that only a chain of moves through a third
 * node could help, within one zone, through two nodes, or (the last case)
 * moving two replicas of one partition over two rebalances.
 */
TEST(stuck_rebalances_reach_the_quotas)
{
	static const stuck_case cases[] = {
		{"one weight lowered", 2, 4, 4, 6, 6,
			{{1, 1, 0, 5}, {4, 0, 0, 8}, {7, 0, 0, 10}, {10, 0, 0, 6}, {13, 0, 0, 90}, {16, 0, 0, 8}},
			{{1, 1, 0, 5}, {4, 0, 0, 8}, {7, 0, 0, 10}, {10, 0, 0, 6}, {13, 0, 0, 3}, {16, 0, 0, 8}}},
		{"regions, nodes added and removed", 4, 4, 736, 5, 8,
			{{1, 0, 2, 57}, {4, 5, 0, 4}, {7, 4, 2, 8}, {10, 5, 0, 9}, {16, 0, 2, 6}},
			{{1, 0, 2, 57}, {4, 5, 0, 4}, {7, 4, 2, 3}, {10, 5, 0, 9}, {1000001, 0, 0, 1},
			{1000004, 4, 0, 4}, {1000005, 4, 1, 8}, {1000006, 4, 0, 3}}},
		{"two moves in one partition", 2, 4, 391, 29, 22,
			{{1, 1, 0, 0}, {4, 0, 0, 99}, {7, 0, 0, 2}, {10, 0, 0, 0}, {13, 0, 0, 60}, {16, 0, 0, 6},
			{22, 1, 0, 1}, {25, 1, 0, 6}, {28, 1, 0, 0}, {37, 0, 0, 7}, {40, 0, 0, 105}, {43, 1, 0, 1},
			{46, 0, 0, 1}, {49, 1, 0, 0}, {52, 1, 0, 4}, {55, 1, 0, 7}, {58, 1, 0, 5}, {70, 1, 0, 2},
			{73, 0, 0, 23}, {79, 1, 0, 5}, {82, 1, 0, 4}, {85, 1, 0, 9}, {88, 1, 0, 10}, {97, 1, 0, 10},
			{100, 0, 0, 6}, {106, 1, 0, 88}, {109, 1, 0, 0}, {112, 1, 0, 1}, {115, 0, 0, 8}},
			{{1, 0, 0, 0}, {7, 0, 0, 7}, {16, 0, 0, 0}, {22, 1, 0, 3}, {28, 1, 0, 0}, {37, 0, 0, 7},
			{40, 0, 0, 105}, {43, 1, 0, 0}, {46, 2, 0, 10}, {49, 1, 0, 0}, {52, 2, 0, 10}, {55, 1, 0, 7},
			{58, 1, 0, 5}, {73, 0, 0, 23}, {82, 1, 0, 9}, {85, 1, 0, 6}, {88, 1, 0, 10}, {97, 1, 0, 10},
			{109, 1, 0, 0}, {115, 0, 0, 8}, {1000002, 1, 0, 5}, {1000003, 1, 0, 5}}},
	};
	size_t		c;

	reset_ctx();
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		const stuck_case *k = &cases[c];
		ring		cur = build_ok(k->nodes, k->n, k->pp, k->R, k->seed);
		int			rounds = rebalance_until_still(&cur, k->next, k->m, 20, k->what, 0);

		CHECK_MSG(rounds >= 0, "%s: still moving after 20 rebalances", k->what);
		CHECK_MSG(at_quota(&cur), "%s: stopped off quota", k->what);
		CHECK_MSG(within_caps(&cur), "%s: stopped beyond a domain cap", k->what);
		printf("  %s: %d rebalances moved replicas, the next none\n", k->what, rounds);
		ring_free(&env, &cur);
	}
	CHECK_EQ_INT(tctx.live, 0);
}

/*
 * Many random small topologies (regions, zones, zero weights, weights
 * capped at one replica per partition, up to 5 replicas) and changes (one
 * node added, removed, reweighted or moved to another zone; or many at
 * once): repeated rebalances keep the one-move rule and stop only at the
 * quotas, within the domain caps, as a fresh build does.
 */
TEST(repeated_rebalances_reach_the_quotas)
{
	uint64_t	saved = rs;
	int			trials = 5000,
				trial,
				failed = 0,
				most = 0;

	rs = 20260101;
	reset_ctx();
	for (trial = 0; trial < trials; trial++)
	{
		uint32_t	n = 1 + (uint32_t) (rnd() % (rnd() % 2 ? 12 : 40)),
					pp = 2 + (uint32_t) (rnd() % 8);
		uint32_t	zones = 1 + (uint32_t) (rnd() % 6),
					regions = rnd() % 3 == 0 ? 1 + (uint32_t) (rnd() % 3) : 1;
		uint32_t	kind = (uint32_t) (rnd() % 6);
		uint32_t	i,
					pos = 0,
					pos2 = 0,
					R,
					m = 0;
		ring_node	nodes[48],
					next[48];
		ring		cur;
		int			rounds;

		for (i = 0; i < n; i++)
		{
			nodes[i].id = (int32_t) (i * 3 + 1);
			nodes[i].zone = (int32_t) (rnd() % zones);
			nodes[i].region = (int32_t) (rnd() % regions);
			nodes[i].weight = kind == 5 && rnd() % 5 == 0 ? 0 :
				rnd() % 3 == 0 ? (double) (rnd() % 1000) / 7.0 : (double) (1 + rnd() % 10);
			pos += nodes[i].weight > 0;
		}
		if (pos == 0)
		{
			nodes[0].weight = 1;
			pos = 1;
		}
		R = 1 + (uint32_t) (rnd() % (pos < 5 ? pos : 5));
		if (kind == 5)
		{
			/* many changes at once */
			uint32_t	extra = (uint32_t) (rnd() % 8);

			for (i = 0; i < n; i++)
			{
				if (rnd() % 6 == 0)
					continue;
				next[m] = nodes[i];
				if (rnd() % 4 == 0)
					next[m].weight = (double) (1 + rnd() % 10);
				if (rnd() % 6 == 0)
					next[m].zone = (int32_t) (rnd() % (zones + 1));
				m++;
			}
			for (i = 0; i < extra; i++, m++)
			{
				next[m].id = (int32_t) (1000000 + i);
				next[m].zone = (int32_t) (rnd() % (zones + 1));
				next[m].region = (int32_t) (rnd() % regions);
				next[m].weight = (double) (1 + rnd() % 10);
			}
		}
		else
		{
			/* one change */
			memcpy(next, nodes, sizeof(ring_node) * n);
			m = n;
			i = (uint32_t) (rnd() % n);
			if (kind == 0)
			{
				next[m].id = 999;
				next[m].zone = (int32_t) (rnd() % (zones + 1));
				next[m].region = (int32_t) (rnd() % regions);
				next[m++].weight = (double) (1 + rnd() % 10);
			}
			else if (kind == 1)
				next[i] = next[--m];
			else if (kind == 2)
				next[i].weight = (double) (1 + rnd() % 10);
			else
				next[i].zone = (int32_t) (rnd() % (zones + 1));
		}
		for (i = 0; i < m; i++)
			pos2 += next[i].weight > 0;
		if (pos2 < R)
			continue;
		cur = build_ok(nodes, n, pp, R, trial);
		rounds = rebalance_until_still(&cur, next, m, 40, "trial", trial);
		if (rounds < 0 || !at_quota(&cur) || !within_caps(&cur))
		{
			if (failed++ < 5)
				UNIT_FAIL("trial %d (kind %u, %u -> %u nodes, p %u, R %u): %s", trial, kind,
						  n, m, pp, R, rounds < 0 ? "still moving after 40 rebalances" :
						  !at_quota(&cur) ? "stopped off quota" : "stopped beyond a domain cap");
		}
		if (rounds > most)
			most = rounds;
		ring_free(&env, &cur);
	}
	printf("  %d of %d trials stopped short; at most %d rebalances to stop\n", failed, trials,
		   most);
	CHECK_EQ_INT(tctx.live, 0);
	rs = saved;
}

TEST(rebalance_is_deterministic)
{
	ring_node  *nodes = make_nodes(30, 3, 1);
	ring		a,
				b,
				c;

	reset_ctx();
	a = build_ok(nodes, 30, 10, 3, 1);
	nodes[0].weight *= 3;
	nodes[5].zone = 1;
	b = rebalance_ok(&a, nodes, 29, 5);	/* the last node is removed */
	c = rebalance_ok(&a, nodes, 29, 5);
	CHECK(rings_equal(&b, &c));
	ring_free(&env, &a);
	ring_free(&env, &b);
	ring_free(&env, &c);
	CHECK_EQ_INT(tctx.live, 0);
	free(nodes);
}

/* ---- encoding and validation ---- */

static uint8_t *
encode(ring *r, size_t *len)
{
	uint8_t    *buf;

	*len = ring_encoded_size(r->part_power, r->replicas, r->node_count);
	buf = malloc(*len);
	CHECK(ring_encode(&env, r, buf, NULL) == RING_OK);
	return buf;
}

/* rewrite the digest so that only the other checks can catch a change */
static void
refingerprint(uint8_t *buf, size_t len)
{
	SHA256(buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM, buf + RING_DIGEST_OFFSET);
}

/* The error of the last call of rejects() or build_fails(), for its facts. */
static ring_error last_error;

/* ring_decode refuses the value as malformed, for this problem. */
static int
rejects(const uint8_t *buf, size_t len, ring_problem problem)
{
	ring		r;
	ring_status st = ring_decode(&env, buf, len, &r, &last_error);

	if (st == RING_OK)
	{
		ring_free(&env, &r);
		printf("  accepted, expected %s\n", ring_problem_name(problem));
		return 0;
	}
	if (st != RING_EFORMAT || last_error.code != st || last_error.problem != problem)
	{
		printf("  status %d %s, expected %d %s\n", (int) st,
			   ring_problem_name(last_error.problem), (int) RING_EFORMAT,
			   ring_problem_name(problem));
		return 0;
	}
	return 1;
}

TEST(decode_roundtrip)
{
	ring_node  *nodes = make_nodes(12, 3, 1);
	ring		r,
				d;
	size_t		len;
	uint8_t    *buf;
	ring_error	err;

	reset_ctx();
	r = build_ok(nodes, 12, 6, 3, 3);
	buf = encode(&r, &len);
	CHECK_EQ_INT(len, 64 + 24 * 12 + 2 * 3 * 64);
	CHECK(memcmp(buf, "PRNG", 4) == 0);
	CHECK(ring_decode(&env, buf, len, &d, &err) == RING_OK);
	CHECK(rings_equal(&r, &d));
	CHECK(memcmp(d.digest, buf + 8, RING_DIGEST_SIZE) == 0);
	CHECK_EQ_INT(d.format_version, 2);
	ring_free(&env, &d);
	/* partition-major: the same ring, transposed */
	CHECK(ring_decode_as(&env, buf, len, 1, &d, &err) == RING_OK);
	CHECK(d.partition_major);
	CHECK(rings_equal(&r, &d));
	{
		uint32_t	x,
					rep;

		for (x = 0; x < 64; x++)
			for (rep = 0; rep < 3; rep++)
				CHECK_EQ_INT(d.assignment[x * 3 + rep], ring_slot(&r, rep, x));
	}
	ring_free(&env, &d);
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
	free(buf);
	free(nodes);
}

TEST(decode_rejects_malformed_values)
{
	ring_node  *nodes = make_nodes(6, 3, 0);
	ring		r;
	size_t		len;
	uint8_t    *good,
			   *b;
	size_t		asg;

	reset_ctx();
	r = build_ok(nodes, 6, 4, 2, 3);
	good = encode(&r, &len);
	b = malloc(len + 8);
	asg = 64 + 24 * 6;

#define FRESH() memcpy(b, good, len)
	FRESH();
	CHECK(rejects(b, 7, RING_VALUE_TOO_SHORT));
	CHECK_EQ_INT(last_error.facts.length, 7);
	CHECK(rejects(b, 10, RING_HEADER_TOO_SHORT));
	CHECK_EQ_INT(last_error.facts.length, 10);
	CHECK_EQ_INT(last_error.facts.needed, 64);
	CHECK(rejects(b, len - 1, RING_LENGTH_MISMATCH));
	CHECK_EQ_INT(last_error.facts.length, len - 1);
	CHECK_EQ_INT(last_error.facts.needed, len);
	CHECK_EQ_INT(last_error.facts.part_power, 4);
	CHECK_EQ_INT(last_error.facts.replicas, 2);
	CHECK_EQ_INT(last_error.facts.node_count, 6);
	CHECK(!last_error.in_value);
	b[0] = 'X';
	CHECK(rejects(b, len, RING_BAD_MAGIC));
	FRESH();
	ring_put_le32(b + 4, 3);
	CHECK(rejects(b, len, RING_UNSUPPORTED_VERSION));
	CHECK_EQ_INT(last_error.facts.format_version, 3);
	FRESH();
	b[len - 1] ^= 1;
	CHECK(rejects(b, len, RING_DIGEST_MISMATCH));
	FRESH();
	b[RING_DIGEST_OFFSET + 31] ^= 0x80;
	CHECK(rejects(b, len, RING_DIGEST_MISMATCH));
	FRESH();
	ring_put_le32(b + 40, 0);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_PART_POWER_RANGE));
	CHECK_EQ_INT(last_error.facts.part_power, 0);
	CHECK(last_error.in_value);
	FRESH();
	ring_put_le32(b + 40, 25);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_PART_POWER_RANGE));
	CHECK_EQ_INT(last_error.facts.part_power, 25);
	FRESH();
	ring_put_le32(b + 44, 0);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_REPLICAS_TOO_FEW));
	CHECK(last_error.in_value);
	FRESH();
	ring_put_le32(b + 44, 7);	/* more replicas than nodes, size mismatch first */
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_LENGTH_MISMATCH));
	FRESH();
	ring_put_le32(b + 48, 0);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_NO_NODES));
	CHECK(last_error.in_value);
	FRESH();
	ring_put_le32(b + 48, 70000);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_TOO_MANY_NODES));	/* a limit, but in a value */
	CHECK_EQ_INT(last_error.facts.node_count, 70000);
	CHECK_EQ_INT(last_error.facts.limit, 65535);
	CHECK(last_error.in_value);
	FRESH();
	ring_put_le32(b + 52, 1);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_HEADER_RESERVED_NOT_ZERO));
	FRESH();
	ring_put_le32(b + 64 + 24 + 12, 5);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_NODE_RESERVED_NOT_ZERO));
	CHECK_EQ_INT(last_error.facts.node_index, 1);
	FRESH();
	/* node ids out of order */
	ring_put_le32(b + 64 + 24, 0x7fffffff);
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_NODE_TABLE_UNSORTED));
	CHECK_EQ_INT(last_error.facts.node_id, (int32_t) ring_get_le32(b + 64 + 48));
	FRESH();
	/* duplicate id */
	ring_put_le32(b + 64 + 24, ring_get_le32(b + 64));
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_NODE_TABLE_DUPLICATE));
	CHECK_EQ_INT(last_error.facts.node_id, (int32_t) ring_get_le32(b + 64));
	FRESH();
	{
		double		bad[4] = {NAN, -INFINITY, -1.0, -0.0};
		ring_problem problem[4] = {RING_WEIGHT_NAN, RING_WEIGHT_INFINITE,
		RING_WEIGHT_NEGATIVE, RING_WEIGHT_NEGATIVE};
		int			i;

		for (i = 0; i < 4; i++)
		{
			uint64_t	u;

			FRESH();
			memcpy(&u, &bad[i], 8);
			ring_put_le64(b + 64 + 16, u);
			refingerprint(b, len);
			CHECK(rejects(b, len, problem[i]));
			CHECK(last_error.in_value);
			CHECK_EQ_INT(last_error.facts.node_id, (int32_t) ring_get_le32(b + 64));
			if (i > 0)
				CHECK(memcmp(&last_error.facts.weight, &bad[i], 8) == 0);
		}
	}
	FRESH();
	{
		int			i;

		for (i = 0; i < 6; i++)
			ring_put_le64(b + 64 + 24 * i + 16, 0);
		refingerprint(b, len);
		CHECK(rejects(b, len, RING_WEIGHTS_ALL_ZERO));
		CHECK(last_error.in_value);
	}
	FRESH();
	/* five of six weights zero: 1 positive node < 2 replicas */
	{
		int			i;

		for (i = 1; i < 6; i++)
			ring_put_le64(b + 64 + 24 * i + 16, 0);
		refingerprint(b, len);
		CHECK(rejects(b, len, RING_TOO_FEW_WEIGHTED_NODES));
		CHECK_EQ_INT(last_error.facts.replicas, 2);
		CHECK_EQ_INT(last_error.facts.weighted_nodes, 1);
		CHECK(last_error.in_value);
	}
	FRESH();
	b[asg + 2 * 3] = 6;			/* replica 0 of partition 3 */
	b[asg + 2 * 3 + 1] = 0;
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_NODE_INDEX_RANGE));
	CHECK_EQ_INT(last_error.facts.replica, 0);
	CHECK_EQ_INT(last_error.facts.partition, 3);
	CHECK_EQ_INT(last_error.facts.node_index, 6);
	CHECK_EQ_INT(last_error.facts.node_count, 6);
	FRESH();
	/* replica 1 of partition 0 := replica 0 of partition 0 */
	b[asg + 2 * 16] = b[asg];
	b[asg + 2 * 16 + 1] = b[asg + 1];
	refingerprint(b, len);
	CHECK(rejects(b, len, RING_REPLICAS_ON_ONE_NODE));
	CHECK_EQ_INT(last_error.facts.partition, 0);
	CHECK_EQ_INT(last_error.facts.node_id,
				 (int32_t) ring_get_le32(b + 64 + 24 * (b[asg] | (b[asg + 1] << 8))));
	FRESH();
	{
		ring		d;
		ring_error	err;

		CHECK(ring_decode(&env, b, len, &d, &err) == RING_OK);	/* the good value */
		ring_free(&env, &d);
	}
#undef FRESH
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
	free(good);
	free(b);
	free(nodes);
}

/*
 * Random corruption with the fingerprint fixed up: whatever decodes must be
 * a ring every later function can use (node indexes in range, distinct per
 * partition, quotas and stats computable).
 */
TEST(decode_fuzz)
{
	ring_node  *nodes = make_nodes(9, 3, 1);
	ring		r;
	size_t		len;
	uint8_t    *good,
			   *b;
	int			i,
				accepted = 0;

	reset_ctx();
	r = build_ok(nodes, 9, 5, 3, 3);
	good = encode(&r, &len);
	b = malloc(len);
	for (i = 0; i < 20000; i++)
	{
		ring		d;
		ring_error	err;
		int			k,
					flips = 1 + (int) (rnd() % 4);

		memcpy(b, good, len);
		for (k = 0; k < flips; k++)
			b[rnd() % len] ^= (uint8_t) (1u << (rnd() % 8));
		if (rnd() % 2)
			refingerprint(b, len);
		if (ring_decode(&env, b, len, &d, &err) == RING_OK)
		{
			ring_node_stat st[9];
			uint64_t	c;
			uint32_t	x,
						rep;

			accepted++;
			CHECK(d.node_count == 9);
			for (x = 0; x < (1u << d.part_power); x++)
				for (rep = 0; rep < d.replicas; rep++)
					CHECK(ring_slot(&d, rep, x) < d.node_count);
			CHECK(ring_core_node_stats(&env, &d, st, &err) == RING_OK);
			CHECK(ring_dispersion_count(&env, &d, RING_TIER_ZONE, &c, &err) == RING_OK);
			ring_free(&env, &d);
		}
		else
			CHECK(err.code == RING_EFORMAT);
	}
	printf("  %d of 20000 corrupted values were still valid rings\n", accepted);
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
	free(good);
	free(b);
	free(nodes);
}

/* ---- JSON ---- */

static char *
to_json(const ring *r)
{
	size_t		n,
				m = 0;
	char	   *s;

	CHECK(ring_to_json(&env, r, NULL, 0, &n, NULL) == RING_OK);
	s = malloc(n + 1);
	CHECK(ring_to_json(&env, r, s, n, &m, NULL) == RING_OK);
	CHECK_EQ_INT(m, n);
	s[n] = '\0';
	return s;
}

TEST(json_roundtrip)
{
	ring_node  *nodes = make_nodes(7, 3, 0);
	ring		r,
				d;
	char	   *s;
	ring_error	err;

	nodes[0].weight = 0.1;
	nodes[1].weight = 1e-300;
	nodes[2].weight = 12345678.25;
	reset_ctx();
	r = build_ok(nodes, 7, 5, 3, -77);
	s = to_json(&r);
	CHECK(ring_from_json(&env, s, strlen(s), &d, &err) == RING_OK);
	CHECK(rings_equal(&r, &d));
	CHECK(strstr(s, "\"weight\": 0.1}") != NULL);
	CHECK(strstr(s, "\"seed\": -77,") != NULL);
	ring_free(&env, &d);
	ring_free(&env, &r);
	free(s);
	CHECK_EQ_INT(tctx.live, 0);
	free(nodes);
}

TEST(json_exact_small_ring)
{
	const char *text =
	"{\"part_power\": 1, \"replicas\": 2, \"seed\": 5, \"nodes\": ["
	"{\"id\": 1, \"zone\": 0, \"region\": 0, \"weight\": 1}, "
	"{\"id\": 2, \"zone\": 1, \"region\": 0, \"weight\": 1.5}], "
	"\"assignment\": [[1, 2], [2, 1]]}";
	/* keys in another order, nodes unsorted, region left out, spaces */
	const char *loose =
	"  { \"assignment\" : [ [1,2] , [2,1] ] ,\n\"nodes\":[{\"weight\":1.5,\"id\":2,\"zone\":1},"
	"{\"zone\":0,\"id\":1,\"weight\":1}], \"replicas\":2, \"part_power\":1, \"seed\":5 }\n";
	ring		a,
				b;
	ring_error	err;
	char	   *s;

	reset_ctx();
	CHECK(ring_from_json(&env, text, strlen(text), &a, &err) == RING_OK);
	CHECK(ring_from_json(&env, loose, strlen(loose), &b, &err) == RING_OK);
	CHECK(rings_equal(&a, &b));
	s = to_json(&a);
	CHECK_MSG(strcmp(s, text) == 0, "got %s", s);
	CHECK_EQ_INT(ring_slot(&a, 0, 1), 1);
	CHECK_EQ_INT(a.nodes[1].id, 2);
	/*
	 * The encoded forms of this ring, with the fingerprint (format 1) and
	 * the digest (format 2), computed independently from the layout in
	 * ring.h by test/tools/ring_fingerprint.py.
	 */
	{
		size_t		len;
		uint8_t    *buf = encode(&a, &len);
		uint8_t		v1[96];
		ring		d;

		CHECK_EQ_INT(len, 120);
		CHECK(strcmp(hex(buf + 8, 32), "b69919552927028ad8a2ec638f0b46c94d67d12b3423d24a334d02e90fec94f3") == 0);
		CHECK(memcmp(a.digest, buf + 8, 32) == 0);
		free(buf);
		CHECK_EQ_INT(ring_encoded_size_v1(1, 2, 2), 96);
		ring_encode_v1(&a, v1);
		CHECK(a.fingerprint == UINT64_C(0xb4331b0f2afdaa11));
		CHECK(ring_get_le64(v1 + 8) == UINT64_C(0xb4331b0f2afdaa11));
		/* and a format 1 value still reads */
		CHECK(ring_decode(&env, v1, 96, &d, &err) == RING_OK);
		CHECK_EQ_INT(d.format_version, 1);
		CHECK(rings_equal(&a, &d));
		ring_free(&env, &d);
		v1[95] ^= 1;
		CHECK(rejects(v1, 96, RING_FINGERPRINT_MISMATCH));
	}
	free(s);
	ring_free(&env, &a);
	ring_free(&env, &b);
	CHECK_EQ_INT(tctx.live, 0);
}

/*
 * Two rings made by test/tools/ring_collide.py: B is A with the replicas of
 * partition 4 swapped and a seed solved for so that their format 1
 * encodings (what 1.0 stored) have the same size and fingerprint, which
 * 1.0's lookup cache took for the same ring.  Format 2 tells them apart by
 * SHA-256; the digests are the tool's (Python's hashlib), and reading the
 * format 1 values keeps each ring.
 */
TEST(old_fingerprint_collision)
{
	const char *text[2] = {
		"{\"part_power\": 3, \"replicas\": 2, \"seed\": 5, \"nodes\": [{\"id\": 1, \"zone\": 1, \"region\": 0, \"weight\": 1.0}, {\"id\": 2, \"zone\": 1, \"region\": 0, \"weight\": 1.0}, {\"id\": 3, \"zone\": 2, \"region\": 0, \"weight\": 1.0}, {\"id\": 4, \"zone\": 2, \"region\": 0, \"weight\": 1.0}], \"assignment\": [[1, 3, 2, 4, 1, 3, 2, 4], [3, 1, 4, 2, 4, 2, 3, 1]]}",
		"{\"part_power\": 3, \"replicas\": 2, \"seed\": -8109271570455271114, \"nodes\": [{\"id\": 1, \"zone\": 1, \"region\": 0, \"weight\": 1.0}, {\"id\": 2, \"zone\": 1, \"region\": 0, \"weight\": 1.0}, {\"id\": 3, \"zone\": 2, \"region\": 0, \"weight\": 1.0}, {\"id\": 4, \"zone\": 2, \"region\": 0, \"weight\": 1.0}], \"assignment\": [[1, 3, 2, 4, 4, 3, 2, 4], [3, 1, 4, 2, 1, 2, 3, 1]]}"};
	const char *sha[2] = {
		"40b5bbbf435c9a96c227d3d1763547a3ada15a56f229f13d1b7034d120583fda",
		"86979cfd08cb5d30fae8f3c1f6a1a377003f4695b8ef97e940eb3dfe24ccb877"};
	ring		r[2],
				d[2];
	uint8_t		v1[2][168];
	ring_error	err;
	int			i;

	reset_ctx();
	for (i = 0; i < 2; i++)
	{
		size_t		len;
		uint8_t    *v2;

		CHECK(ring_from_json(&env, text[i], strlen(text[i]), &r[i], &err) == RING_OK);
		CHECK_EQ_INT(ring_encoded_size_v1(3, 2, 4), 168);
		ring_encode_v1(&r[i], v1[i]);
		v2 = encode(&r[i], &len);
		CHECK_MSG(strcmp(hex(v2 + 8, 32), sha[i]) == 0, "ring %d: digest %s", i, hex(v2 + 8, 32));
		free(v2);
		CHECK(ring_decode(&env, v1[i], 168, &d[i], &err) == RING_OK);
		CHECK(rings_equal(&r[i], &d[i]));
	}
	/* the collision of 1.0 */
	CHECK(r[0].fingerprint == r[1].fingerprint);
	CHECK(ring_get_le64(v1[0] + 8) == ring_get_le64(v1[1] + 8));
	CHECK(memcmp(v1[0], v1[1], 168) != 0);
	/* different rings: partition 4 has its replicas swapped */
	CHECK_EQ_INT(d[0].nodes[ring_slot(&d[0], 0, 4)].id, 1);
	CHECK_EQ_INT(d[1].nodes[ring_slot(&d[1], 0, 4)].id, 4);
	CHECK(memcmp(r[0].digest, r[1].digest, RING_DIGEST_SIZE) != 0);
	for (i = 0; i < 2; i++)
	{
		ring_free(&env, &r[i]);
		ring_free(&env, &d[i]);
	}
	CHECK_EQ_INT(tctx.live, 0);
}

/*
 * The long loops of reading and showing a ring stop when the interrupt
 * check says so, and leave nothing allocated.
 */
TEST(cancel_in_long_loops)
{
	ring_node  *nodes = make_nodes(20, 4, 2);
	ring		r,
				d;
	ring_error	err;
	size_t		len,
				n;
	uint8_t    *buf;
	uint64_t	c;
	char	   *text;

	reset_ctx();
	r = build_ok(nodes, 20, 18, 3, 1);
	buf = encode(&r, &len);
	CHECK(ring_to_json(&env, &r, NULL, 0, &n, &err) == RING_OK);
	text = malloc(n);

	tctx.interrupt_calls = 0;
	tctx.cancel_at = 2;
	CHECK(ring_to_json(&env, &r, NULL, 0, &n, &err) == RING_ECANCELED);
	tctx.interrupt_calls = 0;
	CHECK(ring_to_json(&env, &r, text, n, &n, &err) == RING_ECANCELED);
	tctx.interrupt_calls = 0;
	CHECK(ring_dispersion_count(&env, &r, RING_TIER_ZONE, &c, &err) == RING_ECANCELED);
	tctx.interrupt_calls = 0;
	CHECK(ring_decode_as(&env, buf, len, 1, &d, &err) == RING_ECANCELED);
	tctx.interrupt_calls = 0;
	CHECK(ring_decode_as(&env, buf, len, 0, &d, &err) == RING_ECANCELED);
	tctx.cancel_at = 0;
	CHECK(ring_dispersion_count(&env, &r, RING_TIER_ZONE, &c, &err) == RING_OK);
	CHECK(ring_decode_as(&env, buf, len, 1, &d, &err) == RING_OK);
	/* the partition-major ring counts the same */
	{
		uint64_t	c2;
		ring_node_stat s1[20],
					s2[20];
		size_t		n2;
		char	   *text2;
		int			i;

		CHECK(ring_dispersion_count(&env, &d, RING_TIER_ZONE, &c2, &err) == RING_OK);
		CHECK(c == c2);
		CHECK(ring_core_node_stats(&env, &r, s1, &err) == RING_OK);
		CHECK(ring_core_node_stats(&env, &d, s2, &err) == RING_OK);
		for (i = 0; i < 20; i++)
		{
			CHECK(s1[i].held == s2[i].held);
			CHECK(s1[i].primaries == s2[i].primaries);
		}
		CHECK(ring_to_json(&env, &r, text, n, &n, &err) == RING_OK);
		text2 = malloc(n);
		CHECK(ring_to_json(&env, &d, text2, n, &n2, &err) == RING_OK);
		CHECK(n2 == n && memcmp(text, text2, n) == 0);
		free(text2);
	}
	ring_free(&env, &d);
	ring_free(&env, &r);
	CHECK_EQ_INT(tctx.live, 0);
	free(text);
	free(buf);
	free(nodes);
}

/*
 * Malformed text, refused for the problem expected; for a syntax error, what
 * is wrong (and for a number, which), and where: at the first occurrence of
 * "at" in the text, if given.
 */
TEST(json_rejects_malformed_text)
{
#define SYNTAX(syntax, field, at) RING_TEXT_SYNTAX, RING_SYNTAX_##syntax, RING_FIELD_##field, 0, at
#define VALUE(problem) RING_##problem, RING_SYNTAX_NONE, RING_FIELD_NONE, 1, NULL
#define TEXT(problem) RING_##problem, RING_SYNTAX_NONE, RING_FIELD_NONE, 0, NULL
	static const struct
	{
		const char *text;
		ring_problem problem;
		ring_syntax syntax;
		ring_field	field;
		int			in_value;
		const char *at;
	}			cases[] = {
		{"", SYNTAX(RING_START, NONE, "")},
		{"[]", SYNTAX(RING_START, NONE, "[")},
		{"{}", SYNTAX(KEY_START, NONE, "}")},
		{"{\"part_power\": 1}", TEXT(TEXT_KEYS_MISSING)},
		{"{\"part_power\": 1, \"part_power\": 1}", SYNTAX(RING_KEY_TWICE, NONE, " 1}")},
		{"{\"colour\": 1}", SYNTAX(RING_KEY, NONE, " 1}")},
		{"{\"part_power\": 1.5}", SYNTAX(NOT_INTEGER, PART_POWER, ".")},
		{"{\"part_power\": 99999999999999999999}", SYNTAX(OUT_OF_RANGE, PART_POWER, "9")},
		{"{\"part_power\": -1}", SYNTAX(OUT_OF_RANGE, PART_POWER, "-")},
		{"{\"seed\": 1e3}", SYNTAX(NOT_INTEGER, SEED, "e3")},
		{"{\"replicas\": x}", SYNTAX(INTEGER_EXPECTED, REPLICAS, "x")},
		{"{\"part_power\"", SYNTAX(COLON, NONE, NULL)},
		{"{\"part_power", SYNTAX(UNTERMINATED_STRING, NONE, NULL)},
		{"{\"p\\u0061rt_power\": 1}", SYNTAX(KEY_INVALID, NONE, "\\")},
		{"{\"part_power\": 1 \"replicas\": 1}", SYNTAX(RING_NEXT, NONE, "\"replicas")},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0}], \"assignment\": [[1, 1]]}", SYNTAX(NODE_KEYS_MISSING, NONE, NULL)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1, \"ip\": 1}], \"assignment\": [[1, 1]]}", SYNTAX(NODE_KEY, NONE, NULL)},
		{"{\"nodes\": [{\"id\": 1, \"id\": 1}]}", SYNTAX(NODE_KEY_TWICE, NONE, " 1}")},
		{"{\"nodes\": 1}", SYNTAX(NODES_START, NONE, "1")},
		{"{\"nodes\": [1]}", SYNTAX(NODE_START, NONE, "1")},
		{"{\"nodes\": [{\"id\": 1 \"zone\": 1}]}", SYNTAX(NODE_NEXT, NONE, "\"zone")},
		{"{\"nodes\": [{\"id\": 1, \"zone\": 1, \"weight\": 1} {}]}", SYNTAX(NODES_NEXT, NONE, "{}")},
		{"{\"nodes\": [{\"zone\": 1.5}]}", SYNTAX(NOT_INTEGER, ZONE, ".")},
		{"{\"nodes\": [{\"region\": 2147483648}]}", SYNTAX(OUT_OF_RANGE, REGION, "2")},
		{"{\"assignment\": 1}", SYNTAX(ASSIGNMENT_START, NONE, "1")},
		{"{\"assignment\": [1]}", SYNTAX(ROW_START, NONE, "1")},
		{"{\"assignment\": [[1 2]]}", SYNTAX(ROW_NEXT, NONE, "2")},
		{"{\"assignment\": [[1] [2]]}", SYNTAX(ASSIGNMENT_NEXT, NONE, "[2")},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]} x", SYNTAX(TRAILING_TEXT, NONE, "x")},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1], [1]]}", SYNTAX(ROWS_DIFFER, NONE, "]}")},
		{"{\"part_power\": 2, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]}", TEXT(TEXT_ASSIGNMENT_SHAPE)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 3]]}", TEXT(TEXT_UNKNOWN_NODE)},
		{"{\"part_power\": 1, \"replicas\": 2, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}, {\"id\": 2, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 2], [1, 1]]}", TEXT(REPLICAS_ON_ONE_NODE)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}, {\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]}", VALUE(DUPLICATE_NODE_ID)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": -1}], \"assignment\": [[1, 1]]}", VALUE(WEIGHT_NEGATIVE)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1e999}], \"assignment\": [[1, 1]]}", VALUE(WEIGHT_INFINITE)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 0}], \"assignment\": [[1, 1]]}", VALUE(WEIGHTS_ALL_ZERO)},
		{"{\"part_power\": 1, \"replicas\": 2, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}, {\"id\": 2, \"zone\": 0, \"weight\": 0}], \"assignment\": [[1, 2], [2, 1]]}", VALUE(TOO_FEW_WEIGHTED_NODES)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": .5}], \"assignment\": [[1, 1]]}", SYNTAX(NUMBER_EXPECTED, WEIGHT, ".5")},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]", SYNTAX(RING_NEXT, NONE, NULL)},
		{"{\"part_power\": 25, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]}", VALUE(PART_POWER_RANGE)},
		{"{\"part_power\": 1, \"replicas\": 0, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": []}", VALUE(REPLICAS_TOO_FEW)},
		{"{\"part_power\": 24, \"replicas\": 5, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": []}", VALUE(TOO_MANY_SLOTS)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 2147483648, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, 1]]}", SYNTAX(OUT_OF_RANGE, NODE_ID, "2147483648")},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [], \"assignment\": []}", VALUE(NO_NODES)},
		{"{\"part_power\": 1, \"replicas\": 1, \"nodes\": [{\"id\": 1, \"zone\": 0, \"weight\": 1}], \"assignment\": [[1, \"1\"]]}", SYNTAX(INTEGER_EXPECTED, ASSIGNED_NODE, "\"1\"")},
	};
#undef SYNTAX
#undef VALUE
#undef TEXT
	size_t		i;

	reset_ctx();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		ring		r;
		ring_error	err;
		size_t		len = strlen(cases[i].text);
		ring_status st = ring_from_json(&env, cases[i].text, len, &r, &err);

		if (st == RING_OK)
		{
			UNIT_FAIL("case %zu accepted: %s", i, cases[i].text);
			ring_free(&env, &r);
			continue;
		}
		CHECK_MSG(st == RING_EFORMAT && err.code == st && err.problem == cases[i].problem &&
				  err.facts.syntax == cases[i].syntax && err.facts.field == cases[i].field &&
				  err.in_value == cases[i].in_value,
				  "case %zu: status %d, %s (syntax %d, field %d, in value %d), expected %s (%d, %d, %d)",
				  i, (int) st, ring_problem_name(err.problem), (int) err.facts.syntax,
				  (int) err.facts.field, err.in_value, ring_problem_name(cases[i].problem),
				  (int) cases[i].syntax, (int) cases[i].field, cases[i].in_value);
		if (cases[i].problem == RING_TEXT_SYNTAX)
		{
			/* where: the given text, or else within the text or just after it */
			const char *at = cases[i].at != NULL ? strstr(cases[i].text, cases[i].at) : NULL;

			if (at != NULL)
				CHECK_MSG(err.facts.position == (uint64_t) (at - cases[i].text) + 1,
						  "case %zu: at character %llu, expected %zu", i,
						  (unsigned long long) err.facts.position,
						  (size_t) (at - cases[i].text) + 1);
			else
				CHECK_MSG(err.facts.position >= 1 && err.facts.position <= len + 1,
						  "case %zu: at character %llu of %zu", i,
						  (unsigned long long) err.facts.position, len);
		}
	}
	CHECK_EQ_INT(tctx.live, 0);
}

/* ---- arguments, cancellation, allocation failure ---- */

static int
build_fails(const ring_node *nodes, uint32_t n, uint32_t pp, uint32_t R,
			ring_status code, ring_problem problem)
{
	ring		r;
	ring_status st = ring_core_build(&env, nodes, n, pp, R, 0, &r, &last_error);

	if (st == RING_OK)
	{
		ring_free(&env, &r);
		printf("  built, expected %s\n", ring_problem_name(problem));
		return 0;
	}
	if (st != code || last_error.code != code || last_error.problem != problem ||
		last_error.in_value)
	{
		printf("  status %d %s (in value %d), expected %d %s\n", (int) st,
			   ring_problem_name(last_error.problem), last_error.in_value,
			   (int) code, ring_problem_name(problem));
		return 0;
	}
	return 1;
}

TEST(build_rejects_bad_arguments)
{
	ring_node	nodes[4] = {{1, 0, 0, 1}, {2, 1, 0, 1}, {3, 2, 0, 1}, {4, 3, 0, 1}};
	ring_node	bad[4];

	reset_ctx();
	CHECK(build_fails(nodes, 4, 0, 3, RING_EINVAL, RING_PART_POWER_RANGE));
	CHECK_EQ_INT(last_error.facts.part_power, 0);
	CHECK(build_fails(nodes, 4, 25, 3, RING_EINVAL, RING_PART_POWER_RANGE));
	CHECK_EQ_INT(last_error.facts.part_power, 25);
	CHECK(build_fails(nodes, 4, 8, 0, RING_EINVAL, RING_REPLICAS_TOO_FEW));
	CHECK_EQ_INT(last_error.facts.replicas, 0);
	CHECK(build_fails(nodes, 4, 8, 5, RING_EINVAL, RING_TOO_FEW_WEIGHTED_NODES));
	CHECK_EQ_INT(last_error.facts.replicas, 5);
	CHECK_EQ_INT(last_error.facts.weighted_nodes, 4);
	CHECK(build_fails(nodes, 0, 8, 1, RING_EINVAL, RING_NO_NODES));
	CHECK(build_fails(nodes, 4, 24, 5, RING_ELIMIT, RING_TOO_MANY_SLOTS));
	CHECK_EQ_INT(last_error.facts.part_power, 24);
	CHECK_EQ_INT(last_error.facts.replicas, 5);
	CHECK_EQ_INT(last_error.facts.slots, 5 * 16777216);
	CHECK_EQ_INT(last_error.facts.limit, 67108864);
	CHECK(build_fails(nodes, 65536, 8, 1, RING_ELIMIT, RING_TOO_MANY_NODES));
	CHECK_EQ_INT(last_error.facts.node_count, 65536);
	CHECK_EQ_INT(last_error.facts.limit, 65535);
	memcpy(bad, nodes, sizeof(bad));
	bad[2].weight = NAN;
	CHECK(build_fails(bad, 4, 8, 3, RING_EINVAL, RING_WEIGHT_NAN));
	CHECK_EQ_INT(last_error.facts.node_id, 3);
	bad[2].weight = -INFINITY;
	CHECK(build_fails(bad, 4, 8, 3, RING_EINVAL, RING_WEIGHT_INFINITE));
	CHECK_EQ_INT(last_error.facts.node_id, 3);
	CHECK(last_error.facts.weight == -INFINITY);
	bad[2].weight = -2;
	CHECK(build_fails(bad, 4, 8, 3, RING_EINVAL, RING_WEIGHT_NEGATIVE));
	CHECK_EQ_INT(last_error.facts.node_id, 3);
	CHECK(last_error.facts.weight == -2);
	bad[2].weight = 0;
	CHECK(build_fails(bad, 4, 8, 4, RING_EINVAL, RING_TOO_FEW_WEIGHTED_NODES));
	CHECK_EQ_INT(last_error.facts.weighted_nodes, 3);
	bad[0].weight = bad[1].weight = bad[3].weight = 0;
	CHECK(build_fails(bad, 4, 8, 1, RING_EINVAL, RING_WEIGHTS_ALL_ZERO));
	memcpy(bad, nodes, sizeof(bad));
	bad[3].id = 2;
	CHECK(build_fails(bad, 4, 8, 3, RING_EINVAL, RING_DUPLICATE_NODE_ID));
	CHECK_EQ_INT(last_error.facts.node_id, 2);
	CHECK_EQ_INT(tctx.live, 0);
}

TEST(cancel_stops_build_and_rebalance)
{
	ring_node  *nodes = make_nodes(64, 4, 1);
	ring		r,
				a;
	ring_error	err;

	reset_ctx();
	tctx.cancel_at = 3;
	CHECK(ring_core_build(&env, nodes, 64, 16, 3, 0, &r, &err) == RING_ECANCELED);
	CHECK_EQ_INT(tctx.interrupt_calls, 3);
	CHECK_EQ_INT(tctx.live, 0);
	reset_ctx();
	a = build_ok(nodes, 64, 16, 3, 0);
	nodes[0].weight = 500;
	tctx.interrupt_calls = 0;
	tctx.cancel_at = 4;
	CHECK(ring_core_rebalance(&env, &a, nodes, 63, 0, &r, &err) == RING_ECANCELED);
	tctx.cancel_at = 0;
	ring_free(&env, &a);
	CHECK_EQ_INT(tctx.live, 0);
	free(nodes);
}

TEST(allocation_failures_leave_nothing_behind)
{
	ring_node  *nodes = make_nodes(16, 4, 1);
	ring		a,
				r;
	ring_error	err;
	long		k;
	int			failures = 0;
	char	   *s;

	reset_ctx();
	a = build_ok(nodes, 16, 6, 3, 0);
	s = to_json(&a);
	nodes[0].weight = 77;
	for (k = 1; k < 80; k++)
	{
		ring_status st;

		tctx.allocs = 0;
		tctx.fail_at = k;
		st = ring_core_build(&env, nodes, 16, 6, 3, 0, &r, &err);
		if (st == RING_OK)
			ring_free(&env, &r);
		else
			failures += st == RING_ENOMEM;
		st = ring_core_rebalance(&env, &a, nodes, 15, 0, &r, &err);
		if (st == RING_OK)
			ring_free(&env, &r);
		else
			failures += st == RING_ENOMEM;
		st = ring_from_json(&env, s, strlen(s), &r, &err);
		if (st == RING_OK)
			ring_free(&env, &r);
		else
			failures += st == RING_ENOMEM;
	}
	tctx.fail_at = 0;
	CHECK(failures > 20);
	ring_free(&env, &a);
	CHECK_EQ_INT(tctx.live, 0);
	free(s);
	free(nodes);
}

/*
 * ring_domains_build's counts against a quadratic count (a pair is new if no earlier
 * node has it), on hand-made and random node tables with negative and
 * extreme ids; ring_node_balance and ring_max_balance by hand.
 */
TEST(domain_counts_and_balance)
{
	ring		r;
	ring_node	nodes[64];
	ring_error	err;
	ring_domains d;
	int			round;
	ring_node_stat stats[3];
	double		b = -1;

	memset(&r, 0, sizeof(r));
	r.nodes = nodes;
	/* hand-checked: regions {-1, 0, INT32_MAX}, zones (0,7) (0,8) (-1,7) (MAX,7) */
	nodes[0].region = 0;
	nodes[0].zone = 7;
	nodes[1].region = 0;
	nodes[1].zone = 8;
	nodes[2].region = -1;
	nodes[2].zone = 7;
	nodes[3].region = 0;
	nodes[3].zone = 7;
	nodes[4].region = INT32_MAX;
	nodes[4].zone = 7;
	r.node_count = 5;
	CHECK(ring_domains_build(&env, &r, &d, &err) == RING_OK);
	CHECK(d.zones == 4 && d.regions == 3);
	/* numbered in the order of the ids: region -1 < 0 < INT32_MAX */
	CHECK(d.region_of[2] == 0 && d.region_of[0] == 1 && d.region_of[4] == 2);
	CHECK(d.zone_of[2] == 0 && d.zone_of[0] == 1 && d.zone_of[3] == 1 &&
		  d.zone_of[1] == 2 && d.zone_of[4] == 3);
	ring_domains_free(&env, &d);
	for (round = 0; round < 2000; round++)
	{
		uint32_t	n = 1 + (uint32_t) (rnd() % 64);
		uint32_t	i,
					j,
					want_zones = 0,
					want_regions = 0;

		for (i = 0; i < n; i++)
		{
			nodes[i].region = (int32_t) (rnd() % 4) - 2;
			nodes[i].zone = (rnd() % 8 == 0) ? INT32_MIN : (int32_t) (rnd() % 5) - 2;
		}
		for (i = 0; i < n; i++)
		{
			int			new_zone = 1,
						new_region = 1;

			for (j = 0; j < i; j++)
			{
				if (nodes[j].region == nodes[i].region)
				{
					new_region = 0;
					if (nodes[j].zone == nodes[i].zone)
						new_zone = 0;
				}
			}
			want_zones += new_zone;
			want_regions += new_region;
		}
		r.node_count = n;
		CHECK(ring_domains_build(&env, &r, &d, &err) == RING_OK);
		CHECK(d.zones == want_zones && d.regions == want_regions);
		/* same number iff same domain */
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
			{
				int			same_region = nodes[i].region == nodes[j].region;

				CHECK((d.region_of[i] == d.region_of[j]) == same_region);
				CHECK((d.zone_of[i] == d.zone_of[j]) ==
					  (same_region && nodes[i].zone == nodes[j].zone));
			}
		ring_domains_free(&env, &d);
	}

	/* held 110 of 100 wanted: +10 %; 45 of 50: -10 %; weight 0: no balance */
	stats[0].held = 110;
	stats[0].wanted = 100;
	stats[1].held = 45;
	stats[1].wanted = 50;
	stats[2].held = 0;
	stats[2].wanted = 0;
	CHECK(ring_node_balance(&stats[0], &b) && b == 10.0);
	CHECK(ring_node_balance(&stats[1], &b) && b == -10.0);
	b = 42;
	CHECK(!ring_node_balance(&stats[2], &b) && b == 42);
	stats[1].held = 30;			/* -40 % */
	CHECK(ring_max_balance(stats, 3) == 40.0);
	CHECK(ring_max_balance(stats, 0) == 0);
}

int
main(void)
{
	RUN(muldiv_matches_wide_arithmetic);
	RUN(partition_is_top_bits_unsigned);
	RUN(equal_nodes_balance_within_a_tenth_of_a_percent);
	RUN(random_weights_within_one_slot_and_no_zone_twice);
	RUN(heavy_zone_is_capped_at_one_replica_per_partition);
	RUN(two_zones_three_replicas_spread_two_and_one);
	RUN(regions_then_zones);
	RUN(zero_weight_nodes_get_nothing);
	RUN(deterministic_and_seeded);
	RUN(golden_small_ring);
	RUN(add_one_node_to_one_zone);
	RUN(add_one_node_per_zone);
	RUN(remove_a_node_moves_exactly_its_replicas);
	RUN(remove_any_node_of_a_small_fleet);
	RUN(double_one_weight);
	RUN(rebalance_of_a_balanced_ring_moves_nothing);
	RUN(repeated_rebalances_converge);
	RUN(random_topologies_and_changes);
	RUN(rebalance_is_deterministic);
	RUN(stuck_rebalances_reach_the_quotas);
	RUN(repeated_rebalances_reach_the_quotas);
	RUN(decode_roundtrip);
	RUN(decode_rejects_malformed_values);
	RUN(decode_fuzz);
	RUN(json_roundtrip);
	RUN(json_exact_small_ring);
	RUN(old_fingerprint_collision);
	RUN(cancel_in_long_loops);
	RUN(json_rejects_malformed_text);
	RUN(build_rejects_bad_arguments);
	RUN(cancel_stops_build_and_rebalance);
	RUN(allocation_failures_leave_nothing_behind);
	RUN(domain_counts_and_balance);
	return unit_report();
}
