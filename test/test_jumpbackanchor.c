/*
 * test/test_jumpbackanchor.c
 *		Tests of JumpBackAnchorHash in the pure core: every row of hash4j's
 *		reference vectors (buckets, state bytes, the add/remove calls that made
 *		each state, setState's verdict on malformed states), agreement with a
 *		plain transcription of the algorithm on random states, and the
 *		properties on random states and keys: equal to JumpBackHash with nothing
 *		removed, removing a bucket moves only its keys, adding it back returns
 *		exactly those, no key on a removed bucket, even spread over the rest.
 *
 * Usage: test_jumpbackanchor [DATA_DIR]   (default test/data, from the project root)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jump.h"
#include "core/jumpbackanchor.h"
#include "core/splitmix64.h"
#include "stats.h"
#include "unit.h"

static const char *data_dir = "test/data";

/* xorshift64*: the test's own source of random numbers, unrelated to SplitMix64. */
static uint64_t rng_state = UINT64_C(0x13198A2E03707344);

static uint64_t
random_u64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

/* A value in [0, bound), bound > 0 (bias below 2^-32, irrelevant here). */
static int32_t
random_below(int64_t bound)
{
	return (int32_t) ((random_u64() >> 32) * (uint64_t) bound >> 32);
}

/* A decoded state with its own memory. */
typedef struct
{
	jump_back_anchor h;
	void	   *memory;
	jump_back_anchor_status status;
	jump_back_anchor_problem problem;
} hasher;

static void
hasher_make(hasher *x, int32_t buckets, const int32_t *removed, int32_t count)
{
	x->memory = malloc(jump_back_anchor_memory_size(count) + 8);
	x->status = jump_back_anchor_init(&x->h, buckets, removed, count, x->memory,
									  NULL, &x->problem);
}

static void
hasher_free(hasher *x)
{
	free(x->memory);
	x->memory = NULL;
}

/*
 * The algorithm as hash4j describes it, transcribed plainly for checking:
 * per removal (stack position r) the view n = a - 1 - r it leaves and the
 * bucket that took its place; a bucket's removal found by a linear search.
 * Only for short stacks.
 */
typedef struct
{
	int32_t		buckets;
	int32_t		count;
	const int32_t *removed;
	int32_t    *view;
	int32_t    *replacement;
} plain_model;

/* The stack position of bucket b, or -1 if it is not removed. */
static int32_t
plain_position(const plain_model *p, int32_t b)
{
	for (int32_t r = 0; r < p->count; r++)
		if (p->removed[r] == b)
			return r;
	return -1;
}

/* view and replacement of b, when b is not removed: 0 and b */
static int32_t
plain_view(const plain_model *p, int32_t b)
{
	int32_t		r = plain_position(p, b);

	return r < 0 ? 0 : p->view[r];
}

static int32_t
plain_at_view(const plain_model *p, int32_t b, int32_t v)
{
	while (plain_view(p, b) >= v)
		b = p->replacement[plain_position(p, b)];
	return b;
}

static void
plain_make(plain_model *p, int32_t buckets, const int32_t *removed, int32_t count)
{
	p->buckets = buckets;
	p->count = 0;
	p->removed = removed;
	p->view = calloc((size_t) count + 1, sizeof(int32_t));
	p->replacement = calloc((size_t) count + 1, sizeof(int32_t));
	for (int32_t r = 0; r < count; r++)
	{
		int32_t		n = buckets - 1 - r;

		/* removals after r are not made yet */
		p->count = r;
		p->replacement[r] = plain_at_view(p, n, n + 1);
		p->view[r] = n;
	}
	p->count = count;
}

/* Lemire's 32-bit method, as hash4j's uniformInt. */
static int32_t
plain_uniform(uint64_t *state, int32_t bound)
{
	uint64_t	x = splitmix64_next(state) & UINT32_MAX;
	uint64_t	m = x * (uint64_t) bound;

	if ((m & UINT32_MAX) < (uint64_t) bound)
	{
		uint64_t	t = (UINT64_C(1) << 32) % (uint64_t) bound;

		while ((m & UINT32_MAX) < t)
		{
			x = splitmix64_next(state) & UINT32_MAX;
			m = x * (uint64_t) bound;
		}
	}
	return (int32_t) (m >> 32);
}

static int32_t
plain_bucket(const plain_model *p, uint64_t key)
{
	uint64_t	state = key;
	int32_t		b;

	if (p->buckets <= p->count)
		return -1;
	if (p->buckets <= 1)
		return 0;
	b = jump_back_hash_drawing(&state, p->buckets);
	while (plain_view(p, b) != 0)
	{
		int32_t		v = plain_view(p, b);

		b = plain_at_view(p, plain_uniform(&state, v), v);
	}
	return b;
}

