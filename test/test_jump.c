/*
 * test/test_jump.c
 *		Tests of JumpBackHash and JumpHash in the pure core: every reference
 *		vector, and the properties of the JumpBackHash paper's section 3
 *		(monotonicity, uniformity, random values consumed).
 *
 * Usage: test_jump [DATA_DIR]   (default test/data, from the project root)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/jump.h"
#include "stats.h"
#include "unit.h"

static const char *data_dir = "test/data";

/* xorshift64*: the test's own source of random keys, unrelated to SplitMix64. */
static uint64_t key_state = UINT64_C(0x243F6A8885A308D3);

static uint64_t
random_key(void)
{
	key_state ^= key_state >> 12;
	key_state ^= key_state << 25;
	key_state ^= key_state >> 27;
	return key_state * UINT64_C(2685821657736338717);
}

/*
 * Guava's Hashing.consistentHash(long, int), transcribed from its published
 * algorithm, to show where and why it differs from the paper's C++ code: it
 * divides once by ((int) (state >>> 33) + 1) / 2^31 where the C++ code
 * multiplies by 2^31 / ((state >> 33) + 1) (two roundings), and its int
 * addition wraps to a negative number when state >>> 33 == 2^31 - 1, which
 * ends the loop early.
 */
static int32_t
guava_consistent_hash(uint64_t state, int32_t buckets)
{
	int32_t		candidate = 0;

	for (;;)
	{
		int32_t		x;
		double		next;

		state = state * UINT64_C(2862933555777941757) + 1;
		x = (int32_t) (uint32_t) (state >> 33);
		x = (int32_t) ((uint32_t) x + 1);	/* Java's wrapping int addition */
		next = (double) (candidate + 1) / ((double) x / 2147483648.0);
		/* Java's (int) of a double: saturating, NaN to 0 */
		if (next >= 0 && next < buckets)
			candidate = (int32_t) next;
		else
			return candidate;
	}
}

typedef struct
{
	long long	key;
	int			buckets;
	int			bucket;
	int			other_bucket;
	int			columns;
} vector_row;

/* Calls check(row) for every row of DATA_DIR/name; returns the row count. */
static long
for_each_vector(const char *name, void (*check) (const vector_row *))
{
	char		path[1024];
	char		line[256];
	long		rows = 0;
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "r");
	if (f == NULL)
	{
		UNIT_FAIL("could not open %s", path);
		return 0;
	}
	if (fgets(line, sizeof(line), f) == NULL)	/* header */
		UNIT_FAIL("%s is empty", path);
	while (fgets(line, sizeof(line), f) != NULL)
	{
		vector_row	row;

		row.columns = sscanf(line, "%lld,%d,%d,%d", &row.key, &row.buckets,
							 &row.bucket, &row.other_bucket);
		if (row.columns < 3)
		{
			UNIT_FAIL("%s: cannot parse line %ld: %s", path, rows + 2, line);
			continue;
		}
		check(&row);
		rows++;
	}
	fclose(f);
	return rows;
}

static void
check_jump_back_hash_row(const vector_row *row)
{
	int32_t		got = jump_back_hash((uint64_t) row->key, row->buckets);

	CHECK_MSG(got == row->bucket, "jump_back_hash(%lld, %d) = %d, hash4j gives %d",
			  row->key, row->buckets, got, row->bucket);
}

static void
check_jump_consistent_hash_row(const vector_row *row)
{
	int32_t		got = jump_consistent_hash((uint64_t) row->key, row->buckets);

	CHECK_MSG(got == row->bucket, "jump_consistent_hash(%lld, %d) = %d, Guava gives %d",
			  row->key, row->buckets, got, row->bucket);
}

static void
check_guava_row(const vector_row *row)
{
	int32_t		got = guava_consistent_hash((uint64_t) row->key, row->buckets);

	CHECK_MSG(got == row->bucket, "guava_consistent_hash(%lld, %d) = %d, Guava gives %d",
			  row->key, row->buckets, got, row->bucket);
}

