/*
 * src/core/rocksteadier.c
 *		Rocksteadier subsetting without listing the N backends: the lots a
 *		subset touches are shuffled one by one, each from its own generator,
 *		and visited with a Ringsteady cursor.
 *
 * The subset is read pass by pass (pass p reads row (s + p) mod L of every
 * lot, in the visiting order).  Rather than shuffle a lot once per pass, each
 * lot visited is shuffled once and its task of every pass is written to its
 * place in the output: pass p starts at the number of tasks of the passes
 * before it (B per pass, less one where the last lot's row is padding), and
 * within the pass the lots come in visiting order.  So a subset of k >= B
 * shuffles each lot once, not k / B times.
 *
 * Only the rows read are shuffled: Fisher-Yates from the top puts row i's
 * final task in place at step i and never moves it again, so when the rows
 * read are s .. s + passes - 1 without wrapping, the steps below row s are
 * skipped.  A subset of k < B reads one row of each lot visited and needs
 * L - max(s, 1) of the L - 1 steps, and knows without the last lot's shuffle
 * that one pass suffices.
 */
#include "bits.h"
#include "ringsteady.h"
#include "rocksteadier.h"
#include "splitmix64.h"

/*
 * Rows lowest_row .. lot_size - 1 of the shuffle of backend lot backend_lot
 * seen by frontend lot frontend_lot; the rows below lowest_row are left
 * unfinished.
 */
static void
shuffle_rows_from(uint32_t frontend_lot, uint32_t backend_lot, uint32_t lot_size,
				  uint32_t lowest_row, uint32_t *perm, const core_interrupts *ci)
{
	uint64_t	state = splitmix64_mix(((uint64_t) frontend_lot << 32) | backend_lot);
	uint32_t	lowest_step = lowest_row > 1 ? lowest_row : 1;

	core_interrupts_poll(ci, 0);
	for (uint32_t i = 0; i < lot_size; i++)
		perm[i] = i;
	/* steps lot_size - 1 down to lowest_step; none for a lot of 0 or 1 */
	for (uint32_t i = lot_size; i-- > lowest_step;)
	{
		uint64_t	low;
		uint32_t	r = (uint32_t) bits_multiply_high64(splitmix64_next(&state), (uint64_t) i + 1, &low);
		uint32_t	t = perm[i];

		perm[i] = perm[r];
		perm[r] = t;
	}
}

void
rocksteadier_shuffle_lot(uint32_t frontend_lot, uint32_t backend_lot, uint32_t lot_size,
						 uint32_t *perm)
{
	shuffle_rows_from(frontend_lot, backend_lot, lot_size, 0, perm, NULL);
}

static inline uint32_t
lot_count(uint32_t backends, uint32_t lot_size)
{
	return (backends - 1) / lot_size + 1;
}

/*
 * The most lots a subset of count tasks visits: each lot visited gives it at
 * least its task of the first pass, but for the last lot, whose row there may
 * be padding.
 */
static inline uint32_t
most_visits(uint32_t count, uint32_t lots)
{
	return (uint64_t) count + 1 < lots ? count + 1 : lots;
}

uint64_t
rocksteadier_shuffle_steps(uint32_t backends, uint32_t subset_size, uint32_t lot_size)
{
	uint64_t	count = subset_size < backends ? subset_size : backends;
	uint64_t	lots;

	if (backends == 0 || lot_size == 0 || count == 0)
		return 0;
	lots = lot_count(backends, lot_size);
	/* the last lot's shuffle is computed once more, for the pass offsets */
	return ((count + 1 < lots ? count + 1 : lots) + 1) * lot_size;
}

/*
 * The shuffle of the lot visited visit-th (lot `lot`), at least its rows from
 * lowest_row on: into perm without a cache, else kept in the cache (visits
 * come in order, so a visit not kept yet is the next one).
 */
static const uint32_t *
visited_lot_shuffle(rocksteadier_cache *cache, uint32_t visit, uint32_t frontend_lot, uint32_t lot,
					uint32_t lot_size, uint32_t lowest_row, uint32_t *perm,
					const core_interrupts *ci)
{
	uint32_t   *kept;

	if (cache == NULL)
	{
		shuffle_rows_from(frontend_lot, lot, lot_size, lowest_row, perm, ci);
		return perm;
	}
	kept = cache->shuffles + (size_t) visit * lot_size;
	if (visit == cache->visits_kept)
	{
		shuffle_rows_from(frontend_lot, lot, lot_size, 0, kept, ci);
		cache->visits_kept++;
	}
	return kept;
}

