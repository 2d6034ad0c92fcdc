/*
 * src/core/ringsteady.h
 *		Ringsteady subsetting (Reinventing Backend Subsetting at Google, ACM
 *		Queue 2023): frontend task m of a job connects to k of the N backend
 *		tasks, the first k found clockwise from its position on a ring.
 *
 * Backend n sits at position reverse_bits64(n) / 2^64 of the unit circle.
 * Sorted by position, the backends form the *ring order*: the w-bit
 * bit-reversal permutation of [0, 2^w), w = ceil(log2 N), without the
 * indexes >= N.  A frontend starts at a rank of the ring order and reads on
 * (wrapping around):
 *	- with backend scaling (the article's Figure 4c), at rank
 *	  ceil(reverse_bits64(m) * N / 2^64) mod N, computed exactly;
 *	- without (Figure 4b), at the first backend whose position is at or after
 *	  the frontend's own position reverse_bits64(m) / 2^64.
 *
 * Nothing here depends on N beyond O(log N): the backend at a given rank is
 * found by counting, not by listing the ring order.
 */
#ifndef SUBSETTING_CORE_RINGSTEADY_H
#define SUBSETTING_CORE_RINGSTEADY_H

#include <stdbool.h>
#include <stdint.h>

#include "bits.h"

/* Largest number of backends the core accepts. */
#define RINGSTEADY_MAX_BACKENDS UINT32_MAX

/* A place on the ring order of some number of backends. */
typedef struct ringsteady_cursor
{
	uint64_t	backends;		/* N */
	int			width;			/* w: positions are w-bit numbers */
	uint64_t	backend;		/* the backend under the cursor */
} ringsteady_cursor;

/*
 * The rank in the ring order of N backends at which frontend m starts.
 * backends must be at least 1.
 */
extern uint32_t ringsteady_start_rank(uint32_t frontend, uint32_t backends, bool backend_scaling);

/* Places *cursor on the backend at `rank` (< backends) of the ring order. */
extern void ringsteady_cursor_at_rank(ringsteady_cursor *cursor, uint32_t backends, uint32_t rank);

/*
 * The index after `index` in reversed binary of w bits (wrapping to 0): the
 * carry clears the 1 bits from the top down to the highest 0 bit, and sets it.
 */
static inline uint64_t
ringsteady_reversed_increment(uint64_t index, int width)
{
	uint64_t	zeros = ~index & ((UINT64_C(1) << width) - 1);
	uint64_t	highest_zero;

	if (zeros == 0)
		return 0;
	highest_zero = UINT64_C(1) << bits_log2_64(zeros);
	return (index & (highest_zero - 1)) | highest_zero;
}

/* The backend under the cursor; then moves the cursor on, wrapping around. */
static inline uint32_t
ringsteady_cursor_next(ringsteady_cursor *cursor)
{
	uint32_t	backend = (uint32_t) cursor->backend;
	uint64_t	next = ringsteady_reversed_increment(cursor->backend, cursor->width);

	if (next >= cursor->backends)
		next = ringsteady_reversed_increment(next, cursor->width);
	cursor->backend = next;
	return backend;
}

/*
 * Frontend m's subset: writes min(subset_size, backends) backends to out, in
 * ring order from the frontend's start, and returns how many; returns -1 if
 * backends is 0.  A subset is a prefix of every larger one.
 */
extern int64_t ringsteady_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
									   bool backend_scaling, uint32_t *out);

#endif							/* SUBSETTING_CORE_RINGSTEADY_H */
