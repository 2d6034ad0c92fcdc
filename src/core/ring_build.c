/*
 * src/core/ring_build.c
 *		Building and rebalancing a partition ring.
 *
 * Failure domains form a tree: root > regions > zones > nodes (a zone is a
 * (region, zone) pair).  Both operations work on that tree.
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
 *
 * Build.  Partitions are filled one at a time.  With m partitions left, every
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
 *
 * Rebalance.  Replicas on removed nodes are freed; a partition that had one
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
 * through other nodes instead (see repair_if_stuck).
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIX_BITS 36
#define FREE_SLOT 0xFFFFu
#define FAIL_VERTEX UINT32_MAX
#define PROGRESS_EVERY 4096
#define SWAP_TRIES 1024			/* slots tried per swap search */
#define REFILL_TRIES 16384		/* partitions tried to refill after a relay */
#define RELAY_FAILURES 64		/* relays undone before a pass gives up */

/* ---- 128-bit helpers ---- */

ring_u128
ring_mul64(uint64_t a, uint64_t b)
{
	uint64_t	a0 = (uint32_t) a,
				a1 = a >> 32,
				b0 = (uint32_t) b,
				b1 = b >> 32;
	uint64_t	p00 = a0 * b0,
				p01 = a0 * b1,
				p10 = a1 * b0,
				p11 = a1 * b1;
	uint64_t	mid = (p00 >> 32) + (uint32_t) p01 + (uint32_t) p10;
	ring_u128	r;

	r.lo = (mid << 32) | (uint32_t) p00;
	r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	return r;
}

int
ring_cmp128(ring_u128 a, ring_u128 b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	if (a.lo != b.lo)
		return a.lo < b.lo ? -1 : 1;
	return 0;
}

uint64_t
ring_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	ring_u128	p = ring_mul64(a, b);
	uint64_t	rem = 0;
	uint64_t	q = 0;
	int			i;

	if (p.hi == 0)
		return p.lo / c;
	for (i = 127; i >= 0; i--)
	{
		uint64_t	bit = i >= 64 ? (p.hi >> (i - 64)) & 1 : (p.lo >> i) & 1;
		uint64_t	carry = rem >> 63;

		rem = (rem << 1) | bit;
		q <<= 1;
		if (carry || rem >= c)
		{
			rem -= c;
			q |= 1;
		}
	}
	return q;
}

/* ---- weights and node order ---- */

void
ring_weight_units(const ring_node *nodes, uint32_t n, uint64_t *units)
{
	double		wmax = 0;
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (nodes[i].weight > wmax)
			wmax = nodes[i].weight;
	for (i = 0; i < n; i++)
	{
		double		w = nodes[i].weight;

		if (!(w > 0))
			units[i] = 0;
		else
		{
			/* w / wmax is correctly rounded, ldexp and +0.5 are exact */
			uint64_t	u = (uint64_t) floor(ldexp(w / wmax, 32) + 0.5);

			units[i] = u == 0 ? 1 : u;
		}
	}
}

static int
cmp_node_id(const void *a, const void *b)
{
	int32_t		x = ((const ring_node *) a)->id;
	int32_t		y = ((const ring_node *) b)->id;

	return x < y ? -1 : x > y;
}

void
ring_sort_nodes(ring_node *nodes, uint32_t n)
{
	qsort(nodes, n, sizeof(ring_node), cmp_node_id);
}

/* ---- allocation bookkeeping ---- */

#define ARENA_MAX 40

typedef struct arena
{
	const ring_env *env;
	void	   *ptr[ARENA_MAX];
	int			count;
	int			failed;
} arena;

