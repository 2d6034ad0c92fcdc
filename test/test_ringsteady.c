/*
 * test/test_ringsteady.c
 *		Tests of Ringsteady subsetting in the pure core: every row of the
 *		Ringsteady post's outputs, the post's linear-time method (with the
 *		rotation computed exactly) as an oracle on
 *		every N <= 4096 and on random large fleets, and the article's
 *		properties.
 *
 * Usage: test_ringsteady [DATA_DIR]   (default test/data)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bits.h"
#include "core/ringsteady.h"
#include "ringsteady_post.h"
#include "unit.h"

static const char *data_dir = "test/data";

static uint64_t random_state = UINT64_C(0x2545F4914F6CDD1D);

static uint64_t
random_u64(void)
{
	random_state ^= random_state >> 12;
	random_state ^= random_state << 25;
	random_state ^= random_state >> 27;
	return random_state * UINT64_C(2685821657736338717);
}

/* The post's rotation, ceil(reverse_bits(m) / 2^64 * N), computed exactly by long multiplication. */
static uint64_t
oracle_exact_rotation(uint32_t frontend, uint32_t backends)
{
	/* reverse_bits(m) * N with 32-bit limbs of reverse_bits(m) */
	uint64_t	r = bits_reverse64(frontend);
	uint64_t	lo = (r & UINT32_MAX) * backends;
	uint64_t	hi = (r >> 32) * backends + (lo >> 32);

	/* product = hi * 2^32 + (lo mod 2^32); its top 64 bits are hi >> 32 */
	return (hi >> 32) + (((hi & UINT32_MAX) | (lo & UINT32_MAX)) != 0);
}

/* Figure 4b's start: the first backend at or after the frontend's position. */
static uint32_t
oracle_unscaled_start(const uint32_t *order, uint32_t backends, uint32_t frontend)
{
	uint64_t	frontend_position = bits_reverse64(frontend);
	uint32_t	low = 0,
				high = backends;

	/* positions increase along the ring order: binary search */
	while (low < high)
	{
		uint32_t	middle = low + (high - low) / 2;

		if (bits_reverse64(order[middle]) < frontend_position)
			low = middle + 1;
		else
			high = middle;
	}
	return low == backends ? 0 : low;
}

TEST(matches_every_row_of_the_post)
{
	char		path[1024];
	char		line[4096];
	long		rows = 0;
	uint32_t   *subset = malloc(sizeof(uint32_t) * 2000000);
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/ringsteady_blog.csv", data_dir);
	f = fopen(path, "r");
	CHECK_MSG(f != NULL, "could not open %s", path);
	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) == NULL)
		UNIT_FAIL("%s is empty", path);
	while (fgets(line, sizeof(line), f) != NULL)
	{
		unsigned	backends, frontend, subset_size;
		int			consumed;
		char	   *p;
		int64_t		count;

		if (sscanf(line, "%u,%u,%u,%n", &backends, &frontend, &subset_size, &consumed) != 3)
		{
			UNIT_FAIL("cannot parse line %ld of %s", rows + 2, path);
			continue;
		}
		count = ringsteady_write_subset(frontend, backends, subset_size, true, subset);
		CHECK_EQ_INT(count, subset_size);
		p = line + consumed;
		for (int64_t i = 0; i < count; i++)
		{
			unsigned long expected = strtoul(p, &p, 10);

			CHECK_MSG(subset[i] == expected, "backends %u, frontend %u: member %" PRId64 " is %u, the post gives %lu",
					  backends, frontend, i, subset[i], expected);
		}
		rows++;
	}
	fclose(f);
	free(subset);
	CHECK_MSG(rows > 9000, "only %ld rows", rows);
}

