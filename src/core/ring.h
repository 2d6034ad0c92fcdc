/*
 * src/core/ring.h
 *		Partition ring: 2^p partitions, each with R replicas placed on
 *		weighted nodes in distinct failure domains (regions > zones > nodes).
 *
 * This is the pure core: plain C99, no PostgreSQL header.  It never allocates
 * behind the caller's back (every allocation goes through ring_env), reports
 * every failure in a caller's ring_error: a status code, the exact problem
 * and the facts its message needs, such as the bad value (the convention is
 * in core/core.h; the skin words the message), and calls
 * ring_env.interrupts (core/interrupts.h) from its long loops so that a
 * server can answer query cancel.
 *
 * The encoded form (what the SQL type stores after its varlena header) is
 * fixed-width little-endian and identical on every platform.  Format
 * version 2 (written since 1.1):
 *
 *	offset	size	field
 *	0		4		magic "PRNG"
 *	4		4		format version (2)
 *	8		32		digest: SHA-256 of bytes 40..end
 *	40		4		part_power p (1..24)
 *	44		4		replicas R
 *	48		4		node count n (1..65535)
 *	52		4		reserved, zero
 *	56		8		seed the ring was built or last rebalanced with
 *	64		24*n	nodes sorted by id: int32 id, int32 zone, int32 region,
 *					uint32 zero, float64 weight (IEEE 754 bits)
 *	...		2*R*2^p	assignment, replica-major: uint16 node index of replica
 *					r of partition x at [r * 2^p + x]
 *
 * The digest identifies the ring: two values with the same digest and size
 * hold the same ring (finding two that do not is finding a SHA-256
 * collision), so a cache of decoded rings may be keyed by it, read from the
 * header alone.  The core computes no digest itself: ring_env.digest does
 * (the server uses PostgreSQL's SHA-256, the tests OpenSSL's).
 *
 * Format version 1 (written by 1.0) is still read: a 40-byte header with
 * magic, version (1), at 8 a 64-bit fingerprint (ring_hash64 of bytes 16..end,
 * seed 1), then part_power, replicas, node count, reserved and seed at 16..40,
 * then nodes and assignment as above.  Its fingerprint detects accidents, not
 * attacks (rings with equal fingerprints are easily made): it must never
 * identify a ring.  (ring_rebalance seeds its choices from it, so the
 * decoder still computes it for either format: see ring.fingerprint.)
 */
#ifndef SUBSETTING_CORE_RING_H
#define SUBSETTING_CORE_RING_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

#define RING_MIN_PART_POWER 1
#define RING_MAX_PART_POWER 24
#define RING_MAX_NODES 65535
/* replicas * 2^part_power may not exceed this (128 MiB of assignment) */
#define RING_MAX_SLOTS ((uint64_t) 1 << 26)

#define RING_HEADER_SIZE 64		/* format version 2 */
#define RING_V1_HEADER_SIZE 40	/* format version 1 */
#define RING_NODE_SIZE 24
#define RING_FORMAT_VERSION 2	/* the format written */
#define RING_FORMAT_VERSION_1 1 /* the format of 1.0, still read */
#define RING_DIGEST_SIZE 32
#define RING_DIGEST_OFFSET 8	/* where the digest is */
#define RING_DIGESTED_FROM 40	/* the digest covers the bytes from here on */

typedef enum ring_status
{
	RING_OK = 0,
	RING_EINVAL,				/* invalid argument */
	RING_ELIMIT,				/* the ring would be too large */
	RING_ENOMEM,				/* the allocator returned NULL */
	RING_ECANCELED,				/* the interrupt check asked to stop */
	RING_EFORMAT,				/* malformed encoded or text value */
	RING_EINTERNAL				/* a bug: an invariant of the core failed */
} ring_status;

/*
 * What exactly was wrong, for the skin to word the message.  Beside each
 * problem, the facts (ring_facts) it sets; the others are zero.
 */
