/*
 * src/core/ring_inspect.c
 *		Inspecting a partition ring: finding a node, per-node statistics
 *		(held, quota, wanted, primaries), dispersion.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>
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
		return ring_out_of_memory(err);
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
		if (i % 1048576 == 0 && core_interrupts_check(env->interrupts))
		{
			env->free(env->ctx, quota);
			return ring_canceled(err);
		}
		stats[r->assignment[i]].held++;
	}
	for (i = 0; i < parts; i++)
		stats[ring_slot(r, 0, (uint32_t) i)].primaries++;
	env->free(env->ctx, quota);
	return RING_OK;
}

ring_status
ring_dispersion_count(const ring_env *env, const ring *r, ring_tier tier,
					  uint64_t *count, ring_error *err)
{
	uint32_t	parts = (uint32_t) 1 << r->part_power;
	ring_domains d;
	const uint32_t *domain;
	uint32_t   *stamp;
	uint32_t	x;
	uint64_t	c = 0;
	ring_status st;

	*count = 0;
	if (tier == RING_TIER_NODE)
		return RING_OK;			/* validation guarantees distinct nodes */

	st = ring_domains_build(env, r, &d, err);
	if (st != RING_OK)
		return st;
	domain = tier == RING_TIER_REGION ? d.region_of : d.zone_of;
	stamp = env->alloc(env->ctx, sizeof(uint32_t) * r->node_count);
	if (stamp == NULL)
	{
		ring_domains_free(env, &d);
		return ring_out_of_memory(err);
	}
	memset(stamp, 0, sizeof(uint32_t) * r->node_count);
	for (x = 0; x < parts; x++)
	{
		uint32_t	rep;

		if (x % 65536 == 0 && core_interrupts_check(env->interrupts))
		{
			ring_domains_free(env, &d);
			env->free(env->ctx, stamp);
			return ring_canceled(err);
		}
		for (rep = 0; rep < r->replicas; rep++)
		{
			uint32_t	dom = domain[ring_slot(r, rep, x)];

			if (stamp[dom] == x + 1)
				c++;
			stamp[dom] = x + 1;
		}
	}
	ring_domains_free(env, &d);
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