TEST(the_posts_example)
{
	const uint32_t expected[5][2] = {{0, 4}, {1, 5}, {2, 1}, {3, 0}, {4, 2}};

	for (uint32_t m = 0; m < 5; m++)
	{
		uint32_t	subset[2];

		CHECK_EQ_INT(ringsteady_write_subset(m, 6, 2, true, subset), 2);
		CHECK_EQ_INT(subset[0], expected[m][0]);
		CHECK_EQ_INT(subset[1], expected[m][1]);
	}
}

/* The post's f64 rotation is wrong here; the exact one is 2^31 - 1, i.e. 0. */
TEST(exact_rotation_where_the_posts_f64_code_rounds_wrong)
{
	uint32_t	subset[3];

	CHECK_EQ_INT(oracle_exact_rotation(2147483647, 2147483647), 2147483647);
	CHECK_EQ_INT(post_f64_rotation(2147483647, 2147483647), 2147483646);
	CHECK_EQ_INT(ringsteady_start_rank(2147483647, 2147483647, true), 0);
	CHECK_EQ_INT(ringsteady_write_subset(2147483647, 2147483647, 3, true, subset), 3);
	/* rank 0 is backend 0; then the positions 1 and 2 of 31 bits */
	CHECK_EQ_INT(subset[0], 0);
	CHECK_EQ_INT(subset[1], 1073741824);
	CHECK_EQ_INT(subset[2], 536870912);
}

/* Every rank of every ring order of N <= 4096, and every frontend <= 2N. */
TEST(agrees_with_the_linear_time_method_up_to_4096_backends)
{
	uint32_t	subset[20];

	for (uint32_t n = 1; n <= 4096; n++)
	{
		uint32_t   *order = post_ring_order(n);
		ringsteady_cursor cursor;

		for (uint32_t rank = 0; rank < n; rank++)
		{
			ringsteady_cursor_at_rank(&cursor, n, rank);
			CHECK_MSG(ringsteady_cursor_next(&cursor) == order[rank], "N %u rank %u", n, rank);
		}
		ringsteady_cursor_at_rank(&cursor, n, 0);
		for (uint32_t i = 0; i < 2 * n; i++)
			CHECK_MSG(ringsteady_cursor_next(&cursor) == order[i % n], "N %u step %u", n, i);

		for (uint32_t m = 0; m <= 2 * n; m++)
		{
			uint32_t	scaled = (uint32_t) (oracle_exact_rotation(m, n) % n);
			uint32_t	unscaled = oracle_unscaled_start(order, n, m);
			uint32_t	k = n < 20 ? n : 20;

			CHECK_MSG(ringsteady_start_rank(m, n, true) == scaled, "N %u m %u scaled", n, m);
			CHECK_MSG(ringsteady_start_rank(m, n, false) == unscaled, "N %u m %u unscaled", n, m);
			ringsteady_write_subset(m, n, k, true, subset);
			for (uint32_t i = 0; i < k; i++)
				CHECK_MSG(subset[i] == order[(scaled + i) % n], "N %u m %u member %u", n, m, i);
		}
		free(order);
	}
}

TEST(agrees_with_the_linear_time_method_on_random_large_fleets)
{
	uint32_t	subset[64];

	for (int c = 0; c < 40; c++)
	{
		uint32_t	n = 4097 + (uint32_t) (random_u64() % (c < 30 ? 1000000 : 20000000));
		uint32_t   *order = post_ring_order(n);

		for (int f = 0; f < 200; f++)
		{
			uint32_t	m = (uint32_t) (f < 100 ? random_u64() % (2 * (uint64_t) n) : random_u64() >> 33);
			uint32_t	scaled = (uint32_t) (oracle_exact_rotation(m, n) % n);
			uint32_t	unscaled = oracle_unscaled_start(order, n, m);

			CHECK_EQ_INT(ringsteady_start_rank(m, n, false), unscaled);
			CHECK_EQ_INT(ringsteady_write_subset(m, n, 64, true, subset), 64);
			for (uint32_t i = 0; i < 64; i++)
				CHECK_MSG(subset[i] == order[(scaled + i) % n], "N %u m %u member %u", n, m, i);
		}
		free(order);
	}
}

