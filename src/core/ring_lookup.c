/*
 * src/core/ring_lookup.c
 *		Partition ring lookups as applications make them: many keys at once
 *		with prefetching, and handoff nodes in the order of OpenStack Swift's
 *		Ring.get_more_nodes (see ring_lookup.h).
 */
#include "core/ring_lookup.h"
#include "core/ring_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define RING_PREFETCH(p) __builtin_prefetch((p), 0, 1)
#else
#define RING_PREFETCH(p) ((void) (p))
#endif

void
ring_lookup_transpose(const ring *r, uint16_t *by_partition)
{
	uint32_t	parts = (uint32_t) 1 << r->part_power;
	uint32_t	R = r->replicas;
	uint32_t	rep,
				x;

	if (r->partition_major)
	{
		memcpy(by_partition, r->assignment, sizeof(uint16_t) * ((size_t) R << r->part_power));
		return;
	}
	for (rep = 0; rep < R; rep++)
	{
		const uint16_t *row = r->assignment + ((size_t) rep << r->part_power);

		for (x = 0; x < parts; x++)
			by_partition[(size_t) x * R + rep] = row[x];
	}
}

/* ---- many keys at once ---- */

ring_status
ring_lookup_keys_prefetching(const ring *r, const uint16_t *by_partition,
							 const uint64_t *keys, size_t count,
							 int32_t *partitions, int32_t *node_ids,
							 const ring_env *env, uint32_t distance)
{
	const uint32_t R = r->replicas;
	const uint32_t shift = 64 - r->part_power;
	const ring_node *nodes = r->nodes;
	size_t		i;

	for (i = 0; i < count; i++)
	{
		uint32_t	x;
		const uint16_t *row;
		int32_t    *ids = node_ids + i * R;
		uint32_t	rep;

		if (distance > 0 && i + distance < count)
		{
			const uint16_t *ahead = by_partition +
				(size_t) (uint32_t) (keys[i + distance] >> shift) * R;

			/* a row can straddle two cache lines */
			RING_PREFETCH(ahead);
			RING_PREFETCH(ahead + R - 1);
		}
		if ((i & 65535) == 65535 && env != NULL && core_interrupts_check(env->interrupts))
			return RING_ECANCELED;
		x = (uint32_t) (keys[i] >> shift);
		if (partitions != NULL)
			partitions[i] = (int32_t) x;
		row = by_partition + (size_t) x * R;
		for (rep = 0; rep < R; rep++)
			ids[rep] = nodes[row[rep]].id;
	}
	return RING_OK;
}

ring_status
ring_lookup_keys(const ring *r, const uint16_t *by_partition,
				 const uint64_t *keys, size_t count, int32_t *partitions,
				 int32_t *node_ids, const ring_env *env)
{
	/* an assignment that stays in the CPU caches gains nothing from prefetching */
	size_t		bytes = sizeof(uint16_t) * ((size_t) r->replicas << r->part_power);

	return ring_lookup_keys_prefetching(r, by_partition, keys, count, partitions,
										node_ids, env,
										bytes <= RING_LOOKUP_CACHED_BYTES ? 0 :
										RING_LOOKUP_PREFETCH_DISTANCE);
}

/* ---- MD5 (RFC 1321), for where Swift's handoff walk starts ---- */

static const uint32_t md5_k[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
	0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
	0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
	0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
	0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391
};

static const uint8_t md5_r[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21
};

