/*
 * test/fuzz/fuzz_subsets.c
 *		libFuzzer harness for the subset functions and the consistent hashes of
 *		the pure core, with arbitrary arguments: every call must either refuse
 *		its arguments by its return code or give an answer that keeps the
 *		functions' promises (members in range, distinct, prefixes of larger
 *		subsets; buckets in range).
 *
 * Input: frontend (4 bytes), backends (4), subset size (2), flags (1), key (8),
 * buckets (4), little-endian; missing bytes are zeros.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jump.h"
#include "core/ringsteady.h"

#define MAX_MEMBERS 2048

static uint64_t
take(const uint8_t **data, size_t *size, int bytes)
{
	uint64_t	value = 0;

	for (int i = 0; i < bytes; i++)
	{
		if (*size > 0)
		{
			value |= (uint64_t) **data << (8 * i);
			(*data)++;
			(*size)--;
		}
	}
	return value;
}

static void
require(int condition)
{
	if (!condition)
		abort();
}

static void
check_ringsteady(uint32_t frontend, uint32_t backends, uint32_t subset_size, bool scaling)
{
	static uint32_t subset[MAX_MEMBERS],
				smaller[MAX_MEMBERS];
	static uint8_t seen[MAX_MEMBERS];
	int64_t		count = ringsteady_write_subset(frontend, backends, subset_size, scaling, subset);

	if (backends == 0)
	{
		require(count == -1);
		return;
	}
	require(count == (subset_size < backends ? subset_size : backends));
	for (int64_t i = 0; i < count; i++)
		require(subset[i] < backends);
	/* distinct: exactly, where the backends fit the table; else consecutive */
	if (backends <= MAX_MEMBERS)
	{
		memset(seen, 0, backends);
		for (int64_t i = 0; i < count; i++)
		{
			require(!seen[subset[i]]);
			seen[subset[i]] = 1;
		}
	}
	for (int64_t i = 1; i < count; i++)
		require(subset[i] != subset[i - 1]);
	if (count > 0)
	{
		uint32_t	k = (uint32_t) (count - 1);

		require(ringsteady_write_subset(frontend, backends, k, scaling, smaller) == k);
		require(memcmp(smaller, subset, sizeof(uint32_t) * k) == 0);
	}
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t	frontend = (uint32_t) take(&data, &size, 4);
	uint32_t	backends = (uint32_t) take(&data, &size, 4);
	uint32_t	subset_size = (uint32_t) take(&data, &size, 2) % (MAX_MEMBERS + 1);
	uint32_t	flags = (uint32_t) take(&data, &size, 1);
	uint64_t	key = take(&data, &size, 8);
	int32_t		buckets = (int32_t) (uint32_t) take(&data, &size, 4);
	int32_t		bucket;

	check_ringsteady(frontend, backends, subset_size, flags & 1);

	bucket = jump_back_hash(key, buckets);
	require(buckets < 1 ? bucket == -1 : (bucket >= 0 && bucket < buckets));
	bucket = jump_consistent_hash(key, buckets);
	require(buckets < 1 ? bucket == -1 : (bucket >= 0 && bucket < buckets));
	return 0;
}
