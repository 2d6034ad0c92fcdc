/*
 * test/fuzz/fuzz_subsets.c
 *		libFuzzer harness for the subset functions and the consistent hashes of
 *		the pure core, with arbitrary arguments: Ringsteady, Rocksteadier, the
 *		article's four baselines (random, round robin, deterministic,
 *		consistent), JumpBackHash and JumpHash.  Every call must either refuse
 *		its arguments by its return code or give an answer that keeps the
 *		function's promises:
 *		- min(k, N) members, in range and distinct;
 *		- the same answer from a second call whose output and working memory
 *		  were scribbled over first;
 *		- a prefix of every larger subset, where the header says so;
 *		- each algorithm's own construction: round robin's run from
 *		  (m * k) mod N, deterministic subsetting's disjoint subsets of a
 *		  round without its leftovers (and the cached variant agreeing),
 *		  consistent subsetting's nearest backends in clockwise order,
 *		  random subsetting's shuffle against a plain one, Rocksteadier
 *		  against a table of every lot's shuffle read row by row;
 *		- buckets in range.
 * Outputs and working memory are allocated with malloc at exactly the size the
 * core asks for, so that AddressSanitizer catches any overrun.
 *
 * Input, little-endian, missing bytes zeros: frontend (4 bytes), backends (4),
 * subset size (2), flags (1), key (8), buckets (4), seed (8), lot size (4).
 * Flags: bit 0, backend scaling (Ringsteady); bit 1, a huge subset size
 * (UINT32_MAX less the one given); bit 2, the lot size as given (0 and values
 * above ROCKSTEADIER_MAX_LOT_SIZE must be refused), else taken into
 * [1, ROCKSTEADIER_MAX_LOT_SIZE].
 *
 * Each input is kept cheap: a subset has at most MAX_MEMBERS members (N is
 * reduced when min(k, N) would be larger), the algorithms that read every
 * backend get at most SCAN_LIMIT backends, and Rocksteadier at most
 * STEP_LIMIT shuffle steps (its lot size is halved until it fits).  These are
 * far below the SQL functions' limits; the functions' size formulas are
 * still checked with the arguments as given.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "core/baselines.h"
#include "core/jump.h"
#include "core/ringsteady.h"
#include "core/rocksteadier.h"
#include "core/splitmix64.h"

#define MAX_MEMBERS 2048
#define SCAN_LIMIT 2048
#define STEP_LIMIT (1u << 15)
#define REFERENCE_LIMIT 16384	/* Rocksteadier's table of lots, N rounded up */

static void
scribble(void *pointer, size_t bytes)
{
	if (bytes > 0)
		memset(pointer, 0xA5, bytes);
}

static int
compare_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

/* count == min(k, N), every member below N, no member twice */
static void
check_members(const uint32_t *subset, int64_t count, uint32_t backends, uint32_t subset_size)
{
	uint32_t   *sorted;

	REQUIRE(count == min_u32(subset_size, backends));
	sorted = allocate(sizeof(uint32_t) * (size_t) count);
	if (count > 0)
		memcpy(sorted, subset, sizeof(uint32_t) * (size_t) count);
	qsort(sorted, (size_t) count, sizeof(uint32_t), compare_u32);
	for (int64_t i = 0; i < count; i++)
		REQUIRE(sorted[i] < backends && (i == 0 || sorted[i] != sorted[i - 1]));
	free(sorted);
}

/* ---- Ringsteady ---- */

static void
check_ringsteady(uint32_t frontend, uint32_t backends, uint32_t subset_size, bool scaling)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint32_t   *subset = allocate(sizeof(uint32_t) * count);
	int64_t		written = ringsteady_write_subset(frontend, backends, subset_size, scaling, subset);

	if (backends == 0)
		REQUIRE(written == -1);
	else
	{
		check_members(subset, written, backends, subset_size);
		if (count > 0)
		{
			uint32_t	k = count - 1;
			uint32_t   *smaller = allocate(sizeof(uint32_t) * k);

			REQUIRE(ringsteady_write_subset(frontend, backends, k, scaling, smaller) == k);
			REQUIRE(k == 0 || memcmp(smaller, subset, sizeof(uint32_t) * k) == 0);
			free(smaller);
		}
	}
	free(subset);
}

