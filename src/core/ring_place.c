/*
 * src/core/ring_place.c
 *		Placing one replica of a partition during a rebalance: which domains
 *		the partition fills, which nodes may take a replica within the domain
 *		caps, drawing one in proportion to what it still needs, and the seeded
 *		order in which the rebalancer visits partitions.
 */
#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/ring_tree.h"
#include "core/ring_place.h"

/* stamp the domains of the replicas of x, except replica skip */
void
ring_load_partition(rebal *b, uint32_t x, uint32_t skip)
{
	rtree	   *t = b->t;
	uint32_t	r;

	t->cur++;
	t->nstamped = 0;
	for (r = 0; r < b->replicas; r++)
	{
		uint16_t	node = b->assign[((size_t) r << b->part_power) + x];
		uint32_t	v;

		if (r == skip || node == FREE_SLOT)
			continue;
		for (v = t->node_leaf[node];; v = t->parent[v])
		{
			if (t->stamp[v] != t->cur)
			{
				t->stamp[v] = t->cur;
				t->cnt[v] = 0;
				t->stamped[t->nstamped++] = v;
			}
			t->cnt[v]++;
			if (v == 0)
				break;
		}
	}
}

int
ring_blocked(const rtree *t, uint32_t v)
{
	if (t->stamp[v] != t->cur)
		return 0;
	return v >= t->first_leaf ? t->cnt[v] >= 1 : t->cnt[v] >= t->cap[v];
}

/* change the need of a leaf (and of its ancestors and their Fenwick trees) */
static void
set_need(rtree *t, uint32_t leaf, int64_t need)
{
	int64_t		d = need - t->need[leaf];
	uint32_t	v = leaf;

	if (d == 0)
		return;
	while (v != 0)
	{
		uint32_t	p = t->parent[v];

		fen_add(t->fen + (t->child_start[p] - 1), t->child_count[p],
				v - t->child_start[p], d);
		t->need[v] += d;
		v = p;
	}
	t->need[0] += d;
}

void
ring_refresh_need(rtree *t, uint32_t leaf)
{
	int64_t		n = t->quota[leaf] - t->held[leaf];

	set_need(t, leaf, n > 0 ? n : 0);
}

/*
 * Draw a leaf under v in proportion to need, among those that keep the
 * current partition within its domain caps.  FAIL_VERTEX if there is none.
 */
uint32_t
ring_sample_receiver(rtree *t, rng_t *rng, uint32_t v, uint32_t *ex,
				uint32_t exmax)
{
	uint32_t	first = t->child_start[v];
	uint32_t	cnt = t->child_count[v];
	int64_t    *f = t->fen + (first - 1);
	uint32_t	nex = 0;
	uint32_t	i;

	if (v >= t->first_leaf)
		return v;
	/* children already at their cap for this partition */
	for (i = 0; i < t->nstamped; i++)
	{
		uint32_t	c = t->stamped[i];

		if (c != 0 && t->parent[c] == v && ring_blocked(t, c) && nex < exmax)
			ex[nex++] = c;
	}
	for (;;)
	{
		int64_t		total = t->need[v];
		int64_t		pos;
		uint32_t	child,
					res,
					j;

		for (i = 0; i < nex; i++)
			total -= t->need[ex[i]];
		if (total <= 0)
			return FAIL_VERTEX;
		/* keep ex sorted by position (= vertex number) */
		for (i = 1; i < nex; i++)
			for (j = i; j > 0 && ex[j - 1] > ex[j]; j--)
			{
				uint32_t	tmp = ex[j];

				ex[j] = ex[j - 1];
				ex[j - 1] = tmp;
			}
		pos = (int64_t) rng_below(rng, (uint64_t) total);
		for (i = 0; i < nex; i++)
		{
			if (pos >= fen_prefix(f, ex[i] - first))
				pos += t->need[ex[i]];
			else
				break;
		}
		child = first + fen_find(f, cnt, t->top[v], pos);
		if (child >= first + cnt)
			return FAIL_VERTEX;
		res = ring_sample_receiver(t, rng, child, ex + nex, exmax - nex);
		if (res != FAIL_VERTEX)
			return res;
		if (nex == exmax)
			return FAIL_VERTEX;
		ex[nex++] = child;
	}
}

/* can leaf take a replica of the loaded partition within the domain caps? */
int
ring_eligible_leaf(const rtree *t, uint32_t leaf)
{
	uint32_t	v;

	if (t->units[leaf] == 0 || ring_blocked(t, leaf))
		return 0;
	for (v = t->parent[leaf]; v != 0; v = t->parent[v])
		if (ring_blocked(t, v))
			return 0;
	return 1;
}

/* a bijection on [0, 2^p): the seeded order in which partitions are visited */
uint32_t
ring_permute(uint32_t i, uint32_t part_power, uint64_t key)
{
	uint32_t	mask = (uint32_t) (((uint64_t) 1 << part_power) - 1);
	uint32_t	x = i & mask;
	int			round;

	for (round = 0; round < 3; round++)
	{
		uint32_t	k = (uint32_t) (key >> (round * 20));

		x = (x * (2 * (k | 1) + 1) + (k >> 5)) & mask;
		x ^= x >> ((part_power + 1) / 2);
	}
	return x & mask;
}
