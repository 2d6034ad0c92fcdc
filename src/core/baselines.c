/*
 * src/core/baselines.c
 *		Random, round-robin, deterministic and consistent subsetting; see
 *		baselines.h for the exact constructions.
 */
#include "baselines.h"
#include "bits.h"
#include "splitmix64.h"

uint64_t
baselines_stream(uint64_t seed, uint64_t algorithm, uint64_t index)
{
	return splitmix64_mix(splitmix64_mix(seed ^ algorithm) + index);
}

uint32_t
baselines_uniform(uint64_t draw, uint32_t n)
{
	uint64_t	low;

	return (uint32_t) bits_multiply_high64(draw, n, &low);
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Random subsetting.  Forward Fisher-Yates touches 2 entries per step, so a
 * prefix of k needs only the entries it moved: a hash table of moved entries
 * (open addressing, at most half full) when N is large, a plain array of N
 * when that is no larger.
 */
#define EMPTY_KEY UINT32_MAX	/* no backend index is UINT32_MAX */

/*
 * The table's size: the least power of 2 of at least 2 * count slots, up to
 * 2^33 (kept in 64 bits: from count > 2^30 on it does not fit 32).  A table
 * is only used when it is smaller than N, so below 2^31 slots.
 */
static uint64_t
sparse_table_size(uint32_t count)
{
	uint64_t	size = 2;

	while (size < 2 * (uint64_t) count)
		size <<= 1;
	return size;
}

static inline uint32_t
sparse_slot(uint32_t key, uint32_t mask)
{
	return (uint32_t) ((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

static uint32_t
sparse_get(const uint32_t *keys, const uint32_t *values, uint32_t mask, uint32_t key)
{
	for (uint32_t s = sparse_slot(key, mask);; s = (s + 1) & mask)
	{
		if (keys[s] == key)
			return values[s];
		if (keys[s] == EMPTY_KEY)
			return key;			/* never moved: still in its place */
	}
}

static void
sparse_set(uint32_t *keys, uint32_t *values, uint32_t mask, uint32_t key, uint32_t value)
{
	uint32_t	s = sparse_slot(key, mask);

	while (keys[s] != key && keys[s] != EMPTY_KEY)
		s = (s + 1) & mask;
	keys[s] = key;
	values[s] = value;
}

size_t
random_subset_workspace_bytes(uint32_t backends, uint32_t subset_size)
{
	uint64_t	table = 2 * sparse_table_size(min_u32(subset_size, backends));

	return sizeof(uint32_t) * (size_t) (backends <= table ? backends : table);
}

int64_t
random_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
					uint32_t *out, void *workspace, const core_interrupts *ci)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint64_t	table_size = sparse_table_size(count);
	uint64_t	state = baselines_stream(seed, BASELINES_RANDOM_STREAM, frontend);

	if (backends == 0)
		return -1;
	if (count == 0)
		return 0;
	if (backends <= 2 * table_size)
	{
		uint32_t   *a = workspace;

		for (uint32_t i = 0; i < backends; i++)
		{
			core_interrupts_poll(ci, i);
			a[i] = i;
		}
		for (uint32_t i = 0; i < count; i++)
		{
			uint32_t	j = i + baselines_uniform(splitmix64_next(&state), backends - i);
			uint32_t	t = a[i];

			core_interrupts_poll(ci, i);
			a[i] = a[j];
			a[j] = t;
			out[i] = a[i];
		}
	}
	else
	{
		uint32_t	table = (uint32_t) table_size;	/* < N / 2 */
		uint32_t   *keys = workspace;
		uint32_t   *values = keys + table;
		uint32_t	mask = table - 1;

		for (uint32_t s = 0; s < table; s++)
		{
			core_interrupts_poll(ci, s);
			keys[s] = EMPTY_KEY;
		}
		for (uint32_t i = 0; i < count; i++)
		{
			uint32_t	j = i + baselines_uniform(splitmix64_next(&state), backends - i);
			uint32_t	at_i = sparse_get(keys, values, mask, i);

			core_interrupts_poll(ci, i);
			out[i] = sparse_get(keys, values, mask, j);
			if (j != i)
				sparse_set(keys, values, mask, j, at_i);
		}
	}
	return count;
}

int64_t
round_robin_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint32_t *out)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint32_t	start;

	if (backends == 0)
		return -1;
	start = (uint32_t) ((uint64_t) frontend * subset_size % backends);
	for (uint32_t i = 0; i < count; i++)
	{
		uint64_t	b = (uint64_t) start + i;	/* below 2N: reduce once */

		out[i] = (uint32_t) (b >= backends ? b - backends : b);
	}
	return count;
}

/*
 * Deterministic subsetting.  shuffle[0..steps) of round `round` is written to
 * a: the remaining tasks in increasing order, shuffled by forward
 * Fisher-Yates, whose first `steps` places are final after `steps` steps.
 */
