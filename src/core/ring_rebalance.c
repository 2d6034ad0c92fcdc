/*
 * src/core/ring_rebalance.c
 *		Rebalancing a partition ring for a new node table.
 *
 * Replicas on removed nodes are freed; a partition that had one
 * is touched (moved this round).  In untouched partitions that break a
 * domain cap (zones changed), one replica of the crowded domain is freed.
 * Free slots go to nodes below their quota, drawn in proportion to what they
 * still need among the nodes that keep the partition within its domain caps;
 * where none can take one, a slot filled earlier in this rebalance is swapped
 * (both are moves anyway).  Then, visiting the partitions in a seeded random
 * order, one replica of an untouched partition moves from a node above its
 * quota to a node below it, until the quotas are met; where the domain caps
 * block every such move, a relay moves a replica of a node at quota to a node
 * below quota and refills it from a node above quota.  So one rebalance moves
 * at most one replica of any partition (apart from replicas of removed
 * nodes), moves exactly the slots by which nodes exceed their new quotas
 * (relays excepted), and a later rebalance finishes what the one-move rule
 * left.  Should a rebalance move nothing although nodes are off quota (the
 * caps block every direct move and relay), it searches chains of moves
 * through other nodes instead (ring_repair.c).
 */
#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/ring_tree.h"
#include "core/ring_place.h"

#include <string.h>

#define SWAP_TRIES 1024			/* slots tried per swap search */
#define REFILL_TRIES 16384		/* partitions tried to refill after a relay */
#define RELAY_FAILURES 64		/* relays undone before a pass gives up */

/*
 * No node below its quota can take a free slot of partition x.  Look for a
 * slot filled earlier in this rebalance (a move anyway) whose node could take
 * x instead, while a node below quota takes that slot.  Returns the leaf for
 * x (the swap is done on the other slot), or FAIL_VERTEX.
 */
static uint32_t
swap_receiver(rebal *b, uint32_t x, const uint32_t *filled, size_t nfilled)
{
	rtree	   *t = b->t;
	uint32_t	pp = b->part_power;
	uint32_t	exmax = b->replicas * 4 + 8;
	size_t		start,
				k;

	if (nfilled == 0)
		return FAIL_VERTEX;
	start = (size_t) rng_below(&b->rng, nfilled);
	for (k = 0; k < nfilled && k < SWAP_TRIES; k++)
	{
		size_t		sy = filled[(start + k) % nfilled];
		uint32_t	y = (uint32_t) (sy & (((size_t) 1 << pp) - 1));
		uint32_t	ry = (uint32_t) (sy >> pp);
		uint32_t	other = t->node_leaf[b->assign[sy]];
		uint32_t	a;

		if (y == x)
			continue;
		ring_load_partition(b, x, UINT32_MAX);
		if (!ring_eligible_leaf(t, other))
			continue;
		ring_load_partition(b, y, ry);
		a = ring_sample_receiver(t, &b->rng, 0, t->scratch, exmax);
		if (a == FAIL_VERTEX)
			continue;
		b->assign[sy] = (uint16_t) t->leaf_node[a - t->first_leaf];
		t->held[other]--;
		t->held[a]++;
		ring_refresh_need(t, a);
		ring_refresh_need(t, other);
		return other;
	}
	return FAIL_VERTEX;
}

/* no node below its quota can take the slot: the best eligible other one */
static uint32_t
fallback_receiver(const rtree *t, int domains)
{
	uint32_t	best = FAIL_VERTEX;
	int64_t		best_room = INT64_MIN;
	uint32_t	leaf;

	for (leaf = t->first_leaf; leaf < t->nv; leaf++)
	{
		uint32_t	v;
		int			ok = t->units[leaf] > 0 && !ring_blocked(t, leaf);

		for (v = t->parent[leaf]; ok && domains && v != 0; v = t->parent[v])
			if (ring_blocked(t, v))
				ok = 0;
		if (ok && t->quota[leaf] - t->held[leaf] > best_room)
		{
			best = leaf;
			best_room = t->quota[leaf] - t->held[leaf];
		}
	}
	return best;
}