/* The properties of the largest fleets, where no oracle list fits. */
TEST(subsets_of_the_largest_fleets_are_distinct_and_in_range)
{
	const uint32_t ns[] = {2147483647, 2147483648u, 4294967295u, (1u << 31) + 1, 3000000019u};
	uint32_t   *subset = malloc(sizeof(uint32_t) * 100000);

	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
	{
		for (int f = 0; f < 5; f++)
		{
			uint32_t	m = (uint32_t) random_u64();
			int64_t		count = ringsteady_write_subset(m, ns[j], 100000, f % 2 == 0, subset);
			int			descents = 0;

			CHECK_EQ_INT(count, 100000);
			for (int i = 0; i < count; i++)
				CHECK(subset[i] < ns[j]);
			/*
			 * Members in ring order have increasing positions, bar one wrap
			 * around the circle; with distinct positions, that makes them
			 * distinct.
			 */
			for (int i = 1; i < count; i++)
				descents += bits_reverse64(subset[i]) <= bits_reverse64(subset[i - 1]);
			CHECK_MSG(descents <= 1, "N %u m %u: %d descents", ns[j], m, descents);
		}
	}
	free(subset);
}

static int
compare_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

TEST(subsets_are_distinct_in_range_and_prefixes_of_larger_ones)
{
	uint32_t	big[300],
				small[300],
				sorted[300];

	for (uint32_t n = 1; n <= 300; n++)
		for (uint32_t m = 0; m < 400; m += 7)
			for (int scaling = 0; scaling < 2; scaling++)
			{
				int64_t		count = ringsteady_write_subset(m, n, n + 5, scaling, big);

				CHECK_EQ_INT(count, n);	/* more than N asked for: all N */
				memcpy(sorted, big, sizeof(uint32_t) * n);
				qsort(sorted, n, sizeof(uint32_t), compare_u32);
				for (uint32_t i = 0; i < n; i++)
					CHECK_MSG(sorted[i] == i, "N %u m %u: not every backend exactly once", n, m);
				for (uint32_t k = 0; k <= n; k += 1 + n / 10)
				{
					CHECK_EQ_INT(ringsteady_write_subset(m, n, k, scaling, small), k);
					CHECK(memcmp(small, big, sizeof(uint32_t) * k) == 0);
				}
			}
}

TEST(without_scaling_frontend_m_below_n_starts_at_backend_m)
{
	uint32_t	first;

	for (uint32_t n = 1; n <= 2000; n++)
		for (uint32_t m = 0; m < n; m++)
		{
			ringsteady_write_subset(m, n, 1, false, &first);
			CHECK_MSG(first == m, "N %u: frontend %u starts at %u", n, m, first);
		}
}

/* connections per backend when frontends 0..M-1 take subsets of k */
static void
count_connections(uint32_t frontends, uint32_t backends, uint32_t k, bool scaling,
				  uint32_t *connections, uint32_t *scratch)
{
	memset(connections, 0, sizeof(uint32_t) * backends);
	for (uint32_t m = 0; m < frontends; m++)
	{
		int64_t		count = ringsteady_write_subset(m, backends, k, scaling, scratch);

		for (int64_t i = 0; i < count; i++)
			connections[scratch[i]]++;
	}
}

TEST(without_scaling_m_equal_to_n_gives_every_backend_k_connections)
{
	uint32_t	connections[256],
				scratch[256];

	for (uint32_t n = 1; n <= 256; n++)
		for (uint32_t k = 1; k <= n; k++)
		{
			count_connections(n, n, k, false, connections, scratch);
			for (uint32_t b = 0; b < n; b++)
				CHECK_MSG(connections[b] == k, "N = M = %u, k %u: backend %u has %u", n, k, b, connections[b]);
		}
}

