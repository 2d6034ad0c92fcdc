/*
 * test/test_ring_lookup.c
 *		Tests of src/core/ring_lookup.c: MD5 against RFC 1321's vectors, the
 *		handoff walk's start against Python's hashlib, batch lookups equal to
 *		one lookup per key, and the properties of handoff nodes (no primary,
 *		no node twice, new regions before new zones before the rest, every
 *		reachable node in the end, deterministic, shorter lists are
 *		prefixes), on random rings; cancellation and allocation failure.
 *		test/t/006_handoff_nodes.pl compares the handoff order with OpenStack
 *		Swift's own get_more_nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"
#include "core/ring_lookup.h"
#include "core/splitmix64.h"
#include "ring_test_env.h"
#include "unit.h"


static uint64_t rs = 20261123;

/* the tests' random numbers */
static uint64_t
rnd(void)
{
	return splitmix64_next(&rs);
}

/* A ring and its partition-major transpose. */
typedef struct test_ring
{
	ring		r;
	uint16_t   *by_partition;
	ring_domains d;
} test_ring;

/*
 * A random ring: n nodes with random ids, weights (some zero), zones and
 * regions (regions 0 means one region).
 */
static test_ring
random_ring(uint32_t n, uint32_t zones, uint32_t regions, uint32_t part_power,
			uint32_t replicas, int zero_weights)
{
	ring_node  *nodes = calloc(n, sizeof(ring_node));
	test_ring	t;
	ring_error	err;
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		nodes[i].id = (int32_t) (i * 7919 + 3 + (uint32_t) (rnd() % 7) * 100000);
		nodes[i].zone = (int32_t) (rnd() % zones) - 2;
		nodes[i].region = regions > 1 ? (int32_t) (rnd() % regions) : 0;
		nodes[i].weight = (double) (1 + rnd() % 10);
		if (zero_weights && i > replicas && rnd() % 5 == 0)
			nodes[i].weight = 0;
	}
	if (ring_core_build(&env, nodes, n, part_power, replicas, (int64_t) rnd(), &t.r, &err) != RING_OK)
	{
		printf("  build failed: %s\n", ring_problem_name(err.problem));
		exit(1);
	}
	free(nodes);
	t.by_partition = malloc(sizeof(uint16_t) * ((size_t) replicas << part_power));
	ring_lookup_transpose(&t.r, t.by_partition);
	if (ring_domains_build(&env, &t.r, &t.d, &err) != RING_OK)
	{
		printf("  domains failed: %s\n", ring_problem_name(err.problem));
		exit(1);
	}
	return t;
}

static void
free_test_ring(test_ring *t)
{
	ring_domains_free(&env, &t->d);
	ring_free(&env, &t->r);
	free(t->by_partition);
}

static void
hex(const uint8_t *d, char *out)
{
	int			i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* RFC 1321's test suite, and lengths around the padding boundaries (Python's hashlib) */
TEST(md5_matches_rfc_1321)
{
	static const struct
	{
		const char *text;
		int			repeat;		/* 0: the text itself, else text[0] repeated */
		const char *digest;
	}			v[] = {
		{"", 0, "d41d8cd98f00b204e9800998ecf8427e"},
		{"a", 0, "0cc175b9c0f1b6a831c399e269772661"},
		{"abc", 0, "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", 0, "f96b697d7cb7938d525a2f31aaf161d0"},
		{"abcdefghijklmnopqrstuvwxyz", 0, "c3fcd3d76192e4007dfb496cca67e13b"},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890", 0,
		"57edf4a22be3c955ac49da2e2107b67a"},
		{"x", 55, "04364420e25c512fd958a70738aa8f72"},
		{"y", 56, "6c830a5d23df58dbe0171eb5639bf3e4"},
		{"z", 64, "3ecc49f9d9d6c263b4f0de7fc3f38aed"},
	};
	size_t		i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
	{
		uint8_t		buf[128];
		size_t		len;
		uint8_t		digest[16];
		char		got[33];

		if (v[i].repeat)
		{
			len = (size_t) v[i].repeat;
			memset(buf, v[i].text[0], len);
		}
		else
		{
			len = strlen(v[i].text);
			memcpy(buf, v[i].text, len);
		}
		ring_md5(buf, len, digest);
		hex(digest, got);
		CHECK_MSG(strcmp(got, v[i].digest) == 0, "md5 of vector %zu: %s, expected %s", i, got, v[i].digest);
	}
}

