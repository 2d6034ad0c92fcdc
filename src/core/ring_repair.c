/*
 * src/core/ring_repair.c
 *		Chains of moves, when the passes of the rebalancer are stuck (see
 *		ring_repair_if_stuck below).
 */
#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/ring_tree.h"
#include "core/ring_place.h"

#include <string.h>

/* ---- repair: chains of moves, when the passes above are stuck ---- */

#define NO_VERTEX UINT32_MAX
#define REPAIR_WORK 16			/* a repair starts no new search past this
								 * many scans of every slot */

typedef struct repair
{
	int32_t    *level;			/* per vertex: BFS level of a leaf, -1 not
								 * reached, -2 never a receiver */
	uint32_t   *pred;			/* slot through which a leaf was reached */
	uint32_t   *head;			/* first child of v with a reachable leaf */
	uint32_t   *next;			/* ... and the siblings, doubly linked */
	uint32_t   *prev;
	uint32_t   *sinks;			/* leaves below quota reached, in order */
	uint32_t   *sslot;			/* ... and the slot each reach comes from */
	uint32_t	nsinks;
	uint32_t	maxsinks;
	int64_t    *hits;			/* per vertex: times a sink was reached */
	int64_t    *fed;			/* per vertex: sinks reached from it */
	uint32_t	nreached;
	uint32_t   *path;			/* slots of one chain, from its sink back */
	uint32_t   *dest;			/* the leaf each of them goes to */
} repair;

/* a vertex with a leaf not reached yet: link it to its parent's list */
static void
repair_link(const rtree *t, repair *rp, uint32_t v)
{
	while (v != 0)
	{
		uint32_t	p = t->parent[v];
		int			was_empty = rp->head[p] == NO_VERTEX;

		rp->prev[v] = NO_VERTEX;
		rp->next[v] = rp->head[p];
		if (rp->head[p] != NO_VERTEX)
			rp->prev[rp->head[p]] = v;
		rp->head[p] = v;
		if (!was_empty)
			break;
		v = p;
	}
}

/* v has no leaf left to reach: unlink it, and its parent if that empties */
static void
repair_unlink(const rtree *t, repair *rp, uint32_t v)
{
	while (v != 0)
	{
		uint32_t	p = t->parent[v];

		if (rp->prev[v] != NO_VERTEX)
			rp->next[rp->prev[v]] = rp->next[v];
		else
			rp->head[p] = rp->next[v];
		if (rp->next[v] != NO_VERTEX)
			rp->prev[rp->next[v]] = rp->prev[v];
		if (rp->head[p] != NO_VERTEX)
			break;
		v = p;
	}
}

/*
 * The partition of slot is loaded without the replica of slot, held by leaf
 * a at level k: every leaf not reached yet that could take that replica
 * within the domain caps is reached at level k + 1.  Blocked domains are
 * skipped whole, so the cost is that of the leaves reached plus a few per
 * replica of the partition.  A leaf below its quota (a sink) stays in the
 * lists until it has been reached as often as it is short, each time from
 * another leaf (a source as often as its excess), so that one search finds
 * many chains.
 */
static void
repair_reach(rtree *t, repair *rp, uint32_t slot, uint32_t a, int32_t k,
			 int spread)
{
	uint32_t	g,
				ng,
				z,
				nz,
				l,
				nl;
	int64_t		feeds = k == 0 ? t->held[a] - t->quota[a] : 1;

	for (g = rp->head[0]; g != NO_VERTEX; g = ng)
	{
		ng = rp->next[g];
		if (ring_blocked(t, g))
			continue;
		for (z = rp->head[g]; z != NO_VERTEX; z = nz)
		{
			nz = rp->next[z];
			if (ring_blocked(t, z))
				continue;
			for (l = rp->head[z]; l != NO_VERTEX; l = nl)
			{
				nl = rp->next[l];
				if (ring_blocked(t, l))
					continue;
				if (t->held[l] < t->quota[l])
				{
					if (rp->fed[a] >= feeds)
						continue;
					rp->fed[a]++;
					rp->level[l] = k + 1;
					rp->nreached++;
					rp->sinks[rp->nsinks] = l;
					rp->sslot[rp->nsinks++] = slot;
					if (++rp->hits[l] >= t->quota[l] - t->held[l] ||
						rp->nsinks == rp->maxsinks)
						repair_unlink(t, rp, l);
					if (spread)
						return;
					continue;
				}
				rp->level[l] = k + 1;
				rp->nreached++;
				rp->pred[l] = slot;
				repair_unlink(t, rp, l);
				if (spread)
					return;
			}
		}
	}
}