TEST(with_scaling_and_m_a_power_of_two_connections_are_balanced)
{
	uint32_t	connections[160],
				scratch[160];

	for (uint32_t n = 1; n <= 160; n++)
		for (uint32_t frontends = 1; frontends <= 512; frontends *= 2)
			for (uint32_t k = 1; k <= n; k += (k < 24 ? 1 : 1 + k / 3))
			{
				uint64_t	total = (uint64_t) frontends * k;
				uint64_t	low = total / n,
							high = (total + n - 1) / n;

				if (total < n)
					continue;
				count_connections(frontends, n, k, true, connections, scratch);
				for (uint32_t b = 0; b < n; b++)
					CHECK_MSG(connections[b] >= low && connections[b] <= high,
							  "N %u M %u k %u: backend %u has %u connections, not %" PRIu64 " or %" PRIu64,
							  n, frontends, k, b, connections[b], low, high);
			}
}

/* members of `before` that are not in `after` */
static uint32_t
members_lost(const uint32_t *before, const uint32_t *after, uint32_t k)
{
	uint32_t	lost = 0;

	for (uint32_t i = 0; i < k; i++)
	{
		bool		kept = false;

		for (uint32_t j = 0; j < k && !kept; j++)
			kept = before[i] == after[j];
		lost += !kept;
	}
	return lost;
}

TEST(without_scaling_adding_a_backend_changes_at_most_one_member)
{
	uint32_t	before[40],
				after[40];

	for (uint32_t n = 1; n <= 300; n++)
		for (uint32_t m = 0; m < 2 * n + 10; m++)
			for (uint32_t k = 1; k <= n && k <= 40; k += 1 + k / 4)
			{
				ringsteady_write_subset(m, n, k, false, before);
				ringsteady_write_subset(m, n + 1, k, false, after);
				CHECK_MSG(members_lost(before, after, k) <= 1, "N %u -> %u, m %u, k %u", n, n + 1, m, k);
			}
}

/*
 * With backend scaling, adding a backend moves every frontend's start, so
 * more than one member can change.  This measures the worst case (it asserts
 * only that the numbers are sane); the README reports them.
 */
TEST(with_scaling_backend_churn_when_one_backend_is_added)
{
	const uint32_t k = 20;
	uint32_t	before[20],
				after[20];
	uint32_t	worst = 0,
				worst_n = 0;
	double		total_lost = 0;
	long		subsets = 0;

	for (uint32_t n = k; n <= 1000; n++)
		for (uint32_t m = 0; m < 2 * n; m++)
		{
			uint32_t	lost;

			ringsteady_write_subset(m, n, k, true, before);
			ringsteady_write_subset(m, n + 1, k, true, after);
			lost = members_lost(before, after, k);
			total_lost += lost;
			subsets++;
			if (lost > worst)
			{
				worst = lost;
				worst_n = n;
			}
		}
	printf("  backend churn with scaling, k = 20, N = 20..1000 -> N + 1, frontends 0..2N-1: "
		   "worst %u of 20 members (first at N = %u), mean %.3f\n", worst, worst_n, total_lost / subsets);
	CHECK(worst >= 1 && worst <= k);
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		data_dir = argv[1];
	RUN(the_posts_example);
	RUN(matches_every_row_of_the_post);
	RUN(exact_rotation_where_the_posts_f64_code_rounds_wrong);
	RUN(agrees_with_the_linear_time_method_up_to_4096_backends);
	RUN(agrees_with_the_linear_time_method_on_random_large_fleets);
	RUN(subsets_of_the_largest_fleets_are_distinct_and_in_range);
	RUN(subsets_are_distinct_in_range_and_prefixes_of_larger_ones);
	RUN(without_scaling_frontend_m_below_n_starts_at_backend_m);
	RUN(without_scaling_m_equal_to_n_gives_every_backend_k_connections);
	RUN(with_scaling_and_m_a_power_of_two_connections_are_balanced);
	RUN(without_scaling_adding_a_backend_changes_at_most_one_member);
	RUN(with_scaling_backend_churn_when_one_backend_is_added);
	return unit_report();
}
