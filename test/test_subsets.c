/*
 * test/test_subsets.c
 *		Tests of Rocksteadier subsetting and of the article's other algorithms
 *		(random, round-robin, deterministic, consistent) in the pure core.
 *
 * Each algorithm is checked against a straightforward reference written here
 * from its documented construction, with its own SplitMix64, bit reversal
 * and Fisher-Yates, that lists everything (O(N) or worse): every lot's
 * shuffle, the whole ring order, the whole shuffle, every position on the
 * circle.  Then the properties the article asks for.
 *
 * Usage: test_subsets
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/baselines.h"
#include "core/rocksteadier.h"
#include "core/splitmix64.h"
#include "core/subset_metrics.h"
#include "unit.h"

#define SORT_NAME sort_u32
#define SORT_TYPE uint32_t
#include "core/sort_template.h"
#define SORT_NAME sort_u64
#define SORT_TYPE uint64_t
#include "core/sort_template.h"

/* ---- the references' own building blocks ---- */

static uint64_t
ref_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64_t
ref_next(uint64_t *state)
{
	*state += UINT64_C(0x9E3779B97F4A7C15);
	return ref_mix(*state);
}

/* floor(draw * n / 2^64), with 128-bit arithmetic */
static uint32_t
ref_below(uint64_t draw, uint32_t n)
{
	return (uint32_t) (((unsigned __int128) draw * n) >> 64);
}

static uint64_t
ref_reverse(uint64_t x, int width)
{
	uint64_t	r = 0;

	for (int i = 0; i < width; i++)
		r |= ((x >> i) & 1) << (width - 1 - i);
	return r;
}

/* The ring order of n (the Ringsteady post's linear-time method). */
static uint32_t *
ref_ring_order(uint32_t n)
{
	uint32_t   *order = malloc(sizeof(uint32_t) * n);
	int			width = 0;
	uint32_t	count = 0;

	while ((UINT64_C(1) << width) < n)
		width++;
	for (uint64_t p = 0; p < (UINT64_C(1) << width); p++)
	{
		uint64_t	index = ref_reverse(p, width);

		if (index < n)
			order[count++] = (uint32_t) index;
	}
	return order;
}

/* ceil(reverse_bits64(m) * n / 2^64) mod n: Ringsteady's start with scaling */
static uint32_t
ref_scaled_start(uint32_t frontend, uint32_t n)
{
	unsigned __int128 product = (unsigned __int128) ref_reverse(frontend, 64) * n;
	uint64_t	rank = (uint64_t) (product >> 64) + ((uint64_t) product != 0);

	return (uint32_t) (rank % n);
}

/* Fisher-Yates from the top on [0, L) with SplitMix64 from `state` */
static void
ref_lot_shuffle(uint32_t frontend_lot, uint32_t lot, uint32_t lot_size, uint32_t *perm)
{
	uint64_t	state = ref_mix(((uint64_t) frontend_lot << 32) | lot);

	for (uint32_t i = 0; i < lot_size; i++)
		perm[i] = i;
	for (uint32_t i = lot_size; i-- > 1;)
	{
		uint32_t	r = ref_below(ref_next(&state), i + 1);
		uint32_t	t = perm[i];

		perm[i] = perm[r];
		perm[r] = t;
	}
}

/*
 * Rocksteadier, as the article describes it: the whole table of shuffled
 * lots, the lots reordered by Ringsteady, the frontend's row read across,
 * row after row.
 */
static uint32_t
ref_rocksteadier(uint32_t m, uint32_t n, uint32_t k, uint32_t lot_size, uint32_t *out)
{
	uint32_t	lots = (n + lot_size - 1) / lot_size;
	uint32_t	f = m / lot_size;
	uint32_t   *table = malloc(sizeof(uint32_t) * (size_t) lots * lot_size);
	uint32_t   *lot_order = ref_ring_order(lots);
	uint32_t   *row_order = ref_ring_order(lot_size);
	uint32_t	start = ref_scaled_start(f, lots);
	uint32_t	first_row = row_order[m % lot_size];
	uint32_t	count = 0;

	for (uint32_t j = 0; j < lots; j++)
		ref_lot_shuffle(f, j, lot_size, table + (size_t) j * lot_size);
	for (uint32_t p = 0; p < lot_size && count < k; p++)
		for (uint32_t t = 0; t < lots && count < k; t++)
		{
			uint32_t	lot = lot_order[(start + t) % lots];
			uint64_t	task = (uint64_t) lot * lot_size + table[(size_t) lot * lot_size + (first_row + p) % lot_size];

			if (task < n)
				out[count++] = (uint32_t) task;
		}
	free(table);
	free(lot_order);
	free(row_order);
	return count;
}

static uint32_t rocksteadier_workspace[ROCKSTEADIER_WORKSPACE(ROCKSTEADIER_MAX_LOT_SIZE)];

static int64_t
rocksteadier(uint32_t m, uint32_t n, uint32_t k, uint32_t lot_size, uint32_t *out)
{
	return rocksteadier_write_subset(m, n, k, lot_size, out, rocksteadier_workspace, NULL);
}

static int
compare_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

/* true if subset[0..count) are distinct and below n */
static bool
distinct_in_range(const uint32_t *subset, uint32_t count, uint32_t n)
{
	uint32_t   *sorted = malloc(sizeof(uint32_t) * (count + 1));
	bool		ok = true;

	memcpy(sorted, subset, sizeof(uint32_t) * count);
	qsort(sorted, count, sizeof(uint32_t), compare_u32);
	for (uint32_t i = 0; i < count; i++)
		ok = ok && sorted[i] < n && (i == 0 || sorted[i] != sorted[i - 1]);
	free(sorted);
	return ok;
}

/* ---- Rocksteadier ---- */

TEST(rocksteadier_agrees_with_the_reference_on_small_fleets)
{
	const uint32_t lot_sizes[] = {1, 2, 3, 5, 7, 10, 16, 33};
	uint32_t   *got = malloc(sizeof(uint32_t) * 400);
	uint32_t   *want = malloc(sizeof(uint32_t) * 400);

	for (size_t l = 0; l < sizeof(lot_sizes) / sizeof(lot_sizes[0]); l++)
		for (uint32_t n = 1; n <= 130; n++)
			for (uint32_t m = 0; m < 3 * lot_sizes[l] + 4; m++)
			{
				const uint32_t ks[] = {0, 1, 2, 3, 7, 20, n - 1, n, n + 9};

				for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
				{
					uint32_t	k = ks[i];
					int64_t		count = rocksteadier(m, n, k, lot_sizes[l], got);
					uint32_t	expected = ref_rocksteadier(m, n, k, lot_sizes[l], want);

					CHECK_EQ_INT(count, expected);
					CHECK_MSG(count >= 0 && memcmp(got, want, sizeof(uint32_t) * expected) == 0,
							  "L %u N %u m %u k %u: differs from the reference", lot_sizes[l], n, m, k);
				}
			}
	free(got);
	free(want);
}

