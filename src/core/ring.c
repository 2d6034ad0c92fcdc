/*
 * src/core/ring.c
 *		Partition ring: fingerprint, argument checks, the encoded form and
 *		its validation, and inspection (node statistics, dispersion).
 *
 * The builder and the rebalancer are in ring_build.c, the JSON text form in
 * ring_json.c.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

ring_status
ring_fail(ring_error *err, ring_status code, const char *fmt,...)
{
	if (err != NULL)
	{
		va_list		ap;

		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* turn an argument error into a malformed-value error: "invalid ring: ..." */
ring_status
invalid_ring(ring_error *err)
{
	char		msg[sizeof(err->message)];

	memcpy(msg, err->message, sizeof(msg));
	return ring_fail(err, RING_EFORMAT, "invalid ring: %s", msg);
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

static uint64_t
double_bits(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
bits_double(uint64_t u)
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

/* ---- arguments ---- */

ring_status
ring_check_sizes(uint32_t n, uint32_t part_power, uint32_t replicas,
				 ring_error *err)
{
	if (part_power < RING_MIN_PART_POWER || part_power > RING_MAX_PART_POWER)
		return ring_fail(err, RING_EINVAL,
						 "part power must be between %d and %d, got %u",
						 RING_MIN_PART_POWER, RING_MAX_PART_POWER, part_power);
	if (replicas < 1)
		return ring_fail(err, RING_EINVAL,
						 "replicas must be at least 1, got %u", replicas);
	if (n < 1)
		return ring_fail(err, RING_EINVAL, "a ring needs at least one node");
	if (n > RING_MAX_NODES)
		return ring_fail(err, RING_ELIMIT,
						 "a ring can have at most %d nodes, got %u",
						 RING_MAX_NODES, n);
	if ((uint64_t) replicas > (RING_MAX_SLOTS >> part_power))
		return ring_fail(err, RING_ELIMIT,
						 "a ring of 2^%u partitions with %u replicas would hold %llu partition-replicas, more than the limit of %llu",
						 part_power, replicas,
						 (unsigned long long) ((uint64_t) replicas << part_power),
						 (unsigned long long) RING_MAX_SLOTS);
	return RING_OK;
}

/* Weights finite and non-negative, not all zero, enough positive nodes. */
static ring_status
check_weights(const ring_node *nodes, uint32_t n, uint32_t replicas,
			  ring_error *err)
{
	uint32_t	positive = 0;
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		double		w = nodes[i].weight;

		if (isnan(w))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d must be a number, got NaN",
							 (int) nodes[i].id);
		if (isinf(w))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d must be finite, got %sinfinity",
							 (int) nodes[i].id, w < 0 ? "-" : "");
		if (w < 0 || (w == 0 && signbit(w)))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d cannot be negative, got %g",
							 (int) nodes[i].id, w);
		if (w > 0)
			positive++;
	}
	if (positive == 0)
		return ring_fail(err, RING_EINVAL,
						 "all node weights are zero");
	if (replicas > positive)
		return ring_fail(err, RING_EINVAL,
						 "replicas (%u) cannot exceed the number of nodes with positive weight (%u)",
						 replicas, positive);
	return RING_OK;
}

ring_status
ring_check_args(const ring_node *nodes, uint32_t n, uint32_t part_power,
				uint32_t replicas, ring_error *err)
{
	ring_status st = ring_check_sizes(n, part_power, replicas, err);

	if (st != RING_OK)
		return st;
	return check_weights(nodes, n, replicas, err);
}

/* ---- encoding ---- */

size_t
ring_encoded_size(uint32_t part_power, uint32_t replicas, uint32_t node_count)
{
	return RING_HEADER_SIZE + (size_t) RING_NODE_SIZE * node_count +
		2 * ((size_t) replicas << part_power);
}

size_t
ring_encoded_size_v1(uint32_t part_power, uint32_t replicas, uint32_t node_count)
{
	return RING_V1_HEADER_SIZE + (size_t) RING_NODE_SIZE * node_count +
		2 * ((size_t) replicas << part_power);
}

