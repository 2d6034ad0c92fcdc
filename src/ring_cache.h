/*
 * src/ring_cache.h
 *		Reading partition ring values on the server (src/ring_cache.c): the
 *		decoded ring of a function argument, kept in a backend-wide cache so
 *		that lookups decode a ring once, not once per row.
 */
#ifndef SUBSETTING_RING_CACHE_H
#define SUBSETTING_RING_CACHE_H

#include "fmgr.h"

#include "core/ring.h"

/*
 * A decoded ring kept for lookups.  r holds the header fields and the node
 * table; r.assignment is NULL: the assignment is kept partition-major in
 * by_partition, the node index (into r.nodes) of replica k of partition x at
 * [x * r.replicas + k], so that a lookup touches one cache line.
 */
typedef struct decoded_ring
{
	ring		r;
	const uint16 *by_partition;
} decoded_ring;

/*
 * The decoded ring of argument argno (a partition_ring, not NULL) of the
 * calling SQL function.  Valid until that function returns; do not keep it
 * across calls, and do not change it.
 */
extern const decoded_ring *ring_decoded_arg(FunctionCallInfo fcinfo, int argno);

/* The core's allocator (memory of cxt) and progress callback (query cancel). */
extern ring_env ring_server_env(MemoryContext cxt);

/* Raise the error the core reported; format_code is used for RING_EFORMAT. */
extern void ring_report_error(const ring_error *err, int format_code) pg_attribute_noreturn();

/* Decode and validate a stored ring value into memory of cxt (not cached). */
extern void ring_decode_datum(Datum d, MemoryContext cxt, ring *out);

#endif							/* SUBSETTING_RING_CACHE_H */
