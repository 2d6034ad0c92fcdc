/*
 * src/core/ring_domains.c
 *		The failure domains of a ring's node table, numbered densely (see
 *		ring_domains in ring.h): what dispersion, ring_info and handoff
 *		lookups need.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* (region, zone) as an unsigned key ordered like the signed pair */
static uint64_t
zone_key(const ring_node *nd)
{
	return ((uint64_t) ((uint32_t) nd->region ^ 0x80000000u) << 32) |
		((uint32_t) nd->zone ^ 0x80000000u);
}

/* index of key in the sorted distinct keys[0..n) */
static uint32_t
find_key(const uint64_t *keys, uint32_t n, uint64_t key)
{
	uint32_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t
distinct_sorted(uint64_t *keys, uint32_t n)
{
	uint32_t	i,
				m = 0;

	qsort(keys, n, sizeof(uint64_t), cmp_u64);
	for (i = 0; i < n; i++)
		if (i == 0 || keys[i] != keys[i - 1])
			keys[m++] = keys[i];
	return m;
}

ring_status
ring_domains_build(const ring_env *env, const ring *r, ring_domains *out,
				   ring_error *err)
{
	uint32_t	n = r->node_count;
	uint64_t   *zones;
	uint64_t   *regions;
	uint32_t	nzones,
				nregions,
				i;

	memset(out, 0, sizeof(*out));
	zones = env->alloc(env->ctx, sizeof(uint64_t) * n);
	regions = env->alloc(env->ctx, sizeof(uint64_t) * n);
	out->zone_of = env->alloc(env->ctx, sizeof(uint32_t) * n);
	out->region_of = env->alloc(env->ctx, sizeof(uint32_t) * n);
	if (zones == NULL || regions == NULL || out->zone_of == NULL || out->region_of == NULL)
	{
		if (zones != NULL)
			env->free(env->ctx, zones);
		if (regions != NULL)
			env->free(env->ctx, regions);
		ring_domains_free(env, out);
		return ring_out_of_memory(err);
	}
	for (i = 0; i < n; i++)
	{
		zones[i] = zone_key(&r->nodes[i]);
		regions[i] = zones[i] >> 32;
	}
	nzones = distinct_sorted(zones, n);
	nregions = distinct_sorted(regions, n);
	for (i = 0; i < n; i++)
	{
		uint64_t	z = zone_key(&r->nodes[i]);

		out->zone_of[i] = find_key(zones, nzones, z);
		out->region_of[i] = find_key(regions, nregions, z >> 32);
	}
	env->free(env->ctx, zones);
	env->free(env->ctx, regions);
	out->node_count = n;
	out->zones = nzones;
	out->regions = nregions;
	return RING_OK;
}

void
ring_domains_free(const ring_env *env, ring_domains *d)
{
	if (d->zone_of != NULL)
		env->free(env->ctx, d->zone_of);
	if (d->region_of != NULL)
		env->free(env->ctx, d->region_of);
	d->zone_of = NULL;
	d->region_of = NULL;
}
