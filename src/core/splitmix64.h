/*
 * src/core/splitmix64.h
 *		SplitMix64, the pseudorandom generator of Java's SplittableRandom and of
 *		hash4j's splitMix64_V1.
 *
 * The state starts at the seed; each draw adds the golden gamma and mixes
 * (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014, with Stafford's "Mix13" finaliser).  Draw i (counting from 1)
 * of seed s is splitmix64_mix(s + i * gamma), so any draw can be computed
 * without the ones before it.
 */
#ifndef SUBSETTING_CORE_SPLITMIX64_H
#define SUBSETTING_CORE_SPLITMIX64_H

#include <stdint.h>

#define SPLITMIX64_GAMMA UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t
splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* The next 64-bit draw of the generator whose state is *state. */
static inline uint64_t
splitmix64_next(uint64_t *state)
{
	*state += SPLITMIX64_GAMMA;
	return splitmix64_mix(*state);
}

#endif							/* SUBSETTING_CORE_SPLITMIX64_H */