/*
 * int.from_bytes(md5(str(partition).encode()).digest()[:4], 'big') >> (32 - part_power),
 * computed with Python's hashlib: what Swift's get_more_nodes starts from.
 */
TEST(handoff_start_matches_swift_formula)
{
	static const uint32_t v[][3] = {
		{1, 0, 1u}, {1, 1, 1u}, {10, 0, 831u}, {10, 1, 787u}, {10, 1023, 825u},
		{16, 12345, 33404u}, {20, 999999, 339049u}, {24, 16777215, 4762761u},
		{24, 4242, 16678604u},
	};
	size_t		i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK_EQ_INT(ring_handoff_start(v[i][0], v[i][1]), v[i][2]);
}

TEST(transpose_is_partition_major)
{
	test_ring	t = random_ring(20, 4, 1, 8, 3, 0);
	uint32_t	x,
				rep;

	for (x = 0; x < 256; x++)
		for (rep = 0; rep < 3; rep++)
			CHECK_EQ_INT(t.by_partition[x * 3 + rep], ring_slot(&t.r, rep, x));
	free_test_ring(&t);
}

/* Batch lookups give what one lookup per key gives, at every prefetch distance. */
TEST(batch_equals_one_lookup_per_key)
{
	static const uint32_t shapes[][5] = {
		/* nodes, zones, part_power, replicas, keys */
		{5, 3, 1, 1, 1}, {5, 3, 1, 2, 7}, {40, 5, 10, 3, 1000}, {100, 7, 16, 4, 5003},
		{300, 5, 20, 3, 20000}, {12, 4, 12, 5, 17},
	};
	static const uint32_t distances[] = {0, 1, 3, 16, 64};
	size_t		s;

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
	{
		test_ring	t = random_ring(shapes[s][0], shapes[s][1], 1, shapes[s][2], shapes[s][3], 1);
		size_t		count = shapes[s][4];
		uint32_t	R = t.r.replicas;
		uint64_t   *keys = malloc(sizeof(uint64_t) * count);
		int32_t    *parts = malloc(sizeof(int32_t) * count);
		int32_t    *ids = malloc(sizeof(int32_t) * count * R);
		size_t		i,
					d;

		for (i = 0; i < count; i++)
			keys[i] = i % 5 == 0 ? (uint64_t) i << 50 : rnd();	/* edges too */
		keys[0] = UINT64_MAX;
		for (d = 0; d < sizeof(distances) / sizeof(distances[0]); d++)
		{
			int			bad = 0;

			memset(ids, 0xff, sizeof(int32_t) * count * R);
			CHECK(ring_lookup_keys_prefetching(&t.r, t.by_partition, keys, count, parts, ids,
											   NULL, distances[d]) == RING_OK);
			for (i = 0; i < count && bad < 5; i++)
			{
				uint32_t	x = ring_partition_of(&t.r, keys[i]);
				uint32_t	rep;

				if (parts[i] != (int32_t) x)
				{
					UNIT_FAIL("shape %zu key %zu: partition %d, expected %u", s, i, parts[i], x);
					bad++;
				}
				for (rep = 0; rep < R; rep++)
					if (ids[i * R + rep] != t.r.nodes[ring_slot(&t.r, rep, x)].id)
					{
						UNIT_FAIL("shape %zu key %zu replica %u: node %d, expected %d", s, i, rep,
								  ids[i * R + rep], t.r.nodes[ring_slot(&t.r, rep, x)].id);
						bad++;
					}
			}
		}
		/* the default distance, and no partitions wanted */
		CHECK(ring_lookup_keys(&t.r, t.by_partition, keys, count, NULL, ids, &env) == RING_OK);
		CHECK_EQ_INT(ids[(count - 1) * R], t.r.nodes[ring_slot(&t.r, 0, ring_partition_of(&t.r, keys[count - 1]))].id);
		free(keys);
		free(parts);
		free(ids);
		free_test_ring(&t);
	}
}

/* Swift's walk, written out from its two ranges: the partitions visited, in order. */
static uint32_t
swift_walk(uint32_t part_power, uint32_t partition, uint32_t *visited)
{
	uint32_t	parts = (uint32_t) 1 << part_power;
	uint32_t	inc = parts / 65536 > 0 ? parts / 65536 : 1;
	uint32_t	start = ring_handoff_start(part_power, partition);
	uint32_t	n = 0,
				p;

	for (p = start; p < parts; p += inc)
		visited[n++] = p;
	for (p = inc - ((parts - start) % inc); p < start; p += inc)
		visited[n++] = p;
	return n;
}

static int
in_list(const int32_t *list, uint32_t n, int32_t v)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