static void
plain_free(plain_model *p)
{
	free(p->view);
	free(p->replacement);
}

/* ---- the reference vectors ---- */

#define MAX_REMOVED_IN_ROW 64

typedef struct
{
	int32_t		a;
	int32_t		removed[MAX_REMOVED_IN_ROW];
	int32_t		count;
	uint8_t		state[4 + 4 * MAX_REMOVED_IN_ROW];
	size_t		state_len;
	int64_t		key;
	int32_t		bucket;
	char		ops[4096];
} anchor_row;

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes hex into bytes (at most max); returns the length or -1. */
static long
parse_hex(const char *hex, size_t hex_len, uint8_t *bytes, size_t max)
{
	if (hex_len % 2 != 0 || hex_len / 2 > max)
		return -1;
	for (size_t i = 0; i < hex_len / 2; i++)
	{
		int			hi = hex_value(hex[2 * i]),
					lo = hex_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		bytes[i] = (uint8_t) (hi << 4 | lo);
	}
	return (long) (hex_len / 2);
}

/* Splits line at commas into at most max fields; returns the number. */
static int
split_fields(char *line, char **fields, int max)
{
	int			n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	fields[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == ',')
		{
			*p = '\0';
			fields[n++] = p + 1;
		}
	return n;
}

static int
parse_anchor_row(char *line, anchor_row *row)
{
	char	   *f[6];
	char	   *p,
			   *end;
	long		len;

	if (split_fields(line, f, 6) != 6)
		return 0;
	row->a = (int32_t) strtol(f[0], NULL, 10);
	row->count = 0;
	for (p = f[1]; *p;)
	{
		long		v = strtol(p, &end, 10);

		if (end == p || row->count >= MAX_REMOVED_IN_ROW)
			return 0;
		row->removed[row->count++] = (int32_t) v;
		p = end;
		while (*p == ' ')
			p++;
	}
	len = parse_hex(f[2], strlen(f[2]), row->state, sizeof(row->state));
	if (len < 0)
		return 0;
	row->state_len = (size_t) len;
	row->key = strtoll(f[3], NULL, 10);
	row->bucket = (int32_t) strtol(f[4], NULL, 10);
	snprintf(row->ops, sizeof(row->ops), "%s", f[5]);
	return 1;
}

static FILE *
open_data(const char *name)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		UNIT_FAIL("could not open %s", path);
	return f;
}

/*
 * Replays ops ("+N" adds N buckets, "-b" removes bucket b) from the empty set
 * with jump_back_anchor_add and jump_back_anchor_remove; returns 0 if a call
 * failed.
 */
static int
replay_ops(const char *ops, int32_t *buckets, int32_t *removed, int32_t *count)
{
	const char *p = ops;

	*buckets = 0;
	*count = 0;
	while (*p)
	{
		char		op = *p++;
		long long	v = strtoll(p, (char **) &p, 10);

		if (op == '+')
		{
			while (v > 0)
			{
				int32_t		added;

				if (*count == 0 && v > 3)
				{
					/* with nothing removed, v adds grow buckets by v */
					*buckets += (int32_t) (v - 1);
					v = 1;
					continue;
				}
				if (jump_back_anchor_add(buckets, removed, count, &added) != JUMP_BACK_ANCHOR_OK)
					return 0;
				v--;
			}
		}
		else if (op == '-')
		{
			hasher		x;
			jump_back_anchor_status status;

			if (*count >= MAX_REMOVED_IN_ROW)
				return 0;
			hasher_make(&x, *buckets, removed, *count);
			if (x.status != JUMP_BACK_ANCHOR_OK)
				return 0;
			status = jump_back_anchor_remove(&x.h, (int32_t) v, buckets, removed, count);
			hasher_free(&x);
			if (status != JUMP_BACK_ANCHOR_OK)
				return 0;
		}
		else
			return 0;
		while (*p == ' ')
			p++;
	}
	return 1;
}

