/*
 * src/core/ring_build.c
 *		Building a new partition ring (see ring_tree.h for the tree and the
 *		quotas).
 *
 * Partitions are filled one at a time.  With m partitions left, every
 * domain d still needs need(d) slots, and need(d) <= ceil(quota(d)/2^p) * m
 * (at most its cap per partition; for a node, at most one).  The R replicas of
 * the next partition are drawn by systematic sampling: the children of a
 * domain are laid on a line, each over a length equal to its need, and the
 * points u, u + m, u + 2m, ... pick them.  A child of length L gets
 * floor(L/m) or ceil(L/m) points, and exactly L/m when that is whole, so the
 * invariant holds after every partition and the last partition fills exactly:
 * every node ends at its quota and no partition has more replicas in a domain
 * than the domain's cap (dispersion is as low as the quotas allow, zero when
 * there are enough zones).  The start u is random (seeded) at each level, so
 * replicas in different zones are independent, and the order of the children
 * on each line is reshuffled every few partitions.
 */
#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/ring_tree.h"

#include <string.h>

/* ---- build ---- */

/* pick k leaves under v for the current partition; m partitions remain */
static void
fill_select(rtree *t, rng_t *rng, uint32_t v, uint32_t k, int64_t m,
			uint32_t *out, uint32_t *nout, uint32_t *scratch)
{
	int64_t		len = t->need[v];
	int64_t		q,
				r,
				u;
	uint32_t	seg,
				cnt,
				j;
	int64_t    *f;

	if (v >= t->first_leaf)
	{
		if (k != 1 || len < 1)
			t->broken = 1;
		out[(*nout)++] = v;
		t->need[v] -= k;
		return;
	}
	q = len / m;
	r = len % m;
	if ((int64_t) k == q + 1 && r > 0)
		u = (int64_t) rng_below(rng, (uint64_t) r);
	else if ((int64_t) k == q)
		u = r + (int64_t) rng_below(rng, (uint64_t) (m - r));
	else
	{
		t->broken = 1;
		return;
	}
	seg = t->child_start[v] - 1;
	cnt = t->child_count[v];
	f = t->fen + seg;
	for (j = 0; j < k; j++)
		scratch[j] = fen_find(f, cnt, t->top[v], u + (int64_t) j * m);
	for (j = 0; j < k && !t->broken;)
	{
		uint32_t	p = scratch[j];
		uint32_t	c = 1;

		while (j + c < k && scratch[j + c] == p)
			c++;
		if (p >= cnt)
		{
			t->broken = 1;
			return;
		}
		fen_add(f, cnt, p, -(int64_t) c);
		fill_select(t, rng, t->order[seg + p], c, m, out, nout, scratch + k);
		j += c;
	}
	t->need[v] -= k;
}

static void
reshuffle(rtree *t, rng_t *rng)
{
	uint32_t	v;

	for (v = 0; v < t->first_leaf; v++)
	{
		uint32_t   *o = t->order + (t->child_start[v] - 1);
		uint32_t	i;

		for (i = t->child_count[v]; i > 1; i--)
		{
			uint32_t	j = (uint32_t) rng_below(rng, i);
			uint32_t	tmp = o[i - 1];

			o[i - 1] = o[j];
			o[j] = tmp;
		}
		ring_tree_fen_build(t, v);
	}
}

/*
 * Replica order: random, except that the primary is the chosen node furthest
 * below its share of primaries (quota / R), so that reads of primaries spread
 * like the data.
 */
