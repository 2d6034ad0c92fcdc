/*
 * test/fuzz/fuzz_ring_decode.c
 *		libFuzzer harness for the partition ring's decoders: the text (JSON)
 *		reader and the binary decoder, with and without a valid digest or
 *		fingerprint (so that the fuzzer reaches the checks behind them).  Every input must be
 *		refused with RING_EFORMAT or RING_EINVAL, or decode into a ring that
 *		keeps every promise: lookups in range, distinct nodes per partition,
 *		and identical round trips through both forms.
 *
 * Input: a mode byte (0 text, 1 binary as is, 2 binary with its magic,
 * version and digest made valid for format 2, 3 the same for format 1 and
 * its fingerprint), then the value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

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

static int
fuzz_digest(void *ctx, const uint8_t *data, size_t len, uint8_t *out)
{
	(void) ctx;
	return SHA256(data, len, out) == NULL;
}

static const ring_env env = {fuzz_alloc, fuzz_free, NULL, fuzz_digest, NULL};

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
	size_t		json_size,
				written;
	char	   *json;
	ring		again;
	ring_error	err;
	uint8_t		digest[RING_DIGEST_SIZE];

	require(ring_to_json(&env, r, NULL, 0, &json_size, &err) == RING_OK);
	json = malloc(json_size + 1);

	for (uint32_t partition = 0; partition < (UINT32_C(1) << r->part_power); partition++)
		for (uint32_t a = 0; a < r->replicas; a++)
		{
			require(ring_slot(r, a, partition) < r->node_count);
			for (uint32_t b = 0; b < a; b++)
				require(ring_slot(r, a, partition) != ring_slot(r, b, partition));
		}
	require(ring_partition_of(r, UINT64_MAX) == (UINT32_C(1) << r->part_power) - 1);

	require(ring_encode(&env, r, encoded, &err) == RING_OK);
	memcpy(digest, r->digest, RING_DIGEST_SIZE);
	require(ring_decode_as(&env, encoded, size, 1, &again, &err) == RING_OK);
	require(memcmp(again.digest, digest, RING_DIGEST_SIZE) == 0);
	ring_free(&env, &again);

	require(ring_to_json(&env, r, json, json_size, &written, &err) == RING_OK);
	require(written == json_size);
	require(ring_from_json(&env, json, json_size, &again, &err) == RING_OK);
	require(ring_encode(&env, &again, encoded, &err) == RING_OK);
	require(memcmp(again.digest, digest, RING_DIGEST_SIZE) == 0);
	ring_free(&env, &again);

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
	switch (data[0] % 4)
	{
		case 0:
			status = ring_from_json(&env, (const char *) copy, size - 1, &r, &err);
			break;
		case 1:
			status = ring_decode(&env, copy, size - 1, &r, &err);
			break;
		case 2:
			if (size - 1 >= RING_HEADER_SIZE)
			{
				memcpy(copy, "PRNG\x02\x00\x00\x00", 8);
				SHA256(copy + RING_DIGESTED_FROM, size - 1 - RING_DIGESTED_FROM,
					   copy + RING_DIGEST_OFFSET);
			}
			status = ring_decode(&env, copy, size - 1, &r, &err);
			break;
		default:
			if (size - 1 >= RING_V1_HEADER_SIZE)
			{
				memcpy(copy, "PRNG\x01\x00\x00\x00", 8);
				put_le64(copy + 8, ring_hash64(copy + 16, size - 1 - 16, RING_FORMAT_VERSION_1));
			}
			status = ring_decode(&env, copy, size - 1, &r, &err);
			break;
	}
	require(status == RING_OK || status == RING_EFORMAT || status == RING_EINVAL);
	/* a refusal says what was wrong with the input */
	require(status == RING_OK ||
			(err.code == status && err.problem > RING_NO_PROBLEM &&
			 err.problem <= RING_LAST_INPUT_PROBLEM));
	if (status == RING_OK)
	{
		check_ring(&r);
		ring_free(&env, &r);
	}
	free(copy);
	return 0;
}