TEST(every_hash4j_vector)
{
	FILE	   *f = open_data("jumpbackanchorhash_hash4j.csv");
	char		line[8192];
	long		rows = 0,
				set_state_rows = 0,
				on_removed = 0;
	char		last_ops[4096] = "";

	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) == NULL)
		UNIT_FAIL("empty file");
	while (fgets(line, sizeof(line), f) != NULL)
	{
		anchor_row	row;
		hasher		x;
		int32_t		got,
					buckets,
					count;
		uint8_t		state[sizeof(row.state)];

		if (!parse_anchor_row(line, &row))
		{
			UNIT_FAIL("cannot parse line %ld: %s", rows + 2, line);
			continue;
		}
		rows++;

		/* the decoded list gives hash4j's bucket */
		hasher_make(&x, row.a, row.removed, row.count);
		CHECK_MSG(x.status == JUMP_BACK_ANCHOR_OK, "line %ld: state refused (%d)", rows + 1, x.status);
		if (x.status == JUMP_BACK_ANCHOR_OK)
		{
			got = jump_back_anchor_bucket(&x.h, (uint64_t) row.key);
			CHECK_MSG(got == row.bucket, "line %ld: a = %d, removed [%s...], key %" PRId64 ": %d, hash4j gives %d",
					  rows + 1, row.a, row.count ? "" : "none", row.key, got, row.bucket);
			if (jump_back_hash((uint64_t) row.key, row.a) != row.bucket)
				on_removed++;
			if (row.count == 0)
				CHECK_EQ_INT(got, jump_back_hash((uint64_t) row.key, row.a));
		}
		hasher_free(&x);

		/* the state bytes: hash4j's getState() of (a, removed), and back */
		CHECK_EQ_INT(row.state_len, 4 + 4 * (size_t) row.count);
		jump_back_anchor_state_put(state, row.a, row.removed, row.count);
		CHECK_MSG(memcmp(state, row.state, row.state_len) == 0, "line %ld: state bytes differ", rows + 1);
		CHECK(jump_back_anchor_state_header(row.state, row.state_len, &buckets, &count) == JUMP_BACK_ANCHOR_OK);
		CHECK_EQ_INT(buckets, row.a);
		CHECK_EQ_INT(count, row.count);
		for (int32_t i = 0; i < count && i < row.count; i++)
			CHECK_EQ_INT(jump_back_anchor_state_get(row.state, i), row.removed[i]);

		/* the calls that made the state make it here too */
		if (strcmp(row.ops, "setState") == 0)
			set_state_rows++;
		else if (strcmp(row.ops, last_ops) != 0)
		{
			int32_t		replayed[MAX_REMOVED_IN_ROW];

			CHECK_MSG(replay_ops(row.ops, &buckets, replayed, &count), "line %ld: ops %s fail", rows + 1, row.ops);
			CHECK_MSG(buckets == row.a && count == row.count &&
					  memcmp(replayed, row.removed, sizeof(int32_t) * (size_t) count) == 0,
					  "line %ld: ops %s give a = %d with %d removed, hash4j a = %d with %d",
					  rows + 1, row.ops, buckets, count, row.a, row.count);
			snprintf(last_ops, sizeof(last_ops), "%s", row.ops);
		}
	}
	fclose(f);
	printf("  %ld rows (%ld of setState-only states, %ld on a removed JumpBackHash bucket)\n",
		   rows, set_state_rows, on_removed);
	CHECK_MSG(rows == 3144, "%ld rows, expected 3144", rows);
	CHECK_MSG(set_state_rows > 100 && on_removed > 1000, "too few interesting rows");
}

/*
 * hash4j's setState on malformed and empty states: "ok" where it accepts the
 * state, then getBucket(0) gives a bucket or throws "No buckets available".
 */
TEST(every_hash4j_state_verdict)
{
	FILE	   *f = open_data("jumpbackanchorhash_hash4j_errors.csv");
	char		line[1024];
	long		rows = 0;

	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) == NULL)
		UNIT_FAIL("empty file");
	while (fgets(line, sizeof(line), f) != NULL)
	{
		char	   *fld[3];
		uint8_t		bytes[64];
		long		len;
		int32_t		buckets = 0,
					count = 0,
					removed[16];
		jump_back_anchor_status status;
		int			accepted = 0;

		if (split_fields(line, fld, 3) != 3 ||
			(len = parse_hex(fld[0], strlen(fld[0]), bytes, sizeof(bytes))) < 0)
		{
			UNIT_FAIL("cannot parse line %ld", rows + 2);
			continue;
		}
		rows++;
		status = jump_back_anchor_state_header(bytes, (size_t) len, &buckets, &count);
		if (status == JUMP_BACK_ANCHOR_OK && count <= 16)
		{
			hasher		x;

			for (int32_t i = 0; i < count; i++)
				removed[i] = jump_back_anchor_state_get(bytes, i);
			hasher_make(&x, buckets, removed, count);
			status = x.status;
			if (status == JUMP_BACK_ANCHOR_OK)
			{
				int32_t		got = jump_back_anchor_bucket(&x.h, 0);

				accepted = 1;
				if (strstr(fld[2], "No buckets") != NULL)
					CHECK_MSG(got == -1, "state %s: bucket %d, hash4j has none", fld[0], got);
				else
					CHECK_MSG(got == atoi(fld[2]), "state %s: bucket %d, hash4j %s", fld[0], got, fld[2]);
			}
			hasher_free(&x);
		}
		CHECK_MSG(accepted == (strcmp(fld[1], "ok") == 0), "state %s: status %d, hash4j says %s",
				  fld[0], status, fld[1]);
	}
	fclose(f);
	CHECK_EQ_INT(rows, 15);
}