static void
order_replicas(const rtree *t, rng_t *rng, uint32_t *chosen, uint32_t nout,
			   uint32_t replicas)
{
	uint32_t	i;

	for (i = nout; i > 1; i--)
	{
		uint32_t	j = (uint32_t) rng_below(rng, i);
		uint32_t	c = chosen[i - 1];

		chosen[i - 1] = chosen[j];
		chosen[j] = c;
	}
	if (nout > 1)
	{
		uint32_t	best = 0;
		uint32_t	c;

		/*
		 * urgency: primaries still wanted, (quota / R - primaries), per
		 * partition the node has left (need + 1, this one included)
		 */
		for (i = 1; i < nout; i++)
		{
			uint32_t	ci = chosen[i],
						cb = chosen[best];
			int64_t		ui = t->quota[ci] - (int64_t) replicas * t->held[ci];
			int64_t		ub = t->quota[cb] - (int64_t) replicas * t->held[cb];

			if (ui * (t->need[cb] + 1) > ub * (t->need[ci] + 1))
				best = i;
		}
		c = chosen[0];
		chosen[0] = chosen[best];
		chosen[best] = c;
	}
}

/*
 * Draw the replicas of partition x (chosen: room for R leaves), order them
 * and write them into the assignment.
 */
static void
place_partition(rtree *t, rng_t *rng, uint32_t x, uint32_t *chosen,
				uint16_t *assign)
{
	uint32_t	replicas = t->replicas;
	uint32_t	nout = 0;
	uint32_t	i;

	fill_select(t, rng, 0, replicas, (int64_t) (t->parts - x), chosen,
				&nout, t->scratch);
	if (nout != replicas)
		t->broken = 1;
	order_replicas(t, rng, chosen, nout, replicas);
	if (nout > 0)
		t->held[chosen[0]]++;	/* primaries so far (held is unused in a build) */
	for (i = 0; i < nout && i < replicas; i++)
		assign[(size_t) i * t->parts + x] =
			(uint16_t) t->leaf_node[chosen[i] - t->first_leaf];
}

ring_status
ring_core_build(const ring_env *env, const ring_node *nodes, uint32_t n,
		   uint32_t part_power, uint32_t replicas, int64_t seed, ring *out,
		   ring_error *err)
{
	arena		a;
	rtree		t;
	ring_status st;
	ring_node  *sorted;
	uint16_t   *assign;
	wf_child   *tmp;
	uint32_t   *chosen;
	rng_t		rng;
	uint32_t	parts,
				x,
				interval;

	memset(out, 0, sizeof(*out));
	st = ring_check_args(nodes, n, part_power, replicas, err);
	if (st != RING_OK)
		return st;
	memset(&a, 0, sizeof(a));
	a.env = env;
	sorted = ring_sorted_nodes(&a, nodes, n, err, &st);
	if (sorted == NULL)
		goto done;
	parts = (uint32_t) 1 << part_power;
	tmp = ring_arena_alloc(&a, sizeof(wf_child) * n);
	chosen = ring_arena_alloc(&a, sizeof(uint32_t) * replicas);
	assign = ring_arena_alloc(&a, sizeof(uint16_t) * ((size_t) replicas << part_power));
	if (tmp == NULL || chosen == NULL || assign == NULL ||
		!ring_tree_init(&t, &a, sorted, n, part_power, replicas))
	{
		st = ring_arena_fail(&a, err);
		goto done;
	}
	ring_tree_quotas(&t, tmp);
	memcpy(t.need, t.quota, sizeof(int64_t) * t.nv);
	rng.s = ring_seed_mix(seed, UINT64_C(0x6275696c64));
	interval = t.nv / 16 + 1;
	for (x = 0; x < parts && !t.broken; x++)
	{
		if (x % interval == 0)
			reshuffle(&t, &rng);
		if (x % RING_CHECK_EVERY == 0 && core_interrupts_check(env->interrupts))
		{
			st = ring_canceled(err);
			goto done;
		}
		place_partition(&t, &rng, x, chosen, assign);
	}
	if (t.broken)
	{
		st = ring_fail(err, RING_EINTERNAL, RING_BUILDER_BROKEN, RING_NO_FACTS);
		goto done;
	}
	out->part_power = part_power;
	out->replicas = replicas;
	out->node_count = n;
	out->seed = seed;
	out->nodes = sorted;
	out->assignment = assign;
	ring_arena_keep(&a, sorted);
	ring_arena_keep(&a, assign);
	st = RING_OK;
done:
	ring_arena_free_all(&a);
	return st;
}