static void
check_divergence_row(const vector_row *row)
{
	int32_t		paper = jump_consistent_hash((uint64_t) row->key, row->buckets);
	int32_t		guava = guava_consistent_hash((uint64_t) row->key, row->buckets);

	CHECK(row->columns == 4);
	CHECK_MSG(paper == row->other_bucket,
			  "jump_consistent_hash(%lld, %d) = %d, the paper's C++ code gives %d",
			  row->key, row->buckets, paper, row->other_bucket);
	CHECK_MSG(guava == row->bucket && guava != paper,
			  "key %lld, %d buckets: Guava's formula gives %d, Guava %d, paper %d",
			  row->key, row->buckets, guava, row->bucket, paper);
}

TEST(jump_back_hash_matches_every_hash4j_vector)
{
	long		rows = for_each_vector("jumpbackhash_hash4j.csv", check_jump_back_hash_row);

	CHECK_MSG(rows > 40000, "only %ld rows", rows);
}

TEST(jump_consistent_hash_matches_every_guava_vector)
{
	long		rows = for_each_vector("jumphash_guava.csv", check_jump_consistent_hash_row);

	CHECK_MSG(rows > 40000, "only %ld rows", rows);
}

TEST(jump_consistent_hash_follows_the_paper_where_guava_differs)
{
	long		rows = for_each_vector("jumphash_guava_vs_paper_divergences.csv",
									   check_divergence_row);

	CHECK_MSG(rows > 20, "only %ld rows", rows);
	/* and Guava's formula reproduces every ordinary Guava row */
	for_each_vector("jumphash_guava.csv", check_guava_row);
}

TEST(fewer_than_one_bucket_is_refused)
{
	const int32_t bad[] = {0, -1, -2, INT32_MIN};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		CHECK_EQ_INT(jump_back_hash(42, bad[i]), -1);
		CHECK_EQ_INT(jump_consistent_hash(42, bad[i]), -1);
	}
}

TEST(every_key_lands_in_range)
{
	const uint64_t keys[] = {0, 1, UINT64_MAX, UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1};
	const int32_t buckets[] = {1, 2, 3, 1000, 1 << 30, (1 << 30) + 1, INT32_MAX - 1, INT32_MAX};

	for (int i = 0; i < 100000; i++)
	{
		uint64_t	key = i < 5 ? keys[i] : random_key();

		for (size_t j = 0; j < sizeof(buckets) / sizeof(buckets[0]); j++)
		{
			int32_t		a = jump_back_hash(key, buckets[j]);
			int32_t		b = jump_consistent_hash(key, buckets[j]);

			CHECK(a >= 0 && a < buckets[j]);
			CHECK(b >= 0 && b < buckets[j]);
		}
		CHECK_EQ_INT(jump_back_hash(key, 1), 0);
		CHECK_EQ_INT(jump_consistent_hash(key, 1), 0);
	}
}

/*
 * The 128-bit product (one multiplication where the compiler has a 128-bit
 * type) equals the portable one of four 32-bit products, at the edges and on
 * random operands.
 */
TEST(multiply_high64_equals_the_portable_product)
{
	const uint64_t edges[] = {0, 1, 2, UINT32_MAX, (uint64_t) UINT32_MAX + 1, UINT64_MAX - 1, UINT64_MAX};
	const size_t nedges = sizeof(edges) / sizeof(edges[0]);

	for (int i = 0; i < 1000000; i++)
	{
		uint64_t	a = i < (int) (nedges * nedges) ? edges[i / nedges] : random_key();
		uint64_t	b = i < (int) (nedges * nedges) ? edges[i % nedges] : random_key() >> (i % 64);
		uint64_t	low,
					portable_low;
		uint64_t	high = bits_multiply_high64(a, b, &low);
		uint64_t	portable_high = bits_multiply_high64_portable(a, b, &portable_low);

		CHECK_MSG(high == portable_high && low == portable_low,
				  "%" PRIu64 " * %" PRIu64 ": high %" PRIu64 " low %" PRIu64 ", portable %" PRIu64 " %" PRIu64,
				  a, b, high, low, portable_high, portable_low);
	}
}