/*
 * The properties of handoff lists, on random rings with and without regions,
 * zero-weight nodes, part powers on both sides of 16 (Swift's stride).
 */
TEST(handoff_properties_on_random_rings)
{
	static const uint32_t shapes[][5] = {
		/* nodes, zones, regions, part_power, replicas */
		{6, 3, 1, 4, 3}, {30, 5, 1, 10, 3}, {30, 6, 3, 10, 3}, {50, 8, 2, 12, 2},
		{17, 4, 4, 8, 1}, {200, 10, 3, 17, 3}, {64, 3, 1, 18, 3}, {9, 9, 3, 6, 5},
		{2, 1, 1, 1, 2}, {3, 2, 2, 3, 1},
	};
	size_t		s;
	uint32_t   *visited = malloc(sizeof(uint32_t) * 65536);

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
	{
		test_ring	t = random_ring(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], shapes[s][4], 1);
		uint32_t	R = t.r.replicas;
		uint32_t	n = t.r.node_count;
		void	   *ws = malloc(ring_handoff_workspace_size(&t.d));
		uint16_t   *out = malloc(sizeof(uint16_t) * (n + 1));
		uint16_t   *again = malloc(sizeof(uint16_t) * (n + 1));
		int32_t    *seen = malloc(sizeof(int32_t) * (n + R));
		int			trial;

		for (trial = 0; trial < 40; trial++)
		{
			uint32_t	x = trial == 0 ? 0 : (uint32_t) (rnd() >> (64 - t.r.part_power));
			uint32_t	found,
						found2,
						i,
						rep,
						nseen = 0,
						reachable = 0,
						primaries_reached = 0,
						nvisited;
			int			phase = 0;	/* 0 new region, 1 new zone, 2 other */
			int32_t    *reach = malloc(sizeof(int32_t) * n);

			CHECK(ring_handoff(&t.r, t.by_partition, &t.d, x, n + 1, ws, out, &found, &env) == RING_OK);
			CHECK(found <= n - R);
			/* every node of the partitions walked, except the primaries, in the end */
			nvisited = swift_walk(t.r.part_power, x, visited);
			for (i = 0; i < nvisited; i++)
				for (rep = 0; rep < R; rep++)
				{
					int32_t		id = t.r.nodes[t.by_partition[(size_t) visited[i] * R + rep]].id;

					if (!in_list(reach, reachable, id))
						reach[reachable++] = id;
				}
			for (rep = 0; rep < R; rep++)
				seen[nseen++] = t.r.nodes[t.by_partition[(size_t) x * R + rep]].id;
			for (i = 0; i < nseen; i++)
				if (in_list(reach, reachable, seen[i]))
					primaries_reached++;
			reachable -= primaries_reached;
			CHECK_MSG(found == reachable, "shape %zu partition %u: %u handoffs, %u nodes reachable",
					  s, x, found, reachable);
			for (i = 0; i < found; i++)
			{
				const ring_node *nd = &t.r.nodes[out[i]];
				int			new_region = 1,
							new_zone = 1,
							p;
				uint32_t	j;

				CHECK_MSG(!in_list(seen, nseen, nd->id), "shape %zu partition %u: node %d twice or a primary",
						  s, x, nd->id);
				for (j = 0; j < nseen; j++)
				{
					int32_t		k = ring_find_node(&t.r, seen[j]);

					if (t.r.nodes[k].region == nd->region)
					{
						new_region = 0;
						if (t.r.nodes[k].zone == nd->zone)
							new_zone = 0;
					}
				}
				p = new_region ? 0 : new_zone ? 1 : 2;
				CHECK_MSG(p >= phase, "shape %zu partition %u: handoff %u (node %d) in a new %s after one that was not",
						  s, x, i, nd->id, p == 0 ? "region" : "zone");
				phase = p;
				seen[nseen++] = nd->id;
			}
			/* deterministic, and a shorter list is a prefix of a longer one */
			for (i = 0; i <= found; i += 1 + found / 4)
			{
				CHECK(ring_handoff(&t.r, t.by_partition, &t.d, x, i, ws, again, &found2, NULL) == RING_OK);
				CHECK_EQ_INT(found2, i);
				CHECK(memcmp(again, out, sizeof(uint16_t) * i) == 0);
			}
			free(reach);
		}
		free(ws);
		free(out);
		free(again);
		free(seen);
		free_test_ring(&t);
	}
	free(visited);
}