TEST(rocksteadier_agrees_with_the_reference_on_large_fleets)
{
	uint32_t   *got = malloc(sizeof(uint32_t) * 5000);
	uint32_t   *want = malloc(sizeof(uint32_t) * 5000);
	uint64_t	state = 42;
	const uint32_t ns[] = {1000, 4097, 65537, 999999, 1000000};

	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
		for (int c = 0; c < 6; c++)
		{
			uint32_t	m = (uint32_t) (ref_next(&state) % 5000);
			uint32_t	lot_size = c < 3 ? 10 : 1 + (uint32_t) (ref_next(&state) % 200);
			uint32_t	k = c % 2 ? 20 : 1 + (uint32_t) (ref_next(&state) % 5000);
			int64_t		count = rocksteadier(m, ns[j], k, lot_size, got);
			uint32_t	expected = ref_rocksteadier(m, ns[j], k, lot_size, want);

			CHECK_EQ_INT(count, expected);
			CHECK_MSG(memcmp(got, want, sizeof(uint32_t) * expected) == 0,
					  "N %u L %u m %u k %u: differs from the reference", ns[j], lot_size, m, k);
		}
	free(got);
	free(want);
}

/*
 * Golden values, also pinned in sql/rocksteadier.sql: the article's Table 2
 * job (55 backends in lots of 10), frontends 10, 11 and 12 with subsets of
 * 10 (the article's Table 5 case), and a whole ring of 23 backends in lots
 * of 4.  The reference above computes the same arrays, and so does
 * test/data/subsets_golden.py, a Python transcription of the README's
 * construction.
 */
static const uint32_t golden_55[3][10] = {
	{12, 53, 32, 0, 46, 27, 14, 31, 9, 42},
	{15, 35, 5, 45, 28, 11, 30, 8, 47, 25},
	{17, 50, 39, 6, 41, 20, 18, 38, 7, 44},
};
static const uint32_t golden_23[23] = {
	5, 21, 13, 1, 17, 11, 4, 22, 12, 3, 18, 10, 6, 15, 0, 19, 9, 7, 20, 14, 2, 16, 8
};

TEST(rocksteadier_golden_values)
{
	uint32_t	got[23],
				want[23];

	for (uint32_t i = 0; i < 3; i++)
	{
		CHECK_EQ_INT(rocksteadier(10 + i, 55, 10, 10, got), 10);
		CHECK_EQ_INT(ref_rocksteadier(10 + i, 55, 10, 10, want), 10);
		for (int j = 0; j < 10; j++)
		{
			CHECK_MSG(want[j] == golden_55[i][j], "reference, frontend %u member %d: %u", 10 + i, j, want[j]);
			CHECK_MSG(got[j] == golden_55[i][j], "frontend %u member %d: %u", 10 + i, j, got[j]);
		}
	}
	CHECK_EQ_INT(rocksteadier(5, 23, 100, 4, got), 23);
	CHECK_EQ_INT(ref_rocksteadier(5, 23, 100, 4, want), 23);
	for (int j = 0; j < 23; j++)
	{
		CHECK_MSG(want[j] == golden_23[j], "reference, member %d: %u", j, want[j]);
		CHECK_MSG(got[j] == golden_23[j], "member %d: %u", j, got[j]);
	}
}

TEST(rocksteadier_starting_rows_are_the_ring_order_of_l)
{
	/* with one task per lot row read first, frontend m of lot 0 reads row s */
	const uint32_t rows[10] = {0, 8, 4, 2, 6, 1, 9, 5, 3, 7};
	uint32_t	perm[10],
				first;

	rocksteadier_shuffle_lot(0, 0, 10, perm);
	for (uint32_t m = 0; m < 10; m++)
	{
		/* 10 backends: one lot, visited first */
		CHECK_EQ_INT(rocksteadier(m, 10, 1, 10, &first), 1);
		CHECK_MSG(first == perm[rows[m]], "frontend %u starts at %u, not row %u (%u)", m, first, rows[m], perm[rows[m]]);
	}
}

TEST(rocksteadier_subsets_are_distinct_in_range_and_prefixes)
{
	uint32_t   *big = malloc(sizeof(uint32_t) * 2000);
	uint32_t   *small = malloc(sizeof(uint32_t) * 2000);

	for (uint32_t n = 1; n <= 2000; n += 1 + n / 5)
		for (uint32_t lot_size = 1; lot_size <= 64; lot_size = lot_size * 2 + 1)
			for (uint32_t m = 0; m < 200; m += 13)
			{
				CHECK_EQ_INT(rocksteadier(m, n, n + 3, lot_size, big), n);
				CHECK_MSG(distinct_in_range(big, n, n), "N %u L %u m %u: not every backend once", n, lot_size, m);
				for (uint32_t k = 0; k <= n; k += 1 + k)
				{
					CHECK_EQ_INT(rocksteadier(m, n, k, lot_size, small), k);
					CHECK_MSG(memcmp(small, big, sizeof(uint32_t) * k) == 0, "N %u L %u m %u k %u: not a prefix", n, lot_size, m, k);
				}
			}
	free(big);
	free(small);
}

/* The tasks of lot j, in the order frontend m reads them (all N read). */
static uint32_t
tasks_of_lot(const uint32_t *all, uint32_t n, uint32_t lot, uint32_t lot_size, uint32_t *tasks)
{
	uint32_t	count = 0;

	for (uint32_t i = 0; i < n; i++)
		if (all[i] / lot_size == lot)
			tasks[count++] = all[i];
	return count;
}

TEST(rocksteadier_shuffles_are_shared_within_a_frontend_lot_and_differ_across)
{
	const uint32_t n = 1000,
				lot_size = 10;
	uint32_t   *a = malloc(sizeof(uint32_t) * n);
	uint32_t   *b = malloc(sizeof(uint32_t) * n);
	uint32_t	ta[10],
				tb[10];
	uint32_t	same_across = 0;

	/* frontends 20 (row 0) and 23 (row 2), lot 2: rows read s, s+1, ... */
	rocksteadier(20, n, n, lot_size, a);
	rocksteadier(23, n, n, lot_size, b);
	for (uint32_t lot = 0; lot < n / lot_size; lot++)
	{
		tasks_of_lot(a, n, lot, lot_size, ta);
		tasks_of_lot(b, n, lot, lot_size, tb);
		/* 23 starts at row 2: its order is 20's shifted by two rows */
		for (uint32_t i = 0; i < lot_size; i++)
			CHECK_MSG(tb[i] == ta[(i + 2) % lot_size], "lot %u: frontends 20 and 23 see different shuffles", lot);
	}
	/* frontends 20 and 30 start at the same row but are in lots 2 and 3 */
	rocksteadier(30, n, n, lot_size, b);
	for (uint32_t lot = 0; lot < n / lot_size; lot++)
	{
		tasks_of_lot(a, n, lot, lot_size, ta);
		tasks_of_lot(b, n, lot, lot_size, tb);
		same_across += memcmp(ta, tb, sizeof(ta)) == 0;
	}
	/* 100 lots, each the same by chance with probability 1/10! */
	CHECK_MSG(same_across == 0, "%u of 100 lots shuffled alike in frontend lots 2 and 3", same_across);
	free(a);
	free(b);
}