/* ---- random states ---- */

/* A random stack of count distinct removed buckets out of buckets. */
static void
random_removals(int32_t buckets, int32_t *removed, int32_t count)
{
	for (int32_t i = 0; i < count;)
	{
		int32_t		b = random_below(buckets);
		int			seen = 0;

		for (int32_t j = 0; j < i && !seen; j++)
			seen = removed[j] == b;
		if (!seen)
			removed[i++] = b;
	}
}

/* A random number of buckets: mostly small, sometimes up to 2^31 - 1. */
static int32_t
random_buckets(void)
{
	switch (random_below(4))
	{
		case 0:
			return 1 + random_below(20);
		case 1:
			return 1 + random_below(300);
		case 2:
			return 1 + random_below(100000);
		default:
			return INT32_MAX - random_below(1000000);
	}
}

TEST(equals_jump_back_hash_when_nothing_is_removed)
{
	for (int i = 0; i < 2000; i++)
	{
		hasher		x;
		int32_t		buckets = random_buckets();

		hasher_make(&x, buckets, NULL, 0);
		CHECK(x.status == JUMP_BACK_ANCHOR_OK);
		for (int k = 0; k < 500; k++)
		{
			uint64_t	key = random_u64();

			CHECK_EQ_INT(jump_back_anchor_bucket(&x.h, key), jump_back_hash(key, buckets));
		}
		hasher_free(&x);
	}
}

/*
 * The compact structure (sorted ids, filter, entry links) gives the same as
 * the plain dense transcription, on 3000 random states of up to 300 buckets
 * with up to all but one removed, 300 keys each.
 */
TEST(agrees_with_the_plain_transcription)
{
	int32_t		removed[300];

	for (int i = 0; i < 3000; i++)
	{
		int32_t		buckets = 1 + random_below(i % 3 == 0 ? 20 : 300);
		int32_t		count = random_below(buckets + 1);
		hasher		x;
		plain_model p;

		random_removals(buckets, removed, count);
		hasher_make(&x, buckets, removed, count);
		CHECK(x.status == JUMP_BACK_ANCHOR_OK);
		plain_make(&p, buckets, removed, count);
		for (int k = 0; k < 300; k++)
		{
			uint64_t	key = random_u64();
			int32_t		got = jump_back_anchor_bucket(&x.h, key);

			CHECK_MSG(got == plain_bucket(&p, key), "a = %d, %d removed, key %" PRIu64 ": %d, plain %d",
					  buckets, count, key, got, plain_bucket(&p, key));
			CHECK(count == buckets ? got == -1 : got >= 0 && got < buckets &&
				  !jump_back_anchor_is_removed(&x.h, got));
		}
		for (int32_t b = 0; b < buckets; b++)
			CHECK_EQ_INT(jump_back_anchor_is_removed(&x.h, b), plain_position(&p, b) >= 0);
		plain_free(&p);
		hasher_free(&x);
	}
}

/*
 * The same with large views, where hash4j's uniformInt rejects draws often
 * (2^32 mod n is large): n = 3 * 2^29 rejects a quarter of them.
 */