/* is partition x already on the chain that reaches leaf u? */
static int
repair_on_chain(const rebal *b, const repair *rp, uint32_t u, uint32_t x)
{
	uint32_t	mask = ((uint32_t) 1 << b->part_power) - 1;

	while (rp->level[u] > 0)
	{
		uint32_t	s = rp->pred[u];

		if ((s & mask) == x)
			return 1;
		u = b->t->node_leaf[b->assign[s]];
	}
	return 0;
}

/*
 * Carry out the first len moves of a chain, counted from its source: slot
 * path[i] takes leaf dest[i] (path runs from the sink back to the source).
 */
static void
repair_apply(rebal *b, uint8_t *touched, const repair *rp, uint32_t len,
			 uint32_t total, uint32_t source)
{
	rtree	   *t = b->t;
	uint32_t	mask = ((uint32_t) 1 << b->part_power) - 1;
	uint32_t	i;

	for (i = total - len; i < total; i++)
	{
		b->assign[rp->path[i]] = (uint16_t) t->leaf_node[rp->dest[i] - t->first_leaf];
		touched[rp->path[i] & mask] = 1;
	}
	t->held[source]--;
	t->held[rp->dest[total - len]]++;
}

/* Reset the search: the sources at level 0, every other receiver linked. */
static void
repair_start(const rtree *t, repair *rp)
{
	uint32_t	v;

	for (v = 0; v < t->nv; v++)
		rp->head[v] = NO_VERTEX;
	for (v = t->nv; v-- > t->first_leaf;)
	{
		rp->hits[v] = 0;
		rp->fed[v] = 0;
		rp->level[v] = t->units[v] == 0 ? -2 : -1;
		if (t->held[v] > t->quota[v])
			rp->level[v] = 0;
		else if (t->units[v] > 0)
			repair_link(t, rp, v);
	}
	rp->nsinks = 0;
	rp->nreached = 0;
}

/*
 * The breadth-first search, level by level, until it reaches sinks or
 * nothing new.  Returns 0, or -1 if canceled.
 */
static int
repair_bfs(const ring_env *env, rebal *b, repair *rp, const uint8_t *touched,
		   uint64_t key, int strict, int spread, uint64_t *work)
{
	rtree	   *t = b->t;
	uint32_t	pp = b->part_power;
	uint32_t	R = b->replicas;
	uint32_t	parts = (uint32_t) 1 << pp;
	uint32_t	i,
				r;
	int32_t		k;

	repair_start(t, rp);
	for (k = 0; rp->nsinks == 0 && rp->head[0] != NO_VERTEX; k++)
	{
		uint32_t	reached = rp->nreached;

		for (i = 0; i < parts && rp->head[0] != NO_VERTEX; i++)
		{
			uint32_t	x = ring_permute(i, pp, key);

			if (i % RING_CHECK_EVERY == 0 && core_interrupts_check(env->interrupts))
				return -1;
			if (touched[x])
				continue;
			*work += R;
			for (r = 0; r < R; r++)
			{
				uint32_t	slot = (r << pp) + x;
				uint32_t	u = t->node_leaf[b->assign[slot]];

				if (rp->level[u] != k ||
					(strict && k > 0 && repair_on_chain(b, rp, u, x)))
					continue;
				ring_load_partition(b, x, r);
				repair_reach(t, rp, slot, u, k, spread);
			}
		}
		if (rp->nreached == reached)
			break;
	}
	return 0;
}

/*
 * Carry out the chains, each from its source if still above quota and
 * through partitions no chain has used.  Marking a chain's partitions 2
 * finds a repeated one.  Returns the number carried out.
 */
