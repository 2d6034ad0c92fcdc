/*
 * src/ring_cache.h
 *		Reading partition ring values on the server (src/ring_cache.c): the
 *		decoded ring of a function argument, from a backend-wide cache that
 *		finds a ring by the SHA-256 digest in its header, so that a query
 *		decodes a ring once, not once per row, and a cached ring is used only
 *		for the very same ring.
 */
#ifndef SUBSETTING_RING_CACHE_H
#define SUBSETTING_RING_CACHE_H

#include "fmgr.h"
#include "utils/array.h"

#include "core/ring.h"

/*
 * A decoded ring kept for lookups.  r holds the header fields and the node
 * table; its assignment is partition-major (r.partition_major is set, read
 * it with ring_slot or by_partition): by_partition is r.assignment, the node
 * index (into r.nodes) of replica k of partition x at [x * r.replicas + k],
 * so that a lookup touches one cache line.
 */
typedef struct decoded_ring
{
	ring		r;
	const uint16 *by_partition;
} decoded_ring;

/*
 * The decoded ring of argument argno (a partition_ring, not NULL) of the
 * calling SQL function, which must not return a set and must leave
 * flinfo->fn_extra to this (it holds the call site's pin).  Valid until that
 * function returns; do not keep it across calls, and do not change it.
 */
extern const decoded_ring *ring_decoded_arg(FunctionCallInfo fcinfo, int argno);

/*
 * The same for any function, set-returning ones included: the ring stays
 * valid (and pinned in the cache) until holder is reset or deleted, at the
 * latest until the end of the transaction; pass a set-returning function's
 * multi_call_memory_ctx.
 */
extern const decoded_ring *ring_decoded_arg_held(FunctionCallInfo fcinfo, int argno,
												 MemoryContext holder);

/* Computed once per cached ring, on first use. */
extern const ring_node_stat *ring_decoded_node_stats(const decoded_ring *dr);
extern uint64 ring_decoded_dispersion_count(const decoded_ring *dr, ring_tier tier);
/* A partition argument checked against the ring's partitions (22023 if outside). */
extern uint32 ring_decoded_partition_arg(const decoded_ring *dr, int32 partition);
/* int4[] of the node ids of a partition's replicas, primary first. */
extern ArrayType *ring_decoded_replicas(const decoded_ring *dr, uint32 partition);
/* SHA-256 digest of the ring's format 2 encoding (RING_DIGEST_SIZE bytes). */
extern const uint8 *ring_decoded_digest(const decoded_ring *dr);

/* The core's allocator (memory of cxt), interrupt check (query cancel) and digest. */
extern ring_env ring_server_env(MemoryContext cxt);

/* Decode and validate a stored ring value into memory of cxt (not cached). */
extern void ring_decode_datum(Datum d, MemoryContext cxt, ring *out);

#endif							/* SUBSETTING_RING_CACHE_H */