TEST(agrees_with_the_plain_transcription_for_large_views)
{
	const int32_t bases[] = {3 << 29, (3 << 29) + 7, 5 << 28, INT32_MAX, 1 << 30, (1 << 30) + 1, (1 << 29) + 12345};
	int32_t		removed[40];
	long		rejecting = 0;

	for (int i = 0; i < 700; i++)
	{
		int32_t		buckets = bases[i % 7] - random_below(3);
		int32_t		count = 0;
		uint64_t	keys[40];
		hasher		x;
		plain_model p;

		/* remove the buckets of 30 random keys (in random order), and a few of the view's tail */
		for (int k = 0; k < 40; k++)
		{
			int32_t		b;
			int			seen = 0;

			keys[k] = random_u64();
			b = k < 30 ? jump_back_hash(keys[k], buckets) : buckets - 1 - random_below(5);
			for (int32_t j = 0; j < count; j++)
				seen |= removed[j] == b;
			if (!seen)
				removed[count++] = b;
		}
		hasher_make(&x, buckets, removed, count);
		CHECK(x.status == JUMP_BACK_ANCHOR_OK);
		plain_make(&p, buckets, removed, count);
		for (int k = 0; k < 40; k++)
		{
			int32_t		got = jump_back_anchor_bucket(&x.h, keys[k]);

			rejecting += k < 30;
			CHECK_MSG(got == plain_bucket(&p, keys[k]), "a = %d, %d removed, key %" PRIu64 ": %d, plain %d",
					  buckets, count, keys[k], got, plain_bucket(&p, keys[k]));
		}
		plain_free(&p);
		hasher_free(&x);
	}
	printf("  %ld keys on a removed bucket\n", rejecting);
	CHECK(rejecting > 1000);
}

/*
 * Minimal disruption on random states: remove a random bucket that is in the
 * set (by hash4j's rules, so also the last one or the only one left): only
 * the keys that were on it move, none lands on a removed bucket; add one
 * back: the state is the one before, every key is back where it was.
 */
TEST(removing_moves_only_the_removed_buckets_keys_and_adding_puts_them_back)
{
	enum
	{
		KEYS = 3000
	};
	static uint64_t keys[KEYS];
	static int32_t before[KEYS];
	int32_t		removed[202],
				again[202];
	long		moved = 0,
				states = 0;

	for (int i = 0; i < 1500; i++)
	{
		int32_t		buckets = i % 10 == 0 ? INT32_MAX - random_below(100) : 1 + random_below(i % 2 ? 200 : 12);
		int32_t		count = random_below((buckets < 200 ? buckets : 200));
		int32_t		new_buckets = buckets,
					new_count = count,
					victim,
					added;
		hasher		x,
					y,
					z;

		random_removals(buckets, removed, count);
		hasher_make(&x, buckets, removed, count);
		CHECK(x.status == JUMP_BACK_ANCHOR_OK);
		do
			victim = i % 7 == 0 && count == 0 ? buckets - 1 : random_below(buckets);
		while (jump_back_anchor_is_removed(&x.h, victim));
		for (int k = 0; k < KEYS; k++)
		{
			keys[k] = random_u64();
			before[k] = jump_back_anchor_bucket(&x.h, keys[k]);
		}
		memcpy(again, removed, sizeof(int32_t) * (size_t) count);
		CHECK(jump_back_anchor_remove(&x.h, victim, &new_buckets, again, &new_count) == JUMP_BACK_ANCHOR_OK);
		/* removing it again is refused */
		hasher_make(&y, new_buckets, again, new_count);
		CHECK(y.status == JUMP_BACK_ANCHOR_OK);
		if (new_buckets > 0)
		{
			int32_t		b2 = new_buckets,
						c2 = new_count;

			CHECK(jump_back_anchor_remove(&y.h, victim, &b2, again, &c2) == JUMP_BACK_ANCHOR_ENOTIN);
			CHECK(b2 == new_buckets && c2 == new_count);
			for (int k = 0; k < KEYS; k++)
			{
				int32_t		after = jump_back_anchor_bucket(&y.h, keys[k]);

				CHECK_MSG(after >= 0 && after < new_buckets && after != victim &&
						  !jump_back_anchor_is_removed(&y.h, after),
						  "a = %d, %d removed, key on %d", new_buckets, new_count, after);
				if (before[k] != victim)
					CHECK_MSG(after == before[k], "removing %d of a = %d (%d removed) moved a key from %d to %d",
							  victim, buckets, count, before[k], after);
				else
					moved++;
			}
		}
		else
			CHECK(buckets - count == 1 && new_count == 0);
		/* add it back, unless the set was emptied (hash4j forgets then) */
		if (new_buckets > 0)
		{
			CHECK(jump_back_anchor_add(&new_buckets, again, &new_count, &added) == JUMP_BACK_ANCHOR_OK);
			CHECK_EQ_INT(added, victim);
			CHECK(new_buckets == buckets && new_count == count &&
				  memcmp(again, removed, sizeof(int32_t) * (size_t) count) == 0);
			hasher_make(&z, new_buckets, again, new_count);
			for (int k = 0; k < KEYS; k++)
				CHECK_EQ_INT(jump_back_anchor_bucket(&z.h, keys[k]), before[k]);
			hasher_free(&z);
			states++;
		}
		hasher_free(&y);
		hasher_free(&x);
	}
	printf("  %ld random states, %ld keys moved, each from the removed bucket\n", states, moved);
	CHECK(states > 1000 && moved > 10000);
}

