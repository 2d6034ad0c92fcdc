/*
 * test/bench/bench_ringsteady.c
 *		Per-call cost of a Ringsteady subset (k = 20, random frontends) as the
 *		fleet grows, and against the post's linear-time method, which lists the
 *		ring order of all N backends on every call.
 *
 * Usage: bench_ringsteady [ROUNDS]   (default 7)
 * Every figure is the median over the rounds; each round times the cases one
 * after the other.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/ringsteady.h"
#include "ringsteady_post.h"

#define K 20

static double
time_core(uint32_t backends, int calls, uint64_t *state)
{
	uint32_t	subset[K];
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < calls; i++)
	{
		uint32_t	frontend = (uint32_t) (bench_random(state) >> 33);

		ringsteady_write_subset(frontend, backends, K, true, subset);
		sum += subset[K - 1];
	}
	bench_sink += sum;
	return (bench_now_ns() - start) / calls;
}

static double
time_post(uint32_t backends, int calls, uint64_t *state)
{
	uint32_t	subset[K];
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < calls; i++)
	{
		uint32_t	frontend = (uint32_t) (bench_random(state) >> 33);

		post_ringsteady_linear_time(backends, frontend, K, subset);
		sum += subset[K - 1];
	}
	bench_sink += sum;
	return (bench_now_ns() - start) / calls;
}

int
main(int argc, char **argv)
{
	const uint32_t fleets[] = {1000, 1000000, 2147483647};
	int			rounds = argc > 1 ? atoi(argv[1]) : 7;
	double		core[3][64],
				post[64];
	double		core_median[3],
				post_median;
	uint64_t	state = 42;

	if (rounds < 1 || rounds > 64)
		rounds = 7;
	for (int r = 0; r < rounds; r++)
	{
		for (int f = 0; f < 3; f++)
			core[f][r] = time_core(fleets[f], 200000, &state);
		post[r] = time_post(1000000, 50, &state);
	}
	printf("backends,ns_per_call\n");
	for (int f = 0; f < 3; f++)
	{
		core_median[f] = bench_median(core[f], rounds);
		printf("%u,%.1f\n", fleets[f], core_median[f]);
	}
	post_median = bench_median(post, rounds);
	printf("1000000 (post's linear-time method),%.1f\n", post_median);
	fprintf(stderr, "ringsteady, k = 20: time per call at 2^31 - 1 backends / at 1000 = %.2f; "
			"post's linear-time method / this at 10^6 backends = %.0f\n",
			core_median[2] / core_median[0], post_median / core_median[1]);
	return 0;
}
