/*
 * test/figure2/figure2.c
 *		Reproduces Figure 2 of "Reinventing Backend Subsetting at Google"
 *		(ACM Queue 2023): connection balance against M/N for k = 20,
 *		1 <= M <= 256, k <= N <= 256, M * k > N, for random, deterministic,
 *		Ringsteady without and with backend scaling, and Rocksteadier (L = 10);
 *		and the SRE book's random-subsetting example (300 clients, 300
 *		backends, subsets of 90).
 *
 * Usage: figure2 CSV_FILE
 * Writes one row per job (M, N) to CSV_FILE: the achievable utilization of
 * each algorithm (ceil(M k / N) / max connections, 1 is ideal) and the
 * distinct subsets of Ringsteady and Rocksteadier; prints the summary that
 * the README quotes, and the time the sweep took.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/subset_metrics.h"

#define K 20
#define MAX_TASKS 256

static const subset_algorithm_id algorithms[] = {
	SUBSET_RANDOM, SUBSET_DETERMINISTIC, SUBSET_RINGSTEADY_UNSCALED, SUBSET_RINGSTEADY, SUBSET_ROCKSTEADIER
};
#define ALGORITHMS 5

/* M/N bins of the summary */
static const double bin_edges[] = {0, 0.25, 0.5, 1, 2, 4, 8, 16};
#define BINS 7

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

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static subset_job
job_of(subset_algorithm_id id, uint32_t m, uint32_t n, uint32_t k, uint64_t seed)
{
	subset_job	job;

	job.algorithm.id = id;
	job.algorithm.seed = seed;
	job.algorithm.lot_size = 10;
	job.frontends = m;
	job.backends = n;
	job.subset_size = k;
	return job;
}