TEST(rocksteadier_adding_a_backend_lot_keeps_the_earlier_shuffles)
{
	uint32_t   *a = malloc(sizeof(uint32_t) * 2000);
	uint32_t   *b = malloc(sizeof(uint32_t) * 2000);
	uint32_t	ta[16],
				tb[16];

	for (uint32_t lot_size = 2; lot_size <= 16; lot_size += 7)
		for (uint32_t lots = 1; lots < 100; lots += 3)
			for (uint32_t m = 0; m < 40; m += 3)
			{
				uint32_t	n = lots * lot_size;

				rocksteadier(m, n, n, lot_size, a);
				rocksteadier(m, n + lot_size, n + lot_size, lot_size, b);
				for (uint32_t lot = 0; lot < lots; lot++)
				{
					tasks_of_lot(a, n, lot, lot_size, ta);
					tasks_of_lot(b, n + lot_size, lot, lot_size, tb);
					CHECK_MSG(memcmp(ta, tb, sizeof(uint32_t) * lot_size) == 0,
							  "L %u, %u -> %u lots, m %u: lot %u reshuffled", lot_size, lots, lots + 1, m, lot);
				}
			}
	free(a);
	free(b);
}

/*
 * With a cache, every subset is the one computed without: frontends in turn
 * (as the measuring functions ask), then in an order that goes back to
 * earlier frontend lots, with and without padding, k below and above B.
 */
TEST(rocksteadier_with_a_cache_gives_the_same_subsets)
{
	uint32_t   *want = malloc(sizeof(uint32_t) * 700);
	uint32_t   *got = malloc(sizeof(uint32_t) * 700);
	uint32_t   *workspace = malloc(sizeof(uint32_t) * ROCKSTEADIER_WORKSPACE(64));
	const uint32_t ns[] = {1, 7, 10, 55, 99, 100, 101, 640};
	const uint32_t lot_sizes[] = {1, 3, 10, 64};
	const uint32_t ks[] = {1, 3, 10, 20, 99, 700};

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(lot_sizes) / sizeof(lot_sizes[0]); b++)
			for (size_t c = 0; c < sizeof(ks) / sizeof(ks[0]); c++)
			{
				uint32_t	n = ns[a],
							lot_size = lot_sizes[b],
							k = ks[c];
				uint32_t   *shuffles = malloc(sizeof(uint32_t) *
											  rocksteadier_shuffle_steps(n, k, lot_size));
				rocksteadier_cache cache;

				rocksteadier_cache_init(&cache, shuffles);
				for (uint32_t i = 0; i < 300; i++)
				{
					/* 0 .. 149 in turn, then 150 frontends jumping about */
					uint32_t	m = i < 150 ? i : (i * 37) % 211;
					int64_t		count = rocksteadier_write_subset_cached(m, n, k, lot_size, got, workspace, &cache);

					CHECK_EQ_INT(count, rocksteadier(m, n, k, lot_size, want));
					CHECK_MSG(count > 0 && memcmp(got, want, sizeof(uint32_t) * count) == 0,
							  "N %u L %u k %u m %u: the cached subset differs", n, lot_size, k, m);
				}
				free(shuffles);
			}
	free(want);
	free(got);
	free(workspace);
}

TEST(rocksteadier_invalid_arguments)
{
	uint32_t	out[4];

	CHECK_EQ_INT(rocksteadier(0, 0, 3, 10, out), -1);
	CHECK_EQ_INT(rocksteadier(0, 10, 3, 0, out), -1);
	CHECK_EQ_INT(rocksteadier(0, 10, 3, ROCKSTEADIER_MAX_LOT_SIZE + 1, out), -1);
	CHECK_EQ_INT(rocksteadier(0, 10, 0, 10, out), 0);
	CHECK_EQ_INT(rocksteadier(7, 1, 4, ROCKSTEADIER_MAX_LOT_SIZE, out), 1);
	CHECK_EQ_INT(out[0], 0);
}

/*
 * A lot of no tasks has an empty shuffle: nothing is written (it wrote far
 * past the array, found by test/fuzz/fuzz_subsets.c; corpus file
 * crash-shuffle-lot-size-0).  A lot of one task is [0].
 */
TEST(rocksteadier_shuffle_of_an_empty_lot_writes_nothing)
{
	uint32_t	perm[2] = {77, 77};

	rocksteadier_shuffle_lot(0, 0, 0, perm);
	rocksteadier_shuffle_lot(UINT32_MAX, UINT32_MAX, 0, perm);
	CHECK(perm[0] == 77 && perm[1] == 77);
	rocksteadier_shuffle_lot(3, 5, 1, perm);
	CHECK(perm[0] == 0 && perm[1] == 77);
}

TEST(rocksteadier_on_the_largest_fleets)
{
	uint32_t   *subset = malloc(sizeof(uint32_t) * 5000);
	const uint32_t ns[] = {2147483647u, 4294967295u, 3000000019u};

	for (size_t j = 0; j < 3; j++)
		for (uint32_t m = 0; m < 4000000000u; m += 999999937u)
		{
			CHECK_EQ_INT(rocksteadier(m, ns[j], 5000, 10, subset), 5000);
			CHECK(distinct_in_range(subset, 5000, ns[j]));
			CHECK_EQ_INT(rocksteadier(m, ns[j], 3, ROCKSTEADIER_MAX_LOT_SIZE, subset), 3);
			CHECK(distinct_in_range(subset, 3, ns[j]));
		}
	free(subset);
}

/* ---- the baselines ---- */