/* ---- Rocksteadier ---- */

/* Rocksteadier's subset with exactly its workspace, or -1 if it refused. */
static int64_t
rocksteadier(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint32_t lot_size,
			 uint32_t *out)
{
	size_t		bytes = sizeof(uint32_t) * ROCKSTEADIER_WORKSPACE(lot_size);
	uint32_t   *workspace = allocate(bytes);
	int64_t		count;

	scribble(workspace, bytes);
	count = rocksteadier_write_subset(frontend, backends, subset_size, lot_size, out, workspace, NULL);
	free(workspace);
	return count;
}

/*
 * The construction of rocksteadier.h, listing everything: every lot's
 * shuffle, the lots in Ringsteady order, rows read across them from the
 * frontend's starting row.
 */
static void
check_rocksteadier_reference(uint32_t frontend, uint32_t backends, uint32_t count,
							 uint32_t lot_size, const uint32_t *subset)
{
	uint32_t	lots = (backends - 1) / lot_size + 1;
	uint32_t	frontend_lot = frontend / lot_size;
	uint32_t   *table = allocate(sizeof(uint32_t) * (size_t) lots * lot_size);
	uint32_t   *lot_order = allocate(sizeof(uint32_t) * lots);
	uint32_t   *rows = allocate(sizeof(uint32_t) * lot_size);
	uint32_t	first_row,
				read = 0;

	for (uint32_t j = 0; j < lots; j++)
		rocksteadier_shuffle_lot(frontend_lot, j, lot_size, table + (size_t) j * lot_size);
	REQUIRE(ringsteady_write_subset(frontend_lot, lots, lots, true, lot_order) == lots);
	REQUIRE(ringsteady_write_subset(0, lot_size, lot_size, true, rows) == lot_size);
	first_row = rows[frontend % lot_size];
	for (uint32_t pass = 0; pass < lot_size && read < count; pass++)
		for (uint32_t t = 0; t < lots && read < count; t++)
		{
			uint32_t	lot = lot_order[t];
			uint64_t	task = (uint64_t) lot * lot_size +
				table[(size_t) lot * lot_size + (first_row + pass) % lot_size];

			if (task < backends)
				REQUIRE(subset[read++] == task);
		}
	REQUIRE(read == count);
	free(table);
	free(lot_order);
	free(rows);
}

static void
check_rocksteadier(uint32_t frontend, uint32_t backends, uint32_t subset_size,
				   uint32_t lot_size, uint32_t key)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint64_t	steps = rocksteadier_shuffle_steps(backends, subset_size, lot_size);
	uint32_t   *subset,
			   *again;
	int64_t		written;

	/* the cost: each lot visited, and the last lot once more, shuffled once */
	if (backends == 0 || lot_size == 0 || count == 0)
		REQUIRE(steps == 0);
	else
	{
		uint64_t	lots = (backends - 1) / lot_size + 1;
		uint64_t	visited = (uint64_t) count + 1 < lots ? (uint64_t) count + 1 : lots;

		REQUIRE(steps >= (uint64_t) lot_size && steps <= (visited + 1) * lot_size);
	}

	/* a lot's shuffle is a permutation of [0, L) */
	if (lot_size <= ROCKSTEADIER_MAX_LOT_SIZE)
	{
		uint32_t   *perm = allocate(sizeof(uint32_t) * lot_size);
		uint32_t	frontend_lot = lot_size == 0 ? frontend : frontend / lot_size;

		rocksteadier_shuffle_lot(frontend_lot, key, lot_size, perm);
		qsort(perm, lot_size, sizeof(uint32_t), compare_u32);
		for (uint32_t i = 0; i < lot_size; i++)
			REQUIRE(perm[i] == i);
		free(perm);
	}

	if (backends == 0 || lot_size == 0 || lot_size > ROCKSTEADIER_MAX_LOT_SIZE)
	{
		/* refused, without touching the output or the workspace */
		uint32_t   *nothing = allocate(0);

		REQUIRE(rocksteadier_write_subset(frontend, backends, subset_size, lot_size, nothing,
										  nothing, NULL) == -1);
		free(nothing);
		return;
	}
	if (steps > STEP_LIMIT)
		return;

	subset = allocate(sizeof(uint32_t) * count);
	again = allocate(sizeof(uint32_t) * count);
	written = rocksteadier(frontend, backends, subset_size, lot_size, subset);
	check_members(subset, written, backends, subset_size);
	scribble(again, sizeof(uint32_t) * count);
	REQUIRE(rocksteadier(frontend, backends, subset_size, lot_size, again) == written);
	REQUIRE(count == 0 || memcmp(again, subset, sizeof(uint32_t) * count) == 0);

	/* a prefix of every larger subset: one less, and about half */
	if (count > 0)
	{
		const uint32_t smaller[2] = {count - 1, count / 2};

		for (int i = 0; i < 2; i++)
		{
			REQUIRE(rocksteadier(frontend, backends, smaller[i], lot_size, again) == smaller[i]);
			REQUIRE(smaller[i] == 0 || memcmp(again, subset, sizeof(uint32_t) * smaller[i]) == 0);
		}
	}

	if (((uint64_t) backends - 1) / lot_size * lot_size + lot_size <= REFERENCE_LIMIT)
		check_rocksteadier_reference(frontend, backends, count, lot_size, subset);
	free(subset);
	free(again);
}