static void
deterministic_shuffle_round(uint32_t backends, uint32_t size, uint64_t seed, uint64_t round,
							uint32_t *a, uint32_t steps, const core_interrupts *ci)
{
	uint32_t	per_round = backends / size;
	uint32_t	leftovers = backends - per_round * size;
	uint32_t	remaining = backends - leftovers;
	uint32_t	first = (uint32_t) (round * leftovers % backends);	/* first left out */
	uint64_t	state = baselines_stream(seed, BASELINES_DETERMINISTIC_STREAM, round);

	if (first + (uint64_t) leftovers <= backends)
	{
		/* left out: [first, first + l) */
		for (uint32_t i = 0; i < remaining; i++)
		{
			core_interrupts_poll(ci, i);
			a[i] = i < first ? i : i + leftovers;
		}
	}
	else
	{
		/* left out: [first, N) and [0, first + l - N): the rest is one run */
		uint32_t	low = (uint32_t) (first + (uint64_t) leftovers - backends);

		for (uint32_t i = 0; i < remaining; i++)
		{
			core_interrupts_poll(ci, i);
			a[i] = low + i;
		}
	}
	for (uint32_t i = 0; i < steps && i + 1 < remaining; i++)
	{
		uint32_t	j = i + baselines_uniform(splitmix64_next(&state), remaining - i);
		uint32_t	t = a[i];

		core_interrupts_poll(ci, i);
		a[i] = a[j];
		a[j] = t;
	}
}

size_t
deterministic_subset_workspace_bytes(uint32_t backends)
{
	return sizeof(uint32_t) * (size_t) backends;
}

static int64_t
deterministic_write(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
					 uint32_t *out, uint32_t *a, int64_t *cached_round,
					 const core_interrupts *ci)
{
	uint32_t	size = min_u32(subset_size, backends);
	uint32_t	per_round,
				start;
	uint64_t	round;

	if (backends == 0)
		return -1;
	if (size == 0)
		return 0;
	per_round = backends / size;
	round = frontend / per_round;
	start = (frontend % per_round) * size;
	if (cached_round == NULL)
		deterministic_shuffle_round(backends, size, seed, round, a, start + size, ci);
	else if (*cached_round != (int64_t) round)
	{
		deterministic_shuffle_round(backends, size, seed, round, a, backends, ci);
		*cached_round = (int64_t) round;
	}
	for (uint32_t i = 0; i < size; i++)
		out[i] = a[start + i];
	return size;
}

int64_t
deterministic_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size,
						   uint64_t seed, uint32_t *out, void *workspace,
						   const core_interrupts *ci)
{
	return deterministic_write(frontend, backends, subset_size, seed, out, workspace, NULL, ci);
}

int64_t
deterministic_write_subset_cached(uint32_t frontend, uint32_t backends, uint32_t subset_size,
								  uint64_t seed, uint32_t *out, void *workspace,
								  int64_t *cached_round)
{
	return deterministic_write(frontend, backends, subset_size, seed, out, workspace,
								cached_round, NULL);
}

/*
 * Consistent subsetting: the k nearest backends clockwise, by a max-heap of
 * the k best (distance, index) pairs so far, sorted at the end.
 */
uint64_t
consistent_backend_position(uint64_t seed, uint32_t backend)
{
	uint64_t	state = baselines_stream(seed, BASELINES_CONSISTENT_STREAM, 2 * (uint64_t) backend);

	return splitmix64_next(&state);
}

uint64_t
consistent_frontend_position(uint64_t seed, uint32_t frontend)
{
	uint64_t	state = baselines_stream(seed, BASELINES_CONSISTENT_STREAM,
										 2 * (uint64_t) frontend + 1);

	return splitmix64_next(&state);
}

size_t
consistent_subset_workspace_bytes(uint32_t backends, uint32_t subset_size)
{
	return sizeof(uint64_t) * (size_t) min_u32(subset_size, backends);
}

/* (distance, index) pairs in order */
static inline int
pair_less(uint64_t d1, uint32_t i1, uint64_t d2, uint32_t i2)
{
	return d1 < d2 || (d1 == d2 && i1 < i2);
}

static void
sift_down(uint64_t *dist, uint32_t *index, uint32_t size, uint32_t at)
{
	for (;;)
	{
		uint64_t	child = 2 * (uint64_t) at + 1;
		uint32_t	largest = at;

		if (child < size && pair_less(dist[largest], index[largest], dist[child], index[child]))
			largest = (uint32_t) child;
		if (child + 1 < size && pair_less(dist[largest], index[largest], dist[child + 1], index[child + 1]))
			largest = (uint32_t) child + 1;
		if (largest == at)
			return;
		{
			uint64_t	td = dist[at];
			uint32_t	ti = index[at];

			dist[at] = dist[largest];
			index[at] = index[largest];
			dist[largest] = td;
			index[largest] = ti;
		}
		at = largest;
	}
}

int64_t
consistent_write_subset(uint32_t frontend, uint32_t backends, uint32_t subset_size, uint64_t seed,
						uint32_t *out, void *workspace, const core_interrupts *ci)
{
	uint32_t	count = min_u32(subset_size, backends);
	uint64_t   *dist = workspace;
	uint64_t	origin = consistent_frontend_position(seed, frontend);

	if (backends == 0)
		return -1;
	if (count == 0)
		return 0;
	for (uint32_t n = 0; n < backends; n++)
	{
		uint64_t	d = consistent_backend_position(seed, n) - origin;

		core_interrupts_poll(ci, n);
		if (n < count)
		{
			dist[n] = d;
			out[n] = n;
			if (n + 1 == count)
				for (uint32_t at = count / 2; at-- > 0;)
					sift_down(dist, out, count, at);
		}
		else if (pair_less(d, n, dist[0], out[0]))
		{
			dist[0] = d;
			out[0] = n;
			sift_down(dist, out, count, 0);
		}
	}
	/* heap sort: nearest first */
	for (uint32_t size = count; size > 1; size--)
	{
		uint64_t	td = dist[0];
		uint32_t	ti = out[0];

		core_interrupts_poll(ci, size);
		dist[0] = dist[size - 1];
		out[0] = out[size - 1];
		dist[size - 1] = td;
		out[size - 1] = ti;
		sift_down(dist, out, size - 1, 0);
	}
	return count;
}