static void
ref_forward_shuffle(uint32_t *a, uint32_t n, uint64_t state)
{
	for (uint32_t i = 0; i + 1 < n; i++)
	{
		uint32_t	j = i + ref_below(ref_next(&state), n - i);
		uint32_t	t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static uint64_t
ref_stream(uint64_t seed, uint64_t algorithm, uint64_t index)
{
	return ref_mix(ref_mix(seed ^ algorithm) + index);
}

static uint32_t
ref_random(uint32_t m, uint32_t n, uint32_t k, uint64_t seed, uint32_t *out)
{
	uint32_t   *a = malloc(sizeof(uint32_t) * n);
	uint32_t	count = k < n ? k : n;

	for (uint32_t i = 0; i < n; i++)
		a[i] = i;
	ref_forward_shuffle(a, n, ref_stream(seed, 1, m));
	memcpy(out, a, sizeof(uint32_t) * count);
	free(a);
	return count;
}

/* The SRE book's code, with the article's round-robin leftovers. */
static uint32_t
ref_deterministic(uint32_t m, uint32_t n, uint32_t k, uint64_t seed, uint32_t *out)
{
	uint32_t	size = k < n ? k : n;
	uint32_t	subset_count,
				round,
				leftovers,
				remaining = 0,
				start;
	uint32_t   *a;
	bool	   *left_out;

	if (size == 0)
		return 0;
	subset_count = n / size;
	round = m / subset_count;
	leftovers = n % size;
	start = (m % subset_count) * size;
	a = malloc(sizeof(uint32_t) * n);
	left_out = calloc(n, sizeof(bool));
	for (uint32_t i = 0; i < leftovers; i++)
		left_out[((uint64_t) round * leftovers + i) % n] = true;
	for (uint32_t b = 0; b < n; b++)
		if (!left_out[b])
			a[remaining++] = b;
	ref_forward_shuffle(a, remaining, ref_stream(seed, 2, round));
	memcpy(out, a + start, sizeof(uint32_t) * size);
	free(a);
	free(left_out);
	return size;
}

typedef struct
{
	uint64_t	distance;
	uint32_t	index;
} ref_point;

static int
compare_points(const void *a, const void *b)
{
	const ref_point *x = a,
			   *y = b;

	if (x->distance != y->distance)
		return x->distance < y->distance ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static uint32_t
ref_consistent(uint32_t m, uint32_t n, uint32_t k, uint64_t seed, uint32_t *out)
{
	ref_point  *points = malloc(sizeof(ref_point) * n);
	uint64_t	state = ref_stream(seed, 3, 2 * (uint64_t) m + 1);
	uint64_t	origin = ref_next(&state);
	uint32_t	count = k < n ? k : n;

	for (uint32_t b = 0; b < n; b++)
	{
		uint64_t	s = ref_stream(seed, 3, 2 * (uint64_t) b);

		points[b].distance = ref_next(&s) - origin;
		points[b].index = b;
	}
	qsort(points, n, sizeof(ref_point), compare_points);
	for (uint32_t i = 0; i < count; i++)
		out[i] = points[i].index;
	free(points);
	return count;
}

static uint32_t
ref_round_robin(uint32_t m, uint32_t n, uint32_t k, uint32_t *out)
{
	uint32_t	count = k < n ? k : n;

	for (uint32_t i = 0; i < count; i++)
		out[i] = (uint32_t) (((uint64_t) m * k + i) % n);
	return count;
}

static void *big_workspace;

static int64_t
baseline(subset_algorithm_id id, uint32_t m, uint32_t n, uint32_t k, uint64_t seed, uint32_t *out)
{
	switch (id)
	{
		case SUBSET_RANDOM:
			return random_write_subset(m, n, k, seed, out, big_workspace, NULL);
		case SUBSET_ROUND_ROBIN:
			return round_robin_write_subset(m, n, k, out);
		case SUBSET_DETERMINISTIC:
			return deterministic_write_subset(m, n, k, seed, out, big_workspace, NULL);
		case SUBSET_CONSISTENT:
			return consistent_write_subset(m, n, k, seed, out, big_workspace, NULL);
		default:
			return -2;
	}
}

static uint32_t
ref_baseline(subset_algorithm_id id, uint32_t m, uint32_t n, uint32_t k, uint64_t seed, uint32_t *out)
{
	switch (id)
	{
		case SUBSET_RANDOM:
			return ref_random(m, n, k, seed, out);
		case SUBSET_ROUND_ROBIN:
			return ref_round_robin(m, n, k, out);
		case SUBSET_DETERMINISTIC:
			return ref_deterministic(m, n, k, seed, out);
		default:
			return ref_consistent(m, n, k, seed, out);
	}
}

static const subset_algorithm_id baselines[] = {SUBSET_RANDOM, SUBSET_ROUND_ROBIN, SUBSET_DETERMINISTIC, SUBSET_CONSISTENT};

TEST(baselines_agree_with_their_references)
{
	uint32_t   *got = malloc(sizeof(uint32_t) * 70000);
	uint32_t   *want = malloc(sizeof(uint32_t) * 70000);
	const uint64_t seeds[] = {0, 1, UINT64_MAX, UINT64_C(0x8000000000000000)};

	for (size_t a = 0; a < 4; a++)
		for (uint32_t n = 1; n <= 140; n += 1 + n / 20)
			for (uint32_t m = 0; m < 40; m += 3)
				for (uint32_t k = 0; k <= n + 2; k += 1 + k / 3)
				{
					uint64_t	seed = seeds[(m + k) % 4];
					int64_t		count = baseline(baselines[a], m, n, k, seed, got);
					uint32_t	expected = ref_baseline(baselines[a], m, n, k, seed, want);

					CHECK_EQ_INT(count, expected);
					CHECK_MSG(memcmp(got, want, sizeof(uint32_t) * expected) == 0,
							  "%s N %u m %u k %u: differs from the reference",
							  subset_algorithm_name(baselines[a]), n, m, k);
				}
	/* random's sparse table (N > 4k) and larger fleets */
	for (size_t a = 0; a < 4; a++)
		for (uint32_t n = 1000; n <= 64000; n *= 4)
			for (uint32_t k = 1; k <= n; k *= 7)
				for (uint32_t m = 0; m < 2000; m += 611)
				{
					int64_t		count = baseline(baselines[a], m, n, k, 77, got);
					uint32_t	expected = ref_baseline(baselines[a], m, n, k, 77, want);

					CHECK_EQ_INT(count, expected);
					CHECK_MSG(memcmp(got, want, sizeof(uint32_t) * expected) == 0,
							  "%s N %u m %u k %u: differs from the reference",
							  subset_algorithm_name(baselines[a]), n, m, k);
				}
	free(got);
	free(want);
}

TEST(baselines_are_distinct_in_range_and_prefixes_where_they_should_be)
{
	uint32_t   *big = malloc(sizeof(uint32_t) * 1000);
	uint32_t   *small = malloc(sizeof(uint32_t) * 1000);

	for (size_t a = 0; a < 4; a++)
		for (uint32_t n = 1; n <= 1000; n += 1 + n / 3)
			for (uint32_t m = 0; m < 100; m += 7)
			{
				bool		prefixes = baselines[a] == SUBSET_RANDOM || baselines[a] == SUBSET_CONSISTENT;

				CHECK_EQ_INT(baseline(baselines[a], m, n, n + 1, 5, big), n);
				CHECK(distinct_in_range(big, n, n));
				for (uint32_t k = 0; k <= n; k += 1 + k / 2)
				{
					CHECK_EQ_INT(baseline(baselines[a], m, n, k, 5, small), k);
					CHECK(distinct_in_range(small, k, n));
					if (prefixes)
						CHECK_MSG(memcmp(small, big, sizeof(uint32_t) * k) == 0,
								  "%s N %u m %u k %u: not a prefix", subset_algorithm_name(baselines[a]), n, m, k);
				}
			}
	free(big);
	free(small);
}

/*
 * Random subsetting's workspace for subsets of more than 2^30 members: the
 * table of moved entries would need 2^32 slots or more, and its size, kept
 * in 32 bits, wrapped to 0, so the workspace asked for was 0 bytes and the
 * subset wrote outside it (found by test/fuzz/fuzz_subsets.c; corpus file
 * crash-random-workspace-overflow).  Such subsets use the plain array of N.
 */
TEST(random_workspace_of_subsets_above_2_30_members)
{
	const uint64_t all = 4294967295u;
	uint32_t	k = 1u << 16;
	void	   *workspace;
	uint32_t   *subset;

	CHECK(random_subset_workspace_bytes(4294967295u, (1u << 30) + 1) == sizeof(uint32_t) * all);
	CHECK(random_subset_workspace_bytes(4294967295u, 4294967295u) == sizeof(uint32_t) * all);
	CHECK(random_subset_workspace_bytes(3000000000u, 2000000000u) == sizeof(uint32_t) * UINT64_C(3000000000));
	CHECK(random_subset_workspace_bytes(4294967295u, 1u << 30) == sizeof(uint32_t) * all);
	/* below, the table: 2^30 keys and 2^30 values for 2^29 members */
	CHECK(random_subset_workspace_bytes(4294967295u, 1u << 29) == sizeof(uint32_t) * (UINT64_C(1) << 31));

	/* a large sparse subset, in exactly its workspace */
	workspace = malloc(random_subset_workspace_bytes(4294967295u, k));
	subset = malloc(sizeof(uint32_t) * k);
	CHECK(random_subset_workspace_bytes(4294967295u, k) == sizeof(uint32_t) * 4 * k);
	CHECK_EQ_INT(random_write_subset(12345, 4294967295u, k, 9, subset, workspace, NULL), k);
	CHECK(distinct_in_range(subset, k, 4294967295u));
	free(workspace);
	free(subset);
}

/*
 * Golden values, also pinned in sql/subset_baselines.sql;
 * test/data/subsets_golden.py, a Python transcription of the constructions
 * in baselines.h, gives the same arrays.
 */
TEST(baselines_golden_values)
{
	static const struct
	{
		subset_algorithm_id id;
		uint32_t	m,
					n,
					k;
		int64_t		seed;
		uint32_t	subset[8];
	}			golden[] = {
		{SUBSET_RANDOM, 3, 100, 8, 0, {39, 84, 95, 1, 83, 35, 80, 77}},
		{SUBSET_RANDOM, 3, 100, 8, -7, {45, 11, 46, 59, 70, 64, 36, 40}},
		{SUBSET_DETERMINISTIC, 0, 10, 4, 0, {5, 4, 6, 2}},
		{SUBSET_DETERMINISTIC, 1, 10, 4, 0, {9, 3, 8, 7}},
		{SUBSET_DETERMINISTIC, 2, 10, 4, 0, {6, 9, 4, 0}},
		{SUBSET_DETERMINISTIC, 3, 10, 4, 0, {1, 5, 8, 7}},
		{SUBSET_DETERMINISTIC, 7, 100, 8, -7, {59, 9, 26, 42, 75, 36, 91, 94}},
		{SUBSET_CONSISTENT, 3, 100, 8, 0, {6, 59, 73, 10, 66, 75, 46, 82}},
		{SUBSET_CONSISTENT, 3, 100, 8, -7, {79, 27, 21, 84, 78, 61, 49, 95}},
	};

	for (size_t g = 0; g < sizeof(golden) / sizeof(golden[0]); g++)
	{
		uint32_t	got[8],
					want[8];
		uint32_t	k = golden[g].k;
		uint64_t	seed = (uint64_t) golden[g].seed;

		CHECK_EQ_INT(baseline(golden[g].id, golden[g].m, golden[g].n, k, seed, got), k);
		CHECK_EQ_INT(ref_baseline(golden[g].id, golden[g].m, golden[g].n, k, seed, want), k);
		CHECK_MSG(memcmp(got, golden[g].subset, sizeof(uint32_t) * k) == 0, "golden %zu: core differs", g);
		CHECK_MSG(memcmp(want, golden[g].subset, sizeof(uint32_t) * k) == 0, "golden %zu: reference differs", g);
	}
}

TEST(deterministic_leaves_out_the_articles_round_robin_leftovers)
{
	/* 10 backends, subsets of 4: round 0 leaves out {0, 1}, round 1 {2, 3} */
	uint32_t	s[4][4];
	bool		seen[2][10] = {{false}};

	for (uint32_t m = 0; m < 4; m++)
		CHECK_EQ_INT(deterministic_write_subset(m, 10, 4, 0, s[m], big_workspace, NULL), 4);
	for (uint32_t m = 0; m < 4; m++)
		for (int i = 0; i < 4; i++)
			seen[m / 2][s[m][i]] = true;
	for (uint32_t b = 0; b < 10; b++)
	{
		CHECK_MSG(seen[0][b] == (b >= 2), "round 0, backend %u", b);
		CHECK_MSG(seen[1][b] == (b < 2 || b >= 4), "round 1, backend %u", b);
	}
}

TEST(round_robin_matches_the_articles_table_1)
{
	/* 10 backends, subsets of 4: {0,1,2,3}, {4,5,6,7}, {8,9,0,1}, ... */
	uint32_t	s[4];

	CHECK_EQ_INT(round_robin_write_subset(2, 10, 4, s), 4);
	CHECK(s[0] == 8 && s[1] == 9 && s[2] == 0 && s[3] == 1);
	CHECK_EQ_INT(round_robin_write_subset(5, 10, 4, s), 4);
	CHECK(s[0] == 0 && s[1] == 1 && s[2] == 2 && s[3] == 3);
	/* the start (m * k) mod N, computed without overflow, wraps to 0 */
	CHECK_EQ_INT(round_robin_write_subset(2147483647u, 4294967295u, 2, s), 2);
	CHECK(s[0] == 4294967294u && s[1] == 0);
}

/* ---- metrics ---- */

static int	allocations;

static void *
test_allocate(void *arg, size_t bytes)
{
	(void) arg;
	allocations++;
	return malloc(bytes);
}

static void
test_release(void *arg, void *pointer)
{
	(void) arg;
	free(pointer);
}

static int	interrupt_calls;

static int
test_interrupts(void *arg)
{
	(void) arg;
	interrupt_calls++;
	return 0;
}

static const core_interrupts test_interrupt_check = {test_interrupts, NULL};
static const subset_env env = {test_allocate, test_release, &test_interrupt_check, NULL};

static subset_job
job_of(subset_algorithm_id id, uint32_t m, uint32_t n, uint32_t k)
{
	subset_job	job = {{id, 3, 10}, m, n, k};

	return job;
}

/* frontend m's subset by the algorithm, computed with the references */
static uint32_t
ref_subset(subset_algorithm_id id, uint32_t m, uint32_t n, uint32_t k, uint32_t *out)
{
	switch (id)
	{
		case SUBSET_ROCKSTEADIER:
			return ref_rocksteadier(m, n, k, 10, out);
		case SUBSET_RINGSTEADY:
			{
				uint32_t   *order = ref_ring_order(n);
				uint32_t	start = ref_scaled_start(m, n);
				uint32_t	count = k < n ? k : n;

				for (uint32_t i = 0; i < count; i++)
					out[i] = order[(start + i) % n];
				free(order);
				return count;
			}
		case SUBSET_RINGSTEADY_UNSCALED:
			{
				/* the first backend at or after the frontend's position */
				uint32_t   *order = ref_ring_order(n);
				uint64_t	position = ref_reverse(m, 64);
				uint32_t	start = 0,
							count = k < n ? k : n;

				while (start < n && ref_reverse(order[start], 64) < position)
					start++;
				for (uint32_t i = 0; i < count; i++)
					out[i] = order[(start + i) % n];
				free(order);
				return count;
			}
		default:
			return ref_baseline(id, m, n, k, 3, out);
	}
}

TEST(balance_diversity_churn_and_spread_agree_with_direct_counts)
{
	uint32_t   *a = malloc(sizeof(uint32_t) * 300);
	uint32_t   *b = malloc(sizeof(uint32_t) * 300);
	uint32_t   *connections = malloc(sizeof(uint32_t) * 300);
	uint32_t   *sorted_subsets = malloc(sizeof(uint32_t) * 300 * 300);

	for (int id = 0; id < SUBSET_ALGORITHMS; id++)
		for (uint32_t n = 1; n <= 150; n += 1 + n / 4)
			for (uint32_t m = 1; m <= 150; m += 1 + m / 3)
			{
				uint32_t	k = 1 + (n * 7 + m) % (n + 2);
				uint32_t	count = k < n ? k : n;
				subset_job	job = job_of((subset_algorithm_id) id, m, n, k);
				subset_job	later = job_of((subset_algorithm_id) id, m + 3, n + 1 + n % 5, k + n % 3);
				subset_balance_result balance;
				subset_diversity_result diversity;
				subset_churn_result churn;
				subset_spread_result spread;
				uint32_t	lo = UINT32_MAX,
							hi = 0,
							distinct = 0,
							max_dropped = 0,
							losing_all = 0,
							max_down = 0;
				uint64_t	dropped = 0;
				uint32_t	w = 1 + (m + n) % 9;

				CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), 0);
				CHECK_EQ_INT(subset_measure_diversity(&job, &env, &diversity), 0);
				CHECK_EQ_INT(subset_measure_churn(&job, &later, &env, &churn), 0);
				CHECK_EQ_INT(subset_measure_spread(&job, w, &env, &spread), 0);

				memset(connections, 0, sizeof(uint32_t) * n);
				for (uint32_t f = 0; f < m; f++)
				{
					uint32_t	c = ref_subset((subset_algorithm_id) id, f, n, k, a);
					uint32_t	lost = 0,
								worst = 0;
					uint32_t   *s = sorted_subsets + (size_t) f * count;

					for (uint32_t i = 0; i < c; i++)
						connections[a[i]]++;
					memcpy(s, a, sizeof(uint32_t) * c);
					qsort(s, c, sizeof(uint32_t), compare_u32);
					for (uint32_t g = 0; g < f; g++)
						if (memcmp(sorted_subsets + (size_t) g * count, s, sizeof(uint32_t) * c) == 0)
							break;
						else if (g + 1 == f)
							distinct++;
					distinct += f == 0;
					/* spread: every window of the restart */
					for (uint32_t start = 0; start + w <= n || start == 0; start++)
					{
						uint32_t	down = 0;

						for (uint32_t i = 0; i < c; i++)
							down += a[i] >= start && a[i] < start + w;
						if (down > worst)
							worst = down;
					}
					if (worst > max_down)
						max_down = worst;
					/* churn */
					{
						uint32_t	c2 = ref_subset((subset_algorithm_id) id, f, later.backends, later.subset_size, b);

						for (uint32_t i = 0; i < c; i++)
						{
							bool		kept = false;

							for (uint32_t j = 0; j < c2; j++)
								kept = kept || a[i] == b[j];
							lost += !kept;
						}
					}
					dropped += lost;
					if (lost > max_dropped)
						max_dropped = lost;
					losing_all += lost == c;
				}
				for (uint32_t i = 0; i < n; i++)
				{
					lo = connections[i] < lo ? connections[i] : lo;
					hi = connections[i] > hi ? connections[i] : hi;
				}
				CHECK_MSG(balance.min_connections == lo && balance.max_connections == hi,
						  "%s M %u N %u k %u: connections %u..%u, counted %u..%u", subset_algorithm_name(id),
						  m, n, k, balance.min_connections, balance.max_connections, lo, hi);
				CHECK(balance.connections == (uint64_t) m * count);
				CHECK(balance.utilization == (double) m * count / ((double) n * hi));
				CHECK(balance.achievable_utilization == (double) (((uint64_t) m * count + n - 1) / n) / hi);
				CHECK_MSG(diversity.distinct_subsets == distinct, "%s M %u N %u k %u: %u distinct, counted %u",
						  subset_algorithm_name(id), m, n, k, diversity.distinct_subsets, distinct);
				CHECK_MSG(churn.dropped == dropped && churn.max_dropped == max_dropped &&
						  churn.frontends_losing_all == losing_all && churn.frontends_compared == m,
						  "%s M %u N %u k %u: churn differs", subset_algorithm_name(id), m, n, k);
				CHECK_MSG(spread.max_down == max_down, "%s M %u N %u k %u w %u: spread %u, counted %u",
						  subset_algorithm_name(id), m, n, k, w, spread.max_down, max_down);
			}
	free(a);
	free(b);
	free(connections);
	free(sorted_subsets);
}

TEST(the_articles_properties)
{
	subset_balance_result balance;
	subset_diversity_result diversity;
	subset_churn_result churn;
	subset_spread_result spread;

	/* round robin: ideal balance, N / gcd(k, N) distinct subsets (10, 4: 5) */
	for (uint32_t m = 1; m <= 60; m++)
	{
		subset_job	job = job_of(SUBSET_ROUND_ROBIN, m, 10, 4);

		CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), 0);
		CHECK(balance.achievable_utilization == 1.0);
		CHECK_EQ_INT(subset_measure_diversity(&job, &env, &diversity), 0);
		CHECK_EQ_INT(diversity.distinct_subsets, m < 5 ? m : 5);
	}
	/* round robin: a restart of k tasks takes down all of frontend 0's */
	{
		subset_job	job = job_of(SUBSET_ROUND_ROBIN, 10, 100, 10);

		CHECK_EQ_INT(subset_measure_spread(&job, 10, &env, &spread), 0);
		CHECK(spread.max_down_share == 1.0);
	}
	/* deterministic, N a multiple of k, M whole rounds: every backend M k / N */
	{
		subset_job	job = job_of(SUBSET_DETERMINISTIC, 60, 100, 20);

		CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), 0);
		CHECK(balance.min_connections == 12 && balance.max_connections == 12);
	}
	/* no algorithm has frontend churn; Rocksteadier and Ringsteady lose at
	 * most one backend per frontend when one backend is added within a lot */
	for (int id = 0; id < SUBSET_ALGORITHMS; id++)
	{
		subset_job	before = job_of((subset_algorithm_id) id, 100, 95, 20);
		subset_job	after = job_of((subset_algorithm_id) id, 250, 95, 20);

		CHECK_EQ_INT(subset_measure_churn(&before, &after, &env, &churn), 0);
		CHECK_MSG(churn.dropped == 0, "%s has frontend churn", subset_algorithm_name(id));
	}
	{
		subset_job	before = job_of(SUBSET_ROCKSTEADIER, 200, 95, 20);
		subset_job	after = job_of(SUBSET_ROCKSTEADIER, 200, 96, 20);
		subset_job	det_before = job_of(SUBSET_DETERMINISTIC, 200, 95, 20);
		subset_job	det_after = job_of(SUBSET_DETERMINISTIC, 200, 96, 20);
		subset_churn_result det;

		CHECK_EQ_INT(subset_measure_churn(&before, &after, &env, &churn), 0);
		CHECK_MSG(churn.max_dropped <= 1, "rocksteadier drops %u", churn.max_dropped);
		CHECK_EQ_INT(subset_measure_churn(&det_before, &det_after, &env, &det), 0);
		CHECK_MSG(det.mean_dropped > 5 * churn.mean_dropped, "deterministic %f, rocksteadier %f",
				  det.mean_dropped, churn.mean_dropped);
	}
	/* Rocksteadier: far more distinct subsets than Ringsteady's at most N */
	{
		subset_job	ring = job_of(SUBSET_RINGSTEADY, 1000, 100, 10);
		subset_job	rock = job_of(SUBSET_ROCKSTEADIER, 1000, 100, 10);
		subset_diversity_result ring_diversity;

		CHECK_EQ_INT(subset_measure_diversity(&ring, &env, &ring_diversity), 0);
		CHECK_EQ_INT(subset_measure_diversity(&rock, &env, &diversity), 0);
		CHECK(ring_diversity.distinct_subsets <= 100);
		CHECK_MSG(diversity.distinct_subsets > 900, "rocksteadier: %u distinct", diversity.distinct_subsets);
	}
	/*
	 * The SRE book: 300 clients, 300 backends, subsets of 30%, random: the
	 * least loaded backend at about 63% and the most at about 121% of the
	 * mean.  Connections to a backend are Binomial(300, 0.3) (mean 90, sd
	 * 7.9): over 300 backends the extremes fall about 3 sd from the mean,
	 * 0.6 to 0.85 and 1.12 to 1.4 of it.
	 */
	{
		subset_job	job = job_of(SUBSET_RANDOM, 300, 300, 90);

		job.algorithm.seed = 0;
		CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), 0);
		CHECK_MSG(balance.min_connections / balance.mean_connections > 0.6 &&
				  balance.min_connections / balance.mean_connections < 0.85 &&
				  balance.max_connections / balance.mean_connections > 1.12 &&
				  balance.max_connections / balance.mean_connections < 1.4,
				  "least %.2f, most %.2f of the mean", balance.min_connections / balance.mean_connections,
				  balance.max_connections / balance.mean_connections);
	}
}

