/*
 * src/core/ring_tree.c
 *		The failure-domain tree the builder and the rebalancer work on, its
 *		quotas (see ring_tree.h), and the allocation bookkeeping they share.
 */
#include "core/ring.h"
#include "core/ring_internal.h"
#include "core/ring_tree.h"

#include <stdlib.h>
#include <string.h>

/* ---- allocation bookkeeping ---- */

void *
ring_arena_alloc(arena *a, size_t size)
{
	void	   *p;

	if (a->failed || a->count == ARENA_MAX)
	{
		a->failed = 1;
		a->full = a->count == ARENA_MAX;
		return NULL;
	}
	p = a->env->alloc(a->env->ctx, size == 0 ? 1 : size);
	if (p == NULL)
	{
		a->failed = 1;
		return NULL;
	}
	memset(p, 0, size);
	a->ptr[a->count++] = p;
	return p;
}

/* forget p (ownership passes to the caller) */
void
ring_arena_keep(arena *a, void *p)
{
	int			i;

	for (i = 0; i < a->count; i++)
		if (a->ptr[i] == p)
		{
			a->ptr[i] = a->ptr[--a->count];
			return;
		}
}

void
ring_arena_free_all(arena *a)
{
	while (a->count > 0)
		a->env->free(a->env->ctx, a->ptr[--a->count]);
}

ring_status
ring_arena_fail(const arena *a, ring_error *err)
{
	if (a->full)
		return ring_fail(err, RING_EINTERNAL, RING_ARENA_FULL,
						 (ring_facts) {.limit = ARENA_MAX});
	return ring_out_of_memory(err);
}

typedef struct sort_key
{
	int32_t		region;
	int32_t		zone;
	int32_t		id;
	uint32_t	idx;
} sort_key;

