/*
 * src/core/jump.h
 *		Consistent hashing of a 64-bit key to one of n buckets:
 *		JumpBackHash (Ertl, 2024) and JumpHash (Lamping and Veach, 2014).
 */
#ifndef SUBSETTING_CORE_JUMP_H
#define SUBSETTING_CORE_JUMP_H

#include <stdint.h>

/*
 * JumpBackHash with SplitMix64 seeded by the key, exactly as hash4j's
 * ConsistentHashing.jumpBackHash(splitMix64_V1()) (the paper's Algorithm 6).
 * Returns a bucket in [0, buckets), or -1 if buckets < 1.
 */
extern int32_t jump_back_hash(uint64_t key, int32_t buckets);

/*
 * The same, also adding to *draws the number of 64-bit values taken from the
 * generator (for the paper's runtime analysis, formula (25)).
 */
extern int32_t jump_back_hash_counting_draws(uint64_t key, int32_t buckets,
											 uint64_t *draws);

/*
 * The same with the generator's state given: *state is the seed (the key) on
 * entry and the state after the last draw on return, so that a caller can go
 * on drawing from the same sequence (JumpBackAnchorHash does, as hash4j).
 */
extern int32_t jump_back_hash_drawing(uint64_t *state, int32_t buckets);

/*
 * JumpHash, exactly the paper's C++ reference (ClickHouse's
 * jumpConsistentHash, Greenplum's segment mapping).  Returns a bucket in
 * [0, buckets), or -1 if buckets < 1.
 */
extern int32_t jump_consistent_hash(uint64_t key, int32_t buckets);

#endif							/* SUBSETTING_CORE_JUMP_H */
