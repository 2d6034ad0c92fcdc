/*
 * src/core/ring_inspect.c
 *		Inspecting a partition ring: finding a node, per-node statistics
 *		(held, quota, wanted, primaries), dispersion.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- inspection ---- */

int32_t
ring_find_node(const ring *r, int32_t id)
{
	uint32_t	lo = 0;
	uint32_t	hi = r->node_count;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (r->nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < r->node_count && r->nodes[lo].id == id) ? (int32_t) lo : -1;
}

ring_status
ring_core_node_stats(const ring_env *env, const ring *r, ring_node_stat *stats,
				ring_error *err)
{
	size_t		slots = (size_t) r->replicas << r->part_power;
	uint32_t	parts = (uint32_t) 1 << r->part_power;
	int64_t    *quota;
	double		wmax = 0;
	double		wsum = 0;
	size_t		i;
	ring_status st;

	quota = env->alloc(env->ctx, sizeof(int64_t) * r->node_count);
	if (quota == NULL)
		return ring_fail(err, RING_ENOMEM, "out of memory");
	st = ring_quotas(env, r, quota, err);
	if (st != RING_OK)
	{
		env->free(env->ctx, quota);
		return st;
	}
	for (i = 0; i < r->node_count; i++)
		if (r->nodes[i].weight > wmax)
			wmax = r->nodes[i].weight;
	for (i = 0; i < r->node_count; i++)
		wsum += r->nodes[i].weight / wmax;
	for (i = 0; i < r->node_count; i++)
	{
		stats[i].held = 0;
		stats[i].primaries = 0;
		stats[i].quota = quota[i];
		stats[i].wanted = (double) slots * (r->nodes[i].weight / wmax) / wsum;
	}
	for (i = 0; i < slots; i++)
	{
		if (i % 1048576 == 0 && env->progress != NULL && env->progress(env->ctx))
		{
			env->free(env->ctx, quota);
			return ring_fail(err, RING_ECANCELED, "canceled");
		}
		stats[r->assignment[i]].held++;
	}
	for (i = 0; i < parts; i++)
		stats[ring_slot(r, 0, (uint32_t) i)].primaries++;
	env->free(env->ctx, quota);
	return RING_OK;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

ring_status
ring_dispersion_count(const ring_env *env, const ring *r, ring_tier tier,
					  uint64_t *count, ring_error *err)
{
	uint32_t	parts = (uint32_t) 1 << r->part_power;
	uint32_t   *domain;
	uint64_t   *keys;
	uint32_t   *stamp;
	uint32_t	ndomains = 0;
	uint32_t	i;
	uint32_t	x;
	uint64_t	c = 0;

	*count = 0;
	if (tier == RING_TIER_NODE)
		return RING_OK;			/* validation guarantees distinct nodes */

	/* number the distinct domains of the tier: (region) or (region, zone) */
	domain = env->alloc(env->ctx, sizeof(uint32_t) * r->node_count);
	keys = env->alloc(env->ctx, sizeof(uint64_t) * r->node_count);
	stamp = env->alloc(env->ctx, sizeof(uint32_t) * r->node_count);
	if (domain == NULL || keys == NULL || stamp == NULL)
	{
		if (domain)
			env->free(env->ctx, domain);
		if (keys)
			env->free(env->ctx, keys);
		if (stamp)
			env->free(env->ctx, stamp);
		return ring_fail(err, RING_ENOMEM, "out of memory");
	}
	for (i = 0; i < r->node_count; i++)
	{
		uint64_t	region = (uint32_t) r->nodes[i].region ^ 0x80000000u;
		uint64_t	zone = (uint32_t) r->nodes[i].zone ^ 0x80000000u;

		keys[i] = tier == RING_TIER_REGION ? region : (region << 32) | zone;
	}
	qsort(keys, r->node_count, sizeof(uint64_t), cmp_u64);
	for (i = 0; i < r->node_count; i++)
		if (i == 0 || keys[i] != keys[i - 1])
			keys[ndomains++] = keys[i];
	for (i = 0; i < r->node_count; i++)
	{
		uint64_t	region = (uint32_t) r->nodes[i].region ^ 0x80000000u;
		uint64_t	zone = (uint32_t) r->nodes[i].zone ^ 0x80000000u;
		uint64_t	k = tier == RING_TIER_REGION ? region : (region << 32) | zone;
		uint32_t	lo = 0,
					hi = ndomains;

		while (lo < hi)
		{
			uint32_t	mid = lo + (hi - lo) / 2;

			if (keys[mid] < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		domain[i] = lo;
	}
	memset(stamp, 0, sizeof(uint32_t) * r->node_count);
	for (x = 0; x < parts; x++)
	{
		uint32_t	rep;

		if (x % 65536 == 0 && env->progress != NULL && env->progress(env->ctx))
		{
			env->free(env->ctx, domain);
			env->free(env->ctx, keys);
			env->free(env->ctx, stamp);
			return ring_fail(err, RING_ECANCELED, "canceled");
		}
		for (rep = 0; rep < r->replicas; rep++)
		{
			uint32_t	d = domain[ring_slot(r, rep, x)];

			if (stamp[d] == x + 1)
				c++;
			stamp[d] = x + 1;
		}
	}
	env->free(env->ctx, domain);
	env->free(env->ctx, keys);
	env->free(env->ctx, stamp);
	*count = c;
	return RING_OK;
}

double
ring_max_balance(const ring_node_stat *stats, uint32_t n)
{
	double		worst = 0;
	double		balance;
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (ring_node_balance(&stats[i], &balance) && fabs(balance) > worst)
			worst = fabs(balance);
	return worst;
}

ring_status
ring_count_domains(const ring_env *env, const ring *r, uint32_t *zones,
				   uint32_t *regions, ring_error *err)
{
	uint64_t   *keys;
	uint32_t	i;

	*zones = 0;
	*regions = 0;
	keys = env->alloc(env->ctx, sizeof(uint64_t) * (r->node_count + 1));
	if (keys == NULL)
		return ring_fail(err, RING_ENOMEM, "out of memory");
	/* (region, zone) as one unsigned key, ordered as the signed pair */
	for (i = 0; i < r->node_count; i++)
		keys[i] = ((uint64_t) ((uint32_t) r->nodes[i].region ^ 0x80000000u) << 32) |
			((uint32_t) r->nodes[i].zone ^ 0x80000000u);
	qsort(keys, r->node_count, sizeof(uint64_t), cmp_u64);
	for (i = 0; i < r->node_count; i++)
	{
		if (i == 0 || keys[i] != keys[i - 1])
			(*zones)++;
		if (i == 0 || (keys[i] >> 32) != (keys[i - 1] >> 32))
			(*regions)++;
	}
	env->free(env->ctx, keys);
	return RING_OK;
}