static int
cmp_sort_key(const void *a, const void *b)
{
	const sort_key *x = a;
	const sort_key *y = b;

	if (x->region != y->region)
		return x->region < y->region ? -1 : 1;
	if (x->zone != y->zone)
		return x->zone < y->zone ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint32_t
pow2_floor(uint32_t c)
{
	uint32_t	t = 1;

	if (c == 0)
		return 0;
	while (t <= c / 2)
		t <<= 1;
	return t;
}

/* The arrays of a tree of t->nv vertices.  Returns 0 on allocation failure. */
static int
tree_alloc(rtree *t, arena *a, uint32_t n, uint32_t replicas)
{
#define TALLOC(field, type) \
	(t->field = ring_arena_alloc(a, sizeof(type) * t->nv))
	if (!TALLOC(parent, uint32_t) || !TALLOC(child_start, uint32_t) ||
		!TALLOC(child_count, uint32_t) || !TALLOC(top, uint32_t) ||
		!TALLOC(order, uint32_t) || !TALLOC(fen, int64_t) ||
		!TALLOC(need, int64_t) || !TALLOC(quota, int64_t) ||
		!TALLOC(cap, int64_t) || !TALLOC(held, int64_t) ||
		!TALLOC(units, uint64_t) || !TALLOC(capacity, uint64_t) ||
		!TALLOC(share, uint64_t) || !TALLOC(stamp, uint32_t) ||
		!TALLOC(cnt, int64_t))
		return 0;
#undef TALLOC
	t->leaf_node = ring_arena_alloc(a, sizeof(uint32_t) * n);
	t->node_leaf = ring_arena_alloc(a, sizeof(uint32_t) * n);
	t->stamped = ring_arena_alloc(a, sizeof(uint32_t) * ((size_t) replicas * 4 + 4));
	t->scratch = ring_arena_alloc(a, sizeof(uint32_t) * ((size_t) replicas * 8 + 32));
	return t->leaf_node != NULL && t->node_leaf != NULL && t->stamped != NULL &&
		t->scratch != NULL;
}

/*
 * Link the vertices: regions, then zones, then leaves, each in the order of
 * keys (nodes sorted by region, zone, id); nr regions.  Then the units and
 * capacities of every domain, summed from its leaves.
 */
static void
tree_link(rtree *t, const sort_key *keys, const uint64_t *wu, uint32_t nr)
{
	uint32_t	i,
				v;
	uint32_t	region_v = 0,
				zone_v = 0,
				next_region = 1,
				next_zone = 1 + nr,
				next_leaf = t->first_leaf;

	t->child_start[0] = 1;
	t->child_count[0] = nr;
	for (i = 0; i < t->n; i++)
	{
		uint32_t	leaf;

		if (i == 0 || keys[i].region != keys[i - 1].region)
		{
			region_v = next_region++;
			t->parent[region_v] = 0;
			t->child_start[region_v] = next_zone;
		}
		if (i == 0 || keys[i].region != keys[i - 1].region ||
			keys[i].zone != keys[i - 1].zone)
		{
			zone_v = next_zone++;
			t->parent[zone_v] = region_v;
			t->child_count[region_v]++;
			t->child_start[zone_v] = next_leaf;
		}
		leaf = next_leaf++;
		t->parent[leaf] = zone_v;
		t->child_count[zone_v]++;
		t->leaf_node[leaf - t->first_leaf] = keys[i].idx;
		t->node_leaf[keys[i].idx] = leaf;
		t->units[leaf] = wu[keys[i].idx];
		t->capacity[leaf] = wu[keys[i].idx] > 0 ? t->parts : 0;
	}
	for (v = 0; v < t->nv; v++)
	{
		t->top[v] = pow2_floor(t->child_count[v]);
		if (v > 0)
			t->order[v - 1] = v;
	}
	for (v = t->nv - 1; v > 0; v--)
	{
		t->units[t->parent[v]] += t->units[v];
		t->capacity[t->parent[v]] += t->capacity[v];
	}
}

/* Build the tree for nodes (sorted by id).  Returns 0 on allocation failure. */
int
ring_tree_init(rtree *t, arena *a, const ring_node *nodes, uint32_t n,
			   uint32_t part_power, uint32_t replicas)
{
	sort_key   *keys;
	uint64_t   *wu;
	uint32_t	nr = 0,
				nz = 0;
	uint32_t	i;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->parts = (uint32_t) 1 << part_power;
	t->replicas = replicas;
	keys = ring_arena_alloc(a, sizeof(sort_key) * n);
	wu = ring_arena_alloc(a, sizeof(uint64_t) * n);
	if (keys == NULL || wu == NULL)
		return 0;
	for (i = 0; i < n; i++)
	{
		keys[i].region = nodes[i].region;
		keys[i].zone = nodes[i].zone;
		keys[i].id = nodes[i].id;
		keys[i].idx = i;
	}
	qsort(keys, n, sizeof(sort_key), cmp_sort_key);
	for (i = 0; i < n; i++)
	{
		if (i == 0 || keys[i].region != keys[i - 1].region)
			nr++;
		if (i == 0 || keys[i].region != keys[i - 1].region ||
			keys[i].zone != keys[i - 1].zone)
			nz++;
	}
	t->nv = 1 + nr + nz + n;
	t->first_leaf = 1 + nr + nz;
	if (!tree_alloc(t, a, n, replicas))
		return 0;
	ring_weight_units(nodes, n, wu);
	tree_link(t, keys, wu, nr);
	return 1;
}

static int
cmp_wf_child(const void *a, const void *b)
{
	const wf_child *x = a;
	const wf_child *y = b;
	int			c = ring_cmp128(ring_mul64(x->cap, y->units),
								ring_mul64(y->cap, x->units));

	if (c != 0)
		return c;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* share[v] (fixed point) is known: share it among the children of v */
static void
water_fill(rtree *t, uint32_t v, wf_child *tmp)
{
	uint32_t	first = t->child_start[v];
	uint32_t	count = t->child_count[v];
	uint64_t	sv = t->share[v];
	uint64_t	need_slots = (sv >> FIX_BITS) + ((sv & (((uint64_t) 1 << FIX_BITS) - 1)) != 0);
	uint64_t	lo = 1,
				hi = t->replicas,
				h;
	uint64_t	ffree = sv,
				wfree = t->units[v],
				acc = 0,
				cum = 0;
	uint32_t	i,
				k = 0;

	for (i = 0; i < count; i++)
		t->share[first + i] = 0;
	if (sv == 0 || t->units[v] == 0)
		return;
	/* smallest h such that the children can hold the slots at all */
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;
		uint64_t	total = 0;

		for (i = 0; i < count; i++)
		{
			uint64_t	c = t->capacity[first + i];
			uint64_t	hp = mid * t->parts;

			total += c < hp ? c : hp;
		}
		if (total >= need_slots)
			hi = mid;
		else
			lo = mid + 1;
	}
	h = lo;
	for (i = 0; i < count; i++)
	{
		uint32_t	c = first + i;
		uint64_t	hp = h * t->parts;

		if (t->units[c] == 0)
			continue;
		tmp[k].cap = t->capacity[c] < hp ? t->capacity[c] : hp;
		tmp[k].units = t->units[c];
		tmp[k].v = c;
		k++;
	}
	qsort(tmp, k, sizeof(wf_child), cmp_wf_child);
	/* cap, lowest cap-to-weight first, while the weighted share exceeds it */
	for (i = 0; i < k && wfree > 0; i++)
	{
		uint64_t	capfix = tmp[i].cap << FIX_BITS;

		if (ring_cmp128(ring_mul64(capfix, wfree),
						ring_mul64(ffree, tmp[i].units)) >= 0)
			break;
		t->share[tmp[i].v] = capfix;
		t->held[tmp[i].v] = 1;	/* marks "capped" until quotas are done */
		ffree -= capfix;
		wfree -= tmp[i].units;
	}
	/* the rest in proportion to weight, telescoping so the sum is exact */
	for (i = 0; i < count; i++)
	{
		uint32_t	c = first + i;
		uint64_t	next;

		if (t->units[c] == 0 || t->held[c])
			continue;
		acc += t->units[c];
		next = ring_muldiv(ffree, acc, wfree);
		t->share[c] = next - cum;
		cum = next;
	}
}

void
ring_tree_quotas(rtree *t, wf_child *tmp)
{
	uint64_t	slots = (uint64_t) t->replicas * t->parts;
	uint64_t	c = 0;
	int64_t		prev = 0;
	uint32_t	v;

	t->share[0] = slots << FIX_BITS;
	for (v = 0; v < t->first_leaf; v++)
		water_fill(t, v, tmp);
	for (v = t->first_leaf; v < t->nv; v++)
	{
		int64_t		rounded;

		c += t->share[v];
		rounded = (int64_t) ((c + ((uint64_t) 1 << (FIX_BITS - 1))) >> FIX_BITS);
		t->quota[v] = rounded - prev;
		prev = rounded;
	}
	for (v = 0; v < t->first_leaf; v++)
		t->quota[v] = 0;
	for (v = t->nv - 1; v > 0; v--)
		t->quota[t->parent[v]] += t->quota[v];
	for (v = 0; v < t->nv; v++)
	{
		t->held[v] = 0;
		t->cap[v] = (t->quota[v] + t->parts - 1) / t->parts;
	}
	if (t->quota[0] != (int64_t) slots)
		t->broken = 1;
}

void
ring_tree_fen_build(rtree *t, uint32_t v)
{
	uint32_t	cnt = t->child_count[v];
	int64_t    *f = t->fen + (t->child_start[v] - 1);
	const uint32_t *o = t->order + (t->child_start[v] - 1);
	uint32_t	i;

	for (i = 0; i < cnt; i++)
		f[i] = t->need[o[i]];
	for (i = 1; i <= cnt; i++)
	{
		uint32_t	j = i + (i & (~i + 1));

		if (j <= cnt)
			f[j - 1] += f[i - 1];
	}
}

uint64_t
ring_seed_mix(int64_t seed, uint64_t salt)
{
	rng_t		r;

	r.s = (uint64_t) seed ^ salt;
	return rng_next(&r);
}

/* sort a copy of the nodes by id; reject duplicates */
ring_node *
ring_sorted_nodes(arena *a, const ring_node *nodes, uint32_t n, ring_error *err,
			 ring_status *st)
{
	ring_node  *s = ring_arena_alloc(a, sizeof(ring_node) * n);
	uint32_t	i;

	if (s == NULL)
	{
		*st = ring_arena_fail(a, err);
		return NULL;
	}
	memcpy(s, nodes, sizeof(ring_node) * n);
	for (i = 0; i < n; i++)
		if (s[i].weight == 0)
			s[i].weight = 0;	/* no negative zero in the stored form */
	ring_sort_nodes(s, n);
	for (i = 1; i < n; i++)
		if (s[i].id == s[i - 1].id)
		{
			*st = ring_fail(err, RING_EINVAL, RING_DUPLICATE_NODE_ID,
							(ring_facts) {.node_id = s[i].id});
			return NULL;
		}
	*st = RING_OK;
	return s;
}

ring_status
ring_quotas(const ring_env *env, const ring *r, int64_t *quota,
			ring_error *err)
{
	arena		a;
	rtree		t;
	wf_child   *tmp;
	uint32_t	i;
	ring_status st = RING_OK;

	memset(&a, 0, sizeof(a));
	a.env = env;
	tmp = ring_arena_alloc(&a, sizeof(wf_child) * r->node_count);
	if (tmp == NULL ||
		!ring_tree_init(&t, &a, r->nodes, r->node_count, r->part_power, r->replicas))
		st = ring_arena_fail(&a, err);
	else
	{
		ring_tree_quotas(&t, tmp);
		for (i = 0; i < r->node_count; i++)
			quota[i] = t.quota[t.node_leaf[i]];
	}
	ring_arena_free_all(&a);
	return st;
}