TEST(metrics_refuse_bad_and_absurd_jobs_and_check_interrupts)
{
	subset_balance_result balance;
	subset_spread_result spread;
	subset_churn_result churn;
	subset_diversity_result diversity;
	subset_job	job = job_of(SUBSET_RANDOM, 0, 10, 3);
	subset_job	other = job_of(SUBSET_ROUND_ROBIN, 5, 10, 3);

	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_RANDOM, 5, 0, 3);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_RANDOM, 5, 10, 0);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_ROCKSTEADIER, 5, 10, 3);
	job.algorithm.lot_size = 0;
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_RANDOM, 5, 10, 3);
	CHECK_EQ_INT(subset_measure_spread(&job, 0, &env, &spread), SUBSET_METRICS_INVALID);
	CHECK_EQ_INT(subset_measure_churn(&job, &other, &env, &churn), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_RANDOM, 5, SUBSET_METRICS_MAX_BACKENDS + 1, 3);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_TOO_LARGE);
	job = job_of(SUBSET_CONSISTENT, 1u << 24, 1u << 24, 3);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_TOO_LARGE);
	job = job_of(SUBSET_RINGSTEADY, 1u << 24, 1u << 24, 1u << 20);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), SUBSET_METRICS_TOO_LARGE);

	interrupt_calls = 0;
	job = job_of(SUBSET_RINGSTEADY, 1000, 100, 10);
	CHECK_EQ_INT(subset_measure_balance(&job, &env, &balance), 0);
	CHECK_MSG(interrupt_calls == 1000, "%d interrupt checks for 1000 frontends", interrupt_calls);
	interrupt_calls = 0;
	job = job_of(SUBSET_DETERMINISTIC, 300, 100, 10);
	CHECK_EQ_INT(subset_measure_churn(&job, &job, &env, &churn), 0);
	CHECK_EQ_INT(subset_measure_spread(&job, 5, &env, &spread), 0);
	CHECK_MSG(interrupt_calls == 900, "%d interrupt checks for 300 frontends with 2 subsets each + 300",
			  interrupt_calls);
	/* sorting the subsets' hashes of 2^18 frontends checks as it goes */
	interrupt_calls = 0;
	job = job_of(SUBSET_ROUND_ROBIN, 1u << 18, 1000, 1);
	CHECK_EQ_INT(subset_measure_diversity(&job, &env, &diversity), 0);
	CHECK_EQ_INT(diversity.distinct_subsets, 1000);
	CHECK_MSG(interrupt_calls > (1 << 18), "%d interrupt checks for 2^18 frontends and their sort",
			  interrupt_calls);
}

