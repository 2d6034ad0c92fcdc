/*
 * src/core/ringsteady.c
 *		Ringsteady subsetting in O(k + log N) time and O(1) extra memory.
 *
 * A position p < 2^w holds backend reverse_w(p) (its w bits reversed) when
 * that is below N.  The high bits of a position are the low bits of its
 * backend, so fixing the top s bits of a position fixes the backend's value
 * modulo 2^s, and the backends below N with a given residue a modulo 2^s
 * number ceil((N - a) / 2^s).  Counting that way, a descent over the w bits of
 * the position finds the backend at any rank of the ring order.
 *
 * Stepping on from a position is one increment, and at most one more: an
 * index >= N > 2^(w-1) has its top bit set, so a position without a backend
 * is odd, and the even position after it always holds one.
 */
#include "bits.h"
#include "ringsteady.h"

/* w = ceil(log2 N): the number of bits of a position */
static inline int
position_width(uint64_t backends)
{
	return backends <= 1 ? 0 : bits_log2_64(backends - 1) + 1;
}

/* the backend at a w-bit position (may be >= N: then no backend is there) */
static inline uint64_t
backend_at(uint64_t position, int width)
{
	return width == 0 ? 0 : bits_reverse64(position) >> (64 - width);
}

/* How many backends below N are congruent to `residue` modulo 2^bits. */
static inline uint64_t
count_congruent(uint64_t backends, uint64_t residue, int bits)
{
	if (residue >= backends)
		return 0;
	return ((backends - residue - 1) >> bits) + 1;
}

/* The number of positions below `limit` (<= 2^w) that hold a backend. */
static uint64_t
count_backends_before(uint64_t backends, int width, uint64_t limit)
{
	uint64_t	count = 0;

	if (limit >> width)
		return backends;
	for (int t = width - 1; t >= 0; t--)
	{
		if ((limit >> t) & 1)
		{
			/* the positions with limit's bits above t and a 0 at bit t */
			int			fixed = width - t;
			uint64_t	residue = backend_at((limit >> (t + 1)) << 1, fixed);

			count += count_congruent(backends, residue, fixed);
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
	uint64_t	position = 0;
	uint64_t	remaining = rank;

	/* choose the position's bits from the top, counting the backends below */
	for (int t = width - 1; t >= 0; t--)
	{
		int			fixed = width - t;
		uint64_t	residue = backend_at(position >> t, fixed);	/* bit t = 0 */
		uint64_t	below = count_congruent(backends, residue, fixed);

		if (remaining >= below)
		{
			remaining -= below;
			position |= UINT64_C(1) << t;
		}
	}
	cursor->backends = backends;
	cursor->width = width;
	cursor->position = position;
}

uint32_t
ringsteady_cursor_next(ringsteady_cursor *cursor)
{
	uint32_t	backend = (uint32_t) backend_at(cursor->position, cursor->width);
	uint64_t	mask = (UINT64_C(1) << cursor->width) - 1;

	cursor->position = (cursor->position + 1) & mask;
	if (backend_at(cursor->position, cursor->width) >= cursor->backends)
		cursor->position = (cursor->position + 1) & mask;
	return backend;
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