/*
 * Move one replica of an untouched partition from a node above quota to
 * leaf "to" (which has just lost a replica to a relay).  Tries a bounded
 * number of partitions; returns 1 if it moved one.
 */
static int
refill(rebal *b, uint8_t *touched, uint64_t key, uint32_t to)
{
	rtree	   *t = b->t;
	uint32_t	pp = b->part_power;
	uint32_t	parts = (uint32_t) 1 << pp;
	uint32_t	start = (uint32_t) rng_below(&b->rng, parts);
	uint32_t	i,
				r;

	for (i = 0; i < parts && i < REFILL_TRIES; i++)
	{
		uint32_t	y = ring_permute((start + i) & (parts - 1), pp, key);

		if (touched[y])
			continue;
		for (r = 0; r < b->replicas; r++)
		{
			size_t		slot = ((size_t) r << pp) + y;
			uint32_t	from = t->node_leaf[b->assign[slot]];

			if (t->held[from] <= t->quota[from])
				continue;
			ring_load_partition(b, y, r);
			if (!ring_eligible_leaf(t, to))
				continue;
			b->assign[slot] = (uint16_t) t->leaf_node[to - t->first_leaf];
			t->held[from]--;
			t->held[to]++;
			ring_refresh_need(t, to);
			touched[y] = 1;
			return 1;
		}
	}
	return 0;
}

/*
 * A relay has moved slot (of partition x) from leaf "from", at or below its
 * quota, to leaf "to": keep it only if a node above quota refills "from",
 * else undo it.  Returns 1 if kept.
 */
static int
keep_relay(rebal *b, uint8_t *touched, uint64_t key, uint32_t x, size_t slot,
		   uint32_t from, uint32_t to)
{
	rtree	   *t = b->t;

	ring_refresh_need(t, from);
	if (refill(b, touched, key, from))
		return 1;
	b->assign[slot] = (uint16_t) t->leaf_node[from - t->first_leaf];
	t->held[from]++;
	t->held[to]--;
	ring_refresh_need(t, from);
	ring_refresh_need(t, to);
	touched[x] = 0;
	return 0;
}

/*
 * One pass over the untouched partitions in seeded order.  relay == 0: move
 * a replica from a node above quota to one below.  relay == 1: move a replica
 * from a node at or below quota whose zone has nodes above quota (at most as
 * many moves as the excess left); *relayed counts those.
 */
static ring_status
move_pass(const ring_env *env, rebal *b, uint8_t *touched, uint64_t key,
		  int64_t *excess, int relay, ring_error *err, int64_t *relayed)
{
	rtree	   *t = b->t;
	uint32_t	pp = b->part_power;
	uint32_t	R = b->replicas;
	uint32_t	parts = (uint32_t) 1 << pp;
	uint32_t	exmax = R * 4 + 8;
	uint32_t	i,
				j;
	int64_t		budget = *excess;
	int			failures = 0;

	*relayed = 0;
	for (i = 0; i < parts && *excess > 0 && t->need[0] > 0; i++)
	{
		uint32_t	x = ring_permute(i, pp, key);
		uint32_t	start;

		/* a relay may try REFILL_TRIES partitions: check each time */
		if ((relay || i % RING_CHECK_EVERY == 0) &&
			core_interrupts_check(env->interrupts))
			return ring_canceled(err);
		if (touched[x])
			continue;
		if (relay && (*relayed >= budget || failures > RELAY_FAILURES))
			break;
		start = (uint32_t) rng_below(&b->rng, R);
		for (j = 0; j < R; j++)
		{
			uint32_t	r = (start + j) % R;
			size_t		slot = ((size_t) r << pp) + x;
			uint32_t	from = t->node_leaf[b->assign[slot]];
			uint32_t	to;

			/* a move takes from above quota, a relay from at or below */
			if (relay ? t->held[from] > t->quota[from] :
				t->held[from] <= t->quota[from])
				continue;
			ring_load_partition(b, x, r);
			to = ring_sample_receiver(t, &b->rng, 0, t->scratch, exmax);
			if (to == FAIL_VERTEX ||
				(relay && t->parent[to] == t->parent[from]))
				continue;
			b->assign[slot] = (uint16_t) t->leaf_node[to - t->first_leaf];
			t->held[from]--;
			t->held[to]++;
			ring_refresh_need(t, to);
			touched[x] = 1;
			if (!relay)
				(*excess)--;
			else if (keep_relay(b, touched, key, x, slot, from, to))
			{
				(*relayed)++;
				(*excess)--;
			}
			else
				failures++;
			break;
		}
	}
	return RING_OK;
}