typedef enum ring_problem
{
	RING_NO_PROBLEM = 0,

	/*
	 * Sizes and node tables: arguments (RING_EINVAL, RING_ELIMIT), or the
	 * same found in a ring value (RING_EFORMAT and in_value set).
	 */
	RING_PART_POWER_RANGE,		/* part_power */
	RING_REPLICAS_TOO_FEW,		/* replicas */
	RING_NO_NODES,
	RING_TOO_MANY_NODES,		/* node_count, limit */
	RING_TOO_MANY_SLOTS,		/* part_power, replicas, slots, limit */
	RING_WEIGHT_NAN,			/* node_id */
	RING_WEIGHT_INFINITE,		/* node_id, weight */
	RING_WEIGHT_NEGATIVE,		/* node_id, weight */
	RING_WEIGHTS_ALL_ZERO,
	RING_TOO_FEW_WEIGHTED_NODES,	/* replicas, weighted_nodes */
	RING_DUPLICATE_NODE_ID,		/* node_id */

	/* the binary form (RING_EFORMAT) */
	RING_VALUE_TOO_SHORT,		/* length */
	RING_BAD_MAGIC,
	RING_UNSUPPORTED_VERSION,	/* format_version */
	RING_HEADER_TOO_SHORT,		/* length, needed (the header's size) */
	RING_LENGTH_MISMATCH,		/* length, needed, part_power, replicas,
								 * node_count */
	RING_HEADER_RESERVED_NOT_ZERO,
	RING_NODE_RESERVED_NOT_ZERO,	/* node_index */
	RING_FINGERPRINT_MISMATCH,
	RING_DIGEST_MISMATCH,
	RING_NODE_TABLE_DUPLICATE,	/* node_id: the stored node table has an id
								 * twice */
	RING_NODE_TABLE_UNSORTED,	/* node_id: ... is not in increasing order */

	/* the assignment of a ring value, binary or text (RING_EFORMAT) */
	RING_NODE_INDEX_RANGE,		/* replica, partition, node_index, node_count */
	RING_REPLICAS_ON_ONE_NODE,	/* partition, node_id */

	/* the text form (RING_EFORMAT, but RING_TEXT_BUFFER_TOO_SMALL) */
	RING_TEXT_SYNTAX,			/* position, syntax, and field for some */
	RING_TEXT_KEYS_MISSING,
	RING_TEXT_ASSIGNMENT_SHAPE, /* part_power, replicas, rows, row_length */
	RING_TEXT_UNKNOWN_NODE,		/* replica, partition, node_id */
	RING_TEXT_BUFFER_TOO_SMALL, /* RING_EINVAL: needed (the text's length),
								 * length (the buffer's) */

	/* no fault of the input */
	RING_OUT_OF_MEMORY,			/* RING_ENOMEM */
	RING_CANCELED,				/* RING_ECANCELED: interrupts said stop */
	RING_DIGEST_FAILED,			/* RING_ECANCELED: env->digest said stop */
	RING_NO_DIGEST_FUNCTION,	/* RING_EINTERNAL: env->digest is NULL */
	RING_BUILDER_BROKEN,		/* RING_EINTERNAL: the builder's invariant */
	RING_NO_RECEIVER,			/* RING_EINTERNAL: no node can take a replica */
	RING_ARENA_FULL				/* RING_EINTERNAL: limit (allocations) */
} ring_problem;

/* The problems of the input are those from 1 to this one. */
#define RING_LAST_INPUT_PROBLEM RING_TEXT_UNKNOWN_NODE

/* What the text parser found wrong at a position (RING_TEXT_SYNTAX). */
typedef enum ring_syntax
{
	RING_SYNTAX_NONE = 0,
	RING_SYNTAX_RING_START,		/* no "{" to start the ring */
	RING_SYNTAX_RING_KEY,		/* a key a ring does not have */
	RING_SYNTAX_RING_KEY_TWICE,
	RING_SYNTAX_RING_NEXT,		/* no "," or "}" */
	RING_SYNTAX_TRAILING_TEXT,	/* text after the ring */
	RING_SYNTAX_KEY_START,		/* no quoted key */
	RING_SYNTAX_KEY_INVALID,	/* a key with an escape, or too long */
	RING_SYNTAX_UNTERMINATED_STRING,
	RING_SYNTAX_COLON,			/* no ":" after a key */
	RING_SYNTAX_INTEGER_EXPECTED,	/* field */
	RING_SYNTAX_NOT_INTEGER,	/* field: a fraction or an exponent */
	RING_SYNTAX_OUT_OF_RANGE,	/* field */
	RING_SYNTAX_NUMBER_EXPECTED,	/* field */
	RING_SYNTAX_NODES_START,	/* no "[" to start the nodes */
	RING_SYNTAX_NODES_NEXT,		/* no "," or "]" in the nodes */
	RING_SYNTAX_TOO_MANY_NODES,
	RING_SYNTAX_NODE_START,		/* no "{" to start a node */
	RING_SYNTAX_NODE_KEY,		/* a key a node does not have */
	RING_SYNTAX_NODE_KEY_TWICE,
	RING_SYNTAX_NODE_NEXT,		/* no "," or "}" in a node */
	RING_SYNTAX_NODE_KEYS_MISSING,	/* a node without id, zone or weight */
	RING_SYNTAX_ASSIGNMENT_START,	/* no "[" to start the assignment */
	RING_SYNTAX_ASSIGNMENT_NEXT,	/* no "," or "]" in the assignment */
	RING_SYNTAX_ASSIGNMENT_TOO_LARGE,
	RING_SYNTAX_ROW_START,		/* no "[" to start a replica's row */
	RING_SYNTAX_ROW_NEXT,		/* no "," or "]" in a replica's row */
	RING_SYNTAX_ROW_TOO_LONG,
	RING_SYNTAX_ROWS_DIFFER		/* rows of different lengths */
} ring_syntax;