static void *
arena_alloc(arena *a, size_t size)
{
	void	   *p;

	if (a->failed || a->count == ARENA_MAX)
	{
		a->failed = 1;
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
static void
arena_keep(arena *a, void *p)
{
	int			i;

	for (i = 0; i < a->count; i++)
		if (a->ptr[i] == p)
		{
			a->ptr[i] = a->ptr[--a->count];
			return;
		}
}

static void
arena_free_all(arena *a)
{
	while (a->count > 0)
		a->env->free(a->env->ctx, a->ptr[--a->count]);
}

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

static void
fen_add(int64_t *f, uint32_t cnt, uint32_t pos, int64_t d)
{
	uint32_t	i;

	for (i = pos + 1; i <= cnt; i += i & (~i + 1))
		f[i - 1] += d;
}

static int64_t
fen_prefix(const int64_t *f, uint32_t pos)
{
	int64_t		s = 0;
	uint32_t	i;

	for (i = pos; i > 0; i -= i & (~i + 1))
		s += f[i - 1];
	return s;
}

/* position p with prefix(p) <= t < prefix(p + 1) */
static uint32_t
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

/* Build the tree for nodes (sorted by id).  Returns 0 on allocation failure. */
static int
tree_init(rtree *t, arena *a, const ring_node *nodes, uint32_t n,
		  uint32_t part_power, uint32_t replicas)
{
	sort_key   *keys;
	uint32_t	nr = 0,
				nz = 0;
	uint32_t	i,
				v;
	uint32_t	region_v = 0,
				zone_v = 0,
				next_region,
				next_zone,
				next_leaf;
	uint64_t   *wu;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->parts = (uint32_t) 1 << part_power;
	t->replicas = replicas;
	keys = arena_alloc(a, sizeof(sort_key) * n);
	wu = arena_alloc(a, sizeof(uint64_t) * n);
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
#define TALLOC(field, type) \
	(t->field = arena_alloc(a, sizeof(type) * t->nv))
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
	t->leaf_node = arena_alloc(a, sizeof(uint32_t) * n);
	t->node_leaf = arena_alloc(a, sizeof(uint32_t) * n);
	t->stamped = arena_alloc(a, sizeof(uint32_t) * ((size_t) replicas * 4 + 4));
	t->scratch = arena_alloc(a, sizeof(uint32_t) * ((size_t) replicas * 8 + 32));
	if (t->leaf_node == NULL || t->node_leaf == NULL || t->stamped == NULL ||
		t->scratch == NULL)
		return 0;

	ring_weight_units(nodes, n, wu);
	next_region = 1;
	next_zone = 1 + nr;
	next_leaf = t->first_leaf;
	t->child_start[0] = 1;
	t->child_count[0] = nr;
	for (i = 0; i < n; i++)
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
	return 1;
}

typedef struct wf_child
{
	uint64_t	cap;			/* slots */
	uint64_t	units;
	uint32_t	v;
} wf_child;

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

static void
tree_quotas(rtree *t, wf_child *tmp)
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

static void
fen_build(rtree *t, uint32_t v)
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
		fen_build(t, v);
	}
}

static uint64_t
seed_mix(int64_t seed, uint64_t salt)
{
	rng_t		r;

	r.s = (uint64_t) seed ^ salt;
	return rng_next(&r);
}

/* sort a copy of the nodes by id; reject duplicates */
static ring_node *
sorted_nodes(arena *a, const ring_node *nodes, uint32_t n, ring_error *err,
			 ring_status *st)
{
	ring_node  *s = arena_alloc(a, sizeof(ring_node) * n);
	uint32_t	i;

	if (s == NULL)
	{
		*st = ring_fail(err, RING_ENOMEM, "out of memory");
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
			*st = ring_fail(err, RING_EINVAL, "node id %d appears more than once",
							(int) s[i].id);
			return NULL;
		}
	*st = RING_OK;
	return s;
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
	sorted = sorted_nodes(&a, nodes, n, err, &st);
	if (sorted == NULL)
		goto done;
	parts = (uint32_t) 1 << part_power;
	tmp = arena_alloc(&a, sizeof(wf_child) * n);
	chosen = arena_alloc(&a, sizeof(uint32_t) * replicas);
	assign = arena_alloc(&a, sizeof(uint16_t) * ((size_t) replicas << part_power));
	if (tmp == NULL || chosen == NULL || assign == NULL ||
		!tree_init(&t, &a, sorted, n, part_power, replicas))
	{
		st = ring_fail(err, RING_ENOMEM, "out of memory");
		goto done;
	}
	tree_quotas(&t, tmp);
	memcpy(t.need, t.quota, sizeof(int64_t) * t.nv);
	rng.s = seed_mix(seed, UINT64_C(0x6275696c64));
	interval = t.nv / 16 + 1;
	for (x = 0; x < parts && !t.broken; x++)
	{
		uint32_t	nout = 0;
		uint32_t	i;

		if (x % interval == 0)
			reshuffle(&t, &rng);
		if (env->progress != NULL && x % PROGRESS_EVERY == 0 &&
			env->progress(env->ctx))
		{
			st = ring_fail(err, RING_ECANCELED, "canceled");
			goto done;
		}
		fill_select(&t, &rng, 0, replicas, (int64_t) (parts - x), chosen,
					&nout, t.scratch);
		if (nout != replicas)
			t.broken = 1;
		/*
		 * Replica order: random, except that the primary is the chosen node
		 * furthest below its share of primaries (quota / R), so that reads
		 * of primaries spread like the data.
		 */
		for (i = nout; i > 1; i--)
		{
			uint32_t	j = (uint32_t) rng_below(&rng, i);
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
				int64_t		ui = t.quota[ci] - (int64_t) replicas * t.held[ci];
				int64_t		ub = t.quota[cb] - (int64_t) replicas * t.held[cb];

				if (ui * (t.need[cb] + 1) > ub * (t.need[ci] + 1))
					best = i;
			}
			c = chosen[0];
			chosen[0] = chosen[best];
			chosen[best] = c;
		}
		if (nout > 0)
			t.held[chosen[0]]++;	/* primaries so far (held is unused in a build) */
		for (i = 0; i < nout && i < replicas; i++)
			assign[((size_t) i << part_power) + x] =
				(uint16_t) t.leaf_node[chosen[i] - t.first_leaf];
	}
	if (t.broken)
	{
		st = ring_fail(err, RING_EINVAL, "internal error: ring builder invariant failed");
		goto done;
	}
	out->part_power = part_power;
	out->replicas = replicas;
	out->node_count = n;
	out->seed = seed;
	out->nodes = sorted;
	out->assignment = assign;
	arena_keep(&a, sorted);
	arena_keep(&a, assign);
	st = RING_OK;