int
main(int argc, char **argv)
{
	FILE	   *csv;
	double		start = now_seconds();
	double		sum[ALGORITHMS][BINS] = {{0}},
				lowest[ALGORITHMS][BINS];
	long		jobs_in_bin[BINS] = {0};
	long		jobs = 0,
				ideal[ALGORITHMS] = {0},
				best[ALGORITHMS] = {0};
	double		total[ALGORITHMS] = {0};
	double		ring_distinct_share = 0,
				rock_distinct_share = 0;
	long		more_frontends_than_backends = 0,
				ring_distinct_more = 0,
				rock_distinct_more = 0;
	double		rock_minus_ring = 0,
				worst_rock_minus_ring = 0;

	if (argc != 2)
	{
		fprintf(stderr, "usage: %s CSV_FILE\n", argv[0]);
		return 2;
	}
	csv = fopen(argv[1], "w");
	if (csv == NULL)
	{
		perror(argv[1]);
		return 1;
	}
	for (int a = 0; a < ALGORITHMS; a++)
		for (int b = 0; b < BINS; b++)
			lowest[a][b] = 1;

	fprintf(csv, "frontends,backends,random,deterministic,ringsteady_unscaled,ringsteady,rocksteadier,"
			"ringsteady_distinct,rocksteadier_distinct\n");
	for (uint32_t n = K; n <= MAX_TASKS; n++)
		for (uint32_t m = 1; m <= MAX_TASKS; m++)
		{
			double		u[ALGORITHMS];
			subset_diversity_result ring,
						rock;
			double		ratio = (double) m / n;
			int			bin = 0;

			if (m * K <= n)
				continue;
			while (ratio >= bin_edges[bin + 1])
				bin++;
			for (int a = 0; a < ALGORITHMS; a++)
			{
				subset_job	job = job_of(algorithms[a], m, n, K, 0);
				subset_balance_result balance;

				if (subset_measure_balance(&job, &env, &balance) != SUBSET_METRICS_OK)
				{
					fprintf(stderr, "cannot measure M %u N %u\n", m, n);
					return 1;
				}
				u[a] = balance.achievable_utilization;
				sum[a][bin] += u[a];
				total[a] += u[a];
				if (u[a] < lowest[a][bin])
					lowest[a][bin] = u[a];
				ideal[a] += u[a] == 1.0;
			}
			for (int a = 0; a < ALGORITHMS; a++)
			{
				bool		at_least_as_good = true;

				for (int b = 0; b < ALGORITHMS; b++)
					at_least_as_good = at_least_as_good && u[a] >= u[b];
				best[a] += at_least_as_good;
			}
			{
				subset_job	ring_job = job_of(SUBSET_RINGSTEADY, m, n, K, 0);
				subset_job	rock_job = job_of(SUBSET_ROCKSTEADIER, m, n, K, 0);

				subset_measure_diversity(&ring_job, &env, &ring);
				subset_measure_diversity(&rock_job, &env, &rock);
			}
			ring_distinct_share += (double) ring.distinct_subsets / m;
			rock_distinct_share += (double) rock.distinct_subsets / m;
			if (m > n)
			{
				more_frontends_than_backends++;
				ring_distinct_more += ring.distinct_subsets;
				rock_distinct_more += rock.distinct_subsets;
			}
			rock_minus_ring += u[4] - u[3];
			if (u[3] - u[4] > worst_rock_minus_ring)
				worst_rock_minus_ring = u[3] - u[4];
			jobs_in_bin[bin]++;
			jobs++;
			fprintf(csv, "%u,%u,%.4g,%.4g,%.4g,%.4g,%.4g,%u,%u\n", m, n,
					u[0], u[1], u[2], u[3], u[4], ring.distinct_subsets, rock.distinct_subsets);
		}
	fclose(csv);

	printf("Figure 2: k = %d, 1 <= M <= %d, %d <= N <= %d, M k > N: %ld jobs, %.1f s\n\n",
		   K, MAX_TASKS, K, MAX_TASKS, jobs, now_seconds() - start);
	printf("achievable utilization: mean (lowest) by M/N; share of jobs with utilization 1;\n"
		   "share of jobs where the algorithm does at least as well as every other\n");
	printf("%-20s", "M/N");
	for (int b = 0; b < BINS; b++)
		printf("   [%4g, %4g)", bin_edges[b], bin_edges[b + 1]);
	printf(" | all   | ideal | >= the others\n");
	for (int a = 0; a < ALGORITHMS; a++)
	{
		printf("%-20s", subset_algorithm_name(algorithms[a]));
		for (int b = 0; b < BINS; b++)
			printf(" %.3f (%.3f)", sum[a][b] / jobs_in_bin[b], lowest[a][b]);
		printf(" | %.3f | %4.1f%% | %5.1f%%\n", total[a] / jobs, 100.0 * ideal[a] / jobs,
			   100.0 * best[a] / jobs);
	}
	printf("%-20s", "jobs");
	for (int b = 0; b < BINS; b++)
		printf(" %13ld", jobs_in_bin[b]);
	printf("\n\nRocksteadier minus Ringsteady (with scaling): mean %+.4f, worst %.4f below\n",
		   rock_minus_ring / jobs, worst_rock_minus_ring);
	printf("distinct subsets per frontend, mean over jobs: Ringsteady %.3f, Rocksteadier %.3f\n",
		   ring_distinct_share / jobs, rock_distinct_share / jobs);
	printf("jobs with M > N (%ld): distinct subsets in all, Ringsteady %ld, Rocksteadier %ld\n",
		   more_frontends_than_backends, ring_distinct_more, rock_distinct_more);

	/* the SRE book: 300 clients, 300 backends, subsets of 30% */
	{
		double		least_sum = 0,
					most_sum = 0,
					least_low = 1e9,
					least_high = 0,
					most_low = 1e9,
					most_high = 0;
		int			seeds = 1000;

		for (int s = 0; s < seeds; s++)
		{
			subset_job	job = job_of(SUBSET_RANDOM, 300, 300, 90, (uint64_t) s);
			subset_balance_result balance;
			double		least,
						most;

			subset_measure_balance(&job, &env, &balance);
			least = balance.min_connections / balance.mean_connections;
			most = balance.max_connections / balance.mean_connections;
			if (s == 0)
				printf("\nSRE book, random subsetting, 300 clients, 300 backends, subsets of 90:\n"
					   "seed 0: least loaded %.0f%%, most loaded %.0f%% of the mean\n", 100 * least, 100 * most);
			least_sum += least;
			most_sum += most;
			least_low = least < least_low ? least : least_low;
			least_high = least > least_high ? least : least_high;
			most_low = most < most_low ? most : most_low;
			most_high = most > most_high ? most : most_high;
		}
		printf("seeds 0..%d: least loaded %.0f%% on average (%.0f%% to %.0f%%), most loaded %.0f%% (%.0f%% to %.0f%%)\n",
			   seeds - 1, 100 * least_sum / seeds, 100 * least_low, 100 * least_high,
			   100 * most_sum / seeds, 100 * most_low, 100 * most_high);
	}
	printf("\ntotal time %.1f s\n", now_seconds() - start);
	return 0;
}
