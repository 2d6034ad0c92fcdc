/*
 * test/bench/bench_jump.c
 *		Per-call cost of mapping random 64-bit keys to n buckets, the
 *		JumpBackHash paper's Figure 3: JumpBackHash, JumpHash, the modulo
 *		operation and Lemire's multiply-shift (neither of the last two is
 *		consistent), for n = 2^i, 2^i + 1, floor(1.25 * 2^i), floor(1.5 * 2^i)
 *		up to 10^6.
 *
 * Usage: bench_jump [ROUNDS]   (default 7; 2 with --quick)
 * Prints CSV (n, then ns per call of each method) and a summary of ratios.
 * Each round times every method on the same keys, one after the other, and
 * each figure is the median over the rounds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/jump.h"

#define KEYS (1 << 20)

static uint64_t keys[KEYS];

/* The baselines, not inlined, so that every method pays for a call. */
static __attribute__((noinline)) int32_t
modulo_bucket(uint64_t key, int32_t n)
{
	return (int32_t) (key % (uint32_t) n);
}

static __attribute__((noinline)) int32_t
lemire_bucket(uint64_t key, int32_t n)
{
	return (int32_t) (((key >> 32) * (uint32_t) n) >> 32);
}

typedef struct
{
	const char *name;
	int32_t		(*bucket) (uint64_t key, int32_t n);
} method;

static const method methods[] = {
	{"jumpbackhash", jump_back_hash},
	{"jumphash", jump_consistent_hash},
	{"modulo", modulo_bucket},
	{"lemire", lemire_bucket},
};
#define METHODS (int) (sizeof(methods) / sizeof(methods[0]))

static double
time_method(const method *m, int32_t n)
{
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < KEYS; i++)
		sum += (uint64_t) m->bucket(keys[i], n);
	bench_sink += sum;
	return (bench_now_ns() - start) / KEYS;
}

static int
compare_ints(const void *a, const void *b)
{
	return (*(const int32_t *) a > *(const int32_t *) b) - (*(const int32_t *) a < *(const int32_t *) b);
}

int
main(int argc, char **argv)
{
	int			rounds = 7;
	int32_t		ns[128];
	int			count = 0;
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);
	double		slowest_ratio = INFINITY;
	int32_t		slowest_ratio_n = 0;
	double		ratio_at_million = 0;

	if (argc > 1)
		rounds = strcmp(argv[1], "--quick") == 0 ? 2 : atoi(argv[1]);
	if (rounds < 1)
		rounds = 1;
	for (int i = 0; i < KEYS; i++)
		keys[i] = bench_random(&state);

	for (int i = 0; (1 << i) <= 1000000; i++)
	{
		int32_t		candidates[] = {1 << i, (1 << i) + 1, (int32_t) floor(1.25 * (1 << i)),
		(int32_t) floor(1.5 * (1 << i))};

		for (int c = 0; c < 4; c++)
			if (candidates[c] <= 1000000 && (count == 0 || candidates[c] != ns[count - 1]))
				ns[count++] = candidates[c];
	}
	ns[count++] = 1000000;
	qsort(ns, count, sizeof(int32_t), compare_ints);

	printf("n");
	for (int m = 0; m < METHODS; m++)
		printf(",%s_ns", methods[m].name);
	printf("\n");
	for (int j = 0; j < count; j++)
	{
		double		samples[METHODS][64];
		double		median[METHODS];

		if (j > 0 && ns[j] == ns[j - 1])
			continue;
		for (int r = 0; r < rounds && r < 64; r++)
			for (int m = 0; m < METHODS; m++)
				samples[m][r] = time_method(&methods[m], ns[j]);
		printf("%d", ns[j]);
		for (int m = 0; m < METHODS; m++)
		{
			median[m] = bench_median(samples[m], rounds < 64 ? rounds : 64);
			printf(",%.3f", median[m]);
		}
		printf("\n");
		if (ns[j] >= 8 && median[1] / median[0] < slowest_ratio)
		{
			slowest_ratio = median[1] / median[0];
			slowest_ratio_n = ns[j];
		}
		if (ns[j] == 1000000)
			ratio_at_million = median[1] / median[0];
	}
	fprintf(stderr, "jumphash / jumpbackhash time per call: smallest ratio for n >= 8 is %.2f (n = %d); "
			"%.2f at n = 10^6\n", slowest_ratio, slowest_ratio_n, ratio_at_million);
	return 0;
}