/* ---- random subsetting ---- */

static int64_t
random_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
			  uint32_t *out)
{
	size_t		bytes = random_subset_workspace_bytes(backends, subset_size);
	void	   *workspace = allocate(bytes);
	int64_t		count;

	scribble(workspace, bytes);
	count = random_write_subset(frontend, backends, subset_size, seed, out, workspace, NULL);
	free(workspace);
	return count;
}

/*
 * The workspace holds the whole array of N, or a table of the entries moved
 * (at most k', the table at most half full, so at least 2k' keys and 2k'
 * values) of O(k') values; never more than the whole array.
 */
static void
check_random_workspace(uint32_t backends, uint32_t subset_size)
{
	uint64_t	count = min_u32(subset_size, backends);
	uint64_t	values = random_subset_workspace_bytes(backends, subset_size) / sizeof(uint32_t);

	REQUIRE(values <= backends);
	REQUIRE(values >= (backends < 4 * count ? backends : 4 * count));
	REQUIRE(values <= 8 * count + 4);
}

static void
check_random(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint32_t   *subset = allocate(sizeof(uint32_t) * count);
	uint32_t   *again = allocate(sizeof(uint32_t) * count);
	int64_t		written = random_subset(frontend, backends, subset_size, seed, subset);

	if (backends == 0)
	{
		REQUIRE(written == -1);
		free(subset);
		free(again);
		return;
	}
	check_members(subset, written, backends, subset_size);
	scribble(again, sizeof(uint32_t) * count);
	REQUIRE(random_subset(frontend, backends, subset_size, seed, again) == written);
	REQUIRE(count == 0 || memcmp(again, subset, sizeof(uint32_t) * count) == 0);
	if (count > 0)
	{
		uint32_t	k = count / 2;

		REQUIRE(random_subset(frontend, backends, k, seed, again) == k);
		REQUIRE(k == 0 || memcmp(again, subset, sizeof(uint32_t) * k) == 0);
	}

	/* forward Fisher-Yates over the whole array, as baselines.h defines it */
	if (backends <= SCAN_LIMIT)
	{
		uint32_t   *a = allocate(sizeof(uint32_t) * backends);
		uint64_t	state = baselines_stream(seed, BASELINES_RANDOM_STREAM, frontend);

		for (uint32_t i = 0; i < backends; i++)
			a[i] = i;
		for (uint32_t i = 0; i < count; i++)
		{
			uint32_t	j = i + baselines_uniform(splitmix64_next(&state), backends - i);
			uint32_t	t = a[i];

			a[i] = a[j];
			a[j] = t;
			REQUIRE(subset[i] == a[i]);
		}
		free(a);
	}
	free(subset);
	free(again);
}

/* ---- round robin ---- */

