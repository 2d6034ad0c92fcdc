/*
 * src/core/sort_template.h
 *		An in-place sort of unsigned integers in increasing order that checks
 *		for interrupts as it goes, so that sorting millions of values can be
 *		canceled.  Introsort: quicksort with a median-of-three pivot, heapsort
 *		past a depth of 2 log2 n (O(n log n) in every case), insertion sort for
 *		short ranges.  The interrupt check is called before partitioning any
 *		range of SORT_CHECK_EVERY values or more and every SORT_CHECK_EVERY
 *		steps of a heapsort, that is every few milliseconds.
 *
 * Include it with SORT_NAME (the function to define) and SORT_TYPE (an
 * unsigned integer type) defined; it defines
 *
 *	static void SORT_NAME(SORT_TYPE *a, size_t n, const core_interrupts *ci);
 *
 * which calls ci (interrupts.h; may be NULL), and undefines both macros.
 */
#include <stddef.h>

#include "interrupts.h"

#define SORT_SMALL 16
#define SORT_CHECK_EVERY 65536
#define SORT_CONCAT_(a, b) a##_##b
#define SORT_CONCAT(a, b) SORT_CONCAT_(a, b)
#define SORT_FN(suffix) SORT_CONCAT(SORT_NAME, suffix)

static inline void
SORT_FN(swap) (SORT_TYPE *a, size_t i, size_t j)
{
	SORT_TYPE	t = a[i];

	a[i] = a[j];
	a[j] = t;
}

static void
SORT_FN(insertion) (SORT_TYPE *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		SORT_TYPE	v = a[i];
		size_t		j = i;

		while (j > 0 && a[j - 1] > v)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

static void
SORT_FN(sift) (SORT_TYPE *a, size_t root, size_t n)
{
	SORT_TYPE	v = a[root];

	for (;;)
	{
		size_t		child = 2 * root + 1;

		if (child >= n)
			break;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[child] <= v)
			break;
		a[root] = a[child];
		root = child;
	}
	a[root] = v;
}

static void
SORT_FN(heapsort) (SORT_TYPE *a, size_t n, const core_interrupts *ci)
{
	for (size_t i = n / 2; i-- > 0;)
	{
		if (i % SORT_CHECK_EVERY == 0)
			core_interrupts_check(ci);
		SORT_FN(sift) (a, i, n);
	}
	for (size_t i = n; i-- > 1;)
	{
		if (i % SORT_CHECK_EVERY == 0)
			core_interrupts_check(ci);
		SORT_FN(swap) (a, 0, i);
		SORT_FN(sift) (a, 0, i);
	}
}

static void
SORT_FN(intro) (SORT_TYPE *a, size_t n, int depth, const core_interrupts *ci)
{
	while (n > SORT_SMALL)
	{
		size_t		mid = n / 2;
		size_t		i,
					j;
		SORT_TYPE	pivot;

		if (n >= SORT_CHECK_EVERY)
			core_interrupts_check(ci);
		if (depth-- == 0)
		{
			SORT_FN(heapsort) (a, n, ci);
			return;
		}
		/* a[0] <= a[mid] <= a[n - 1], and a[mid] is the pivot */
		if (a[mid] < a[0])
			SORT_FN(swap) (a, mid, 0);
		if (a[n - 1] < a[mid])
		{
			SORT_FN(swap) (a, n - 1, mid);
			if (a[mid] < a[0])
				SORT_FN(swap) (a, mid, 0);
		}
		pivot = a[mid];
		/*
		 * Hoare's partition: a[0 .. j] <= pivot <= a[j + 1 .. n - 1], both
		 * parts non-empty (the pivot sits at mid < n - 1, so the first swap
		 * happens and j ends below n - 1).
		 */
		i = 0;
		j = n - 1;
		for (;;)
		{
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			SORT_FN(swap) (a, i, j);
			i++;
			j--;
		}
		/* recurse into the smaller part, loop on the larger */
		if (j + 1 < n - (j + 1))
		{
			SORT_FN(intro) (a, j + 1, depth, ci);
			a += j + 1;
			n -= j + 1;
		}
		else
		{
			SORT_FN(intro) (a + j + 1, n - (j + 1), depth, ci);
			n = j + 1;
		}
	}
	SORT_FN(insertion) (a, n);
}

static void
SORT_NAME(SORT_TYPE *a, size_t n, const core_interrupts *ci)
{
	int			depth = 0;

	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	SORT_FN(intro) (a, n, depth, ci);
}

#undef SORT_FN
#undef SORT_CONCAT
#undef SORT_CONCAT_
#undef SORT_CHECK_EVERY
#undef SORT_SMALL
#undef SORT_NAME
#undef SORT_TYPE