done:
	arena_free_all(&a);
	return st;
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
	tmp = arena_alloc(&a, sizeof(wf_child) * r->node_count);
	if (tmp == NULL ||
		!tree_init(&t, &a, r->nodes, r->node_count, r->part_power, r->replicas))
		st = ring_fail(err, RING_ENOMEM, "out of memory");
	else
	{
		tree_quotas(&t, tmp);
		for (i = 0; i < r->node_count; i++)
			quota[i] = t.quota[t.node_leaf[i]];
	}
	arena_free_all(&a);
	return st;
}

/* ---- rebalance ---- */

typedef struct rebal
{
	rtree	   *t;
	uint16_t   *assign;
	uint32_t	part_power;
	uint32_t	replicas;
	rng_t		rng;
} rebal;

/* stamp the domains of the replicas of x, except replica skip */
static void
load_partition(rebal *b, uint32_t x, uint32_t skip)
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

static int
blocked(const rtree *t, uint32_t v)
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

static void
refresh_need(rtree *t, uint32_t leaf)
{
	int64_t		n = t->quota[leaf] - t->held[leaf];

	set_need(t, leaf, n > 0 ? n : 0);
}

/*
 * Draw a leaf under v in proportion to need, among those that keep the
 * current partition within its domain caps.  FAIL_VERTEX if there is none.
 */
static uint32_t
sample_receiver(rtree *t, rng_t *rng, uint32_t v, uint32_t *ex,
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

		if (c != 0 && t->parent[c] == v && blocked(t, c) && nex < exmax)
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
		res = sample_receiver(t, rng, child, ex + nex, exmax - nex);
		if (res != FAIL_VERTEX)
			return res;
		if (nex == exmax)
			return FAIL_VERTEX;
		ex[nex++] = child;
	}
}

/* can leaf take a replica of the loaded partition within the domain caps? */
static int
eligible_leaf(const rtree *t, uint32_t leaf)
{
	uint32_t	v;

	if (t->units[leaf] == 0 || blocked(t, leaf))
		return 0;
	for (v = t->parent[leaf]; v != 0; v = t->parent[v])
		if (blocked(t, v))
			return 0;
	return 1;
}

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
		load_partition(b, x, UINT32_MAX);
		if (!eligible_leaf(t, other))
			continue;
		load_partition(b, y, ry);
		a = sample_receiver(t, &b->rng, 0, t->scratch, exmax);
		if (a == FAIL_VERTEX)
			continue;
		b->assign[sy] = (uint16_t) t->leaf_node[a - t->first_leaf];
		t->held[other]--;
		t->held[a]++;
		refresh_need(t, a);
		refresh_need(t, other);
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
		int			ok = t->units[leaf] > 0 && !blocked(t, leaf);

		for (v = t->parent[leaf]; ok && domains && v != 0; v = t->parent[v])
			if (blocked(t, v))
				ok = 0;
		if (ok && t->quota[leaf] - t->held[leaf] > best_room)
		{
			best = leaf;
			best_room = t->quota[leaf] - t->held[leaf];
		}
	}
	return best;
}

