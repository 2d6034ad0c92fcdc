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
 */
#include "bits.h"
#include "ringsteady.h"
#include "rocksteadier.h"
#include "splitmix64.h"

void
rocksteadier_shuffle_lot(uint32_t frontend_lot, uint32_t backend_lot, uint32_t lot_size,
						 uint32_t *perm)
{
	uint64_t	state = splitmix64_mix(((uint64_t) frontend_lot << 32) | backend_lot);

	for (uint32_t i = 0; i < lot_size; i++)
		perm[i] = i;
	for (uint32_t i = lot_size; i-- > 1;)
	{
		uint64_t	low;
		uint32_t	r = (uint32_t) bits_multiply_high64(splitmix64_next(&state), (uint64_t) i + 1, &low);
		uint32_t	t = perm[i];

		perm[i] = perm[r];
		perm[r] = t;
	}
}

static inline uint32_t
lot_count(uint32_t backends, uint32_t lot_size)
{
	return (backends - 1) / lot_size + 1;
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

int64_t
rocksteadier_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
						  uint32_t lot_size, uint32_t *out, uint32_t *workspace)
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

	/* step 4: the starting row, from the ring order of L */
	ringsteady_cursor_at_rank(&cursor, lot_size, frontend % lot_size);
	first_row = ringsteady_cursor_next(&cursor);

	/*
	 * Where each pass starts in the output.  The last lot's row in pass p is
	 * padding when its offset is at least L - padding.  L passes read all N
	 * tasks, so at most L passes are needed.
	 */
	rocksteadier_shuffle_lot(frontend_lot, last_lot, lot_size, perm);
	pass_start[0] = 0;
	for (passes = 0; pass_start[passes] < count; passes++)
	{
		uint32_t	row = (first_row + passes) % lot_size;

		pass_start[passes + 1] = pass_start[passes] + lots - (perm[row] >= lot_size - padding);
		pass_filled[passes] = 0;
	}

	/* steps 3 and 5: the lots in Ringsteady order, each shuffled once */
	ringsteady_cursor_at_rank(&cursor, lots, ringsteady_start_rank(frontend_lot, lots, true));
	written = 0;
	for (uint32_t visit = 0; visit < lots && written < count; visit++)
	{
		uint32_t	lot = ringsteady_cursor_next(&cursor);

		rocksteadier_shuffle_lot(frontend_lot, lot, lot_size, perm);
		for (uint32_t p = 0; p < passes; p++)
		{
			uint32_t	offset = perm[(first_row + p) % lot_size];
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
