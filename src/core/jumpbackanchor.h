/*
 * src/core/jumpbackanchor.h
 *		JumpBackAnchorHash: JumpBackHash with AnchorHash's removal of any
 *		bucket, exactly as hash4j's ConsistentJumpBackAnchorBucketSetHasher
 *		with the SplitMix64 generator (ConsistentHashing.jumpBackAnchorHash(
 *		PseudoRandomGeneratorProvider.splitMix64_V1())).
 *
 * A set of buckets is described by a, the number of buckets ever in use
 * (hash4j's historicMaxNumBuckets), and the stack of removed buckets, oldest
 * first.  With nothing removed a key's bucket is its JumpBackHash bucket of
 * a; removing a bucket moves only its keys, evenly over the others.  See
 * docs/jumpbackanchorhash.md for the algorithm.
 *
 * This is the pure core: plain C99, no PostgreSQL header.  It never
 * allocates: the caller gives jump_back_anchor_init the memory that
 * jump_back_anchor_memory_size asks for, and an interrupt check
 * (core/interrupts.h) that it calls during long work.
 */
#ifndef SUBSETTING_CORE_JUMPBACKANCHOR_H
#define SUBSETTING_CORE_JUMPBACKANCHOR_H

#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"
#include "jump.h"

/*
 * The most removed buckets a state may hold.  The decoded state takes about
 * JUMP_BACK_ANCHOR_BYTES_PER_REMOVED bytes a removed bucket and is cached for
 * a whole query; 2^20 keeps it near 20 MiB and its decoding under a second.
 */
#define JUMP_BACK_ANCHOR_MAX_REMOVED (1 << 20)
#define JUMP_BACK_ANCHOR_BYTES_PER_REMOVED 20

typedef enum jump_back_anchor_status
{
	JUMP_BACK_ANCHOR_OK = 0,
	JUMP_BACK_ANCHOR_EFORMAT,	/* state bytes: length not a positive
								 * multiple of 4 */
	JUMP_BACK_ANCHOR_EBUCKETS,	/* the number of buckets is negative */
	JUMP_BACK_ANCHOR_ELIMIT,	/* more than JUMP_BACK_ANCHOR_MAX_REMOVED
								 * removed */
	JUMP_BACK_ANCHOR_ERANGE,	/* a removed bucket is not in [0, buckets) */
	JUMP_BACK_ANCHOR_EDUPLICATE,	/* a bucket is removed twice */
	JUMP_BACK_ANCHOR_ENOTIN,	/* remove: the bucket is not in the set */
	JUMP_BACK_ANCHOR_EFULL,		/* add: there are already INT32_MAX buckets */
	JUMP_BACK_ANCHOR_EINTERNAL	/* a chain longer than the removals: a bug */
} jump_back_anchor_status;

/*
 * Where a state is wrong: for ERANGE the position (0-based, in the stack) and
 * value of the bad bucket; for EDUPLICATE the value and both positions.
 */
typedef struct jump_back_anchor_problem
{
	int32_t		bucket;
	int32_t		position;
	int32_t		other_position;
} jump_back_anchor_problem;

/*
 * A decoded state, ready for lookups.  Its arrays live in the caller's
 * memory; it holds no pointer to the removed list it was made from.
 */
typedef struct jump_back_anchor
{
	int32_t		buckets;		/* a: hash4j's historicMaxNumBuckets */
	int32_t		removed_count;	/* m: the number of removed buckets */
	int			filter_shift;	/* 64 - log2(filter bits) */
	uint64_t   *filter;			/* one bit per hash of removed ids */
	uint64_t   *entries;		/* (id << 32) | stack position, sorted */
	/* per removal, by stack position (its "entry"): */
	int32_t    *next_bucket;	/* the bucket that took its place */
	int32_t    *next_entry;		/* that bucket's stack position, or -1 */
} jump_back_anchor;

/* Bytes of memory jump_back_anchor_init needs for removed_count removals. */
extern size_t jump_back_anchor_memory_size(int32_t removed_count);

/*
 * Decode and check the state (buckets, removed[0 .. removed_count - 1]) into
 * *h, using memory (at least jump_back_anchor_memory_size(removed_count)
 * bytes, aligned for uint64_t; not needed when removed_count is 0).
 * Accepts what hash4j's setState accepts: 0 <= buckets, every removed
 * bucket in [0, buckets), none twice; also every bucket removed (then
 * jump_back_anchor_bucket answers -1).  ci (interrupts.h; may be NULL) is
 * called every few milliseconds of work.  On an error *problem (if not NULL)
 * says where, and *h must not be used.
 */
extern jump_back_anchor_status jump_back_anchor_init(jump_back_anchor *h, int32_t buckets,
													 const int32_t *removed, int32_t removed_count,
													 void *memory, const core_interrupts *ci,
													 jump_back_anchor_problem *problem);

/*
 * The bucket of key: hash4j's getBucket(key) (the part for a set with
 * removals out of line).  -1 if there is no bucket
 * (buckets is 0 or every bucket is removed), where hash4j throws.
 */
extern int32_t jump_back_anchor_bucket_with_removals(const jump_back_anchor *h, uint64_t key);

static inline int32_t
jump_back_anchor_bucket(const jump_back_anchor *h, uint64_t key)
{
	/* with nothing removed, JumpBackHash itself (-1 for 0 buckets) */
	if (h->removed_count == 0)
		return jump_back_hash(key, h->buckets);
	return jump_back_anchor_bucket_with_removals(h, key);
}

/* Whether bucket is one of the removed buckets of *h. */
extern int	jump_back_anchor_is_removed(const jump_back_anchor *h, int32_t bucket);

/*
 * hash4j's removeBucket(bucket) on the state *h was made from, given again as
 * (*buckets, removed[0 .. *count - 1]); removed must have room for *count + 1
 * values.  Updates *buckets, removed and *count by hash4j's rules: the only
 * bucket left empties the set (0 buckets, nothing removed); the last bucket
 * with nothing removed shrinks buckets; any other bucket is pushed on the
 * stack.  ENOTIN (nothing changed) if bucket is out of range or removed.
 */
extern jump_back_anchor_status jump_back_anchor_remove(const jump_back_anchor *h, int32_t bucket,
													   int32_t *buckets, int32_t *removed,
													   int32_t *count);

/*
 * hash4j's addBucket() on the state (*buckets, removed[0 .. *count - 1]):
 * takes back the most recently removed bucket, or, with nothing removed,
 * grows buckets by one.  *added is the bucket added.  EFULL (nothing
 * changed) if buckets would pass INT32_MAX.
 */
extern jump_back_anchor_status jump_back_anchor_add(int32_t *buckets, const int32_t *removed,
													int32_t *count, int32_t *added);

/*
 * The state bytes of hash4j's getState()/setState(): int32 buckets, then
 * int32 removed buckets oldest first, all little-endian.
 *
 * jump_back_anchor_state_header checks the length and the number of buckets
 * of len bytes and gives *buckets and *count (EFORMAT, EBUCKETS, ELIMIT);
 * jump_back_anchor_state_get reads removed bucket i; jump_back_anchor_state_put
 * writes a state of 4 + 4 * count bytes.
 */
extern jump_back_anchor_status jump_back_anchor_state_header(const uint8_t *bytes, size_t len,
															 int32_t *buckets, int32_t *count);
extern int32_t jump_back_anchor_state_get(const uint8_t *bytes, int32_t i);
extern void jump_back_anchor_state_put(uint8_t *bytes, int32_t buckets,
									   const int32_t *removed, int32_t count);

#endif							/* SUBSETTING_CORE_JUMPBACKANCHOR_H */
