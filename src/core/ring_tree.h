/*
 * src/core/ring_tree.h
 *		The failure-domain tree of the ring builder and rebalancer
 *		(ring_tree.c), its quotas, and the small tools they share: allocation
 *		bookkeeping, random numbers, Fenwick trees.  Internal to the core.
 *
 * Failure domains form a tree: root > regions > zones > nodes (a zone is a
 * (region, zone) pair).  Building and rebalancing both work on that tree.
 *
 * Quotas.  The R * 2^p partition-replicas ("slots") are shared out top-down.
 * Under each domain the children get slots in proportion to their weight,
 * except that a child may hold at most h replicas of any partition (h * 2^p
 * slots), where h is the smallest whole number that lets the children hold
 * the parent's slots at all: with at least R zones, a zone holds at most one
 * replica of each partition.  A child whose weighted share exceeds its cap
 * gets the cap and the others share the rest (water-filling).  The shares are
 * fixed-point numbers with 36 fractional bits, computed with integer
 * arithmetic only, and the node quotas are their cumulative rounding in tree
 * order: every node and every domain gets its share rounded up or down, so
 * each is within one slot of its share, and a capped domain gets exactly its
 * cap.  No floating point takes part in any decision (the weights are first
 * turned into integers: round(w / max(w) * 2^32)).
 */
#ifndef SUBSETTING_CORE_RING_TREE_H
#define SUBSETTING_CORE_RING_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "core/ring.h"

#define FIX_BITS 36

/* steps between calls of env->interrupts in the loops of a build or rebalance */
#define RING_CHECK_EVERY 4096

/* ---- allocation bookkeeping ---- */

/*
 * Every allocation of one build or rebalance, freed together at its end
 * unless kept (ring_arena_keep).  A build makes 25 allocations, a rebalance
 * 28: ARENA_MAX leaves room, and running out of it is a bug, reported as
 * such (ring_arena_fail), not as a lack of memory.
 */
#define ARENA_MAX 40

typedef struct arena
{
	const ring_env *env;
	void	   *ptr[ARENA_MAX];
	int			count;
	int			failed;			/* an allocation failed */
	int			full;			/* ... because ARENA_MAX was reached */
} arena;

/* Zeroed memory, or NULL (and a->failed set) once any allocation failed. */
extern void *ring_arena_alloc(arena *a, size_t size);
/* Forget p (ownership passes to the caller). */
extern void ring_arena_keep(arena *a, void *p);
extern void ring_arena_free_all(arena *a);
/* The error of a failed allocation: out of memory, or the bug of a full arena. */
extern ring_status ring_arena_fail(const arena *a, ring_error *err);

/* ---- random numbers (splitmix64) ---- */

typedef struct rng_t
{
	uint64_t	s;
} rng_t;

static inline uint64_t
rng_next(rng_t *r)
{
	uint64_t	z = (r->s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
rng_below(rng_t *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* ---- Fenwick trees over the children of each domain ---- */

static inline void
fen_add(int64_t *f, uint32_t cnt, uint32_t pos, int64_t d)
{
	uint32_t	i;

	for (i = pos + 1; i <= cnt; i += i & (~i + 1))
		f[i - 1] += d;
}

static inline int64_t
fen_prefix(const int64_t *f, uint32_t pos)
{
	int64_t		s = 0;
	uint32_t	i;

	for (i = pos; i > 0; i -= i & (~i + 1))
		s += f[i - 1];
	return s;
}

/* position p with prefix(p) <= t < prefix(p + 1) */
static inline uint32_t
fen_find(const int64_t *f, uint32_t cnt, uint32_t top, int64_t t)
{
	uint32_t	idx = 0;
	uint32_t	step;

	for (step = top; step > 0; step >>= 1)
		if (idx + step <= cnt && f[idx + step - 1] <= t)
		{
			idx += step;
			t -= f[idx - 1];
		}
	return idx;
}

/* ---- the failure-domain tree ---- */

typedef struct rtree
{
	uint32_t	nv;				/* vertices: 0 root, regions, zones, leaves */
	uint32_t	first_leaf;
	uint32_t	n;				/* nodes (= leaves) */
	uint32_t	parts;			/* 2^p */
	uint32_t	replicas;
	uint32_t   *parent;
	uint32_t   *child_start;	/* children are [child_start, +child_count) */
	uint32_t   *child_count;
	uint32_t   *top;			/* highest power of two <= child_count */
	uint32_t   *order;			/* the line order of the children of v is
								 * order[child_start[v] - 1 ...] */
	int64_t    *fen;			/* same layout as order */
	int64_t    *need;
	int64_t    *quota;
	int64_t    *cap;			/* most replicas of one partition: ceil(quota/2^p) */
	int64_t    *held;
	uint64_t   *units;
	uint64_t   *capacity;
	uint64_t   *share;
	uint32_t   *leaf_node;		/* [leaf - first_leaf] -> node index */
	uint32_t   *node_leaf;		/* node index -> leaf vertex */
	uint32_t   *stamp;
	int64_t    *cnt;
	uint32_t	cur;
	uint32_t   *stamped;		/* vertices stamped for the current partition */
	uint32_t	nstamped;
	uint32_t   *scratch;
	int			broken;			/* an invariant failed (a bug): give up */
} rtree;

typedef struct wf_child
{
	uint64_t	cap;			/* slots */
	uint64_t	units;
	uint32_t	v;
} wf_child;

/* ---- the tree and its quotas (ring_tree.c) ---- */

/* Build the tree for nodes (sorted by id).  Returns 0 on allocation failure. */
extern int	ring_tree_init(rtree *t, arena *a, const ring_node *nodes, uint32_t n,
						   uint32_t part_power, uint32_t replicas);

/* The quotas and caps of every vertex (tmp: one wf_child per node). */
extern void ring_tree_quotas(rtree *t, wf_child *tmp);

/* Rebuild the Fenwick tree of the children of v from their needs. */
extern void ring_tree_fen_build(rtree *t, uint32_t v);

/* A seed for the random numbers of one operation. */
extern uint64_t ring_seed_mix(int64_t seed, uint64_t salt);

/* A copy of the nodes sorted by id, or NULL (duplicate ids, no memory). */
extern ring_node *ring_sorted_nodes(arena *a, const ring_node *nodes, uint32_t n,
									ring_error *err, ring_status *st);

#endif							/* SUBSETTING_CORE_RING_TREE_H */