static uint64_t sort_test_state;

static uint64_t
sort_test_next(void)
{
	return splitmix64_next(&sort_test_state);
}

static int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* The interruptible sort of the measuring functions orders as qsort does. */
TEST(interruptible_sort_orders_as_qsort)
{
	static const size_t sizes[] = {0, 1, 2, 3, 16, 17, 100, 65536, 65537, 300001};
	size_t		most = 300001;
	uint64_t   *a = malloc(sizeof(uint64_t) * most),
			   *b = malloc(sizeof(uint64_t) * most);
	uint32_t   *c = malloc(sizeof(uint32_t) * most),
			   *d = malloc(sizeof(uint32_t) * most);

	interrupt_calls = 0;
	for (int shape = 0; shape < 6; shape++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		{
			size_t		n = sizes[s];

			for (size_t i = 0; i < n; i++)
			{
				uint64_t	v = sort_test_next();

				switch (shape)
				{
					case 1:		/* few distinct values */
						v %= 3;
						break;
					case 2:		/* sorted */
						v = i;
						break;
					case 3:		/* reversed */
						v = n - i;
						break;
					case 4:		/* all equal */
						v = 7;
						break;
					case 5:		/* organ pipe */
						v = i % 2 ? i : n - i;
						break;
				}
				a[i] = b[i] = v;
				c[i] = d[i] = (uint32_t) (v ^ (v >> 32));
			}
			sort_u64(a, n, &test_interrupt_check);
			qsort(b, n, sizeof(uint64_t), compare_u64);
			sort_u32(c, n, &test_interrupt_check);
			qsort(d, n, sizeof(uint32_t), compare_u32);
			CHECK_MSG(n == 0 || memcmp(a, b, sizeof(uint64_t) * n) == 0, "64-bit shape %d, %zu values", shape, n);
			CHECK_MSG(n == 0 || memcmp(c, d, sizeof(uint32_t) * n) == 0, "32-bit shape %d, %zu values", shape, n);
		}
	CHECK(interrupt_calls > 0);
	/* the heapsort that bounds the depth */
	for (size_t i = 0; i < most; i++)
		a[i] = b[i] = sort_test_next() % 1000;
	sort_u64_heapsort(a, most, &test_interrupt_check);
	qsort(b, most, sizeof(uint64_t), compare_u64);
	CHECK(memcmp(a, b, sizeof(uint64_t) * most) == 0);
	free(a);
	free(b);
	free(c);
	free(d);
}

/*
 * The work estimate is defined for every job (found by
 * test/fuzz/fuzz_subset_metrics.c): a job of no frontends divided by zero
 * (corpus file crash-work-of-no-frontends), and the estimate of a job far
 * above the limits wrapped around 2^64 (crash-work-wrapped), which the SQL
 * functions report when they refuse it.  Estimates within 64 bits are those
 * the limits were set with.
 */
TEST(subset_job_work_is_defined_for_every_job)
{
	subset_job	job = job_of(SUBSET_DETERMINISTIC, 0, 10, 3);

	CHECK(subset_job_work(&job) == 0);
	CHECK_EQ_INT(subset_job_check(&job), SUBSET_METRICS_INVALID);
	job = job_of(SUBSET_RINGSTEADY, 2147483647u, 2147483647u, 2147483647u);
	CHECK(subset_job_work(&job) == UINT64_MAX);
	CHECK_EQ_INT(subset_job_check(&job), SUBSET_METRICS_TOO_LARGE);
	for (int id = 0; id < SUBSET_ALGORITHMS; id++)
	{
		job = job_of((subset_algorithm_id) id, 4294967295u, 4294967295u, 4294967295u);
		CHECK_MSG(subset_job_work(&job) == UINT64_MAX, "%s: %" PRIu64, subset_algorithm_name(id),
				  subset_job_work(&job));
		job = job_of((subset_algorithm_id) id, 4294967295u, 4294967295u, 2);
		CHECK_MSG(subset_job_work(&job) >= UINT64_C(2) * 4294967295u, "%s: %" PRIu64,
				  subset_algorithm_name(id), subset_job_work(&job));
	}
	/* unchanged where nothing overflows */
	job = job_of(SUBSET_DETERMINISTIC, 60, 100, 20);
	CHECK(subset_job_work(&job) == 11760);
	job = job_of(SUBSET_DETERMINISTIC, 1000, 95, 7);
	CHECK(subset_job_work(&job) == 66000);
	job = job_of(SUBSET_CONSISTENT, 200, 1000, 20);
	CHECK(subset_job_work(&job) == 427200);
	job = job_of(SUBSET_RINGSTEADY, 1u << 24, 1u << 24, 1u << 20);
	CHECK(subset_job_work(&job) == UINT64_C(404621621198848));
	job = job_of(SUBSET_ROCKSTEADIER, 200, 95, 20);
	CHECK(subset_job_work(&job) == 53200);
}

/*
 * Churn refuses a job after that it cannot measure before allocating
 * anything for the job before (found by test/fuzz/fuzz_subset_metrics.c;
 * corpus file crash-churn-refused-late).
 */
TEST(churn_refuses_both_jobs_up_front)
{
	subset_churn_result churn;
	subset_job	before = job_of(SUBSET_RANDOM, 50, 100, 10);
	subset_job	after = job_of(SUBSET_RANDOM, 50, SUBSET_METRICS_MAX_BACKENDS + 1, 10);

	allocations = 0;
	CHECK_EQ_INT(subset_measure_churn(&before, &after, &env, &churn), SUBSET_METRICS_TOO_LARGE);
	CHECK_EQ_INT(subset_measure_churn(&after, &before, &env, &churn), SUBSET_METRICS_TOO_LARGE);
	after = job_of(SUBSET_RANDOM, 0, 100, 10);
	CHECK_EQ_INT(subset_measure_churn(&before, &after, &env, &churn), SUBSET_METRICS_INVALID);
	CHECK_EQ_INT(allocations, 0);
	CHECK_EQ_INT(subset_measure_churn(&before, &before, &env, &churn), SUBSET_METRICS_OK);
	CHECK(allocations > 0 && churn.dropped == 0);
}

int
main(void)
{
	big_workspace = malloc(sizeof(uint64_t) * 1000000);
	RUN(rocksteadier_agrees_with_the_reference_on_small_fleets);
	RUN(rocksteadier_agrees_with_the_reference_on_large_fleets);
	RUN(rocksteadier_golden_values);
	RUN(rocksteadier_starting_rows_are_the_ring_order_of_l);
	RUN(rocksteadier_subsets_are_distinct_in_range_and_prefixes);
	RUN(rocksteadier_shuffles_are_shared_within_a_frontend_lot_and_differ_across);
	RUN(rocksteadier_adding_a_backend_lot_keeps_the_earlier_shuffles);
	RUN(rocksteadier_with_a_cache_gives_the_same_subsets);
	RUN(rocksteadier_invalid_arguments);
	RUN(rocksteadier_shuffle_of_an_empty_lot_writes_nothing);
	RUN(rocksteadier_on_the_largest_fleets);
	RUN(baselines_agree_with_their_references);
	RUN(baselines_are_distinct_in_range_and_prefixes_where_they_should_be);
	RUN(random_workspace_of_subsets_above_2_30_members);
	RUN(baselines_golden_values);
	RUN(deterministic_leaves_out_the_articles_round_robin_leftovers);
	RUN(round_robin_matches_the_articles_table_1);
	RUN(balance_diversity_churn_and_spread_agree_with_direct_counts);
	RUN(the_articles_properties);
	RUN(metrics_refuse_bad_and_absurd_jobs_and_check_interrupts);
	RUN(interruptible_sort_orders_as_qsort);
	RUN(subset_job_work_is_defined_for_every_job);
	RUN(churn_refuses_both_jobs_up_front);
	free(big_workspace);
	return unit_report();
}