/* ---- one rebalance, step by step ---- */

/* Everything one rebalance works with, beside the placement state b. */
typedef struct rebalance
{
	const ring_env *env;
	ring_error *err;
	const ring *old;
	arena		a;				/* every allocation, freed at the end */
	rtree		t;
	rebal		b;
	ring_node  *sorted;			/* the new node table, sorted by id */
	uint32_t	n;
	uint16_t   *map;			/* old node index -> new, or FREE_SLOT */
	uint8_t    *touched;		/* per partition: moved in this rebalance */
	uint32_t   *filled;			/* slots filled in this rebalance */
	size_t		nfilled;
	int64_t		excess;			/* slots held above the quotas */
	uint64_t	key;			/* seeds the order of the partitions */
} rebalance;

/* Has the caller asked to stop?  (Only call where a check is due.) */
static int
canceled(const rebalance *rb)
{
	return core_interrupts_check(rb->env->interrupts);
}

/* The sorted node table, the tree and its quotas, the working arrays. */
static ring_status
rebalance_setup(rebalance *rb, const ring_node *nodes, uint32_t n)
{
	const ring *old = rb->old;
	size_t		slots = (size_t) old->replicas << old->part_power;
	ring_status st;
	wf_child   *tmp;

	rb->sorted = ring_sorted_nodes(&rb->a, nodes, n, rb->err, &st);
	if (rb->sorted == NULL)
		return st;
	rb->n = n;
	tmp = ring_arena_alloc(&rb->a, sizeof(wf_child) * n);
	rb->b.assign = ring_arena_alloc(&rb->a, sizeof(uint16_t) * slots);
	rb->map = ring_arena_alloc(&rb->a, sizeof(uint16_t) * old->node_count);
	rb->touched = ring_arena_alloc(&rb->a, (size_t) 1 << old->part_power);
	if (tmp == NULL || rb->b.assign == NULL || rb->map == NULL ||
		rb->touched == NULL ||
		!ring_tree_init(&rb->t, &rb->a, rb->sorted, n, old->part_power,
						old->replicas))
		return ring_arena_fail(&rb->a, rb->err);
	ring_tree_quotas(&rb->t, tmp);
	rb->b.t = &rb->t;
	rb->b.part_power = old->part_power;
	rb->b.replicas = old->replicas;
	return RING_OK;
}

/*
 * Map the old nodes to the new ones by id and carry the old assignment over;
 * a partition with a replica on a removed node is touched (that slot free).
 */
static ring_status
carry_over(rebalance *rb)
{
	const ring *old = rb->old;
	rtree	   *t = &rb->t;
	uint16_t   *assign = rb->b.assign;
	uint32_t	parts = (uint32_t) 1 << old->part_power;
	size_t		slots = (size_t) old->replicas << old->part_power;
	uint32_t	i,
				j;
	size_t		s;

	for (i = 0, j = 0; i < old->node_count; i++)
	{
		while (j < rb->n && rb->sorted[j].id < old->nodes[i].id)
			j++;
		rb->map[i] = (j < rb->n && rb->sorted[j].id == old->nodes[i].id) ?
			(uint16_t) j : FREE_SLOT;
	}
	for (s = 0; s < slots; s++)
	{
		if (s % (RING_CHECK_EVERY * 256) == 0 && canceled(rb))
			return ring_canceled(rb->err);
		assign[s] = rb->map[ring_slot_at(old, s)];
		if (assign[s] == FREE_SLOT)
			rb->touched[s & (parts - 1)] = 1;
		else
			t->held[t->node_leaf[assign[s]]]++;
	}
	return RING_OK;
}

/*
 * A crowded domain in an untouched partition (the zones changed): free the
 * replica of the node furthest above its quota among those in a crowded
 * domain.
 */