static int64_t
repair_carry_out(rebal *b, repair *rp, uint8_t *touched)
{
	rtree	   *t = b->t;
	uint32_t	mask = ((uint32_t) 1 << b->part_power) - 1;
	uint32_t	i;
	int64_t		done = 0;

	for (i = 0; i < rp->nsinks; i++)
	{
		uint32_t	sink = rp->sinks[i],
					u = sink,
					s = rp->sslot[i],
					len = 0,
					j;
		int			ok = 1;

		if (t->held[sink] >= t->quota[sink])
			continue;
		/* (a slot moved by an earlier chain no longer leads back) */
		for (;;)
		{
			if (touched[s & mask])
				ok = 0;
			rp->path[len] = s;
			rp->dest[len++] = u;
			u = t->node_leaf[b->assign[s]];
			if (!ok || rp->level[u] == 0)
				break;
			s = rp->pred[u];
		}
		if (!ok || t->held[u] <= t->quota[u])
			continue;
		for (j = 0; j < len && ok; j++)
			if (touched[rp->path[j] & mask])
				ok = 0;
			else
				touched[rp->path[j] & mask] = 2;
		while (j-- > 0)
			if (touched[rp->path[j] & mask] == 2)
				touched[rp->path[j] & mask] = 0;
		if (!ok)
			continue;
		repair_apply(b, touched, rp, len, len, u);
		done++;
	}
	return done;
}

/*
 * No chain has distinct partitions: carry out the first one that can be, up
 * to the move before its first repeated partition.  Returns 1 if it did.
 */
static int
repair_carry_prefix(rebal *b, repair *rp, uint8_t *touched)
{
	rtree	   *t = b->t;
	uint32_t	mask = ((uint32_t) 1 << b->part_power) - 1;
	uint32_t	i,
				r;

	for (i = 0; i < rp->nsinks; i++)
	{
		uint32_t	sink = rp->sinks[i],
					u = sink,
					s = rp->sslot[i],
					len = 0,
					j;

		for (;;)
		{
			rp->path[len] = s;
			rp->dest[len++] = u;
			u = t->node_leaf[b->assign[s]];
			if (rp->level[u] == 0)
				break;
			s = rp->pred[u];
		}
		/* the longest prefix, from the source, with distinct partitions */
		for (j = len; j > 0 && touched[rp->path[j - 1] & mask] == 0; j--)
			touched[rp->path[j - 1] & mask] = 2;
		for (r = j; r < len; r++)
			touched[rp->path[r] & mask] = 0;
		if (j < len)
		{
			repair_apply(b, touched, rp, len - j, len, u);
			return 1;
		}
	}
	return 0;
}

/*
 * One breadth-first search, from every node above its quota at once, over
 * the moves of one replica of an untouched partition to a node that can
 * take it within the domain caps, until it reaches nodes below their quota;
 * then carry out the chains it found, one move per partition.  Returns the
 * number of chains carried out (0: none found), or -1 if canceled.
 *
 * strict: a chain never moves two replicas of one partition (a partition on
 * the chain that reaches a node is not searched from that node).  Otherwise
 * the chains may do so; one whose partitions are all distinct is carried out
 * whole, and if there is none, the first chain is carried out up to the move
 * before its first repeated partition, and *shifted is set: the excess moved
 * along the chain, and the next rebalance finishes it (see ring_repair_if_stuck).
 */
static int64_t
repair_search(const ring_env *env, rebal *b, repair *rp, uint8_t *touched,
			  uint64_t key, int strict, int spread, uint64_t *work,
			  int *shifted)
{
	int64_t		done;

	if (repair_bfs(env, b, rp, touched, key, strict, spread, work) < 0)
		return -1;
	done = repair_carry_out(b, rp, touched);
	if (done == 0 && !strict && repair_carry_prefix(b, rp, touched))
		*shifted = 1;
	return done;
}

