/*
 * test/bench/bench_jumpbackanchor.c
 *		Per-call cost of JumpBackAnchorHash against JumpBackHash on the same
 *		random keys, for n = 10 .. 10^6 buckets ever in use, with 0, 1, 10 and
 *		1000 of them removed (random ids, random order; at most n - 1), and the
 *		time to decode a state of 1000 and of 2^20 removals.
 *
 * Usage: bench_jumpbackanchor [ROUNDS]   (default 7; 2 with --quick)
 * Prints CSV (n, removed, ns per call of jumpbackhash and of
 * jumpbackanchorhash, their ratio) and a summary on stderr.  Each round times
 * both on the same keys, one after the other; each figure is the median over
 * the rounds.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/jump.h"
#include "core/jumpbackanchor.h"

#define KEYS (1 << 20)

static uint64_t keys[KEYS];

static double
time_jump(int32_t n)
{
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < KEYS; i++)
		sum += (uint64_t) jump_back_hash(keys[i], n);
	bench_sink += sum;
	return (bench_now_ns() - start) / KEYS;
}

static double
time_anchor(const jump_back_anchor *h)
{
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < KEYS; i++)
		sum += (uint64_t) jump_back_anchor_bucket(h, keys[i]);
	bench_sink += sum;
	return (bench_now_ns() - start) / KEYS;
}

/* count distinct random ids in [0, n), in random order */
static void
random_removed(int32_t n, int32_t *removed, int32_t count, uint64_t *state)
{
	for (int32_t i = 0; i < count;)
	{
		int32_t		b = (int32_t) ((bench_random(state) >> 32) * (uint64_t) n >> 32);
		int			seen = 0;

		for (int32_t j = 0; j < i && !seen; j++)
			seen = removed[j] == b;
		if (!seen)
			removed[i++] = b;
	}
}

int
main(int argc, char **argv)
{
	const int32_t ns[] = {10, 100, 1000, 10000, 100000, 1000000};
	const int32_t removals[] = {0, 1, 10, 1000};
	int			rounds = 7;
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);
	static int32_t removed[1 << 20];
	double		worst_empty = 0;

	if (argc > 1)
		rounds = strcmp(argv[1], "--quick") == 0 ? 2 : atoi(argv[1]);
	if (rounds < 1)
		rounds = 1;
	if (rounds > 64)
		rounds = 64;
	for (int i = 0; i < KEYS; i++)
		keys[i] = bench_random(&state);

	printf("n,removed,jumpbackhash_ns,jumpbackanchorhash_ns,ratio\n");
	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
		for (size_t r = 0; r < sizeof(removals) / sizeof(removals[0]); r++)
		{
			int32_t		n = ns[j];
			int32_t		count = removals[r] < n ? removals[r] : n - 1;
			double		a[64],
						b[64],
						ma,
						mb;
			jump_back_anchor h;
			void	   *memory;

			if (r > 0 && count == (removals[r - 1] < n ? removals[r - 1] : n - 1))
				continue;
			random_removed(n, removed, count, &state);
			memory = malloc(jump_back_anchor_memory_size(count) + 8);
			if (jump_back_anchor_init(&h, n, removed, count, memory, NULL, NULL) != JUMP_BACK_ANCHOR_OK)
				return 1;
			for (int k = 0; k < rounds; k++)
			{
				a[k] = time_jump(n);
				b[k] = time_anchor(&h);
			}
			ma = bench_median(a, rounds);
			mb = bench_median(b, rounds);
			printf("%d,%d,%.3f,%.3f,%.3f\n", n, count, ma, mb, mb / ma);
			if (count == 0 && mb / ma > worst_empty)
				worst_empty = mb / ma;
			free(memory);
		}

	/* decoding: 1000 and 2^20 removals of 2^31 - 1 buckets */
	for (int32_t count = 1000; count <= (1 << 20); count = count == 1000 ? 1 << 20 : (1 << 20) + 1)
	{
		double		samples[64];
		void	   *memory = malloc(jump_back_anchor_memory_size(count));
		jump_back_anchor h;

		random_removed(INT32_MAX, removed, count < 100000 ? count : 0, &state);
		if (count >= 100000)
			for (int32_t i = 0; i < count; i++)
				removed[i] = INT32_MAX - 1 - 2 * (int32_t) (((int64_t) i * 7919) % count);	/* distinct, scattered */
		for (int k = 0; k < rounds; k++)
		{
			double		start = bench_now_ns();

			if (jump_back_anchor_init(&h, INT32_MAX, removed, count, memory, NULL, NULL) != JUMP_BACK_ANCHOR_OK)
				return 1;
			samples[k] = (bench_now_ns() - start) / 1e6;
		}
		fprintf(stderr, "decoding %d removals: %.3f ms, %zu bytes\n", count, bench_median(samples, rounds),
				jump_back_anchor_memory_size(count));
		free(memory);
	}
	fprintf(stderr, "jumpbackanchorhash / jumpbackhash with nothing removed: at most %.2f\n", worst_empty);
	return 0;
}