static ring_status
free_crowded(rebalance *rb)
{
	rtree	   *t = &rb->t;
	uint16_t   *assign = rb->b.assign;
	uint32_t	pp = rb->b.part_power;
	uint32_t	R = rb->b.replicas;
	uint32_t	parts = (uint32_t) 1 << pp;
	uint32_t	x,
				r;

	for (x = 0; x < parts; x++)
	{
		uint32_t	worst = UINT32_MAX;
		int64_t		worst_excess = INT64_MIN;

		if (x % (RING_CHECK_EVERY * 4) == 0 && canceled(rb))
			return ring_canceled(rb->err);
		if (rb->touched[x])
			continue;
		ring_load_partition(&rb->b, x, UINT32_MAX);
		for (r = 0; r < R; r++)
		{
			uint32_t	leaf = t->node_leaf[assign[((size_t) r << pp) + x]];
			uint32_t	v;
			int			crowded = 0;

			for (v = t->parent[leaf]; v != 0; v = t->parent[v])
				if (t->cnt[v] > t->cap[v])
					crowded = 1;
			if (crowded && t->held[leaf] - t->quota[leaf] > worst_excess)
			{
				worst = r;
				worst_excess = t->held[leaf] - t->quota[leaf];
			}
		}
		if (worst != UINT32_MAX)
		{
			size_t		slot = ((size_t) worst << pp) + x;

			t->held[t->node_leaf[assign[slot]]]--;
			assign[slot] = FREE_SLOT;
			rb->touched[x] = 1;
		}
	}
	return RING_OK;
}

/* The needs of every vertex (and their Fenwick trees), and the excess. */
static void
compute_needs(rebalance *rb)
{
	rtree	   *t = &rb->t;
	uint32_t	i;

	rb->excess = 0;
	for (i = t->first_leaf; i < t->nv; i++)
	{
		int64_t		d = t->quota[i] - t->held[i];

		t->need[i] = d > 0 ? d : 0;
		if (d < 0)
			rb->excess -= d;
	}
	for (i = t->nv - 1; i > 0; i--)
		t->need[t->parent[i]] += t->need[i];
	for (i = 0; i < t->first_leaf; i++)
		ring_tree_fen_build(t, i);
}

/*
 * The node to take free replica slot of partition x (loaded): one below its
 * quota that keeps the domain caps, else one freed by swapping a slot filled
 * earlier, else the eligible node furthest below quota, else any node.
 */
static ring_status
receiver_for(rebalance *rb, uint32_t x, uint32_t *leaf)
{
	rtree	   *t = &rb->t;
	uint32_t	exmax = rb->b.replicas * 4 + 8;

	*leaf = ring_sample_receiver(t, &rb->b.rng, 0, t->scratch, exmax);
	if (*leaf == FAIL_VERTEX)
	{
		/* up to SWAP_TRIES slots tried: let the caller interrupt */
		if (canceled(rb))
			return ring_canceled(rb->err);
		*leaf = swap_receiver(&rb->b, x, rb->filled, rb->nfilled);
		ring_load_partition(&rb->b, x, UINT32_MAX);
	}
	if (*leaf == FAIL_VERTEX)
	{
		/* rare, and linear in the nodes: let the caller interrupt */
		if (canceled(rb))
			return ring_canceled(rb->err);
		*leaf = fallback_receiver(t, 1);
	}
	if (*leaf == FAIL_VERTEX)
		*leaf = fallback_receiver(t, 0);
	if (*leaf == FAIL_VERTEX)
		return ring_fail(rb->err, RING_EINTERNAL, RING_NO_RECEIVER, RING_NO_FACTS);
	return RING_OK;
}

