/*
 * test/fuzz/fuzz_jumpbackanchor.c
 *		libFuzzer harness for JumpBackAnchorHash's state decoder: any bytes
 *		are refused (EFORMAT, EBUCKETS, ERANGE, EDUPLICATE, exactly when a
 *		plain check says so) or decode into a set that keeps every promise:
 *		the bytes come back unchanged, keys land on buckets that are not
 *		removed (answers equal to a dense transcription of the algorithm for
 *		small sets), removing a bucket moves only its keys and adding it back
 *		restores the state.
 *
 * Input: a mode byte (0: the state bytes as they are; 1: the number of
 * buckets reduced below 256 and the removed ids below it, so that valid
 * states are common), then the state bytes, then 8-byte keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jump.h"
#include "core/jumpbackanchor.h"
#include "core/splitmix64.h"
#include "fuzz.h"

#define MAX_REMOVED 512

/* The dense transcription: per bucket id, the view its removal left (0: not removed) and its replacement. */
static int32_t dense_view[256],
			dense_next[256];

static int32_t
dense_at_view(int32_t b, int32_t v)
{
	int			steps = 0;

	while (dense_view[b] >= v)
	{
		REQUIRE(steps++ <= 256);
		b = dense_next[b];
	}
	return b;
}

static int32_t
dense_bucket(int32_t buckets, int32_t count, uint64_t key)
{
	uint64_t	state = key;
	int32_t		b;

	if (buckets <= count)
		return -1;
	if (buckets <= 1)
		return 0;
	b = jump_back_hash_drawing(&state, buckets);
	while (dense_view[b] != 0)
	{
		uint64_t	s = (uint64_t) dense_view[b];
		uint64_t	m = (splitmix64_next(&state) & UINT32_MAX) * s;

		if ((m & UINT32_MAX) < s)
			while ((m & UINT32_MAX) < (UINT64_C(1) << 32) % s)
				m = (splitmix64_next(&state) & UINT32_MAX) * s;
		b = dense_at_view((int32_t) (m >> 32), (int32_t) s);
	}
	return b;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		mode = (uint8_t) take(&data, &size, 1);
	size_t		state_len = (size_t) take(&data, &size, 2) % (4 + 4 * MAX_REMOVED + 3);
	uint8_t		state[4 + 4 * MAX_REMOVED + 3];
	uint8_t		again[4 + 4 * (MAX_REMOVED + 1)];
	int32_t		removed[MAX_REMOVED + 1];
	int32_t		buckets,
				count;
	jump_back_anchor h;
	jump_back_anchor_problem problem;
	jump_back_anchor_status status;
	void	   *memory;
	int			expect_range = 0,
				expect_duplicate = 0;

	if (state_len > size)
		state_len = size;
	memcpy(state, data, state_len);
	data += state_len;
	size -= state_len;
	if (mode % 2 == 1 && state_len >= 4)
	{
		state[0] %= 200;
		state[1] = state[2] = state[3] = 0;
		for (size_t i = 4; i + 3 < state_len; i += 4)
		{
			state[i] = (uint8_t) (state[i] % (state[0] + 1));
			state[i + 1] = state[i + 2] = state[i + 3] = 0;
		}
	}

	status = jump_back_anchor_state_header(state, state_len, &buckets, &count);
	if (state_len < 4 || state_len % 4 != 0)
	{
		REQUIRE(status == JUMP_BACK_ANCHOR_EFORMAT);
		return 0;
	}
	if ((int32_t) ((uint32_t) state[0] | (uint32_t) state[1] << 8 | (uint32_t) state[2] << 16 |
				   (uint32_t) state[3] << 24) < 0)
	{
		REQUIRE(status == JUMP_BACK_ANCHOR_EBUCKETS);
		return 0;
	}
	REQUIRE(status == JUMP_BACK_ANCHOR_OK && count == (int32_t) (state_len - 4) / 4);
	for (int32_t i = 0; i < count; i++)
	{
		removed[i] = jump_back_anchor_state_get(state, i);
		if (removed[i] < 0 || removed[i] >= buckets)
			expect_range = 1;
		for (int32_t j = 0; j < i; j++)
			if (removed[j] == removed[i])
				expect_duplicate = 1;
	}

	memory = allocate(jump_back_anchor_memory_size(count));
	status = jump_back_anchor_init(&h, buckets, removed, count, memory, NULL, &problem);
	if (expect_range)
		REQUIRE(status == JUMP_BACK_ANCHOR_ERANGE && problem.position >= 0 && problem.position < count &&
				removed[problem.position] == problem.bucket);
	else if (expect_duplicate)
		REQUIRE(status == JUMP_BACK_ANCHOR_EDUPLICATE && problem.position < problem.other_position &&
				removed[problem.position] == problem.bucket && removed[problem.other_position] == problem.bucket);
	else
		REQUIRE(status == JUMP_BACK_ANCHOR_OK);
	if (status != JUMP_BACK_ANCHOR_OK)
	{
		free(memory);
		return 0;
	}

	/* the bytes come back unchanged */
	jump_back_anchor_state_put(again, buckets, removed, count);
	REQUIRE(memcmp(again, state, state_len) == 0);

	/* the dense transcription, for small sets */
	if (buckets <= 256)
	{
		memset(dense_view, 0, sizeof(dense_view));
		for (int32_t r = 0; r < count; r++)
		{
			int32_t		n = buckets - 1 - r;

			dense_next[removed[r]] = dense_at_view(n, n + 1);
			dense_view[removed[r]] = n;
		}
	}

	/* keys: from the input, then a few fixed ones */
	for (int k = 0; k < 64; k++)
	{
		uint64_t	key = size >= 8 ? take(&data, &size, 8) : (uint64_t) k * UINT64_C(0x9E3779B97F4A7C15);
		int32_t		bucket = jump_back_anchor_bucket(&h, key);

		if (buckets == count)
			REQUIRE(bucket == -1);
		else
			REQUIRE(bucket >= 0 && bucket < buckets && !jump_back_anchor_is_removed(&h, bucket));
		if (buckets <= 256 && buckets > count)
			REQUIRE(bucket == dense_bucket(buckets, count, key));
	}

	/* remove a bucket of the set, then add it back */
	if (buckets > count && count < MAX_REMOVED)
	{
		int32_t		victim = (int32_t) (jump_back_anchor_bucket(&h, 12345) % buckets);
		int32_t		new_buckets = buckets,
					new_count = count,
					added;
		jump_back_anchor after;
		void	   *after_memory;

		REQUIRE(jump_back_anchor_remove(&h, victim, &new_buckets, removed, &new_count) == JUMP_BACK_ANCHOR_OK);
		if (new_buckets > 0)
		{
			after_memory = allocate(jump_back_anchor_memory_size(new_count));
			REQUIRE(jump_back_anchor_init(&after, new_buckets, removed, new_count, after_memory,
										  NULL, NULL) == JUMP_BACK_ANCHOR_OK);
			for (int k = 0; k < 64; k++)
			{
				uint64_t	key = (uint64_t) k * UINT64_C(0xD1B54A32D192ED03) + mode;
				int32_t		before = jump_back_anchor_bucket(&h, key);
				int32_t		now = jump_back_anchor_bucket(&after, key);

				REQUIRE(now != victim && (before == victim || now == before));
			}
			free(after_memory);
			REQUIRE(jump_back_anchor_add(&new_buckets, removed, &new_count, &added) == JUMP_BACK_ANCHOR_OK);
			REQUIRE(added == victim && new_buckets == buckets && new_count == count);
			jump_back_anchor_state_put(again, new_buckets, removed, new_count);
			REQUIRE(memcmp(again, state, state_len) == 0);
		}
	}
	free(memory);
	return 0;
}
