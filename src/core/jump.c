/*
 * src/core/jump.c
 *		JumpBackHash and JumpHash: consistent hashing of a key to n buckets.
 *
 * Both map a 64-bit key to a bucket in [0, n) so that every bucket is equally
 * likely and, when n grows by one, a key either stays or moves to the new
 * bucket n.  See jump.h for the implementations each one matches bit for bit.
 */
#include <float.h>
#include <stddef.h>

#include "bits.h"
#include "jump.h"
#include "splitmix64.h"

/*
 * JumpHash's reference code mixes int64 and double; its results are the
 * IEEE 754 double results, rounded once per operation.  Excess precision (x87)
 * would change rare results, so refuse to build where it is in effect.
 */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != -1
#error "jump_consistent_hash needs double arithmetic without excess precision (on x86, build with -msse2 -mfpmath=sse)"
#endif

/*
 * The paper's Algorithm 6, translated from Java to unsigned C arithmetic.
 *
 * The first draw v gives V0 (low half) and V1 (high half), and U = V0 ^ V1
 * keeps one bit per interval [2^m, 2^(m+1)) saying whether it holds an active
 * index.  Java shifts a long by (bitCount(u) << 5) mod 64, which is 32 when
 * bitCount(u) is odd and 0 when it is even: hence the parity below.  Each
 * further draw gives two candidates, low half first.
 */
static inline int32_t
jump_back(uint64_t *state, int32_t buckets, uint64_t *draws)
{
	uint64_t	v;
	uint32_t	n = (uint32_t) buckets;
	uint32_t	u;

	if (buckets < 1)
		return -1;
	if (buckets == 1)
		return 0;

	v = splitmix64_next(state);
	if (draws)
		(*draws)++;
	u = (uint32_t) (v ^ (v >> 32)) & (UINT32_MAX >> bits_clz32(n - 1));
	while (u != 0)
	{
		uint32_t	q = UINT32_C(1) << (31 - bits_clz32(u));	/* 2^m */
		uint32_t	b = q + ((uint32_t) (v >> (bits_parity32(u) << 5)) & (q - 1));

		for (;;)
		{
			uint64_t	w;

			if (b < n)
				return (int32_t) b;
			w = splitmix64_next(state);
			if (draws)
				(*draws)++;
			b = (uint32_t) w & ((q << 1) - 1);
			if (b < q)
				break;
			if (b < n)
				return (int32_t) b;
			b = (uint32_t) (w >> 32) & ((q << 1) - 1);
			if (b < q)
				break;
		}
		u ^= q;
	}
	return 0;
}

int32_t
jump_back_hash(uint64_t key, int32_t buckets)
{
	uint64_t	state = key;

	return jump_back(&state, buckets, NULL);
}

int32_t
jump_back_hash_counting_draws(uint64_t key, int32_t buckets, uint64_t *draws)
{
	uint64_t	state = key;

	return jump_back(&state, buckets, draws);
}

int32_t
jump_back_hash_drawing(uint64_t *state, int32_t buckets)
{
	return jump_back(state, buckets, NULL);
}

/*
 * The paper's C++ code, with its roundings kept: (b + 1) and 2^31 / (x + 1)
 * are doubles, their product is rounded once more, then truncated.  Guava
 * computes (b + 1) / ((x + 1) / 2^31) instead, one rounding, and so differs
 * in rare cases (and overflows an int when x = 2^31 - 1).
 */
int32_t
jump_consistent_hash(uint64_t key, int32_t buckets)
{
	int64_t		b = -1;
	int64_t		j = 0;

	if (buckets < 1)
		return -1;
	while (j < buckets)
	{
		b = j;
		key = key * UINT64_C(2862933555777941757) + 1;
		j = (int64_t) ((double) (b + 1) *
					   ((double) (INT64_C(1) << 31) / (double) ((key >> 33) + 1)));
	}
	return (int32_t) b;
}