/* Which value of the text a number was read for (RING_TEXT_SYNTAX). */
typedef enum ring_field
{
	RING_FIELD_NONE = 0,
	RING_FIELD_PART_POWER,
	RING_FIELD_REPLICAS,
	RING_FIELD_SEED,
	RING_FIELD_NODE_ID,			/* a node's "id" */
	RING_FIELD_ZONE,
	RING_FIELD_REGION,
	RING_FIELD_WEIGHT,
	RING_FIELD_ASSIGNED_NODE	/* a node id in the assignment */
} ring_field;

/* The facts a message needs; which ones a problem sets is said above. */
typedef struct ring_facts
{
	int32_t		node_id;
	double		weight;
	uint32_t	node_index;		/* into the node table */
	uint32_t	node_count;
	uint32_t	weighted_nodes; /* nodes of positive weight */
	uint32_t	part_power;
	uint32_t	replicas;
	uint32_t	partition;
	uint32_t	replica;
	uint32_t	format_version;
	uint32_t	rows;			/* of the assignment in a text */
	uint32_t	row_length;
	uint64_t	slots;			/* replicas << part_power */
	uint64_t	limit;			/* the limit exceeded */
	uint64_t	length;			/* bytes of a value, or of a buffer */
	uint64_t	needed;			/* bytes it needs */
	uint64_t	position;		/* in a text, in characters from 1 */
	ring_syntax syntax;
	ring_field	field;
} ring_facts;

/*
 * What failed: the kind (code), what exactly (problem) and the facts; no
 * message, which is the skin's to write.  in_value is set when a problem of
 * sizes or nodes was found in a ring value (binary or text) rather than in
 * arguments: the message then starts "invalid ring: ".
 */
typedef struct ring_error
{
	ring_status code;
	ring_problem problem;
	int			in_value;
	ring_facts	facts;
} ring_error;

/* The problem's name as an identifier ("RING_WEIGHT_NAN"), for tests. */
extern const char *ring_problem_name(ring_problem problem);

/*
 * How the core gets memory and answers query cancel.  interrupts (see
 * core/interrupts.h; may be NULL) is called from the long loops; if its
 * check returns nonzero the operation stops, frees what it allocated and
 * returns RING_ECANCELED.  (A server's check does not return then.)
 */
typedef struct ring_env
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*free) (void *ctx, void *ptr);
	const core_interrupts *interrupts;

	/*
	 * SHA-256 of len bytes into out (RING_DIGEST_SIZE bytes); returns 0, or
	 * nonzero if it failed or was canceled.  Needed to encode and to decode;
	 * a large ring is megabytes, so a server's digest should answer cancel.
	 */
	int			(*digest) (void *ctx, const uint8_t *data, size_t len,
						   uint8_t *out);
	void	   *ctx;
} ring_env;

typedef struct ring_node
{
	int32_t		id;
	int32_t		zone;
	int32_t		region;
	double		weight;
} ring_node;

/*
 * A decoded ring.  Everything in it has been validated.  The assignment is
 * replica-major ([r * 2^p + x]) unless partition_major is set ([x * R + r]:
 * the R replicas of a partition side by side, as a lookup cache keeps it);
 * read it with ring_slot, which knows both.  The builder and the encoder
 * write and take replica-major rings.
 */
