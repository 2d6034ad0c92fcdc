/*
 * src/core/ring_common.c
 *		What every file of the partition ring core uses: error reporting,
 *		little-endian access, the 64-bit hash of 1.0's fingerprint, 128-bit
 *		arithmetic, node weights in integer units, and freeing a ring.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

ring_status
ring_fail(ring_error *err, ring_status code, ring_problem problem,
		  ring_facts facts)
{
	if (err != NULL)
	{
		err->code = code;
		err->problem = problem;
		err->in_value = 0;
		err->facts = facts;
	}
	return code;
}

ring_status
ring_out_of_memory(ring_error *err)
{
	return ring_fail(err, RING_ENOMEM, RING_OUT_OF_MEMORY, RING_NO_FACTS);
}

ring_status
ring_canceled(ring_error *err)
{
	return ring_fail(err, RING_ECANCELED, RING_CANCELED, RING_NO_FACTS);
}

ring_status
ring_found_in_value(ring_error *err)
{
	if (err != NULL)
	{
		err->code = RING_EFORMAT;
		err->in_value = 1;
	}
	return RING_EFORMAT;
}

const char *
ring_problem_name(ring_problem problem)
{
#define NAME(p) case p: return #p
	switch (problem)
	{
		NAME(RING_NO_PROBLEM);
		NAME(RING_PART_POWER_RANGE);
		NAME(RING_REPLICAS_TOO_FEW);
		NAME(RING_NO_NODES);
		NAME(RING_TOO_MANY_NODES);
		NAME(RING_TOO_MANY_SLOTS);
		NAME(RING_WEIGHT_NAN);
		NAME(RING_WEIGHT_INFINITE);
		NAME(RING_WEIGHT_NEGATIVE);
		NAME(RING_WEIGHTS_ALL_ZERO);
		NAME(RING_TOO_FEW_WEIGHTED_NODES);
		NAME(RING_DUPLICATE_NODE_ID);
		NAME(RING_VALUE_TOO_SHORT);
		NAME(RING_BAD_MAGIC);
		NAME(RING_UNSUPPORTED_VERSION);
		NAME(RING_HEADER_TOO_SHORT);
		NAME(RING_LENGTH_MISMATCH);
		NAME(RING_HEADER_RESERVED_NOT_ZERO);
		NAME(RING_NODE_RESERVED_NOT_ZERO);
		NAME(RING_FINGERPRINT_MISMATCH);
		NAME(RING_DIGEST_MISMATCH);
		NAME(RING_NODE_TABLE_DUPLICATE);
		NAME(RING_NODE_TABLE_UNSORTED);
		NAME(RING_NODE_INDEX_RANGE);
		NAME(RING_REPLICAS_ON_ONE_NODE);
		NAME(RING_TEXT_SYNTAX);
		NAME(RING_TEXT_KEYS_MISSING);
		NAME(RING_TEXT_ASSIGNMENT_SHAPE);
		NAME(RING_TEXT_UNKNOWN_NODE);
		NAME(RING_TEXT_BUFFER_TOO_SMALL);
		NAME(RING_OUT_OF_MEMORY);
		NAME(RING_CANCELED);
		NAME(RING_DIGEST_FAILED);
		NAME(RING_NO_DIGEST_FUNCTION);
		NAME(RING_BUILDER_BROKEN);
		NAME(RING_NO_RECEIVER);
		NAME(RING_ARENA_FULL);
	}
#undef NAME
	return "unknown ring problem";
}

/* ---- little-endian access ---- */

uint32_t
ring_get_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

uint64_t
ring_get_le64(const uint8_t *p)
{
	return (uint64_t) ring_get_le32(p) | ((uint64_t) ring_get_le32(p + 4) << 32);
}

void
ring_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

void
ring_put_le64(uint8_t *p, uint64_t v)
{
	ring_put_le32(p, (uint32_t) v);
	ring_put_le32(p + 4, (uint32_t) (v >> 32));
}

uint64_t
ring_double_bits(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

double
ring_bits_double(uint64_t u)
{
	double		d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* ---- fingerprint ---- */

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/*
 * A 64-bit hash of a byte string, defined on little-endian 64-bit words so
 * that it is the same on every platform.  Two lanes keep it fast on the
 * 6 MiB of a part power 20 ring.
 */
uint64_t
ring_hash64(const uint8_t *data, size_t len, uint64_t seed)
{
	const uint64_t k1 = UINT64_C(0x87c37b91114253d5);
	const uint64_t k2 = UINT64_C(0x4cf5ad432745937f);
	uint64_t	h1 = seed ^ UINT64_C(0x9e3779b97f4a7c15);
	uint64_t	h2 = seed ^ UINT64_C(0x6a09e667f3bcc909);
	size_t		i = 0;
	uint8_t		tail[16];

	for (; i + 16 <= len; i += 16)
	{
		h1 = rotl64(h1 ^ (ring_get_le64(data + i) * k1), 31) * k2;
		h2 = rotl64(h2 ^ (ring_get_le64(data + i + 8) * k2), 33) * k1;
	}
	memset(tail, 0, sizeof(tail));
	memcpy(tail, data + i, len - i);
	h1 = rotl64(h1 ^ (ring_get_le64(tail) * k1), 31) * k2;
	h2 = rotl64(h2 ^ (ring_get_le64(tail + 8) * k2), 33) * k1;
	h1 ^= (uint64_t) len;
	h1 += h2;
	h2 += h1;
	return fmix64(h1) ^ fmix64(h2 + UINT64_C(0x2545f4914f6cdd1d));
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
void
ring_free(const ring_env *env, ring *r)
{
	if (r->nodes != NULL)
		env->free(env->ctx, r->nodes);
	if (r->assignment != NULL)
		env->free(env->ctx, r->assignment);
	r->nodes = NULL;
	r->assignment = NULL;
}