static int64_t
write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint32_t lot_size,
			 uint32_t *out, uint32_t *workspace, rocksteadier_cache *cache,
			 const core_interrupts *ci)
{
	uint32_t	count = subset_size < backends ? subset_size : backends;
	uint32_t   *perm = workspace;
	uint32_t   *pass_start = workspace + lot_size;	/* lot_size + 1 values */
	uint32_t   *pass_filled = pass_start + lot_size + 1;
	uint32_t	lots,
				last_lot,
				padding,
				frontend_lot,
				first_row,
				lowest_row,
				passes,
				written;
	ringsteady_cursor cursor;

	if (backends == 0 || lot_size == 0 || lot_size > ROCKSTEADIER_MAX_LOT_SIZE)
		return -1;
	if (count == 0)
		return 0;
	lots = lot_count(backends, lot_size);
	last_lot = lots - 1;
	padding = (uint32_t) ((uint64_t) lots * lot_size - backends);	/* < lot_size */
	frontend_lot = frontend / lot_size;
	if (cache != NULL && cache->frontend_lot != (int64_t) frontend_lot)
	{
		cache->frontend_lot = frontend_lot;
		cache->visits_kept = 0;
		cache->last_lot_kept = false;
	}

	/* step 4: the starting row, from the ring order of L */
	ringsteady_cursor_at_rank(&cursor, lot_size, frontend % lot_size);
	first_row = ringsteady_cursor_next(&cursor);

	/*
	 * Where each pass starts in the output.  A pass holds lots - 1 tasks, or
	 * lots when the last lot's row in it is not padding (when its offset is
	 * below L - padding), so one pass suffices when count <= lots - 1.  L
	 * passes read all N tasks, so at most L passes are needed.
	 */
	pass_start[0] = 0;
	pass_filled[0] = 0;
	if (count <= lots - 1)
		passes = 1;
	else
	{
		uint32_t   *last = perm;

		/* a cache keeps it after the most lots a subset visits */
		if (cache != NULL)
			last = cache->shuffles + (size_t) most_visits(count, lots) * lot_size;
		if (cache == NULL || !cache->last_lot_kept)
			rocksteadier_shuffle_lot(frontend_lot, last_lot, lot_size, last);
		if (cache != NULL)
			cache->last_lot_kept = true;
		for (passes = 0; pass_start[passes] < count; passes++)
		{
			uint32_t	row = (first_row + passes) % lot_size;

			pass_start[passes + 1] = pass_start[passes] + lots - (last[row] >= lot_size - padding);
			pass_filled[passes] = 0;
		}
	}
	/* the rows read, first_row .. first_row + passes - 1 mod L */
	lowest_row = first_row + passes <= lot_size ? first_row : 0;

	/* steps 3 and 5: the lots in Ringsteady order, each shuffled once */
	ringsteady_cursor_at_rank(&cursor, lots, ringsteady_start_rank(frontend_lot, lots, true));
	written = 0;
	for (uint32_t visit = 0; visit < lots && written < count; visit++)
	{
		uint32_t	lot = ringsteady_cursor_next(&cursor);
		const uint32_t *rows = visited_lot_shuffle(cache, visit, frontend_lot, lot, lot_size,
												   lowest_row, perm, ci);

		for (uint32_t p = 0; p < passes; p++)
		{
			uint32_t	offset = rows[(first_row + p) % lot_size];
			uint32_t	index;

			if (lot == last_lot && offset >= lot_size - padding)
				continue;		/* padding: not a task */
			index = pass_start[p] + pass_filled[p]++;
			if (index < count)
			{
				out[index] = (uint32_t) ((uint64_t) lot * lot_size + offset);
				written++;
			}
		}
	}
	return count;
}

int64_t
rocksteadier_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
						  uint32_t lot_size, uint32_t *out, uint32_t *workspace,
						  const core_interrupts *ci)
{
	return write_subset(frontend, backends, subset_size, lot_size, out, workspace, NULL, ci);
}

void
rocksteadier_cache_init(rocksteadier_cache *cache, uint32_t *shuffles)
{
	cache->frontend_lot = -1;
	cache->visits_kept = 0;
	cache->last_lot_kept = false;
	cache->shuffles = shuffles;
}

int64_t
rocksteadier_write_subset_cached(uint32_t frontend, uint32_t backends, uint32_t subset_size,
								 uint32_t lot_size, uint32_t *out, uint32_t *workspace,
								 rocksteadier_cache *cache)
{
	return write_subset(frontend, backends, subset_size, lot_size, out, workspace, cache, NULL);
}