/* Three zones of one region, one replica: the first handoffs are the other two zones. */
TEST(handoff_small_exact)
{
	ring_node	nodes[] = {
		{1, 0, 0, 1}, {2, 0, 0, 1}, {3, 1, 0, 1}, {4, 1, 0, 1}, {5, 2, 0, 1}, {6, 2, 0, 1},
	};
	ring		r;
	ring_error	err;
	ring_domains d;
	uint16_t	bp[1 << 6];
	uint16_t	out[6];
	uint64_t	ws[3];
	uint32_t	found,
				x;

	CHECK(ring_core_build(&env, nodes, 6, 6, 1, 1, &r, &err) == RING_OK);
	ring_lookup_transpose(&r, bp);
	CHECK(ring_domains_build(&env, &r, &d, &err) == RING_OK);
	CHECK_EQ_INT(d.zones, 3);
	CHECK_EQ_INT(d.regions, 1);
	CHECK(ring_handoff_workspace_size(&d) <= sizeof(ws));
	for (x = 0; x < 64; x++)
	{
		int32_t		pz = r.nodes[bp[x]].zone;

		CHECK(ring_handoff(&r, bp, &d, x, 5, ws, out, &found, NULL) == RING_OK);
		CHECK_EQ_INT(found, 5);
		CHECK(r.nodes[out[0]].zone != pz);
		CHECK(r.nodes[out[1]].zone != pz);
		CHECK(r.nodes[out[0]].zone != r.nodes[out[1]].zone);
	}
	ring_domains_free(&env, &d);
	ring_free(&env, &r);
}

TEST(cancel_stops_batches_and_handoffs)
{
	test_ring	t = random_ring(4000, 5, 1, 18, 3, 0);
	size_t		count = 200000;
	uint64_t   *keys = malloc(sizeof(uint64_t) * count);
	int32_t    *ids = malloc(sizeof(int32_t) * count * 3);
	void	   *ws = malloc(ring_handoff_workspace_size(&t.d));
	uint16_t   *out = malloc(sizeof(uint16_t) * 4000);
	uint32_t	found;
	size_t		i;

	for (i = 0; i < count; i++)
		keys[i] = rnd();
	tctx.interrupt_calls = 0;
	tctx.cancel_at = 2;
	CHECK(ring_lookup_keys(&t.r, t.by_partition, keys, count, NULL, ids, &env) == RING_ECANCELED);
	CHECK_EQ_INT(tctx.interrupt_calls, 2);
	tctx.interrupt_calls = 0;
	tctx.cancel_at = 0;
	CHECK(ring_lookup_keys(&t.r, t.by_partition, keys, count, NULL, ids, &env) == RING_OK);
	CHECK_EQ_INT(tctx.interrupt_calls, 3);	/* every 65536 keys */

	/* all 4000 nodes: the walk visits 65536 partitions in each of its passes */
	tctx.interrupt_calls = 0;
	tctx.cancel_at = 3;
	CHECK(ring_handoff(&t.r, t.by_partition, &t.d, 7, 4000, ws, out, &found, &env) == RING_ECANCELED);
	tctx.cancel_at = 0;
	tctx.interrupt_calls = 0;
	CHECK(ring_handoff(&t.r, t.by_partition, &t.d, 7, 4000, ws, out, &found, &env) == RING_OK);
	CHECK(tctx.interrupt_calls > 3);
	CHECK(found > 3000);
	free(keys);
	free(ids);
	free(ws);
	free(out);
	free_test_ring(&t);
}

TEST(domains_allocation_failures_leave_nothing_behind)
{
	test_ring	t = random_ring(30, 5, 2, 8, 3, 0);
	long		k;

	for (k = 1; k <= 4; k++)
	{
		ring_domains d;
		ring_error	err;
		long		live = tctx.live;

		tctx.allocs = 0;
		tctx.fail_at = k;
		CHECK(ring_domains_build(&env, &t.r, &d, &err) == RING_ENOMEM);
		CHECK_EQ_INT(tctx.live, live);
	}
	tctx.fail_at = 0;
	free_test_ring(&t);
	CHECK_EQ_INT(tctx.live, 0);
}

int
main(void)
{
	RUN(md5_matches_rfc_1321);
	RUN(handoff_start_matches_swift_formula);
	RUN(transpose_is_partition_major);
	RUN(batch_equals_one_lookup_per_key);
	RUN(handoff_properties_on_random_rings);
	RUN(handoff_small_exact);
	RUN(cancel_stops_batches_and_handoffs);
	RUN(domains_allocation_failures_leave_nothing_behind);
	return unit_report();
}
