/*
 * src/core/baselines.h
 *		The subsetting algorithms that the Google article (Reinventing Backend
 *		Subsetting at Google, ACM Queue 2023) improves on: random, round-robin,
 *		deterministic (the SRE book's, with the article's round-robin choice of
 *		leftover tasks) and consistent subsetting.
 *
 * Each writes frontend m's subset of min(k, N) of the N backends to out and
 * returns how many (-1 if backends is 0).  Those with a seed draw from
 * SplitMix64 streams: stream(seed, a, i) is the generator whose state starts
 * at splitmix64_mix(splitmix64_mix(seed XOR a) + i), a being the algorithm's
 * number (random 1, deterministic 2, consistent 3); a uniform integer below n
 * is floor(draw * n / 2^64) of its next 64-bit draw.
 *
 * random       stream(seed, 1, m) shuffles [0, N) by forward Fisher-Yates
 *              (for i = 0, 1, ..: swap a[i] and a[i + uniform(N - i)]) and
 *              the subset is the first k: a prefix of every larger subset.
 *              O(k) time, working memory of random_subset_workspace_bytes().
 * round robin  the k backends from (m * k) mod N on, wrapping around.  O(k).
 * deterministic  c = floor(N / k) subsets per round; frontend m is subset
 *              m mod c of round r = floor(m / c).  Round r leaves out the
 *              l = N mod k tasks (r * l + i) mod N, i < l, shuffles the others
 *              (in increasing order) with stream(seed, 2, r) by forward
 *              Fisher-Yates and cuts the shuffle into c subsets of k.  The
 *              shuffle makes it O(N) time and memory: inherent.
 * consistent   backend n sits at the 64-bit position draw 1 of
 *              stream(seed, 3, 2n), frontend m at draw 1 of
 *              stream(seed, 3, 2m + 1); the subset is the first k backends
 *              clockwise from the frontend (by distance (position - frontend
 *              position) mod 2^64, then index), in that order: a prefix of
 *              every larger subset.  Positions are not sorted or stored, so
 *              a subset costs O(N log k) time: inherent without an index.
 * With k >= N every algorithm returns all N backends, in its own order:
 * random and consistent the whole shuffle or circle, round robin all N from
 * (m * k) mod N on, deterministic the whole shuffle of round m (k taken as N).
 * The loops that can be long check for interrupts through ci (NULL: none).
 */
#ifndef SUBSETTING_CORE_BASELINES_H
#define SUBSETTING_CORE_BASELINES_H

#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"

#define BASELINES_RANDOM_STREAM 1
#define BASELINES_DETERMINISTIC_STREAM 2
#define BASELINES_CONSISTENT_STREAM 3

/* The state of stream(seed, algorithm, index). */
extern uint64_t baselines_stream(uint64_t seed, uint64_t algorithm, uint64_t index);

/* floor(draw * n / 2^64): an integer below n (n >= 1). */
extern uint32_t baselines_uniform(uint64_t draw, uint32_t n);

/*
 * The most members a server asks of a random subset: its workspace, a hash
 * table of 4 slots a member, then stays within 64 MiB.
 */
#define RANDOM_MAX_MEMBERS (1u << 22)

extern size_t random_subset_workspace_bytes(uint32_t backends, uint32_t subset_size);
extern int64_t random_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
								   uint64_t seed, uint32_t *out, void *workspace,
								   const core_interrupts *ci);

/* The subset starts at (frontend * subset_size) mod N, also when k > N. */
extern int64_t round_robin_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
										uint32_t *out);

/*
 * Deterministic subsetting; k > N is taken as k = N (one subset per round,
 * the whole shuffle).  The workspace holds N uint32 values.
 */
extern size_t deterministic_subset_workspace_bytes(uint32_t backends);
extern int64_t deterministic_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
										  uint64_t seed, uint32_t *out, void *workspace,
										  const core_interrupts *ci);

/*
 * The same, for many frontends in a row: the workspace keeps the shuffle of
 * round *cached_round (set it to -1 first), which frontends of the same round
 * reuse, so a job costs O(N) per round, not per frontend.
 */
extern int64_t deterministic_write_subset_cached(uint32_t frontend, uint32_t backends,
												 uint32_t subset_size, uint64_t seed,
												 uint32_t *out, void *workspace,
												 int64_t *cached_round);

/*
 * Consistent subsetting; the workspace holds min(k, N) uint64 values.  The
 * heap of the nearest backends so far costs O(k log k) moves with cache
 * misses, so a server asks for at most CONSISTENT_MAX_MEMBERS members (about
 * a second at 2^24 backends, and 8 MiB).
 */
#define CONSISTENT_MAX_MEMBERS (1u << 20)
extern size_t consistent_subset_workspace_bytes(uint32_t backends, uint32_t subset_size);
extern uint64_t consistent_backend_position(uint64_t seed, uint32_t backend);
extern uint64_t consistent_frontend_position(uint64_t seed, uint32_t frontend);
extern int64_t consistent_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
									   uint64_t seed, uint32_t *out, void *workspace,
									   const core_interrupts *ci);

#endif							/* SUBSETTING_CORE_BASELINES_H */
