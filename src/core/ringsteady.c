/*
 * src/core/ringsteady.c
 *		Ringsteady subsetting in O(k + log N) time and O(1) extra memory.
 *
 * A position p < 2^w holds backend reverse_w(p) (its w bits reversed) when
 * that is below N.  The high bits of a position are the low bits of its
 * backend, so fixing the top s bits of a position fixes the backend's value
 * modulo 2^s, and the backends below N with a given residue a modulo 2^s
 * number ceil((N - a) / 2^s).  Counting that way, a descent that fixes the
 * backend's bits from the lowest finds the backend at any rank of the ring
 * order, without reversing anything.
 *
 * The next position, p + 1, holds the backend whose index is the current one
 * incremented in reversed binary (carrying from the top bit down).  At most
 * one position is skipped: an index >= N > 2^(w-1) has its top bit set, so
 * the reversed increment of it clears that bit and lands below N.
 */
#include "bits.h"
#include "ringsteady.h"

/* w = ceil(log2 N): the number of bits of a position */
static inline int
position_width(uint64_t backends)
{
	return backends <= 1 ? 0 : bits_log2_64(backends - 1) + 1;
}

/* How many backends below N are congruent to `residue` modulo 2^bits. */
static inline uint64_t
count_congruent(uint64_t backends, uint64_t residue, int bits)
{
	uint64_t	count = ((backends - residue - 1) >> bits) + 1;

	return residue < backends ? count : 0;
}

/*
 * The number of positions below `limit` (<= 2^w) that hold a backend: for
 * every 1 bit of limit, the positions that agree with limit above it and
 * have a 0 there.
 */
static uint64_t
count_backends_before(uint64_t backends, int width, uint64_t limit)
{
	uint64_t	count = 0;
	uint64_t	residue = 0;	/* the backend bits fixed by limit's top bits */

	if (limit >> width)
		return backends;
	for (int s = 0; s < width; s++)
	{
		if ((limit >> (width - 1 - s)) & 1)
		{
			count += count_congruent(backends, residue, s + 1);
			residue |= UINT64_C(1) << s;
		}
	}
	return count;
}

uint32_t
ringsteady_start_rank(uint32_t frontend, uint32_t backends, bool backend_scaling)
{
	uint64_t	frontend_position = bits_reverse64(frontend);
	int			width = position_width(backends);
	uint64_t	rank;

	if (backend_scaling)
	{
		/* ceil(frontend_position * N / 2^64), in [0, N] */
		uint64_t	low;

		rank = bits_multiply_high64(frontend_position, backends, &low);
		rank += low != 0;
	}
	else
	{
		/*
		 * Backends before the frontend on the circle: those whose position,
		 * scaled to 64 bits, is below the frontend's, i.e. whose w-bit
		 * position is below ceil(frontend_position / 2^(64 - w)).
		 */
		uint64_t	limit;

		if (width == 0)
			limit = frontend_position != 0;
		else
			limit = (frontend_position >> (64 - width)) +
				((frontend_position << width) != 0);
		rank = count_backends_before(backends, width, limit);
	}
	return (uint32_t) (rank == backends ? 0 : rank);
}

void
ringsteady_cursor_at_rank(ringsteady_cursor *cursor, uint32_t backends, uint32_t rank)
{
	int			width = position_width(backends);
	uint64_t	backend = 0;
	uint64_t	remaining = rank;

	/*
	 * Fix the backend's bits from the lowest (the position's from the
	 * highest): a 0 bit keeps the `below` backends of that residue ahead.
	 */
	for (int s = 0; s < width; s++)
	{
		uint64_t	below = count_congruent(backends, backend, s + 1);
		uint64_t	one = remaining >= below;	/* without a branch */

		remaining -= below & (0 - one);
		backend |= one << s;
	}
	cursor->backends = backends;
	cursor->width = width;
	cursor->backend = backend;
}

int64_t
ringsteady_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
						bool backend_scaling, uint32_t *out)
{
	ringsteady_cursor cursor;
	uint32_t	count = subset_size < backends ? subset_size : backends;

	if (backends == 0)
		return -1;
	ringsteady_cursor_at_rank(&cursor, backends,
							  ringsteady_start_rank(frontend, backends, backend_scaling));
	for (uint32_t i = 0; i < count; i++)
		out[i] = ringsteady_cursor_next(&cursor);
	return count;
}
