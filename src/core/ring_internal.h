/*
 * src/core/ring_internal.h
 *		Helpers shared by the files of the partition ring core.
 */
#ifndef SUBSETTING_CORE_RING_INTERNAL_H
#define SUBSETTING_CORE_RING_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/ring.h"

#if defined(__GNUC__) || defined(__clang__)
#define RING_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RING_PRINTF(a, b)
#endif

extern ring_status ring_fail(ring_error *err, ring_status code,
							 const char *fmt,...) RING_PRINTF(3, 4);
extern ring_status invalid_ring(ring_error *err);
extern ring_status ring_check_sizes(uint32_t n, uint32_t part_power,
									uint32_t replicas, ring_error *err);

extern uint32_t ring_get_le32(const uint8_t *p);
extern uint64_t ring_get_le64(const uint8_t *p);
extern void ring_put_le32(uint8_t *p, uint32_t v);
extern void ring_put_le64(uint8_t *p, uint64_t v);

/* Unsigned 128-bit arithmetic, portable (no compiler extension). */
typedef struct ring_u128
{
	uint64_t	hi;
	uint64_t	lo;
} ring_u128;

extern ring_u128 ring_mul64(uint64_t a, uint64_t b);
extern int	ring_cmp128(ring_u128 a, ring_u128 b);

/* floor(a * b / c); the quotient must fit in 64 bits (c > 0). */
extern uint64_t ring_muldiv(uint64_t a, uint64_t b, uint64_t c);

/* Relative weight units of the nodes: round(w / max * 2^32), >= 1 if w > 0. */
extern void ring_weight_units(const ring_node *nodes, uint32_t n,
							  uint64_t *units);

/* Sort nodes by id (ids assumed distinct for a canonical order). */
extern void ring_sort_nodes(ring_node *nodes, uint32_t n);

#endif							/* SUBSETTING_CORE_RING_INTERNAL_H */