/*
 * Monotonicity (the paper's 3.1): 10,000 random keys, every n in 1..10,000;
 * whenever the bucket changes from n to n + 1 it becomes n.
 */
static void
check_monotonicity(int32_t (*hash) (uint64_t, int32_t), int keys)
{
	for (int i = 0; i < keys; i++)
	{
		uint64_t	key = random_key();
		int32_t		previous = hash(key, 1);

		for (int32_t n = 2; n <= 10000; n++)
		{
			int32_t		bucket = hash(key, n);

			if (bucket != previous)
				CHECK_MSG(bucket == n - 1, "key %" PRIu64 ": %d buckets give %d, %d give %d",
						  key, n - 1, previous, n, bucket);
			previous = bucket;
		}
	}
}

TEST(jump_back_hash_is_monotone)
{
	check_monotonicity(jump_back_hash, 10000);
}

TEST(jump_consistent_hash_is_monotone)
{
	check_monotonicity(jump_consistent_hash, 1000);
}

/*
 * Uniformity (the paper's 3.1): a G-test of the bucket counts of `keys`
 * random keys for every n in 2..1000 at alpha = 0.001.  Under uniformity
 * each test rejects with probability alpha, so about 1 rejection in 999 is
 * expected; the check fails only if the number of rejections is one that
 * chance would give with probability below 1e-4.
 */
static void
check_uniformity(int32_t (*hash) (uint64_t, int32_t), const char *name, int keys)
{
	const double alpha = 0.001;
	const int	tests = 999;
	int			bound = stats_binomial_bound(tests, alpha, 1e-4);
	int			rejections = 0;
	double		smallest_p = 1.0;
	long	   *counts = calloc(1001, sizeof(long));

	for (int32_t n = 2; n <= 1000; n++)
	{
		double		expected = (double) keys / n;
		double		g = 0.0;
		double		p;

		memset(counts, 0, sizeof(long) * n);
		for (int i = 0; i < keys; i++)
			counts[hash(random_key(), n)]++;
		for (int32_t b = 0; b < n; b++)
			if (counts[b] > 0)
				g += 2.0 * counts[b] * log(counts[b] / expected);
		p = stats_chi2_upper_tail(g, n - 1);
		if (p < alpha)
			rejections++;
		if (p < smallest_p)
			smallest_p = p;
	}
	free(counts);
	printf("  %s: G-tests for n = 2..1000 with %d keys each: %d rejected at alpha = %g "
		   "(%.3f expected by chance, more than %d would have probability < 1e-4); smallest p = %.2g\n",
		   name, keys, rejections, alpha, tests * alpha, bound, smallest_p);
	CHECK_MSG(rejections <= bound, "%d G-tests rejected uniformity, at most %d expected",
			  rejections, bound);
}

TEST(jump_back_hash_is_uniform)
{
	check_uniformity(jump_back_hash, "jump_back_hash", 1000000);
}

TEST(jump_consistent_hash_is_uniform)
{
	check_uniformity(jump_consistent_hash, "jump_consistent_hash", 100000);
}

/*
 * Uniformity for large n (the paper's 3.1 uses a Kolmogorov-Smirnov test
 * there): the buckets of 100,000 random keys, scaled to [0, 1), against the
 * uniform distribution, at alpha = 0.001 (critical value 1.949 / sqrt(keys)).
 */
static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

