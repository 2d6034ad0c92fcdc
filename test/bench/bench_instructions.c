/*
 * test/bench/bench_instructions.c
 *		A driver for counting instructions per call with
 *		valgrind --tool=callgrind: calls one function of the pure core CALLS
 *		times with the same arguments as bench_subsets and bench_jump (k = 20,
 *		L = 10, random frontends below 100,000 or random 64-bit keys), or
 *		measures one job, so that the instructions of the function divided by
 *		CALLS is the cost of a call.  Timings are the other benchmarks' job.
 *
 * Usage: bench_instructions FUNCTION BACKENDS CALLS
 *	FUNCTION: jumpbackhash, jumphash, ringsteady, rocksteadier, random,
 *	round_robin, deterministic, consistent (BACKENDS: N, or buckets);
 *	balance-rocksteadier, diversity-rocksteadier, churn-rocksteadier,
 *	spread-rocksteadier (a job of CALLS frontends, BACKENDS backends, k = 20,
 *	churn to BACKENDS + 1, restart width 10).
 * Example:
 *	valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *		test/build/bench/bench_instructions rocksteadier 1000 100000
 *	callgrind_annotate --inclusive=yes cg.out | grep rocksteadier_write_subset
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "core/baselines.h"
#include "core/jump.h"
#include "core/ringsteady.h"
#include "core/rocksteadier.h"
#include "core/subset_metrics.h"

#define K 20
#define LOT_SIZE 10

static uint32_t out[K];
static uint64_t workspace[1 << 21];

static void *
allocate(void *arg, size_t bytes)
{
	(void) arg;
	return malloc(bytes);
}

static void
release(void *arg, void *pointer)
{
	(void) arg;
	free(pointer);
}

static const subset_env env = {allocate, release, NULL, NULL};

static int
measure(const char *what, uint32_t backends, uint32_t frontends)
{
	subset_job	job = {{SUBSET_ROCKSTEADIER, 0, LOT_SIZE}, frontends, backends, K};
	subset_job	after = job;
	subset_balance_result balance;
	subset_diversity_result diversity;
	subset_churn_result churn;
	subset_spread_result spread;

	after.backends = backends + 1;
	if (strcmp(what, "balance-rocksteadier") == 0)
		return subset_measure_balance(&job, &env, &balance);
	if (strcmp(what, "diversity-rocksteadier") == 0)
		return subset_measure_diversity(&job, &env, &diversity);
	if (strcmp(what, "churn-rocksteadier") == 0)
		return subset_measure_churn(&job, &after, &env, &churn);
	if (strcmp(what, "spread-rocksteadier") == 0)
		return subset_measure_spread(&job, 10, &env, &spread);
	return -1;
}

int
main(int argc, char **argv)
{
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);
	uint64_t	sum = 0;
	const char *what;
	uint32_t	backends;
	long		calls;

	if (argc != 4)
	{
		fprintf(stderr, "usage: bench_instructions FUNCTION BACKENDS CALLS\n");
		return 2;
	}
	what = argv[1];
	backends = (uint32_t) strtoul(argv[2], NULL, 10);
	calls = atol(argv[3]);
	if (strncmp(what, "balance-", 8) == 0 || strncmp(what, "diversity-", 10) == 0 ||
		strncmp(what, "churn-", 6) == 0 || strncmp(what, "spread-", 7) == 0)
	{
		if (measure(what, backends, (uint32_t) calls) != SUBSET_METRICS_OK)
		{
			fprintf(stderr, "bench_instructions: cannot measure %s\n", what);
			return 1;
		}
		return 0;
	}
	for (long i = 0; i < calls; i++)
	{
		uint64_t	key = bench_random(&state);
		uint32_t	f = (uint32_t) (key % 100000);

		if (strcmp(what, "jumpbackhash") == 0)
			sum += jump_back_hash(key, (int32_t) backends);
		else if (strcmp(what, "jumphash") == 0)
			sum += jump_consistent_hash(key, (int32_t) backends);
		else if (strcmp(what, "ringsteady") == 0)
			sum += ringsteady_write_subset(f, backends, K, true, out);
		else if (strcmp(what, "rocksteadier") == 0)
			sum += rocksteadier_write_subset(f, backends, K, LOT_SIZE, out, (uint32_t *) workspace, NULL);
		else if (strcmp(what, "random") == 0)
			sum += random_write_subset(f, backends, K, 0, out, workspace, NULL);
		else if (strcmp(what, "round_robin") == 0)
			sum += round_robin_write_subset(f, backends, K, out);
		else if (strcmp(what, "deterministic") == 0)
			sum += deterministic_write_subset(f, backends, K, 0, out, workspace, NULL);
		else if (strcmp(what, "consistent") == 0)
			sum += consistent_write_subset(f, backends, K, 0, out, workspace, NULL);
		else
		{
			fprintf(stderr, "bench_instructions: no function %s\n", what);
			return 2;
		}
		sum += out[0];
	}
	bench_sink += sum;
	return 0;
}
