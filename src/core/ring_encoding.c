/*
 * src/core/ring_encoding.c
 *		The binary form of a partition ring (see ring.h for the layout):
 *		encoding in format 2 (and 1, for tests), reading the header, decoding
 *		and validating.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <string.h>

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
		ring_put_le64(p + 16, ring_double_bits(r->nodes[i].weight));
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
		return ring_fail(err, RING_EINTERNAL, RING_NO_DIGEST_FUNCTION, RING_NO_FACTS);
	if (env->digest(env->ctx, buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM,
					buf + RING_DIGEST_OFFSET) != 0)
		return ring_fail(err, RING_ECANCELED, RING_DIGEST_FAILED, RING_NO_FACTS);
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
		return ring_fail(err, RING_EFORMAT, RING_VALUE_TOO_SHORT,
						 (ring_facts) {.length = len});
	if (memcmp(buf, ring_magic, 4) != 0)
		return ring_fail(err, RING_EFORMAT, RING_BAD_MAGIC, RING_NO_FACTS);
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
		return ring_fail(err, RING_EFORMAT, RING_UNSUPPORTED_VERSION,
						 (ring_facts) {.format_version = h->format_version});
	if (len < h->header_size)
		return ring_fail(err, RING_EFORMAT, RING_HEADER_TOO_SHORT,
						 (ring_facts) {.length = len, .needed = h->header_size});
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
		return ring_found_in_value(err);
	for (i = 1; i < r->node_count; i++)
		if (r->nodes[i - 1].id >= r->nodes[i].id)
			return ring_fail(err, RING_EFORMAT,
							 r->nodes[i - 1].id == r->nodes[i].id ?
							 RING_NODE_TABLE_DUPLICATE : RING_NODE_TABLE_UNSORTED,
							 (ring_facts) {.node_id = r->nodes[i].id});
	st = ring_check_weights(r->nodes, r->node_count, r->replicas, err);
	if (st != RING_OK)
		return ring_found_in_value(err);

	parts = (uint32_t) 1 << r->part_power;
	stamp = env->alloc(env->ctx, sizeof(uint32_t) * r->node_count);
	if (stamp == NULL)
		return ring_out_of_memory(err);
	memset(stamp, 0, sizeof(uint32_t) * r->node_count);
	for (x = 0; x < parts; x++)
	{
		uint32_t	rep;

		/* a ring of 2^24 partitions takes a good part of a second */
		if (x % 65536 == 0 && core_interrupts_check(env->interrupts))
		{
			env->free(env->ctx, stamp);
			return ring_canceled(err);
		}
		for (rep = 0; rep < r->replicas; rep++)
		{
			uint16_t	v = ring_slot(r, rep, x);

			if (v >= r->node_count)
			{
				env->free(env->ctx, stamp);
				return ring_fail(err, RING_EFORMAT, RING_NODE_INDEX_RANGE,
								 (ring_facts) {.replica = rep, .partition = x,
											   .node_index = v,
											   .node_count = r->node_count});
			}
			if (stamp[v] == x + 1)
			{
				env->free(env->ctx, stamp);
				return ring_fail(err, RING_EFORMAT, RING_REPLICAS_ON_ONE_NODE,
								 (ring_facts) {.partition = x,
											   .node_id = r->nodes[v].id});
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

/*
 * Everything that can be checked on the bytes before decoding: the header,
 * the sizes, the length, the reserved field, the fingerprint or digest.
 */
static ring_status
check_bytes(const ring_env *env, const uint8_t *buf, size_t len,
			ring_header *h, ring_error *err)
{
	ring_status st;
	size_t		expect;

	st = ring_read_header(buf, len, h, err);
	if (st != RING_OK)
		return st;
	st = ring_check_sizes(h->node_count, h->part_power, h->replicas, err);
	if (st != RING_OK)
		return ring_found_in_value(err);
	expect = h->header_size + (size_t) RING_NODE_SIZE * h->node_count +
		2 * ((size_t) h->replicas << h->part_power);
	if (len != expect)
		return ring_fail(err, RING_EFORMAT, RING_LENGTH_MISMATCH,
						 (ring_facts) {.length = len, .needed = expect,
									   .part_power = h->part_power,
									   .replicas = h->replicas,
									   .node_count = h->node_count});
	if (ring_get_le32(buf + h->header_size - 12) != 0)
		return ring_fail(err, RING_EFORMAT, RING_HEADER_RESERVED_NOT_ZERO, RING_NO_FACTS);
	if (h->format_version == RING_FORMAT_VERSION_1)
	{
		if (ring_hash64(buf + 16, len - 16, RING_FORMAT_VERSION_1) != h->fingerprint)
			return ring_fail(err, RING_EFORMAT, RING_FINGERPRINT_MISMATCH, RING_NO_FACTS);
	}
	else
	{
		uint8_t		digest[RING_DIGEST_SIZE];

		if (env->digest == NULL)
			return ring_fail(err, RING_EINTERNAL, RING_NO_DIGEST_FUNCTION, RING_NO_FACTS);
		if (env->digest(env->ctx, buf + RING_DIGESTED_FROM, len - RING_DIGESTED_FROM,
						digest) != 0)
			return ring_fail(err, RING_ECANCELED, RING_DIGEST_FAILED, RING_NO_FACTS);
		if (memcmp(digest, h->digest, RING_DIGEST_SIZE) != 0)
			return ring_fail(err, RING_EFORMAT, RING_DIGEST_MISMATCH, RING_NO_FACTS);
	}
	return RING_OK;
}

/* The node table and the assignment (transposed if partition-major). */
static ring_status
read_body(const ring_env *env, const uint8_t *p, const ring_header *h,
		  ring *out, ring_error *err)
{
	size_t		slots = (size_t) h->replicas << h->part_power;
	uint32_t	mask = ((uint32_t) 1 << h->part_power) - 1;
	size_t		i;

	for (i = 0; i < h->node_count; i++, p += RING_NODE_SIZE)
	{
		if (ring_get_le32(p + 12) != 0)
			return ring_fail(err, RING_EFORMAT, RING_NODE_RESERVED_NOT_ZERO,
							 (ring_facts) {.node_index = (uint32_t) i});
		out->nodes[i].id = (int32_t) ring_get_le32(p);
		out->nodes[i].zone = (int32_t) ring_get_le32(p + 4);
		out->nodes[i].region = (int32_t) ring_get_le32(p + 8);
		out->nodes[i].weight = ring_bits_double(ring_get_le64(p + 16));
	}
	if (!out->partition_major)
		for (i = 0; i < slots; i++, p += 2)
			out->assignment[i] = (uint16_t) (p[0] | (p[1] << 8));
	else
		for (i = 0; i < slots; i++, p += 2)
		{
			/* the transpose: 2^26 scattered stores at most */
			if (i % 65536 == 0 && core_interrupts_check(env->interrupts))
				return ring_canceled(err);
			out->assignment[(size_t) (i & mask) * h->replicas + (i >> h->part_power)] =
				(uint16_t) (p[0] | (p[1] << 8));
		}
	return RING_OK;
}

ring_status
ring_decode_as(const ring_env *env, const uint8_t *buf, size_t len,
			   int partition_major, ring *out, ring_error *err)
{
	ring_header h;
	ring_status st;
	size_t		slots;

	memset(out, 0, sizeof(*out));
	st = check_bytes(env, buf, len, &h, err);
	if (st != RING_OK)
		return st;
	slots = (size_t) h.replicas << h.part_power;
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
		return ring_out_of_memory(err);
	}
	st = read_body(env, buf + h.header_size, &h, out, err);
	if (st == RING_OK)
		st = ring_validate(env, out, err);
	if (st != RING_OK)
		ring_free(env, out);
	return st;
}