/*
 * Why the passes above can get stuck.  They move a replica straight from a
 * node above quota to one below it, or relay through a third node: move a
 * replica of a node at quota to a node below quota in another zone, then
 * refill the relay node from a node above quota, searching a bounded number
 * of partitions, and giving up after RELAY_FAILURES relays undone.  When
 * every partition of the nodes above quota already holds the nodes below
 * quota (or fills their domain to its cap), only a chain of moves through
 * other partitions helps, and the passes miss it when it must stay within one
 * zone (the relay's receiver and relay node are in the same zone: always so
 * with a single zone), when it needs more than one node in between, or when
 * the relays tried at random happen to fail.  The rebalance then moves
 * nothing, and repeating it changes nothing, although the quotas can be met:
 * a fresh build of the same nodes meets them.  For example, with R = 4 on
 * four partitions, a node A above quota is only in the two partitions that
 * also hold the node B below quota, and the other two hold neither A nor B:
 * moving a replica of some node C to B in one of those and A's replica to C
 * in one of A's is the only way, and B and C share a zone.
 *
 * So when this rebalance moved nothing (and so gave the same ring as before,
 * where the passes alone would stop for good), search for chains of moves in
 * general (see repair_search) until none is left, or the work done reaches
 * REPAIR_WORK scans of every slot (the next rebalance goes on).  A rebalance
 * that moves anything without it is left exactly as it was, so the rings of
 * every change the passes alone handle do not change.
 *
 * Each chain moves one replica of each partition on it, from a node above
 * quota, through nodes at quota (each gives one and takes one), to a node
 * below quota, so the one-move rule holds and the excess drops by one per
 * chain; breadth-first search makes the chains the shortest.  A chain may
 * only exist through two moves in one partition (a replica of B's zone leaves
 * so that B can enter, and later another replica leaves the same partition);
 * then the longest part of the chain that moves one replica per partition is
 * carried out (the excess moves along it), and the next rebalance finds the
 * rest, shorter by the moves done.  So every rebalance lowers the excess or
 * the length of the chain still needed, and repeated rebalances reach the
 * quotas.
 */
ring_status
ring_repair_if_stuck(const ring_env *env, rebal *b, arena *a, const ring *old,
				const uint16_t *map, uint8_t *touched, uint64_t key,
				ring_error *err)
{
	rtree	   *t = b->t;
	size_t		slots = (size_t) b->replicas << b->part_power;
	size_t		nv = t->nv;
	size_t		s;
	repair		rp;
	uint64_t	work = 0;
	int64_t		found;
	int			shifted = 0;
	char	   *block;

	for (s = 0; s < slots; s++)
		if (b->assign[s] != map[ring_slot_at(old, s)])
			return RING_OK;		/* not stuck: the next rebalance goes on */
	block = ring_arena_alloc(a, nv * (2 * sizeof(int64_t) + sizeof(int32_t) +
								 8 * sizeof(uint32_t)));
	if (block == NULL)
		return ring_arena_fail(a, err);
	rp.hits = (int64_t *) block;
	rp.fed = rp.hits + nv;
	rp.level = (int32_t *) (rp.fed + nv);
	rp.pred = (uint32_t *) (rp.level + nv);
	rp.head = rp.pred + nv;
	rp.next = rp.head + nv;
	rp.prev = rp.next + nv;
	rp.sinks = rp.prev + nv;
	rp.sslot = rp.sinks + nv;
	rp.path = rp.sslot + nv;
	rp.dest = rp.path + nv;
	rp.maxsinks = (uint32_t) nv;
	/* nothing moved: a partition freed and refilled in place is untouched */
	memset(touched, 0, (size_t) 1 << b->part_power);
	/*
	 * First a search in which each replica leads to one node only, so that
	 * the chains spread over many nodes and one search finds many; then a
	 * complete one; then one that lets a chain move two replicas of a
	 * partition.
	 */
	do
	{
		found = repair_search(env, b, &rp, touched, key, 1, 1, &work, &shifted);
		if (found == 0)
			found = repair_search(env, b, &rp, touched, key, 1, 0, &work, &shifted);
		if (found == 0)
			found = repair_search(env, b, &rp, touched, key, 0, 0, &work, &shifted);
		if (found < 0)
			return ring_canceled(err);
	} while (found > 0 && !shifted && work < REPAIR_WORK * (uint64_t) slots);
	return RING_OK;
}
