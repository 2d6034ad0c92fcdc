/*
 * test/bench/bench.h
 *		Helpers for the C benchmarks: a monotonic clock, random keys, medians.
 *		Benchmarks report; they never decide whether a test passes.
 */
#ifndef SUBSETTING_BENCH_H
#define SUBSETTING_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* xorshift64*, the benchmarks' source of random keys */
static inline uint64_t
bench_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * UINT64_C(2685821657736338717);
}

static inline int
bench_compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* The median of values[0..count); sorts values. */
static inline double
bench_median(double *values, int count)
{
	qsort(values, count, sizeof(double), bench_compare_doubles);
	return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

/* Keeps a result alive so the compiler cannot drop the work that made it. */
static volatile uint64_t bench_sink;

#endif							/* SUBSETTING_BENCH_H */