/*
 * Several removals in any order: with every permutation of the same removed
 * buckets, no key lands on a removed bucket, and all but one removed puts
 * every key on the survivor.
 */
TEST(no_key_lands_on_a_removed_bucket_in_any_order)
{
	int32_t		removed[50];

	for (int i = 0; i < 500; i++)
	{
		int32_t		buckets = 2 + random_below(60);
		int32_t		count = i % 5 == 0 ? buckets - 1 : 1 + random_below(buckets - 1);
		int32_t		survivor = -1;
		hasher		x;

		if (count > 50)
			count = 50;
		random_removals(buckets, removed, count);
		for (int32_t b = 0; b < buckets && survivor < 0 && count == buckets - 1; b++)
		{
			int			seen = 0;

			for (int32_t j = 0; j < count; j++)
				seen |= removed[j] == b;
			if (!seen)
				survivor = b;
		}
		for (int order = 0; order < 5; order++)
		{
			/* a random permutation of the same removals */
			for (int32_t j = count - 1; j > 0; j--)
			{
				int32_t		k = random_below(j + 1),
							t = removed[j];

				removed[j] = removed[k];
				removed[k] = t;
			}
			hasher_make(&x, buckets, removed, count);
			for (int k = 0; k < 400; k++)
			{
				int32_t		got = jump_back_anchor_bucket(&x.h, random_u64());

				CHECK(got >= 0 && got < buckets && !jump_back_anchor_is_removed(&x.h, got));
				if (survivor >= 0)
					CHECK_EQ_INT(got, survivor);
			}
			hasher_free(&x);
		}
	}
}

/*
 * Uniformity: the buckets of 200,000 random keys over the remaining buckets
 * of 60 random states (up to 1000 buckets, up to 90% removed), a chi-squared
 * test each at alpha = 0.001; the number of rejections must be one chance
 * gives with probability at least 1e-4.
 */
TEST(keys_spread_evenly_over_the_remaining_buckets)
{
	const int	states = 60,
				keys = 200000;
	const double alpha = 0.001;
	int			bound = stats_binomial_bound(states, alpha, 1e-4);
	int			rejections = 0;
	double		smallest_p = 1;
	int32_t    *removed = malloc(sizeof(int32_t) * 1000);
	long	   *counts = malloc(sizeof(long) * 1000);

	for (int s = 0; s < states; s++)
	{
		int32_t		buckets = 2 + random_below(999);
		int32_t		count = random_below(buckets * 9 / 10);
		int32_t		remaining = buckets - count;
		double		expected = (double) keys / remaining,
					chi2 = 0,
					p;
		hasher		x;

		random_removals(buckets, removed, count);
		hasher_make(&x, buckets, removed, count);
		memset(counts, 0, sizeof(long) * (size_t) buckets);
		for (int k = 0; k < keys; k++)
			counts[jump_back_anchor_bucket(&x.h, random_u64())]++;
		for (int32_t b = 0; b < buckets; b++)
			if (!jump_back_anchor_is_removed(&x.h, b))
				chi2 += (counts[b] - expected) * (counts[b] - expected) / expected;
			else
				CHECK_EQ_INT(counts[b], 0);
		p = remaining > 1 ? stats_chi2_upper_tail(chi2, remaining - 1) : 1.0;
		if (p < alpha)
			rejections++;
		if (p < smallest_p)
			smallest_p = p;
		hasher_free(&x);
	}
	free(removed);
	free(counts);
	printf("  %d chi-squared tests: %d rejected at alpha = %g (at most %d allowed); smallest p = %.2g\n",
		   states, rejections, alpha, bound, smallest_p);
	CHECK(rejections <= bound);
}

/* ---- invalid states, limits, memory, interrupts ---- */

