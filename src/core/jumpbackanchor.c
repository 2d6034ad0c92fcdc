/*
 * src/core/jumpbackanchor.c
 *		JumpBackAnchorHash: JumpBackHash over a, the number of buckets ever
 *		in use, then AnchorHash's chains for the buckets removed since.
 *
 * Each removal shrinks the "view" (the number of working buckets) by one.
 * The removal at stack position r leaves n = a - 1 - r buckets: the removed
 * bucket b remembers n (it is absent from every view of n or fewer buckets)
 * and the bucket that took its place, the one that held the last place of
 * the view n + 1.  A key whose bucket is removed draws a place in [0, n) from
 * the same SplitMix64 sequence JumpBackHash used, and follows the chain of
 * replacements of that place until it finds a bucket present in the view n;
 * if that bucket was removed later still, it draws again in the smaller view.
 * A key that lands on a working bucket never moves, which is why removing a
 * bucket moves only that bucket's keys.
 *
 * hash4j keeps the removal data in an array indexed by bucket id, as long as
 * the largest removed id.  Here the removed ids, tagged with their stack
 * position, are kept sorted (binary search) behind a small bit filter, so
 * that memory follows the number of removed buckets, never their values,
 * and a key whose bucket is not removed costs one bit test.  A removed
 * removal also keeps the stack position of its replacement, so a chain is
 * followed without searching again.
 */
#include <string.h>

#include "jump.h"
#include "jumpbackanchor.h"
#include "splitmix64.h"

#define SORT_NAME sort_entries
#define SORT_TYPE uint64_t
#include "sort_template.h"

#define CHECK_EVERY 65536
#define FILTER_BITS_PER_REMOVED 16
#define FILTER_MULTIPLIER UINT64_C(0x9E3779B97F4A7C15)

/* log2 of the number of bits of the filter for count removed buckets. */
static int
filter_log2(int32_t count)
{
	int			log2 = 6;		/* at least one 64-bit word */

	while ((UINT64_C(1) << log2) < (uint64_t) count * FILTER_BITS_PER_REMOVED)
		log2++;
	return log2;
}

size_t
jump_back_anchor_memory_size(int32_t removed_count)
{
	if (removed_count <= 0)
		return 0;
	return ((size_t) 1 << filter_log2(removed_count)) / 8 +
		(size_t) removed_count * (sizeof(uint64_t) + 2 * sizeof(int32_t));
}

static inline uint64_t
filter_bit(const jump_back_anchor *h, int32_t bucket)
{
	return ((uint64_t) (uint32_t) bucket * FILTER_MULTIPLIER) >> h->filter_shift;
}

/*
 * The entry of a removed bucket (its stack position, which indexes
 * next_bucket and next_entry), or -1 if bucket is not removed.
 */
static inline int32_t
find_entry(const jump_back_anchor *h, int32_t bucket)
{
	uint64_t	bit = filter_bit(h, bucket);
	uint64_t	target = (uint64_t) (uint32_t) bucket << 32;
	int32_t		low = 0,
				high = h->removed_count;

	if (((h->filter[bit >> 6] >> (bit & 63)) & 1) == 0)
		return -1;
	/* the first entry >= target */
	while (low < high)
	{
		int32_t		mid = low + (high - low) / 2;

		if (h->entries[mid] < target)
			low = mid + 1;
		else
			high = mid;
	}
	if (low < h->removed_count && (h->entries[low] >> 32) == (uint64_t) (uint32_t) bucket)
		return (int32_t) (uint32_t) h->entries[low];
	return -1;
}

/* The view of an entry: the number of buckets left by its removal. */
static inline int32_t
entry_view(const jump_back_anchor *h, int32_t entry)
{
	return h->buckets - 1 - entry;
}

/*
 * The bucket at place `place` of the view of `view` buckets, given e, the
 * entry of place (or -1): place's bucket, or, while that one is absent from
 * the view (removed leaving view buckets or more), the one that took its
 * place.  *entry is the result's entry (it may have been removed later,
 * leaving fewer buckets), or -1.  The views along a chain decrease, so it
 * has at most removed_count steps; -1 if it had more (a state this code did
 * not make, never seen).
 */
static inline int32_t
follow_chain(const jump_back_anchor *h, int32_t place, int32_t e, int32_t view, int32_t *entry)
{
	int32_t		bucket = place;
	int32_t		steps = 0;

	*entry = -1;
	while (e >= 0 && entry_view(h, e) >= view)
	{
		if (steps++ > h->removed_count)
			return -1;
		bucket = h->next_bucket[e];
		e = h->next_entry[e];
	}
	*entry = e;
	return bucket;
}