static void
md5_block(uint32_t h[4], const uint8_t *block)
{
	uint32_t	m[16];
	uint32_t	a = h[0],
				b = h[1],
				c = h[2],
				d = h[3];
	int			i;

	for (i = 0; i < 16; i++)
		m[i] = ring_get_le32(block + 4 * i);
	for (i = 0; i < 64; i++)
	{
		uint32_t	f,
					t;
		int			g;

		if (i < 16)
		{
			f = (b & c) | (~b & d);
			g = i;
		}
		else if (i < 32)
		{
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		}
		else if (i < 48)
		{
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		}
		else
		{
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		t = a + f + md5_k[i] + m[g];
		a = d;
		d = c;
		c = b;
		b = b + ((t << md5_r[i]) | (t >> (32 - md5_r[i])));
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void
ring_md5(const uint8_t *data, size_t len, uint8_t digest[16])
{
	uint32_t	h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	uint8_t		tail[128];
	size_t		i = 0,
				rest,
				padded;
	uint64_t	bits = (uint64_t) len * 8;

	for (; i + 64 <= len; i += 64)
		md5_block(h, data + i);
	rest = len - i;
	memset(tail, 0, sizeof(tail));
	memcpy(tail, data + i, rest);
	tail[rest] = 0x80;
	padded = rest + 1 + 8 <= 64 ? 64 : 128;
	ring_put_le64(tail + padded - 8, bits);
	md5_block(h, tail);
	if (padded == 128)
		md5_block(h, tail + 64);
	for (i = 0; i < 4; i++)
		ring_put_le32(digest + 4 * i, h[i]);
}

/* ---- handoff nodes ---- */

uint32_t
ring_handoff_start(uint32_t part_power, uint32_t partition)
{
	char		decimal[16];
	uint8_t		digest[16];
	int			len = snprintf(decimal, sizeof(decimal), "%u", (unsigned) partition);
	uint32_t	first;

	ring_md5((const uint8_t *) decimal, (size_t) len, digest);
	first = ((uint32_t) digest[0] << 24) | ((uint32_t) digest[1] << 16) |
		((uint32_t) digest[2] << 8) | digest[3];
	return first >> (32 - part_power);
}

static size_t
bitmap_words(uint32_t bits)
{
	return ((size_t) bits + 63) / 64;
}

size_t
ring_handoff_workspace_size(const ring_domains *d)
{
	return sizeof(uint64_t) *
		(bitmap_words(d->node_count) + bitmap_words(d->zones) + bitmap_words(d->regions));
}

static int
bit_test(const uint64_t *map, uint32_t i)
{
	return (int) ((map[i / 64] >> (i % 64)) & 1);
}

/* sets bit i; returns 1 if it was clear */
static int
bit_set(uint64_t *map, uint32_t i)
{
	uint64_t	mask = UINT64_C(1) << (i % 64);

	if (map[i / 64] & mask)
		return 0;
	map[i / 64] |= mask;
	return 1;
}

typedef enum handoff_pass
{
	PASS_NEW_REGION,
	PASS_NEW_ZONE,
	PASS_ANY_NODE
} handoff_pass;

/* Has the pass nothing left to find: every region, zone or node used? */
static int
pass_done(const ring_domains *d, int pass, uint32_t nodes_used,
		  uint32_t zones_used, uint32_t regions_used)
{
	return (pass == PASS_NEW_REGION && regions_used == d->regions) ||
		(pass == PASS_NEW_ZONE && zones_used == d->zones) ||
		(pass == PASS_ANY_NODE && nodes_used == d->node_count);
}

ring_status
ring_handoff(const ring *r, const uint16_t *by_partition, const ring_domains *d,
			 uint32_t partition, uint32_t count, void *workspace,
			 uint16_t *out, uint32_t *found, const ring_env *env)
{
	const uint32_t R = r->replicas;
	const uint32_t parts = (uint32_t) 1 << r->part_power;
	const uint32_t inc = parts > 65536 ? parts / 65536 : 1;
	const uint32_t start = ring_handoff_start(r->part_power, partition);
	uint64_t   *used = workspace;
	uint64_t   *used_zones = used + bitmap_words(d->node_count);
	uint64_t   *used_regions = used_zones + bitmap_words(d->zones);
	uint32_t	nodes_used = 0,
				zones_used = 0,
				regions_used = 0;
	uint32_t	n = 0;
	uint32_t	walked = 0;
	int			pass;
	uint32_t	rep;

	*found = 0;
	memset(workspace, 0, ring_handoff_workspace_size(d));
	for (rep = 0; rep < R; rep++)
	{
		uint16_t	node = by_partition[(size_t) partition * R + rep];

		nodes_used += bit_set(used, node);
		zones_used += bit_set(used_zones, d->zone_of[node]);
		regions_used += bit_set(used_regions, d->region_of[node]);
	}
	if (count == 0)
		return RING_OK;

	for (pass = PASS_NEW_REGION; pass <= PASS_ANY_NODE; pass++)
	{
		uint32_t	hp = start;
		int			wrapped = 0;

		/*
		 * Swift's walk: range(start, parts, inc), then range(inc - ((parts -
		 * start) % inc), start, inc).  (When inc divides start, the second
		 * range begins at inc, not 0: partition start % inc is left out, as
		 * in Swift.)
		 */
		for (;;)
		{
			if (!wrapped && hp >= parts)
			{
				wrapped = 1;
				hp = inc - ((parts - start) % inc);
			}
			if (wrapped && hp >= start)
				break;
			if (pass_done(d, pass, nodes_used, zones_used, regions_used))
				break;
			if (++walked % 4096 == 0 && env != NULL &&
				core_interrupts_check(env->interrupts))
				return RING_ECANCELED;
			for (rep = 0; rep < R; rep++)
			{
				uint16_t	node = by_partition[(size_t) hp * R + rep];
				uint32_t	zone = d->zone_of[node];
				uint32_t	region = d->region_of[node];

				if (bit_test(used, node))
					continue;
				if (pass == PASS_NEW_REGION && bit_test(used_regions, region))
					continue;
				if (pass == PASS_NEW_ZONE && bit_test(used_zones, zone))
					continue;
				out[n++] = node;
				nodes_used += bit_set(used, node);
				if (pass <= PASS_NEW_ZONE)
					zones_used += bit_set(used_zones, zone);
				if (pass == PASS_NEW_REGION)
					regions_used += bit_set(used_regions, region);
				if (n == count)
				{
					*found = n;
					return RING_OK;
				}
				/* Swift leaves the partition once the pass has nothing left */
				if (pass_done(d, pass, nodes_used, zones_used, regions_used))
					break;
			}
			hp += inc;
		}
	}
	*found = n;
	return RING_OK;
}