static void
check_round_robin(uint32_t frontend, uint32_t backends, uint32_t subset_size)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint32_t   *subset = allocate(sizeof(uint32_t) * count);
	int64_t		written = round_robin_write_subset(frontend, backends, subset_size, subset);

	if (backends == 0)
		REQUIRE(written == -1);
	else
	{
		uint64_t	start = (uint64_t) frontend * subset_size % backends;

		check_members(subset, written, backends, subset_size);
		for (uint32_t i = 0; i < count; i++)
			REQUIRE(subset[i] == (start + i) % backends);
	}
	free(subset);
}

/* ---- deterministic subsetting ---- */

static int64_t
deterministic_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
					 uint32_t *out)
{
	size_t		bytes = deterministic_subset_workspace_bytes(backends);
	void	   *workspace = allocate(bytes);
	int64_t		count;

	scribble(workspace, bytes);
	count = deterministic_write_subset(frontend, backends, subset_size, seed, out, workspace, NULL);
	free(workspace);
	return count;
}

static void
check_deterministic(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed)
{
	uint32_t	size = min_u32(subset_size, backends);
	uint32_t   *subset = allocate(sizeof(uint32_t) * size);
	uint32_t   *again = allocate(sizeof(uint32_t) * size);
	int64_t		written = deterministic_subset(frontend, backends, subset_size, seed, subset);
	uint32_t	per_round,
				leftovers,
				round;
	uint64_t	first_left_out,
				round_start;
	uint8_t    *owner;
	size_t		bytes;
	uint32_t   *workspace;
	int64_t		cached_round = -1;

	REQUIRE(deterministic_subset_workspace_bytes(backends) == sizeof(uint32_t) * (size_t) backends);
	if (backends == 0)
	{
		REQUIRE(written == -1);
		goto done;
	}
	check_members(subset, written, backends, subset_size);
	scribble(again, sizeof(uint32_t) * size);
	REQUIRE(deterministic_subset(frontend, backends, subset_size, seed, again) == written);
	REQUIRE(size == 0 || memcmp(again, subset, sizeof(uint32_t) * size) == 0);
	if (size == 0)
		goto done;

	/*
	 * The round: c = N / k' subsets, the l = N mod k' tasks (r l + i) mod N
	 * left out.  Every frontend of the round (those that exist below 2^32),
	 * by the cached variant: disjoint subsets without the leftovers, all of
	 * the rest when the round is whole, frontend m's as the uncached one.
	 */
	per_round = backends / size;
	leftovers = backends % size;
	round = frontend / per_round;
	first_left_out = (uint64_t) round * leftovers % backends;
	round_start = (uint64_t) round * per_round;
	owner = allocate(backends);
	memset(owner, 0, backends);
	for (uint32_t i = 0; i < leftovers; i++)
		owner[(first_left_out + i) % backends] = 2;
	bytes = deterministic_subset_workspace_bytes(backends);
	workspace = allocate(bytes);
	scribble(workspace, bytes);
	for (uint64_t m = round_start; m < round_start + per_round && m <= UINT32_MAX; m++)
	{
		REQUIRE(deterministic_write_subset_cached((uint32_t) m, backends, subset_size, seed, again,
												  workspace, &cached_round) == size);
		REQUIRE(cached_round == (int64_t) round);
		for (uint32_t i = 0; i < size; i++)
		{
			REQUIRE(owner[again[i]] == 0);
			owner[again[i]] = 1;
		}
		if (m == frontend)
			REQUIRE(memcmp(again, subset, sizeof(uint32_t) * size) == 0);
	}
	if (round_start + per_round - 1 <= UINT32_MAX)
		for (uint32_t n = 0; n < backends; n++)
			REQUIRE(owner[n] != 0);
	free(owner);
	free(workspace);
done:
	free(subset);
	free(again);
}

/* ---- consistent subsetting ---- */

static int64_t
consistent_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
				  uint32_t *out)
{
	size_t		bytes = consistent_subset_workspace_bytes(backends, subset_size);
	void	   *workspace = allocate(bytes);
	int64_t		count;

	scribble(workspace, bytes);
	count = consistent_write_subset(frontend, backends, subset_size, seed, out, workspace, NULL);
	free(workspace);
	return count;
}

/* (distance, index) of a before that of b */
static bool
nearer(uint64_t distance_a, uint32_t a, uint64_t distance_b, uint32_t b)
{
	return distance_a < distance_b || (distance_a == distance_b && a < b);
}

