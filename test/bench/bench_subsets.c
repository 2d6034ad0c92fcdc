/*
 * test/bench/bench_subsets.c
 *		Per-call cost of a subset of k = 20 backends at N = 1000 and at
 *		N = 10^6 (and 2^31 - 1 for the algorithms whose cost does not grow
 *		with N): Rocksteadier (L = 10) beside Ringsteady, random, round-robin,
 *		deterministic and consistent subsetting.  The ratio of the two times
 *		shows how the cost grows with the fleet; Rocksteadier's target is
 *		within 2x.
 *
 * Usage: bench_subsets [ROUNDS]   (default 7; 2 with --quick)
 * Each round times every case on the same random frontends, one after the
 * other; each figure is the median over the rounds.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/baselines.h"
#include "core/ringsteady.h"
#include "core/rocksteadier.h"

#define K 20
#define FRONTENDS 4096

static uint32_t frontends[FRONTENDS];
static uint32_t out[K];
static uint64_t workspace[1 << 21];	/* 16 MiB: deterministic at N = 10^6 */

typedef enum
{
	ROCKSTEADIER, RINGSTEADY, RANDOM, ROUND_ROBIN, DETERMINISTIC, CONSISTENT
} method;

static const char *const names[] = {
	"rocksteadier (L = 10)", "ringsteady", "random", "round_robin", "deterministic", "consistent"
};

/* ns per call, over `calls` frontends */
static double
time_method(method m, uint32_t backends, int calls)
{
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (int i = 0; i < calls; i++)
	{
		uint32_t	f = frontends[i % FRONTENDS];

		switch (m)
		{
			case ROCKSTEADIER:
				rocksteadier_write_subset(f, backends, K, 10, out, (uint32_t *) workspace);
				break;
			case RINGSTEADY:
				ringsteady_write_subset(f, backends, K, true, out);
				break;
			case RANDOM:
				random_write_subset(f, backends, K, 0, out, workspace);
				break;
			case ROUND_ROBIN:
				round_robin_write_subset(f, backends, K, out);
				break;
			case DETERMINISTIC:
				deterministic_write_subset(f, backends, K, 0, out, workspace);
				break;
			case CONSISTENT:
				consistent_write_subset(f, backends, K, 0, out, workspace);
				break;
		}
		sum += out[0] + out[K - 1];
	}
	bench_sink += sum;
	return (bench_now_ns() - start) / calls;
}

int
main(int argc, char **argv)
{
	int			rounds = 7;
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);
	const uint32_t sizes[] = {1000, 1000000, 2147483647};

	if (argc > 1)
		rounds = strcmp(argv[1], "--quick") == 0 ? 2 : atoi(argv[1]);
	if (rounds < 1 || rounds > 64)
		rounds = 7;
	for (int i = 0; i < FRONTENDS; i++)
		frontends[i] = (uint32_t) (bench_random(&state) % 100000);

	printf("method,ns_at_1000,ns_at_1000000,ns_at_2147483647,ratio_1000000_to_1000\n");
	for (int m = 0; m <= CONSISTENT; m++)
	{
		double		samples[3][64];
		double		median[3];
		bool		linear = m == DETERMINISTIC || m == CONSISTENT;
		int			calls_small = linear ? 20000 : 400000;

		for (int r = 0; r < rounds; r++)
			for (int s = 0; s < 3; s++)
				samples[s][r] = s == 2 && linear ? 0 :
					time_method((method) m, sizes[s], s == 0 ? calls_small : (linear ? 40 : calls_small));
		for (int s = 0; s < 3; s++)
			median[s] = bench_median(samples[s], rounds);
		printf("%s,%.1f,%.1f,", names[m], median[0], median[1]);
		if (linear)
			printf("n/a (O(N)),");
		else
			printf("%.1f,", median[2]);
		printf("%.2f\n", median[1] / median[0]);
	}
	return 0;
}
