/*
 * test/fuzz/fuzz_ring_decode.c
 *		libFuzzer harness for the partition ring's decoders: the text (JSON)
 *		reader and the binary decoder, with and without a valid fingerprint
 *		(so that the fuzzer reaches the checks behind it).  Every input must be
 *		refused with RING_EFORMAT or RING_EINVAL, or decode into a ring that
 *		keeps every promise: lookups in range, distinct nodes per partition,
 *		and identical round trips through both forms.
 *
 * Input: a mode byte (0 text, 1 binary as is, 2 binary with its magic,
 * version and fingerprint made valid), then the value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring.h"

static void *
fuzz_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
fuzz_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

static const ring_env env = {fuzz_alloc, fuzz_free, NULL, NULL};

static void
require(int condition)
{
	if (!condition)
		abort();
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* Everything a decoded ring promises, and both round trips. */
static void
check_ring(ring *r)
{
	size_t		size = ring_encoded_size(r->part_power, r->replicas, r->node_count);
	uint8_t    *encoded = malloc(size);
	size_t		json_size = ring_to_json(r, NULL, 0);
	char	   *json = malloc(json_size + 1);
	ring		again;
	ring_error	err;
	uint64_t	fingerprint = r->fingerprint;

	for (uint32_t partition = 0; partition < (UINT32_C(1) << r->part_power); partition++)
		for (uint32_t a = 0; a < r->replicas; a++)
		{
			require(ring_slot(r, a, partition) < r->node_count);
			for (uint32_t b = 0; b < a; b++)
				require(ring_slot(r, a, partition) != ring_slot(r, b, partition));
		}
	require(ring_partition_of(r, UINT64_MAX) == (UINT32_C(1) << r->part_power) - 1);

	ring_encode(r, encoded);
	require(ring_decode(&env, encoded, size, &again, &err) == RING_OK);
	require(again.fingerprint == r->fingerprint);
	ring_free(&env, &again);

	require(ring_to_json(r, json, json_size) == json_size);
	require(ring_from_json(&env, json, json_size, &again, &err) == RING_OK);
	ring_encode(&again, encoded);
	require(again.fingerprint == r->fingerprint);
	ring_free(&env, &again);
	(void) fingerprint;

	free(encoded);
	free(json);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ring		r;
	ring_error	err;
	ring_status status;
	uint8_t    *copy;

	if (size < 1)
		return 0;
	copy = malloc(size);
	memcpy(copy, data + 1, size - 1);
	switch (data[0] % 3)
	{
		case 0:
			status = ring_from_json(&env, (const char *) copy, size - 1, &r, &err);
			break;
		case 1:
			status = ring_decode(&env, copy, size - 1, &r, &err);
			break;
		default:
			if (size - 1 >= RING_HEADER_SIZE)
			{
				memcpy(copy, "PRNG\x01\x00\x00\x00", 8);
				put_le64(copy + 8, ring_hash64(copy + 16, size - 1 - 16, RING_FORMAT_VERSION));
			}
			status = ring_decode(&env, copy, size - 1, &r, &err);
			break;
	}
	require(status == RING_OK || status == RING_EFORMAT || status == RING_EINVAL);
	if (status == RING_OK)
	{
		check_ring(&r);
		ring_free(&env, &r);
	}
	free(copy);
	return 0;
}