TEST(jump_back_hash_is_uniform_for_large_n)
{
	const int32_t ns[] = {INT32_MAX, INT32_MAX - 1, 3 << 29, (1 << 30) + 1, 1 << 30, (1 << 30) - 1,
		3 << 28, (1 << 29) + 1, 1 << 29, (1 << 29) - 1, 3 << 27, (1 << 28) + 1, 1 << 28, (1 << 28) - 1};
	const int	keys = 100000;
	double	   *u = malloc(sizeof(double) * keys);
	int			rejections = 0;

	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
	{
		double		d = 0.0;

		for (int i = 0; i < keys; i++)
			u[i] = (jump_back_hash(random_key(), ns[j]) + 0.5) / ns[j];
		qsort(u, keys, sizeof(double), compare_doubles);
		for (int i = 0; i < keys; i++)
		{
			d = fmax(d, fabs(u[i] - (double) i / keys));
			d = fmax(d, fabs(u[i] - (double) (i + 1) / keys));
		}
		if (d > 1.949 / sqrt(keys))
			rejections++;
	}
	free(u);
	/* 14 tests at alpha = 0.001: one rejection has probability 1.4%, two 0.009% */
	CHECK_MSG(rejections <= 1, "%d of 14 Kolmogorov-Smirnov tests rejected uniformity", rejections);
}

/*
 * Random values consumed (the paper's 3.2): the mean number of 64-bit draws
 * over a log-spaced sweep of n from 10^6 down to 2 agrees with formula (25),
 * 1 + (a - 1) a / (2a - 1) with a = 2^(floor(log2(n - 1)) + 1) / n, within
 * 0.005.  With the variance (26) below 2/3, the standard error of a mean of
 * 10^6 draws is below 0.00082, so 0.005 is more than 6 standard errors.
 */
TEST(jump_back_hash_consumes_the_predicted_number_of_draws)
{
	const int	keys = 1000000;
	double		worst = 0.0;
	int32_t		worst_n = 0;
	int			points = 0;

	for (int32_t n = 1000000; n >= 2; n = (int32_t) floor(0.97 * n))
	{
		uint64_t	draws = 0;
		double		alpha = ldexp(1.0, bits_log2_64((uint64_t) (n - 1)) + 1) / n;
		double		predicted = 1.0 + (alpha - 1.0) * alpha / (2.0 * alpha - 1.0);
		double		mean;

		for (int i = 0; i < keys; i++)
			jump_back_hash_counting_draws(random_key(), n, &draws);
		mean = (double) draws / keys;
		if (fabs(mean - predicted) > worst)
		{
			worst = fabs(mean - predicted);
			worst_n = n;
		}
		points++;
	}
	printf("  mean draws over %d values of n: largest difference from formula (25) %.5f (n = %d)\n",
		   points, worst, worst_n);
	CHECK_MSG(worst <= 0.005, "mean draws differ from formula (25) by %.5f at n = %d", worst, worst_n);
}

TEST(statistics_helpers_match_published_tables)
{
	/* critical values of the chi-squared distribution from standard tables */
	CHECK(fabs(stats_chi2_upper_tail(3.841, 1) - 0.05) < 1e-4);
	CHECK(fabs(stats_chi2_upper_tail(10.828, 1) - 0.001) < 1e-5);
	CHECK(fabs(stats_chi2_upper_tail(18.307, 10) - 0.05) < 1e-4);
	CHECK(fabs(stats_chi2_upper_tail(149.449, 100) - 0.001) < 1e-5);
	CHECK(fabs(stats_chi2_upper_tail(124.342, 100) - 0.05) < 1e-4);
	/* Binomial(999, 0.001): P(X > 5) = 5.9e-4, P(X > 6) = 8.1e-5 */
	CHECK_EQ_INT(stats_binomial_bound(999, 0.001, 1e-4), 6);
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		data_dir = argv[1];
	RUN(statistics_helpers_match_published_tables);
	RUN(jump_back_hash_matches_every_hash4j_vector);
	RUN(jump_consistent_hash_matches_every_guava_vector);
	RUN(jump_consistent_hash_follows_the_paper_where_guava_differs);
	RUN(fewer_than_one_bucket_is_refused);
	RUN(every_key_lands_in_range);
	RUN(multiply_high64_equals_the_portable_product);
	RUN(jump_back_hash_is_monotone);
	RUN(jump_consistent_hash_is_monotone);
	RUN(jump_back_hash_is_uniform);
	RUN(jump_consistent_hash_is_uniform);
	RUN(jump_back_hash_is_uniform_for_large_n);
	RUN(jump_back_hash_consumes_the_predicted_number_of_draws);
	return unit_report();
}
