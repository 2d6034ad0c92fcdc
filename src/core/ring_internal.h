/*
 * src/core/ring_internal.h
 *		Helpers shared by the files of the partition ring core, and the map
 *		of those files.  Not part of the core's interface (that is ring.h).
 *
 * The files, each using only those above it:
 *	ring_common.c	errors, little-endian access, ring_hash64, 128-bit
 *					arithmetic, weight units, ring_free
 *	ring_check.c	argument checks (sizes, weights)
 *	ring_encoding.c	the binary form: encode, read the header, decode, validate
 *	ring_tree.c		the failure-domain tree and the quotas (ring_tree.h)
 *	ring_domains.c	the failure domains of the nodes, numbered
 *	ring_inspect.c	node statistics, dispersion, balance
 *	ring_json.c		the text form
 *	ring_build.c	building a ring
 *	ring_place.c	placing one replica during a rebalance (ring_place.h)
 *	ring_repair.c	chains of moves when the rebalance passes are stuck
 *	ring_rebalance.c rebalancing a ring
 *	ring_lookup.c	batch lookups and handoff nodes (ring_lookup.h)
 */
#ifndef SUBSETTING_CORE_RING_INTERNAL_H
#define SUBSETTING_CORE_RING_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/bits.h"
#include "core/ring.h"

/* ---- ring_common.c ---- */

/* No facts: for ring_fail of a problem that needs none. */
#define RING_NO_FACTS ((ring_facts) {0})

/* Set err (if not NULL) to code, problem and facts; returns code. */
extern ring_status ring_fail(ring_error *err, ring_status code,
							 ring_problem problem, ring_facts facts);
/* ring_fail of RING_ENOMEM or RING_ECANCELED (the interrupt check). */
extern ring_status ring_out_of_memory(ring_error *err);
extern ring_status ring_canceled(ring_error *err);

/*
 * Mark the problem in err (of sizes or nodes) as found in a ring value: the
 * code becomes RING_EFORMAT (returned), and the message says "invalid ring".
 */
extern ring_status ring_found_in_value(ring_error *err);

extern uint32_t ring_get_le32(const uint8_t *p);
extern uint64_t ring_get_le64(const uint8_t *p);
extern void ring_put_le32(uint8_t *p, uint32_t v);
extern void ring_put_le64(uint8_t *p, uint64_t v);
/* The IEEE 754 bits of a double, and back. */
extern uint64_t ring_double_bits(double d);
extern double ring_bits_double(uint64_t u);

/* Unsigned 128-bit arithmetic, portable (no compiler extension needed). */
typedef struct ring_u128
{
	uint64_t	hi;
	uint64_t	lo;
} ring_u128;

static inline ring_u128
ring_mul64(uint64_t a, uint64_t b)
{
	ring_u128	r;

	r.hi = bits_multiply_high64(a, b, &r.lo);
	return r;
}

extern int	ring_cmp128(ring_u128 a, ring_u128 b);

/* floor(a * b / c); the quotient must fit in 64 bits (c > 0). */
extern uint64_t ring_muldiv(uint64_t a, uint64_t b, uint64_t c);

/* Relative weight units of the nodes: round(w / max * 2^32), >= 1 if w > 0. */
extern void ring_weight_units(const ring_node *nodes, uint32_t n,
							  uint64_t *units);

/* Sort nodes by id (ids assumed distinct for a canonical order). */
extern void ring_sort_nodes(ring_node *nodes, uint32_t n);

/* ---- ring_check.c ---- */

/* Part power, replicas and node count in range, slots within the limit. */
extern ring_status ring_check_sizes(uint32_t n, uint32_t part_power,
									uint32_t replicas, ring_error *err);

/* Weights finite and non-negative, not all zero, enough positive nodes. */
extern ring_status ring_check_weights(const ring_node *nodes, uint32_t n,
									  uint32_t replicas, ring_error *err);

#endif							/* SUBSETTING_CORE_RING_INTERNAL_H */