static const uint8_t ring_magic[4] = {'P', 'R', 'N', 'G'};

/* The fields after the header's magic, version and digest or fingerprint. */
static void
put_fields(const ring *r, uint8_t *fields)
{
	ring_put_le32(fields, r->part_power);
	ring_put_le32(fields + 4, r->replicas);
	ring_put_le32(fields + 8, r->node_count);
	ring_put_le32(fields + 12, 0);
	ring_put_le64(fields + 16, (uint64_t) r->seed);
}

/* Nodes and assignment, from p on. */
static void
put_body(const ring *r, uint8_t *p)
{
	size_t		slots = (size_t) r->replicas << r->part_power;
	size_t		i;

	for (i = 0; i < r->node_count; i++, p += RING_NODE_SIZE)
	{
		ring_put_le32(p, (uint32_t) r->nodes[i].id);
		ring_put_le32(p + 4, (uint32_t) r->nodes[i].zone);
		ring_put_le32(p + 8, (uint32_t) r->nodes[i].region);
		ring_put_le32(p + 12, 0);
		ring_put_le64(p + 16, double_bits(r->nodes[i].weight));
	}
	for (i = 0; i < slots; i++, p += 2)
	{
		uint16_t	v = ring_slot_at(r, i);

		p[0] = (uint8_t) v;
		p[1] = (uint8_t) (v >> 8);
	}
}

ring_status
ring_encode(const ring_env *env, ring *r, uint8_t *buf, ring_error *err)
{
	size_t		len = ring_encoded_size(r->part_power, r->replicas, r->node_count);

	memcpy(buf, ring_magic, 4);
	ring_put_le32(buf + 4, RING_FORMAT_VERSION);
	put_fields(r, buf + RING_DIGESTED_FROM);
	put_body(r, buf + RING_HEADER_SIZE);
	if (env->digest == NULL)
		return ring_fail(err, RING_EINVAL, "no digest function to encode a ring with");
	if (env->digest(env->ctx, buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM,
					buf + RING_DIGEST_OFFSET) != 0)
		return ring_fail(err, RING_ECANCELED, "could not compute the digest of the ring");
	memcpy(r->digest, buf + RING_DIGEST_OFFSET, RING_DIGEST_SIZE);
	r->format_version = RING_FORMAT_VERSION;
	r->fingerprint = ring_hash64(buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM,
								 RING_FORMAT_VERSION_1);
	return RING_OK;
}

void
ring_encode_v1(ring *r, uint8_t *buf)
{
	size_t		len = ring_encoded_size_v1(r->part_power, r->replicas, r->node_count);

	memcpy(buf, ring_magic, 4);
	ring_put_le32(buf + 4, RING_FORMAT_VERSION_1);
	put_fields(r, buf + 16);
	put_body(r, buf + RING_V1_HEADER_SIZE);
	r->fingerprint = ring_hash64(buf + 16, len - 16, RING_FORMAT_VERSION_1);
	ring_put_le64(buf + 8, r->fingerprint);
}

