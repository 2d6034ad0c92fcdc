/*
 * test/bench/bench_subsets.c
 *		Per-call cost of a subset of k = 20 backends as the fleet grows, from
 *		N = 100 to N = 2^31 - 1: Ringsteady and Rocksteadier (L = 10) beside
 *		the article's baselines (random, round-robin, deterministic,
 *		consistent) and the Ringsteady post's linear-time method, which lists
 *		the ring order of all N backends on every call.  The methods whose
 *		cost grows with N (deterministic, consistent, the post's method) stop
 *		at N = 10^6.
 *
 * Usage: bench_subsets [ROUNDS]   (default 7)
 * Prints CSV: backends, then ns per call of each method (empty where not
 * run).  Each round times every method on the same random frontends, one
 * after the other; each figure is the median over the rounds.  A sample
 * makes as many calls as fill about 10 ms, so that cheap and expensive
 * methods are timed alike.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/baselines.h"
#include "core/ringsteady.h"
#include "core/rocksteadier.h"
#include "ringsteady_post.h"

#define K 20
#define FRONTENDS 4096
#define MAX_ROUNDS 64
#define SAMPLE_NS 1e7
#define LINEAR_MAX_BACKENDS 1000000

typedef enum
{
	RINGSTEADY, ROCKSTEADIER, RANDOM, ROUND_ROBIN, DETERMINISTIC, CONSISTENT, POST_LINEAR_TIME,
	METHODS
} method;

static const char *const names[METHODS] = {
	"ringsteady", "rocksteadier", "random", "round_robin", "deterministic", "consistent",
	"post_linear_time"
};

static const uint32_t fleets[] = {
	100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 2147483647
};
#define FLEETS (int) (sizeof(fleets) / sizeof(fleets[0]))

static uint32_t frontends[FRONTENDS];
static uint32_t out[K];
/* deterministic subsetting needs N uint32 values; consistent, uint64 ones */
static uint64_t workspace[LINEAR_MAX_BACKENDS / 2 + K];

static bool
grows_with_fleet(method m)
{
	return m == DETERMINISTIC || m == CONSISTENT || m == POST_LINEAR_TIME;
}

/* ns per call over `calls` frontends */
static double
time_calls(method m, uint32_t backends, long calls)
{
	uint64_t	sum = 0;
	double		start = bench_now_ns();

	for (long i = 0; i < calls; i++)
	{
		uint32_t	f = frontends[i % FRONTENDS];

		switch (m)
		{
			case RINGSTEADY:
				ringsteady_write_subset(f, backends, K, true, out);
				break;
			case ROCKSTEADIER:
				rocksteadier_write_subset(f, backends, K, 10, out, (uint32_t *) workspace, NULL);
				break;
			case RANDOM:
				random_write_subset(f, backends, K, 0, out, workspace, NULL);
				break;
			case ROUND_ROBIN:
				round_robin_write_subset(f, backends, K, out);
				break;
			case DETERMINISTIC:
				deterministic_write_subset(f, backends, K, 0, out, workspace, NULL);
				break;
			case CONSISTENT:
				consistent_write_subset(f, backends, K, 0, out, workspace, NULL);
				break;
			case POST_LINEAR_TIME:
				post_ringsteady_linear_time(backends, f, K, out);
				break;
			case METHODS:
				break;
		}
		sum += out[0] + out[K - 1];
	}
	bench_sink += sum;
	return (bench_now_ns() - start) / calls;
}

/* The number of calls that take about SAMPLE_NS. */
static long
calls_per_sample(method m, uint32_t backends)
{
	long		calls = 1;
	double		ns;

	while ((ns = time_calls(m, backends, calls) * calls) < SAMPLE_NS / 8)
		calls *= 2;
	calls = (long) (calls * SAMPLE_NS / ns);
	return calls > 0 ? calls : 1;
}

int
main(int argc, char **argv)
{
	int			rounds = argc > 1 ? atoi(argv[1]) : 7;
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 7;
	if (random_subset_workspace_bytes(2147483647, K) > sizeof(workspace) ||
		consistent_subset_workspace_bytes(2147483647, K) > sizeof(workspace) ||
		ROCKSTEADIER_WORKSPACE(10) * sizeof(uint32_t) > sizeof(workspace) ||
		deterministic_subset_workspace_bytes(LINEAR_MAX_BACKENDS) > sizeof(workspace))
	{
		fprintf(stderr, "bench_subsets: workspace too small\n");
		return 1;
	}
	for (int i = 0; i < FRONTENDS; i++)
		frontends[i] = (uint32_t) (bench_random(&state) >> 33);

	printf("backends");
	for (int m = 0; m < METHODS; m++)
		printf(",%s_ns", names[m]);
	printf("\n");
	for (int f = 0; f < FLEETS; f++)
	{
		double		samples[METHODS][MAX_ROUNDS];
		long		calls[METHODS];
		bool		run[METHODS];

		for (int m = 0; m < METHODS; m++)
		{
			run[m] = !grows_with_fleet((method) m) || fleets[f] <= LINEAR_MAX_BACKENDS;
			if (run[m])
				calls[m] = calls_per_sample((method) m, fleets[f]);
		}
		for (int r = 0; r < rounds; r++)
			for (int m = 0; m < METHODS; m++)
				if (run[m])
					samples[m][r] = time_calls((method) m, fleets[f], calls[m]);
		printf("%u", fleets[f]);
		for (int m = 0; m < METHODS; m++)
		{
			if (run[m])
				printf(",%.1f", bench_median(samples[m], rounds));
			else
				printf(",");
		}
		printf("\n");
		fflush(stdout);
	}
	return 0;
}