static inline int32_t
bucket_at_view(const jump_back_anchor *h, int32_t place, int32_t view, int32_t *entry)
{
	return follow_chain(h, place, find_entry(h, place), view, entry);
}

/*
 * hash4j's uniformInt(bound) (Lemire's method with 32-bit products): a value
 * in [0, bound), drawing again only while the low half of the product falls
 * below 2^32 mod bound.
 */
static inline int32_t
uniform_below(uint64_t *state, int32_t bound)
{
	uint64_t	s = (uint64_t) (uint32_t) bound;
	uint64_t	product = (uint64_t) (uint32_t) splitmix64_next(state) * s;

	if ((uint32_t) product < s)
	{
		uint64_t	threshold = (UINT64_C(1) << 32) % s;

		while ((uint32_t) product < threshold)
			product = (uint64_t) (uint32_t) splitmix64_next(state) * s;
	}
	return (int32_t) (product >> 32);
}

jump_back_anchor_status
jump_back_anchor_init(jump_back_anchor *h, int32_t buckets,
					  const int32_t *removed, int32_t removed_count,
					  void *memory, const core_interrupts *ci,
					  jump_back_anchor_problem *problem)
{
	int32_t		m = removed_count;
	char	   *next;
	int			log2;
	int32_t		top;

	if (buckets < 0)
		return JUMP_BACK_ANCHOR_EBUCKETS;
	if (m < 0 || m > JUMP_BACK_ANCHOR_MAX_REMOVED)
		return JUMP_BACK_ANCHOR_ELIMIT;
	h->buckets = buckets;
	h->removed_count = m;
	h->filter_shift = 64;
	h->filter = NULL;
	h->entries = NULL;
	h->next_bucket = NULL;
	h->next_entry = NULL;
	if (m == 0)
		return JUMP_BACK_ANCHOR_OK;

	/* carve the memory: filter, entries, next buckets, next entries */
	log2 = filter_log2(m);
	next = memory;
	h->filter = (uint64_t *) next;
	next += ((size_t) 1 << log2) / 8;
	h->entries = (uint64_t *) next;
	next += (size_t) m * sizeof(uint64_t);
	h->next_bucket = (int32_t *) next;
	next += (size_t) m * sizeof(int32_t);
	h->next_entry = (int32_t *) next;
	h->filter_shift = 64 - log2;
	memset(h->filter, 0, ((size_t) 1 << log2) / 8);

	for (int32_t r = 0; r < m; r++)
	{
		if (removed[r] < 0 || removed[r] >= buckets)
		{
			if (problem)
			{
				problem->bucket = removed[r];
				problem->position = r;
				problem->other_position = -1;
			}
			return JUMP_BACK_ANCHOR_ERANGE;
		}
		h->entries[r] = ((uint64_t) (uint32_t) removed[r] << 32) | (uint32_t) r;
	}
	sort_entries(h->entries, (size_t) m, ci);
	for (int32_t i = 0; i < m; i++)
	{
		uint64_t	bit;

		if (i > 0 && (h->entries[i] >> 32) == (h->entries[i - 1] >> 32))
		{
			if (problem)
			{
				problem->bucket = (int32_t) (h->entries[i] >> 32);
				problem->position = (int32_t) (uint32_t) h->entries[i - 1];
				problem->other_position = (int32_t) (uint32_t) h->entries[i];
			}
			return JUMP_BACK_ANCHOR_EDUPLICATE;
		}
		bit = filter_bit(h, (int32_t) (h->entries[i] >> 32));
		h->filter[bit >> 6] |= UINT64_C(1) << (bit & 63);
	}

	/*
	 * Replay the removals in stack order.  Removal r leaves n buckets; the
	 * bucket that held place n of the view n + 1 takes the removed bucket's
	 * place.  Entries of later removals have views below n + 1, so the
	 * chain walk treats them as present, as it must.  The places n are
	 * a - 1, a - 2, ...: their entries are found by walking the sorted
	 * entries down once, not by searching.
	 */
	top = m - 1;
	for (int32_t r = 0; r < m; r++)
	{
		int32_t		n = buckets - 1 - r;
		int32_t		place_entry = -1;
		int32_t		replacement_entry;
		int32_t		replacement;

		if (r % CHECK_EVERY == CHECK_EVERY - 1)
			core_interrupts_check(ci);
		while (top >= 0 && (int32_t) (h->entries[top] >> 32) > n)
			top--;
		if (top >= 0 && (int32_t) (h->entries[top] >> 32) == n)
			place_entry = (int32_t) (uint32_t) h->entries[top];
		replacement = follow_chain(h, n, place_entry, n + 1, &replacement_entry);
		if (replacement < 0)
			return JUMP_BACK_ANCHOR_EINTERNAL;
		h->next_bucket[r] = replacement;
		h->next_entry[r] = replacement_entry;
	}
	return JUMP_BACK_ANCHOR_OK;
}

