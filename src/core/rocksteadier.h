/*
 * src/core/rocksteadier.h
 *		Rocksteadier subsetting (Reinventing Backend Subsetting at Google, ACM
 *		Queue 2023): Ringsteady's low churn, with shuffled lots of backends for
 *		subset diversity.
 *
 * The construction, for frontend m, N backends, subset size k, lot size L:
 *	1. Frontend m is in frontend lot f = floor(m / L).  Backends are in
 *	   B = ceil(N / L) backend lots; lot j holds the tasks j*L .. j*L + L - 1,
 *	   those >= N (the last lot's padding) are skipped when reading.
 *	2. Frontend lot f shuffles backend lot j with its own generator:
 *	   SplitMix64 from state splitmix64_mix(f * 2^32 + j); the shuffle is
 *	   Fisher-Yates from the top, perm = [0, 1, .., L-1] and for i = L-1 down
 *	   to 1: r = floor(draw * (i + 1) / 2^64) (draw: the next 64-bit output),
 *	   swap perm[i] and perm[r].  Row i of lot j holds task j*L + perm[i].
 *	   Every frontend of lot f sees the same shuffles; other frontend lots see
 *	   other ones; adding a backend lot changes no earlier lot's shuffle.
 *	3. The lots are visited in the Ringsteady order that frontend f gets over
 *	   B backends with backend scaling (ringsteady_write_subset(f, B, B, true)).
 *	4. Frontend m starts at row s = the backend at rank (m mod L) of the
 *	   Ringsteady ring order of L backends: for L = 10 the rows
 *	   [0, 8, 4, 2, 6, 1, 9, 5, 3, 7].  (The article prints
 *	   [0, 8, 2, 4, 6, 1, 9, 5, 3, 7]; we use the ring order, which the article
 *	   says it means, and which is defined for every L.)
 *	5. It reads row s across the lots in the visiting order, then row s + 1
 *	   (mod L) across them in the same order, and so on, skipping padding,
 *	   until it has k tasks, or all N when k >= N (after L rows every task has
 *	   been read once).
 * A subset is a prefix of every larger one; the subset of frontend m depends
 * on m and not on the number of frontends (no frontend churn).
 *
 * Cost: O(min(k + 1, B) * L + k + log N) time: each lot visited is shuffled
 * once and read for every row the subset needs.  Memory: the caller's
 * workspace of ROCKSTEADIER_WORKSPACE(L) uint32 values.
 */
#ifndef SUBSETTING_CORE_ROCKSTEADIER_H
#define SUBSETTING_CORE_ROCKSTEADIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"

/* Largest lot size accepted (a lot's shuffle is computed whole). */
#define ROCKSTEADIER_MAX_LOT_SIZE 65536

/* The number of uint32 values of workspace a subset with lot size L needs. */
#define ROCKSTEADIER_WORKSPACE(lot_size) (3 * (size_t) (lot_size) + 1)

/*
 * Writes into perm[0..lot_size) the shuffle of backend lot `backend_lot`
 * seen by frontend lot `frontend_lot` (step 2 above): perm[i] is the offset,
 * within the lot, of the task in row i.  Writes nothing when lot_size is 0.
 */
extern void rocksteadier_shuffle_lot(uint32_t frontend_lot, uint32_t backend_lot,
									 uint32_t lot_size, uint32_t *perm);

/*
 * The number of shuffle steps a subset costs: the lots visited, at most
 * min(k + 1, B), and the last lot once more (for where each pass starts),
 * times L; 0 when nothing is read.  Callers bound it to bound the time of a
 * call.
 */
extern uint64_t rocksteadier_shuffle_steps(uint32_t backends, uint32_t subset_size,
										   uint32_t lot_size);

/*
 * Frontend m's subset: writes min(subset_size, backends) backends to out, in
 * the order read, and returns how many; returns -1 if backends is 0 or
 * lot_size is 0 or above ROCKSTEADIER_MAX_LOT_SIZE.  workspace holds
 * ROCKSTEADIER_WORKSPACE(lot_size) values.  It checks for interrupts (ci,
 * may be NULL) once per lot visited.
 */
extern int64_t rocksteadier_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
										 uint32_t lot_size, uint32_t *out, uint32_t *workspace,
										 const core_interrupts *ci);

/*
 * The shuffles that the frontends of one frontend lot share (they visit the
 * same lots in the same order), kept for the next frontend of the lot: the
 * subsets of frontends 0, 1, 2, .. in turn then cost one shuffle of each lot
 * visited per frontend lot, not per frontend.  A cache serves subsets of one
 * (backends, subset_size, lot_size) only; its shuffles array holds
 * rocksteadier_shuffle_steps(backends, subset_size, lot_size) values.
 */
typedef struct rocksteadier_cache
{
	int64_t		frontend_lot;	/* whose shuffles are kept; -1: none yet */
	uint32_t	visits_kept;	/* the first lots visited, whole shuffles */
	bool		last_lot_kept;	/* and the last lot's, after the most visits */
	uint32_t   *shuffles;		/* [visit * lot_size + row] */
} rocksteadier_cache;

extern void rocksteadier_cache_init(rocksteadier_cache *cache, uint32_t *shuffles);

/* rocksteadier_write_subset, with the shuffles kept in and taken from *cache. */
extern int64_t rocksteadier_write_subset_cached(uint32_t frontend, uint32_t backends,
												uint32_t subset_size, uint32_t lot_size,
												uint32_t *out, uint32_t *workspace,
												rocksteadier_cache *cache);

#endif							/* SUBSETTING_CORE_ROCKSTEADIER_H */