/* a bijection on [0, 2^p): the seeded order in which partitions are visited */
static uint32_t
permute(uint32_t i, uint32_t part_power, uint64_t key)
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
		uint32_t	y = permute((start + i) & (parts - 1), pp, key);

		if (touched[y])
			continue;
		for (r = 0; r < b->replicas; r++)
		{
			size_t		slot = ((size_t) r << pp) + y;
			uint32_t	from = t->node_leaf[b->assign[slot]];

			if (t->held[from] <= t->quota[from])
				continue;
			load_partition(b, y, r);
			if (!eligible_leaf(t, to))
				continue;
			b->assign[slot] = (uint16_t) t->leaf_node[to - t->first_leaf];
			t->held[from]--;
			t->held[to]++;
			refresh_need(t, to);
			touched[y] = 1;
			return 1;
		}
	}
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
		uint32_t	x = permute(i, pp, key);
		uint32_t	start;

		/* a relay may try REFILL_TRIES partitions: check each time */
		if (env->progress != NULL && (relay || i % PROGRESS_EVERY == 0) &&
			env->progress(env->ctx))
			return ring_fail(err, RING_ECANCELED, "canceled");
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

			if (!relay && t->held[from] <= t->quota[from])
				continue;
			if (relay)
			{
				if (t->held[from] > t->quota[from])
					continue;
			}
			load_partition(b, x, r);
			to = sample_receiver(t, &b->rng, 0, t->scratch, exmax);
			if (to == FAIL_VERTEX ||
				(relay && t->parent[to] == t->parent[from]))
				continue;
			b->assign[slot] = (uint16_t) t->leaf_node[to - t->first_leaf];
			t->held[from]--;
			t->held[to]++;
			refresh_need(t, to);
			touched[x] = 1;
			if (relay)
			{
				/* keep the relay only if a node above quota refills from */
				refresh_need(t, from);
				if (refill(b, touched, key, from))
				{
					(*relayed)++;
					(*excess)--;
				}
				else
				{
					b->assign[slot] = (uint16_t) t->leaf_node[from - t->first_leaf];
					t->held[from]++;
					t->held[to]--;
					refresh_need(t, from);
					refresh_need(t, to);
					touched[x] = 0;
					failures++;
					break;
				}
			}
			else
				(*excess)--;
			break;
		}
	}
	return RING_OK;
}

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
		if (blocked(t, g))
			continue;
		for (z = rp->head[g]; z != NO_VERTEX; z = nz)
		{
			nz = rp->next[z];
			if (blocked(t, z))
				continue;
			for (l = rp->head[z]; l != NO_VERTEX; l = nl)
			{
				nl = rp->next[l];
				if (blocked(t, l))
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
 * along the chain, and the next rebalance finishes it (see repair_if_stuck).
 */
static int64_t
repair_search(const ring_env *env, rebal *b, repair *rp, uint8_t *touched,
			  uint64_t key, int strict, int spread, uint64_t *work,
			  int *shifted)
{
	rtree	   *t = b->t;
	uint32_t	pp = b->part_power;
	uint32_t	R = b->replicas;
	uint32_t	parts = (uint32_t) 1 << pp;
	uint32_t	mask = parts - 1;
	uint32_t	v,
				i,
				r;
	int32_t		k;
	int64_t		done = 0;

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
	for (k = 0; rp->nsinks == 0 && rp->head[0] != NO_VERTEX; k++)
	{
		uint32_t	reached = rp->nreached;

		for (i = 0; i < parts && rp->head[0] != NO_VERTEX; i++)
		{
			uint32_t	x = permute(i, pp, key);

			if (env->progress != NULL && i % PROGRESS_EVERY == 0 &&
				env->progress(env->ctx))
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
				load_partition(b, x, r);
				repair_reach(t, rp, slot, u, k, spread);
			}
		}
		if (rp->nreached == reached)
			break;
	}

	/*
	 * Carry out the chains, each from its source if still above quota and
	 * through partitions no chain has used.  Marking a chain's partitions 2
	 * finds a repeated one.
	 */
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
	if (done == 0 && !strict)
	{
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
				*shifted = 1;
				break;
			}
		}
	}
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
static ring_status
repair_if_stuck(const ring_env *env, rebal *b, arena *a, const ring *old,
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
	block = arena_alloc(a, nv * (2 * sizeof(int64_t) + sizeof(int32_t) +
								 8 * sizeof(uint32_t)));
	if (block == NULL)
		return ring_fail(err, RING_ENOMEM, "out of memory");
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
			return ring_fail(err, RING_ECANCELED, "canceled");
	} while (found > 0 && !shifted && work < REPAIR_WORK * (uint64_t) slots);
	return RING_OK;
}