typedef struct ring
{
	uint32_t	part_power;
	uint32_t	replicas;
	uint32_t	node_count;
	int64_t		seed;
	uint32_t	format_version; /* of the value it was decoded from, or 0 */
	/*
	 * 1.0's fingerprint: ring_hash64 of the format 1 bytes 16..end (= the
	 * format 2 bytes 40..end), set by ring_decode and ring_encode.  It
	 * identifies nothing, but the rebalancer seeds its choices from it, so
	 * it stays for the rings ring_rebalance makes to stay the same.
	 */
	uint64_t	fingerprint;
	uint8_t		digest[RING_DIGEST_SIZE];	/* set by ring_encode, and by
											 * ring_decode of format 2 */
	int			partition_major;
	ring_node  *nodes;			/* node_count entries, sorted by id */
	uint16_t   *assignment;		/* replicas << part_power entries */
} ring;

/*
 * The header fields, readable from the first RING_HEADER_SIZE bytes (or
 * RING_V1_HEADER_SIZE bytes of a format 1 value).
 */
typedef struct ring_header
{
	uint32_t	format_version; /* 1 or 2 */
	uint32_t	header_size;	/* RING_V1_HEADER_SIZE or RING_HEADER_SIZE */
	uint64_t	fingerprint;	/* format 1 */
	uint8_t		digest[RING_DIGEST_SIZE];	/* format 2 */
	uint32_t	part_power;
	uint32_t	replicas;
	uint32_t	node_count;
	int64_t		seed;
} ring_header;

/* per-node statistics (see ring_node_stats) */
typedef struct ring_node_stat
{
	int64_t		held;			/* partition-replicas the node holds */
	int64_t		quota;			/* what the builder aims for (integer) */
	double		wanted;			/* exact weighted share R * 2^p * w / W */
	int64_t		primaries;		/* partitions whose replica 0 it holds */
} ring_node_stat;

typedef enum ring_tier
{
	RING_TIER_REGION = 0,
	RING_TIER_ZONE = 1,
	RING_TIER_NODE = 2
} ring_tier;

/* ---- hashing ---- */
extern uint64_t ring_hash64(const uint8_t *data, size_t len, uint64_t seed);

/* ---- building ---- */

/*
 * Check node arguments and the sizes: ids unique, weights finite and >= 0,
 * sum positive, part_power in range, 1 <= replicas <= nodes of positive
 * weight, replicas << part_power within RING_MAX_SLOTS.  No allocation.
 */
extern ring_status ring_check_args(const ring_node *nodes, uint32_t n,
								   uint32_t part_power, uint32_t replicas,
								   ring_error *err);

/* Build a new ring.  out is filled (its arrays allocated through env). */
extern ring_status ring_core_build(const ring_env *env, const ring_node *nodes,
							  uint32_t n, uint32_t part_power,
							  uint32_t replicas, int64_t seed, ring *out,
							  ring_error *err);

/*
 * Rebalance old for a new node table (same part power and replicas).  Nodes
 * are matched by id; nodes missing from the new table are removed.  Moves at
 * most one replica of any partition, except replicas on removed nodes; a
 * partition that had a replica on a removed node gets no other move.
 */
extern ring_status ring_core_rebalance(const ring_env *env, const ring *old,
								  const ring_node *nodes, uint32_t n,
								  int64_t seed, ring *out, ring_error *err);

extern void ring_free(const ring_env *env, ring *r);

/*
 * Integer quotas (partition-replicas per node, in the ring's node order) for
 * a ring's node table.  quota has r->node_count entries.
 */
extern ring_status ring_quotas(const ring_env *env, const ring *r,
							   int64_t *quota, ring_error *err);

/* ---- encoding ---- */

/* Size of the encoded ring (format 2; ring_encoded_size_v1: format 1). */
extern size_t ring_encoded_size(uint32_t part_power, uint32_t replicas,
								 uint32_t node_count);
extern size_t ring_encoded_size_v1(uint32_t part_power, uint32_t replicas,
								   uint32_t node_count);

/*
 * Write r (replica-major) into buf (ring_encoded_size bytes) in format 2,
 * with its digest (env->digest), which is also copied to r->digest.
 */
extern ring_status ring_encode(const ring_env *env, ring *r, uint8_t *buf,
							   ring_error *err);

/* Write r in format 1, as 1.0 did (tests of reading old values). */
extern void ring_encode_v1(ring *r, uint8_t *buf);