TEST(invalid_states_are_refused)
{
	const int32_t dup[] = {3, 1, 4, 1};
	const int32_t out[] = {0, 5};
	const int32_t neg[] = {-1};
	hasher		x;
	int32_t		buckets,
				count;
	uint8_t		bytes[8] = {0};

	hasher_make(&x, -1, NULL, 0);
	CHECK(x.status == JUMP_BACK_ANCHOR_EBUCKETS);
	hasher_free(&x);
	hasher_make(&x, 5, dup, 4);
	CHECK(x.status == JUMP_BACK_ANCHOR_EDUPLICATE);
	CHECK(x.problem.bucket == 1 && x.problem.position == 1 && x.problem.other_position == 3);
	hasher_free(&x);
	hasher_make(&x, 5, out, 2);
	CHECK(x.status == JUMP_BACK_ANCHOR_ERANGE && x.problem.bucket == 5 && x.problem.position == 1);
	hasher_free(&x);
	hasher_make(&x, 5, neg, 1);
	CHECK(x.status == JUMP_BACK_ANCHOR_ERANGE && x.problem.bucket == -1 && x.problem.position == 0);
	hasher_free(&x);
	hasher_make(&x, 0, out, 1);
	CHECK(x.status == JUMP_BACK_ANCHOR_ERANGE);
	hasher_free(&x);
	CHECK(jump_back_anchor_init(&x.h, 5, out, JUMP_BACK_ANCHOR_MAX_REMOVED + 1, NULL, NULL, NULL) ==
		  JUMP_BACK_ANCHOR_ELIMIT);

	/* the byte form */
	for (size_t len = 0; len < 8; len++)
		CHECK((jump_back_anchor_state_header(bytes, len, &buckets, &count) == JUMP_BACK_ANCHOR_OK) ==
			  (len == 4));
	bytes[3] = 0x80;
	CHECK(jump_back_anchor_state_header(bytes, 4, &buckets, &count) == JUMP_BACK_ANCHOR_EBUCKETS);
	CHECK(jump_back_anchor_state_header(bytes, 4 + 4 * ((size_t) JUMP_BACK_ANCHOR_MAX_REMOVED + 1),
										&buckets, &count) == JUMP_BACK_ANCHOR_EBUCKETS);
	bytes[3] = 0;
	CHECK(jump_back_anchor_state_header(bytes, 4 + 4 * (size_t) JUMP_BACK_ANCHOR_MAX_REMOVED,
										&buckets, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(count == JUMP_BACK_ANCHOR_MAX_REMOVED);
	CHECK(jump_back_anchor_state_header(bytes, 4 + 4 * ((size_t) JUMP_BACK_ANCHOR_MAX_REMOVED + 1),
										&buckets, &count) == JUMP_BACK_ANCHOR_ELIMIT);
}

TEST(add_and_remove_follow_hash4j_rules)
{
	int32_t		removed[4];
	int32_t		buckets = 0,
				count = 0,
				added;
	hasher		x;

	/* adding to the empty set grows it */
	CHECK(jump_back_anchor_add(&buckets, removed, &count, &added) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 1 && count == 0 && added == 0);
	buckets = 5;
	/* the last bucket with nothing removed shrinks */
	hasher_make(&x, buckets, removed, count);
	CHECK(jump_back_anchor_remove(&x.h, 4, &buckets, removed, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 4 && count == 0);
	hasher_free(&x);
	/* out of range: refused, nothing changes */
	hasher_make(&x, buckets, removed, count);
	CHECK(jump_back_anchor_remove(&x.h, 4, &buckets, removed, &count) == JUMP_BACK_ANCHOR_ENOTIN);
	CHECK(jump_back_anchor_remove(&x.h, -1, &buckets, removed, &count) == JUMP_BACK_ANCHOR_ENOTIN);
	CHECK(buckets == 4 && count == 0);
	/* any other is pushed */
	CHECK(jump_back_anchor_remove(&x.h, 1, &buckets, removed, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 4 && count == 1 && removed[0] == 1);
	hasher_free(&x);
	/* then the last one too is pushed */
	hasher_make(&x, buckets, removed, count);
	CHECK(jump_back_anchor_remove(&x.h, 1, &buckets, removed, &count) == JUMP_BACK_ANCHOR_ENOTIN);
	CHECK(jump_back_anchor_remove(&x.h, 3, &buckets, removed, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 4 && count == 2 && removed[1] == 3);
	hasher_free(&x);
	hasher_make(&x, buckets, removed, count);
	CHECK(jump_back_anchor_remove(&x.h, 0, &buckets, removed, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 4 && count == 3);
	hasher_free(&x);
	/* the only bucket left: the set is emptied */
	hasher_make(&x, buckets, removed, count);
	CHECK(jump_back_anchor_remove(&x.h, 2, &buckets, removed, &count) == JUMP_BACK_ANCHOR_OK);
	CHECK(buckets == 0 && count == 0);
	hasher_free(&x);
	/* adds take back the most recent removal first */
	buckets = 4;
	count = 3;
	CHECK(jump_back_anchor_add(&buckets, removed, &count, &added) == JUMP_BACK_ANCHOR_OK);
	CHECK(added == 0 && count == 2 && buckets == 4);
	CHECK(jump_back_anchor_add(&buckets, removed, &count, &added) == JUMP_BACK_ANCHOR_OK);
	CHECK(added == 3 && count == 1);
	/* growing past INT32_MAX is refused */
	buckets = INT32_MAX;
	count = 0;
	CHECK(jump_back_anchor_add(&buckets, removed, &count, &added) == JUMP_BACK_ANCHOR_EFULL);
	CHECK(buckets == INT32_MAX);
}

static long interrupt_checks;

static int
count_check(void *arg)
{
	(void) arg;
	interrupt_checks++;
	return 0;
}

static const core_interrupts counted_interrupts = {count_check, NULL};

/*
 * Removed ids near 2^31 cost memory for their number only; a state with the
 * most removals allowed, all near 2^31, is decoded with interrupt checks and
 * answers like the plain model on a key sample (checked by membership here,
 * the plain model would need 2^31 entries).
 */
TEST(large_ids_and_the_largest_state)
{
	const int32_t near_top[] = {INT32_MAX - 1, INT32_MAX - 2, INT32_MAX - 3, 5};
	int32_t    *removed = malloc(sizeof(int32_t) * JUMP_BACK_ANCHOR_MAX_REMOVED);
	hasher		x;
	size_t		size = jump_back_anchor_memory_size(4);

	CHECK_MSG(size < 256, "4 removals need %zu bytes", size);
	hasher_make(&x, INT32_MAX, near_top, 4);
	CHECK(x.status == JUMP_BACK_ANCHOR_OK);
	for (int k = 0; k < 100000; k++)
	{
		int32_t		got = jump_back_anchor_bucket(&x.h, random_u64());

		CHECK(got >= 0 && got < INT32_MAX - 3 && got != 5);
	}
	hasher_free(&x);

	/* the largest state: 2^20 distinct ids in the top 2^21 */
	for (int32_t i = 0; i < JUMP_BACK_ANCHOR_MAX_REMOVED; i++)
		removed[i] = INT32_MAX - 1 - 2 * i - (int32_t) (random_u64() & 1);
	for (int32_t i = JUMP_BACK_ANCHOR_MAX_REMOVED - 1; i > 0; i--)
	{
		int32_t		k = random_below(i + 1),
					t = removed[i];

		removed[i] = removed[k];
		removed[k] = t;
	}
	size = jump_back_anchor_memory_size(JUMP_BACK_ANCHOR_MAX_REMOVED);
	CHECK_MSG(size <= (size_t) JUMP_BACK_ANCHOR_MAX_REMOVED * JUMP_BACK_ANCHOR_BYTES_PER_REMOVED,
			  "%zu bytes", size);
	x.memory = malloc(size);
	interrupt_checks = 0;
	x.status = jump_back_anchor_init(&x.h, INT32_MAX, removed, JUMP_BACK_ANCHOR_MAX_REMOVED, x.memory,
									 &counted_interrupts, NULL);
	CHECK(x.status == JUMP_BACK_ANCHOR_OK);
	printf("  2^20 removals decoded into %zu bytes with %ld interrupt checks\n", size, interrupt_checks);
	CHECK(interrupt_checks >= 16);
	for (int k = 0; k < 100000; k++)
	{
		int32_t		got = jump_back_anchor_bucket(&x.h, random_u64());

		CHECK(got >= 0 && !jump_back_anchor_is_removed(&x.h, got));
	}
	for (int32_t i = 0; i < 1000; i++)
		CHECK(jump_back_anchor_is_removed(&x.h, removed[random_below(JUMP_BACK_ANCHOR_MAX_REMOVED)]));
	hasher_free(&x);
	free(removed);
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		data_dir = argv[1];
	RUN(every_hash4j_vector);
	RUN(every_hash4j_state_verdict);
	RUN(equals_jump_back_hash_when_nothing_is_removed);
	RUN(agrees_with_the_plain_transcription);
	RUN(agrees_with_the_plain_transcription_for_large_views);
	RUN(removing_moves_only_the_removed_buckets_keys_and_adding_puts_them_back);
	RUN(no_key_lands_on_a_removed_bucket_in_any_order);
	RUN(keys_spread_evenly_over_the_remaining_buckets);
	RUN(invalid_states_are_refused);
	RUN(add_and_remove_follow_hash4j_rules);
	RUN(large_ids_and_the_largest_state);
	return unit_report();
}