ring_status
ring_core_rebalance(const ring_env *env, const ring *old, const ring_node *nodes,
			   uint32_t n, int64_t seed, ring *out, ring_error *err)
{
	arena		a;
	rtree		t;
	rebal		b;
	ring_status st;
	ring_node  *sorted;
	uint16_t   *assign;
	uint16_t   *map;
	uint8_t    *touched;
	wf_child   *tmp;
	uint32_t	parts,
				x,
				i,
				j,
				r;
	uint32_t	R = old->replicas;
	uint32_t	pp = old->part_power;
	size_t		slots = (size_t) R << pp;
	size_t		s;
	uint32_t   *filled;			/* slots filled in this rebalance */
	size_t		nfilled = 0,
				nfree = 0;
	int64_t		excess = 0;
	uint64_t	key;
	uint32_t	exmax = R * 4 + 8;
	int			round;

	memset(out, 0, sizeof(*out));
	st = ring_check_args(nodes, n, pp, R, err);
	if (st != RING_OK)
		return st;
	memset(&a, 0, sizeof(a));
	a.env = env;
	sorted = sorted_nodes(&a, nodes, n, err, &st);
	if (sorted == NULL)
		goto done;
	parts = (uint32_t) 1 << pp;
	tmp = arena_alloc(&a, sizeof(wf_child) * n);
	assign = arena_alloc(&a, sizeof(uint16_t) * slots);
	map = arena_alloc(&a, sizeof(uint16_t) * old->node_count);
	touched = arena_alloc(&a, parts);
	if (tmp == NULL || assign == NULL || map == NULL || touched == NULL ||
		!tree_init(&t, &a, sorted, n, pp, R))
	{
		st = ring_fail(err, RING_ENOMEM, "out of memory");
		goto done;
	}
	tree_quotas(&t, tmp);

	/* old node index -> new node index, by id */
	for (i = 0, j = 0; i < old->node_count; i++)
	{
		while (j < n && sorted[j].id < old->nodes[i].id)
			j++;
		map[i] = (j < n && sorted[j].id == old->nodes[i].id) ? (uint16_t) j : FREE_SLOT;
	}
	for (s = 0; s < slots; s++)
	{
		if (env->progress != NULL && s % (PROGRESS_EVERY * 256) == 0 &&
			env->progress(env->ctx))
		{
			st = ring_fail(err, RING_ECANCELED, "canceled");
			goto done;
		}
		assign[s] = map[ring_slot_at(old, s)];
		if (assign[s] == FREE_SLOT)
			touched[s & (parts - 1)] = 1;
		else
			t.held[t.node_leaf[assign[s]]]++;
	}
	b.t = &t;
	b.assign = assign;
	b.part_power = pp;
	b.replicas = R;
	key = seed_mix(seed, old->fingerprint);
	b.rng.s = key;

	/* a crowded domain in an untouched partition: free one of its replicas */
	for (x = 0; x < parts; x++)
	{
		uint32_t	worst = UINT32_MAX;
		int64_t		worst_excess = INT64_MIN;

		if (env->progress != NULL && x % (PROGRESS_EVERY * 4) == 0 &&
			env->progress(env->ctx))
		{
			st = ring_fail(err, RING_ECANCELED, "canceled");
			goto done;
		}
		if (touched[x])
			continue;
		load_partition(&b, x, UINT32_MAX);
		for (r = 0; r < R; r++)
		{
			uint32_t	leaf = t.node_leaf[assign[((size_t) r << pp) + x]];
			uint32_t	v;
			int			crowded = 0;

			for (v = t.parent[leaf]; v != 0; v = t.parent[v])
				if (t.cnt[v] > t.cap[v])
					crowded = 1;
			if (crowded && t.held[leaf] - t.quota[leaf] > worst_excess)
			{
				worst = r;
				worst_excess = t.held[leaf] - t.quota[leaf];
			}
		}
		if (worst != UINT32_MAX)
		{
			size_t		slot = ((size_t) worst << pp) + x;

			t.held[t.node_leaf[assign[slot]]]--;
			assign[slot] = FREE_SLOT;
			touched[x] = 1;
		}
	}

	/* needs */
	for (i = t.first_leaf; i < t.nv; i++)
	{
		int64_t		d = t.quota[i] - t.held[i];

		t.need[i] = d > 0 ? d : 0;
		if (d < 0)
			excess -= d;
	}
	for (i = t.nv - 1; i > 0; i--)
		t.need[t.parent[i]] += t.need[i];
	for (i = 0; i < t.first_leaf; i++)
		fen_build(&t, i);

	/* fill the free slots */
	for (s = 0; s < slots; s++)
		nfree += assign[s] == FREE_SLOT;
	filled = arena_alloc(&a, sizeof(uint32_t) * (nfree + 1));
	if (filled == NULL)
	{
		st = ring_fail(err, RING_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < parts; i++)
	{
		x = permute(i, pp, key);
		if (env->progress != NULL && i % (PROGRESS_EVERY * 4) == 0 &&
			env->progress(env->ctx))
		{
			st = ring_fail(err, RING_ECANCELED, "canceled");
			goto done;
		}
		if (!touched[x])
			continue;
		for (r = 0; r < R; r++)
		{
			size_t		slot = ((size_t) r << pp) + x;
			uint32_t	leaf;

			if (assign[slot] != FREE_SLOT)
				continue;
			load_partition(&b, x, UINT32_MAX);
			leaf = sample_receiver(&t, &b.rng, 0, t.scratch, exmax);
			if (leaf == FAIL_VERTEX)
			{
				/* up to SWAP_TRIES slots tried: let the caller interrupt */
				if (env->progress != NULL && env->progress(env->ctx))
				{
					st = ring_fail(err, RING_ECANCELED, "canceled");
					goto done;
				}
				leaf = swap_receiver(&b, x, filled, nfilled);
				load_partition(&b, x, UINT32_MAX);
			}
			if (leaf == FAIL_VERTEX)
			{
				/* rare, and linear in the nodes: let the caller interrupt */
				if (env->progress != NULL && env->progress(env->ctx))
				{
					st = ring_fail(err, RING_ECANCELED, "canceled");
					goto done;
				}
				leaf = fallback_receiver(&t, 1);
			}
			if (leaf == FAIL_VERTEX)
				leaf = fallback_receiver(&t, 0);
			if (leaf == FAIL_VERTEX)
			{
				st = ring_fail(err, RING_EINVAL, "internal error: no node can take a replica");
				goto done;
			}
			assign[slot] = (uint16_t) t.leaf_node[leaf - t.first_leaf];
			if (t.held[leaf] >= t.quota[leaf])
				excess++;
			t.held[leaf]++;
			refresh_need(&t, leaf);
			filled[nfilled++] = (uint32_t) slot;
		}
	}

	/*
	 * Move one replica of untouched partitions off nodes above quota.  Where
	 * that is stuck (the nodes below quota are in a zone that every partition
	 * of the nodes above quota already uses), relay: move a replica from a
	 * node at quota to a node below quota, and at once refill it from a node
	 * above quota (or undo the relay).
	 */
	for (round = 0; round < 6 && excess > 0; round++)
	{
		int64_t		before = excess;
		int64_t		relayed;

		st = move_pass(env, &b, touched, key, &excess, 0, err, &relayed);
		if (st != RING_OK)
			goto done;
		if (excess == 0)
			break;
		st = move_pass(env, &b, touched, key, &excess, 1, err, &relayed);
		if (st != RING_OK)
			goto done;
		if (relayed == 0 && excess == before)
			break;
	}

	if (excess > 0)
	{
		st = repair_if_stuck(env, &b, &a, old, map, touched, key, err);
		if (st != RING_OK)
			goto done;
	}

	out->part_power = pp;
	out->replicas = R;
	out->node_count = n;
	out->seed = seed;
	out->nodes = sorted;
	out->assignment = assign;
	arena_keep(&a, sorted);
	arena_keep(&a, assign);
	st = RING_OK;
done:
	arena_free_all(&a);
	return st;
}
