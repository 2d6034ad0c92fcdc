/*
 * test/fuzz/fuzz.h
 *		What the libFuzzer harnesses of the subset core share: a check that
 *		says which condition failed, reading integers from the input, and a
 *		malloc that never fails.
 */
#ifndef SUBSETTING_FUZZ_H
#define SUBSETTING_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Aborts, naming the condition, if it does not hold. */
#define REQUIRE(condition) \
	do { \
		if (!(condition)) \
		{ \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #condition); \
			abort(); \
		} \
	} while (0)

/* The next `bytes` bytes of the input as a little-endian integer; missing bytes are zeros. */
static inline uint64_t
take(const uint8_t **data, size_t *size, int bytes)
{
	uint64_t	value = 0;

	for (int i = 0; i < bytes; i++)
	{
		if (*size > 0)
		{
			value |= (uint64_t) **data << (8 * i);
			(*data)++;
			(*size)--;
		}
	}
	return value;
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* malloc that never returns NULL (a zero-byte block is still a block) */
static inline void *
allocate(size_t bytes)
{
	void	   *pointer = malloc(bytes);

	REQUIRE(pointer != NULL || bytes == 0);
	return pointer;
}

#endif							/* SUBSETTING_FUZZ_H */
