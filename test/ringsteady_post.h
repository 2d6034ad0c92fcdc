/*
 * test/ringsteady_post.h
 *		The Ringsteady post's linear-time method ("Ringsteady sorting in linear
 *		time"), transcribed from its Rust code to C: the oracle of the C tests
 *		and the baseline of the benchmark.  It lists the ring order of all N
 *		backends, O(N) per call.
 */
#ifndef SUBSETTING_TEST_RINGSTEADY_POST_H
#define SUBSETTING_TEST_RINGSTEADY_POST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/bits.h"

/* The ring order of N backends, malloc'd: positions [0, 2^w) reversed, < N kept. */
static inline uint32_t *
post_ring_order(uint32_t backends)
{
	uint32_t   *order = malloc(sizeof(uint32_t) * backends);
	uint64_t	positions = 1;
	int			width = 0;
	uint32_t	count = 0;

	while (positions < backends)
	{
		positions <<= 1;
		width++;
	}
	for (uint64_t p = 0; p < positions; p++)
	{
		uint64_t	index = width == 0 ? 0 : bits_reverse64(p) >> (64 - width);

		if (index < backends)
			order[count++] = (uint32_t) index;
	}
	return order;
}

/* The post's rotation, ceil(reverse_bits(m) / 2^64 * N), computed in f64 as its code does. */
static inline uint64_t
post_f64_rotation(uint32_t frontend, uint32_t backends)
{
	double		unit = (double) bits_reverse64(frontend) / ldexp(1.0, 64);

	return (uint64_t) ceil(unit * (double) backends);
}

/* ringsteady_linear_time(num_backends, frontend_index, subset_size) of the post */
static inline void
post_ringsteady_linear_time(uint32_t backends, uint32_t frontend, uint32_t subset_size, uint32_t *out)
{
	uint32_t   *order = post_ring_order(backends);
	uint64_t	rotation = post_f64_rotation(frontend, backends);

	for (uint32_t i = 0; i < subset_size; i++)
		out[i] = order[(i + rotation) % backends];
	free(order);
}

#endif							/* SUBSETTING_TEST_RINGSTEADY_POST_H */