/* Fill the free slots, visiting the touched partitions in seeded order. */
static ring_status
fill_free_slots(rebalance *rb)
{
	rtree	   *t = &rb->t;
	uint16_t   *assign = rb->b.assign;
	uint32_t	pp = rb->b.part_power;
	uint32_t	R = rb->b.replicas;
	uint32_t	parts = (uint32_t) 1 << pp;
	size_t		slots = (size_t) R << pp;
	size_t		nfree = 0;
	size_t		s;
	uint32_t	i,
				r;

	for (s = 0; s < slots; s++)
		nfree += assign[s] == FREE_SLOT;
	rb->filled = ring_arena_alloc(&rb->a, sizeof(uint32_t) * (nfree + 1));
	if (rb->filled == NULL)
		return ring_arena_fail(&rb->a, rb->err);
	for (i = 0; i < parts; i++)
	{
		uint32_t	x = ring_permute(i, pp, rb->key);

		if (i % (RING_CHECK_EVERY * 4) == 0 && canceled(rb))
			return ring_canceled(rb->err);
		if (!rb->touched[x])
			continue;
		for (r = 0; r < R; r++)
		{
			size_t		slot = ((size_t) r << pp) + x;
			uint32_t	leaf;
			ring_status st;

			if (assign[slot] != FREE_SLOT)
				continue;
			ring_load_partition(&rb->b, x, UINT32_MAX);
			st = receiver_for(rb, x, &leaf);
			if (st != RING_OK)
				return st;
			assign[slot] = (uint16_t) t->leaf_node[leaf - t->first_leaf];
			if (t->held[leaf] >= t->quota[leaf])
				rb->excess++;
			t->held[leaf]++;
			ring_refresh_need(t, leaf);
			rb->filled[rb->nfilled++] = (uint32_t) slot;
		}
	}
	return RING_OK;
}

/*
 * Move one replica of untouched partitions off nodes above quota.  Where
 * that is stuck (the nodes below quota are in a zone that every partition
 * of the nodes above quota already uses), relay: move a replica from a
 * node at quota to a node below quota, and at once refill it from a node
 * above quota (or undo the relay).
 */
static ring_status
move_excess(rebalance *rb)
{
	int			round;

	for (round = 0; round < 6 && rb->excess > 0; round++)
	{
		int64_t		before = rb->excess;
		int64_t		relayed;
		ring_status st;

		st = move_pass(rb->env, &rb->b, rb->touched, rb->key, &rb->excess, 0,
					   rb->err, &relayed);
		if (st != RING_OK)
			return st;
		if (rb->excess == 0)
			break;
		st = move_pass(rb->env, &rb->b, rb->touched, rb->key, &rb->excess, 1,
					   rb->err, &relayed);
		if (st != RING_OK)
			return st;
		if (relayed == 0 && rb->excess == before)
			break;
	}
	return RING_OK;
}

static ring_status
rebalance_steps(rebalance *rb, const ring_node *nodes, uint32_t n,
				int64_t seed)
{
	ring_status st;

	if ((st = rebalance_setup(rb, nodes, n)) != RING_OK ||
		(st = carry_over(rb)) != RING_OK)
		return st;
	rb->key = ring_seed_mix(seed, rb->old->fingerprint);
	rb->b.rng.s = rb->key;
	if ((st = free_crowded(rb)) != RING_OK)
		return st;
	compute_needs(rb);
	if ((st = fill_free_slots(rb)) != RING_OK ||
		(st = move_excess(rb)) != RING_OK)
		return st;
	if (rb->excess > 0)
		return ring_repair_if_stuck(rb->env, &rb->b, &rb->a, rb->old, rb->map,
									rb->touched, rb->key, rb->err);
	return RING_OK;
}

ring_status
ring_core_rebalance(const ring_env *env, const ring *old, const ring_node *nodes,
					uint32_t n, int64_t seed, ring *out, ring_error *err)
{
	rebalance	rb;
	ring_status st;

	memset(out, 0, sizeof(*out));
	st = ring_check_args(nodes, n, old->part_power, old->replicas, err);
	if (st != RING_OK)
		return st;
	memset(&rb, 0, sizeof(rb));
	rb.env = env;
	rb.err = err;
	rb.old = old;
	rb.a.env = env;
	st = rebalance_steps(&rb, nodes, n, seed);
	if (st == RING_OK)
	{
		out->part_power = old->part_power;
		out->replicas = old->replicas;
		out->node_count = n;
		out->seed = seed;
		out->nodes = rb.sorted;
		out->assignment = rb.b.assign;
		ring_arena_keep(&rb.a, rb.sorted);
		ring_arena_keep(&rb.a, rb.b.assign);
	}
	ring_arena_free_all(&rb.a);
	return st;
}