/*
 * Read the header of an encoded ring: checks the magic and the version, and
 * that len covers the header of that version.  Nothing else.
 */
extern ring_status ring_read_header(const uint8_t *buf, size_t len,
									ring_header *h, ring_error *err);

/*
 * Validate everything (a format 2 digest with env->digest, a format 1
 * fingerprint) and decode, replica-major or (partition_major) not.  On error
 * nothing is left allocated.
 */
extern ring_status ring_decode(const ring_env *env, const uint8_t *buf,
							   size_t len, ring *out, ring_error *err);
extern ring_status ring_decode_as(const ring_env *env, const uint8_t *buf,
								  size_t len, int partition_major, ring *out,
								  ring_error *err);

/*
 * Validate a decoded ring in memory (what ring_decode checks after reading
 * the bytes, except the fingerprint).  Used by the JSON reader and the tests.
 */
extern ring_status ring_validate(const ring_env *env, const ring *r,
								 ring_error *err);

/* ---- text form (JSON) ---- */

/*
 * The length of the text form (buf NULL), or the text form written into buf
 * (no terminating NUL; cap must be at least the length).  *len receives the
 * length.  Calls env->interrupts (the rest of env is not used).
 */
extern ring_status ring_to_json(const ring_env *env, const ring *r, char *buf,
								size_t cap, size_t *len, ring_error *err);

extern ring_status ring_from_json(const ring_env *env, const char *text,
								  size_t len, ring *out, ring_error *err);

/* ---- lookups and inspection ---- */
static inline uint32_t
ring_partition_of(const ring *r, uint64_t key)
{
	return (uint32_t) (key >> (64 - r->part_power));
}

static inline uint16_t
ring_slot(const ring *r, uint32_t replica, uint32_t partition)
{
	if (r->partition_major)
		return r->assignment[(size_t) partition * r->replicas + replica];
	return r->assignment[((size_t) replica << r->part_power) + partition];
}

/* The slot at replica-major position s (= replica * 2^p + partition). */
static inline uint16_t
ring_slot_at(const ring *r, size_t s)
{
	if (r->partition_major)
		return ring_slot(r, (uint32_t) (s >> r->part_power),
						 (uint32_t) (s & (((size_t) 1 << r->part_power) - 1)));
	return r->assignment[s];
}

/* Index of the node with this id, or -1. */
extern int32_t ring_find_node(const ring *r, int32_t id);

/* stats has r->node_count entries */
extern ring_status ring_core_node_stats(const ring_env *env, const ring *r,
								   ring_node_stat *stats, ring_error *err);

/*
 * A node's balance: how far what it holds is from its exact weighted share,
 * in percent of that share, 100 * (held - wanted) / wanted.  Returns 0 and
 * leaves *balance alone for a node that wants nothing (weight 0).
 */
static inline int
ring_node_balance(const ring_node_stat *s, double *balance)
{
	if (!(s->wanted > 0))
		return 0;
	*balance = 100.0 * ((double) s->held - s->wanted) / s->wanted;
	return 1;
}

/* The largest absolute balance of the nodes (0 for none). */
extern double ring_max_balance(const ring_node_stat *stats, uint32_t n);

/*
 * The failure domains of a ring's nodes, numbered densely in the order of
 * their ids (ring_domains.c): what dispersion, ring_info and handoff lookups
 * need besides the assignment.  Depends only on the node table, so a server
 * computes it once per ring and keeps it beside the decoded ring.
 */
typedef struct ring_domains
{
	uint32_t	node_count;
	uint32_t	regions;		/* distinct regions */
	uint32_t	zones;			/* distinct (region, zone) pairs */
	uint32_t   *region_of;		/* node index -> region number */
	uint32_t   *zone_of;		/* node index -> zone number */
} ring_domains;

extern ring_status ring_domains_build(const ring_env *env, const ring *r,
									  ring_domains *out, ring_error *err);
extern void ring_domains_free(const ring_env *env, ring_domains *d);

/*
 * Partition-replicas placed in a failure domain of this tier that already
 * holds an earlier replica of the same partition (the dispersion numerator;
 * divide by R * 2^p).
 */
extern ring_status ring_dispersion_count(const ring_env *env, const ring *r,
										 ring_tier tier, uint64_t *count,
										 ring_error *err);

#endif							/* SUBSETTING_CORE_RING_H */