ring_status
ring_read_header(const uint8_t *buf, size_t len, ring_header *h,
				 ring_error *err)
{
	const uint8_t *fields;

	memset(h, 0, sizeof(*h));
	if (len < 8)
		return ring_fail(err, RING_EFORMAT,
						 "ring value is too short: %zu bytes", len);
	if (memcmp(buf, ring_magic, 4) != 0)
		return ring_fail(err, RING_EFORMAT,
						 "ring value does not start with the ring magic number");
	h->format_version = ring_get_le32(buf + 4);
	if (h->format_version == RING_FORMAT_VERSION_1)
	{
		h->header_size = RING_V1_HEADER_SIZE;
		fields = buf + 16;
	}
	else if (h->format_version == RING_FORMAT_VERSION)
	{
		h->header_size = RING_HEADER_SIZE;
		fields = buf + RING_DIGESTED_FROM;
	}
	else
		return ring_fail(err, RING_EFORMAT,
						 "ring format version %u is not supported (this build reads versions %d and %d)",
						 h->format_version, RING_FORMAT_VERSION_1, RING_FORMAT_VERSION);
	if (len < h->header_size)
		return ring_fail(err, RING_EFORMAT,
						 "ring value is too short: %zu bytes, the header alone has %u",
						 len, h->header_size);
	if (h->format_version == RING_FORMAT_VERSION_1)
		h->fingerprint = ring_get_le64(buf + 8);
	else
		memcpy(h->digest, buf + RING_DIGEST_OFFSET, RING_DIGEST_SIZE);
	h->part_power = ring_get_le32(fields);
	h->replicas = ring_get_le32(fields + 4);
	h->node_count = ring_get_le32(fields + 8);
	h->seed = (int64_t) ring_get_le64(fields + 16);
	return RING_OK;
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

/*
 * Everything a decoded ring must satisfy so that no later function can
 * misbehave on it.
 */
ring_status
ring_validate(const ring_env *env, const ring *r, ring_error *err)
{
	ring_status st;
	uint32_t	i;
	uint32_t	parts;
	uint32_t	x;
	uint32_t   *stamp;

	st = ring_check_sizes(r->node_count, r->part_power, r->replicas, err);
	if (st != RING_OK)
		return invalid_ring(err);
	for (i = 1; i < r->node_count; i++)
		if (r->nodes[i - 1].id >= r->nodes[i].id)
			return ring_fail(err, RING_EFORMAT,
							 r->nodes[i - 1].id == r->nodes[i].id ?
							 "invalid ring: duplicate node id %d" :
							 "invalid ring: nodes are not sorted by id at node %d",
							 (int) r->nodes[i].id);
	st = check_weights(r->nodes, r->node_count, r->replicas, err);
	if (st != RING_OK)
		return invalid_ring(err);

	parts = (uint32_t) 1 << r->part_power;
	stamp = env->alloc(env->ctx, sizeof(uint32_t) * r->node_count);
	if (stamp == NULL)
		return ring_fail(err, RING_ENOMEM, "out of memory");
	memset(stamp, 0, sizeof(uint32_t) * r->node_count);
	for (x = 0; x < parts; x++)
	{
		uint32_t	rep;

		/* a ring of 2^24 partitions takes a good part of a second */
		if (env->progress != NULL && x % 65536 == 0 && env->progress(env->ctx))
		{
			env->free(env->ctx, stamp);
			return ring_fail(err, RING_ECANCELED, "canceled");
		}
		for (rep = 0; rep < r->replicas; rep++)
		{
			uint16_t	v = ring_slot(r, rep, x);

			if (v >= r->node_count)
			{
				env->free(env->ctx, stamp);
				return ring_fail(err, RING_EFORMAT,
								 "invalid ring: replica %u of partition %u names node index %u, but there are %u nodes",
								 rep, x, (unsigned) v, r->node_count);
			}
			if (stamp[v] == x + 1)
			{
				env->free(env->ctx, stamp);
				return ring_fail(err, RING_EFORMAT,
								 "invalid ring: partition %u has two replicas on node %d",
								 x, (int) r->nodes[v].id);
			}
			stamp[v] = x + 1;
		}
	}
	env->free(env->ctx, stamp);
	return RING_OK;
}

ring_status
ring_decode(const ring_env *env, const uint8_t *buf, size_t len, ring *out,
			ring_error *err)
{
	return ring_decode_as(env, buf, len, 0, out, err);
}

ring_status
ring_decode_as(const ring_env *env, const uint8_t *buf, size_t len,
			   int partition_major, ring *out, ring_error *err)
{
	ring_header h;
	ring_status st;
	size_t		expect;
	size_t		slots;
	size_t		i;
	const uint8_t *p;
	uint32_t	mask;

	memset(out, 0, sizeof(*out));
	st = ring_read_header(buf, len, &h, err);
	if (st != RING_OK)
		return st;
	st = ring_check_sizes(h.node_count, h.part_power, h.replicas, err);
	if (st != RING_OK)
		return invalid_ring(err);
	expect = h.header_size + (size_t) RING_NODE_SIZE * h.node_count +
		2 * ((size_t) h.replicas << h.part_power);
	if (len != expect)
		return ring_fail(err, RING_EFORMAT,
						 "invalid ring: %zu bytes, but part power %u, %u replicas and %u nodes need %zu",
						 len, h.part_power, h.replicas, h.node_count, expect);
	if (ring_get_le32(buf + h.header_size - 12) != 0)
		return ring_fail(err, RING_EFORMAT, "invalid ring: reserved header field is not zero");
	if (h.format_version == RING_FORMAT_VERSION_1)
	{
		if (ring_hash64(buf + 16, len - 16, RING_FORMAT_VERSION_1) != h.fingerprint)
			return ring_fail(err, RING_EFORMAT,
							 "invalid ring: fingerprint does not match the contents");
	}
	else
	{
		uint8_t		digest[RING_DIGEST_SIZE];

		if (env->digest == NULL)
			return ring_fail(err, RING_EINVAL, "no digest function to decode a ring with");
		if (env->digest(env->ctx, buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM,
						digest) != 0)
			return ring_fail(err, RING_ECANCELED, "could not compute the digest of the ring");
		if (memcmp(digest, h.digest, RING_DIGEST_SIZE) != 0)
			return ring_fail(err, RING_EFORMAT,
							 "invalid ring: digest does not match the contents");
	}

	slots = (size_t) h.replicas << h.part_power;
	mask = ((uint32_t) 1 << h.part_power) - 1;
	out->part_power = h.part_power;
	out->replicas = h.replicas;
	out->node_count = h.node_count;
	out->seed = h.seed;
	out->format_version = h.format_version;
	/* format 2: the fingerprint 1.0 stored, which the rebalancer seeds from */
	out->fingerprint = h.format_version == RING_FORMAT_VERSION_1 ? h.fingerprint :
		ring_hash64(buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM, RING_FORMAT_VERSION_1);
	memcpy(out->digest, h.digest, RING_DIGEST_SIZE);
	out->partition_major = partition_major != 0;
	out->nodes = env->alloc(env->ctx, sizeof(ring_node) * h.node_count);
	out->assignment = env->alloc(env->ctx, sizeof(uint16_t) * slots);
	if (out->nodes == NULL || out->assignment == NULL)
	{
		ring_free(env, out);
		return ring_fail(err, RING_ENOMEM, "out of memory");
	}
	p = buf + h.header_size;
	for (i = 0; i < h.node_count; i++, p += RING_NODE_SIZE)
	{
		if (ring_get_le32(p + 12) != 0)
		{
			ring_free(env, out);
			return ring_fail(err, RING_EFORMAT,
							 "invalid ring: reserved field of node %zu is not zero", i);
		}
		out->nodes[i].id = (int32_t) ring_get_le32(p);
		out->nodes[i].zone = (int32_t) ring_get_le32(p + 4);
		out->nodes[i].region = (int32_t) ring_get_le32(p + 8);
		out->nodes[i].weight = bits_double(ring_get_le64(p + 16));
	}
	if (!partition_major)
		for (i = 0; i < slots; i++, p += 2)
			out->assignment[i] = (uint16_t) (p[0] | (p[1] << 8));
	else
		for (i = 0; i < slots; i++, p += 2)
		{
			/* the transpose: 2^26 scattered stores at most */
			if (i % 65536 == 0 && env->progress != NULL && env->progress(env->ctx))
			{
				ring_free(env, out);
				return ring_fail(err, RING_ECANCELED, "canceled");
			}
			out->assignment[(size_t) (i & mask) * h.replicas + (i >> h.part_power)] =
				(uint16_t) (p[0] | (p[1] << 8));
		}
	st = ring_validate(env, out, err);
	if (st != RING_OK)
		ring_free(env, out);
	return st;
}

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