int32_t
jump_back_anchor_bucket_with_removals(const jump_back_anchor *h, uint64_t key)
{
	uint64_t	state = key;
	int32_t		bucket;
	int32_t		entry;

	if (h->buckets <= h->removed_count)
		return -1;
	bucket = jump_back_hash_drawing(&state, h->buckets);
	entry = find_entry(h, bucket);
	while (entry >= 0)
	{
		int32_t		view = entry_view(h, entry);

		if (view == 0)			/* only when every bucket is removed */
			break;
		bucket = bucket_at_view(h, uniform_below(&state, view), view, &entry);
		if (bucket < 0)
			return -2;
	}
	return bucket;
}

int
jump_back_anchor_is_removed(const jump_back_anchor *h, int32_t bucket)
{
	return h->removed_count > 0 && find_entry(h, bucket) >= 0;
}

jump_back_anchor_status
jump_back_anchor_remove(const jump_back_anchor *h, int32_t bucket,
						int32_t *buckets, int32_t *removed, int32_t *count)
{
	if (bucket < 0 || bucket >= *buckets || jump_back_anchor_is_removed(h, bucket))
		return JUMP_BACK_ANCHOR_ENOTIN;
	if (*buckets - 1 == *count)
	{
		/* the only bucket left: the set becomes empty */
		*buckets = 0;
		*count = 0;
	}
	else if (bucket == *buckets - 1 && *count == 0)
		*buckets -= 1;
	else
	{
		if (*count >= JUMP_BACK_ANCHOR_MAX_REMOVED)
			return JUMP_BACK_ANCHOR_ELIMIT;
		removed[(*count)++] = bucket;
	}
	return JUMP_BACK_ANCHOR_OK;
}

jump_back_anchor_status
jump_back_anchor_add(int32_t *buckets, const int32_t *removed, int32_t *count,
					 int32_t *added)
{
	if (*count > 0)
	{
		*count -= 1;
		*added = removed[*count];
	}
	else
	{
		if (*buckets == INT32_MAX)
			return JUMP_BACK_ANCHOR_EFULL;
		*added = *buckets;
		*buckets += 1;
	}
	return JUMP_BACK_ANCHOR_OK;
}

static inline int32_t
get_le32(const uint8_t *p)
{
	return (int32_t) ((uint32_t) p[0] | (uint32_t) p[1] << 8 |
					  (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);
}

static inline void
put_le32(uint8_t *p, int32_t value)
{
	uint32_t	v = (uint32_t) value;

	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

jump_back_anchor_status
jump_back_anchor_state_header(const uint8_t *bytes, size_t len,
							  int32_t *buckets, int32_t *count)
{
	*buckets = 0;
	*count = 0;
	if (len < 4 || len % 4 != 0)
		return JUMP_BACK_ANCHOR_EFORMAT;
	*buckets = get_le32(bytes);
	if (*buckets < 0)
		return JUMP_BACK_ANCHOR_EBUCKETS;
	if ((len - 4) / 4 > (size_t) JUMP_BACK_ANCHOR_MAX_REMOVED)
		return JUMP_BACK_ANCHOR_ELIMIT;
	*count = (int32_t) ((len - 4) / 4);
	return JUMP_BACK_ANCHOR_OK;
}

int32_t
jump_back_anchor_state_get(const uint8_t *bytes, int32_t i)
{
	return get_le32(bytes + 4 + 4 * (size_t) i);
}

void
jump_back_anchor_state_put(uint8_t *bytes, int32_t buckets,
						   const int32_t *removed, int32_t count)
{
	put_le32(bytes, buckets);
	for (int32_t i = 0; i < count; i++)
		put_le32(bytes + 4 + 4 * (size_t) i, removed[i]);
}