static void
check_consistent(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint32_t   *subset = allocate(sizeof(uint32_t) * count);
	uint32_t   *again = allocate(sizeof(uint32_t) * count);
	int64_t		written = consistent_subset(frontend, backends, subset_size, seed, subset);
	uint64_t	origin = consistent_frontend_position(seed, frontend);
	uint8_t    *member;

	REQUIRE(consistent_subset_workspace_bytes(backends, subset_size) ==
			sizeof(uint64_t) * (size_t) count);
	if (backends == 0)
	{
		REQUIRE(written == -1);
		goto done;
	}
	check_members(subset, written, backends, subset_size);
	scribble(again, sizeof(uint32_t) * count);
	REQUIRE(consistent_subset(frontend, backends, subset_size, seed, again) == written);
	REQUIRE(count == 0 || memcmp(again, subset, sizeof(uint32_t) * count) == 0);
	if (count == 0)
		goto done;
	{
		uint32_t	k = count / 2;

		REQUIRE(consistent_subset(frontend, backends, k, seed, again) == k);
		REQUIRE(k == 0 || memcmp(again, subset, sizeof(uint32_t) * k) == 0);
	}

	/* nearest first, and no other backend nearer than the last member */
	member = allocate(backends);
	memset(member, 0, backends);
	for (uint32_t i = 0; i < count; i++)
	{
		member[subset[i]] = 1;
		if (i > 0)
			REQUIRE(nearer(consistent_backend_position(seed, subset[i - 1]) - origin, subset[i - 1],
						   consistent_backend_position(seed, subset[i]) - origin, subset[i]));
	}
	for (uint32_t n = 0; n < backends; n++)
		if (!member[n])
			REQUIRE(nearer(consistent_backend_position(seed, subset[count - 1]) - origin,
						   subset[count - 1], consistent_backend_position(seed, n) - origin, n));
	free(member);
done:
	free(subset);
	free(again);
}

/* ---- the harness ---- */

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t	frontend = (uint32_t) take(&data, &size, 4);
	uint32_t	backends = (uint32_t) take(&data, &size, 4);
	uint32_t	subset_size = (uint32_t) take(&data, &size, 2) % (MAX_MEMBERS + 1);
	uint32_t	flags = (uint32_t) take(&data, &size, 1);
	uint64_t	key = take(&data, &size, 8);
	int32_t		buckets = (int32_t) (uint32_t) take(&data, &size, 4);
	uint64_t	seed = take(&data, &size, 8);
	uint32_t	lot_size = (uint32_t) take(&data, &size, 4);
	uint32_t	scanned;
	int32_t		bucket;

	if (flags & 2)
		subset_size = UINT32_MAX - subset_size;
	/* the size formulas, with the arguments as given */
	check_random_workspace(backends, subset_size);
	REQUIRE(consistent_subset_workspace_bytes(backends, subset_size) ==
			sizeof(uint64_t) * (size_t) min_u32(subset_size, backends));

	if (min_u32(subset_size, backends) > MAX_MEMBERS)
		backends %= MAX_MEMBERS + 1;
	if (!(flags & 4))
	{
		lot_size = 1 + lot_size % ROCKSTEADIER_MAX_LOT_SIZE;
		while (rocksteadier_shuffle_steps(backends, subset_size, lot_size) > STEP_LIMIT)
			lot_size = (lot_size + 1) / 2;
	}
	scanned = backends <= SCAN_LIMIT ? backends : backends % (SCAN_LIMIT + 1);

	check_ringsteady(frontend, backends, subset_size, flags & 1);
	check_rocksteadier(frontend, backends, subset_size, lot_size, (uint32_t) key);
	check_random(frontend, backends, subset_size, seed);
	check_round_robin(frontend, backends, subset_size);
	check_deterministic(frontend, scanned, subset_size, seed);
	check_consistent(frontend, scanned, subset_size, seed);

	bucket = jump_back_hash(key, buckets);
	REQUIRE(buckets < 1 ? bucket == -1 : (bucket >= 0 && bucket < buckets));
	bucket = jump_consistent_hash(key, buckets);
	REQUIRE(buckets < 1 ? bucket == -1 : (bucket >= 0 && bucket < buckets));
	return 0;
}
