/*
 * src/core/bits.h
 *		Bit operations on fixed-width unsigned integers, for the pure core.
 *
 * Every function is defined for every input it documents and gives the same
 * answer on every platform; compiler builtins are used where available only
 * because they are faster.
 */
#ifndef SUBSETTING_CORE_BITS_H
#define SUBSETTING_CORE_BITS_H

#include <stdint.h>

/* Number of leading zero bits of x; x must not be 0. */
static inline int
bits_clz32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
	return __builtin_clz(x);
#else
	int			n = 0;

	while (!(x & UINT32_C(0x80000000)))
	{
		x <<= 1;
		n++;
	}
	return n;
#endif
}

/* Position of the highest set bit of x (floor(log2(x))); x must not be 0. */
static inline int
bits_log2_64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
	return 63 - __builtin_clzll(x);
#else
	int			n = 0;

	while (x >>= 1)
		n++;
	return n;
#endif
}

/* Parity of the number of set bits of x: 0 or 1. */
static inline uint32_t
bits_parity32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
	return (uint32_t) __builtin_parity(x);
#else
	x ^= x >> 16;
	x ^= x >> 8;
	x ^= x >> 4;
	x ^= x >> 2;
	x ^= x >> 1;
	return x & 1;
#endif
}

/* x with its 64 bits in reverse order. */
static inline uint64_t
bits_reverse64(uint64_t x)
{
	x = ((x >> 1) & UINT64_C(0x5555555555555555)) | ((x & UINT64_C(0x5555555555555555)) << 1);
	x = ((x >> 2) & UINT64_C(0x3333333333333333)) | ((x & UINT64_C(0x3333333333333333)) << 2);
	x = ((x >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F)) | ((x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4);
	x = ((x >> 8) & UINT64_C(0x00FF00FF00FF00FF)) | ((x & UINT64_C(0x00FF00FF00FF00FF)) << 8);
	x = ((x >> 16) & UINT64_C(0x0000FFFF0000FFFF)) | ((x & UINT64_C(0x0000FFFF0000FFFF)) << 16);
	return (x >> 32) | (x << 32);
}

/*
 * The high 64 bits of the 128-bit product a * b, and the low 64 bits in *low,
 * from four products of 32 bits: for compilers without a 128-bit type (and
 * for the test that bits_multiply_high64 gives the same).
 */
static inline uint64_t
bits_multiply_high64_portable(uint64_t a, uint64_t b, uint64_t *low)
{
	uint64_t	a_lo = a & UINT32_MAX,
				a_hi = a >> 32;
	uint64_t	b_lo = b & UINT32_MAX,
				b_hi = b >> 32;
	uint64_t	lo_lo = a_lo * b_lo;
	uint64_t	hi_lo = a_hi * b_lo;
	uint64_t	lo_hi = a_lo * b_hi;
	uint64_t	hi_hi = a_hi * b_hi;
	uint64_t	middle = (lo_lo >> 32) + (hi_lo & UINT32_MAX) + lo_hi;

	*low = (middle << 32) | (lo_lo & UINT32_MAX);
	return hi_hi + (hi_lo >> 32) + (middle >> 32);
}

/*
 * The high 64 bits of the 128-bit product a * b, and the low 64 bits in *low:
 * one multiplication where the compiler has a 128-bit type.
 */
static inline uint64_t
bits_multiply_high64(uint64_t a, uint64_t b, uint64_t *low)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 product = (unsigned __int128) a * b;

	*low = (uint64_t) product;
	return (uint64_t) (product >> 64);
#else
	return bits_multiply_high64_portable(a, b, low);
#endif
}

#endif							/* SUBSETTING_CORE_BITS_H */
