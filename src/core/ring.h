/*
 * src/core/ring.h
 *		Partition ring: 2^p partitions, each with R replicas placed on
 *		weighted nodes in distinct failure domains (regions > zones > nodes).
 *
 * This is the pure core: plain C99, no PostgreSQL header.  It never allocates
 * behind the caller's back (every allocation goes through ring_env), reports
 * invalid arguments with a status code and a message written into a caller's
 * ring_error, and calls ring_env.progress from its long loops so that a server
 * can answer query cancel.
 *
 * The encoded form (what the SQL type stores after its varlena header) is
 * fixed-width little-endian and identical on every platform:
 *
 *	offset	size	field
 *	0		4		magic "PRNG"
 *	4		4		format version (1)
 *	8		8		fingerprint: ring_hash64 of bytes 16..end
 *	16		4		part_power p (1..24)
 *	20		4		replicas R
 *	24		4		node count n (1..65535)
 *	28		4		reserved, zero
 *	32		8		seed the ring was built or last rebalanced with
 *	40		24*n	nodes sorted by id: int32 id, int32 zone, int32 region,
 *					uint32 zero, float64 weight (IEEE 754 bits)
 *	...		2*R*2^p	assignment, replica-major: uint16 node index of replica
 *					r of partition x at [r * 2^p + x]
 */
#ifndef SUBSETTING_CORE_RING_H
#define SUBSETTING_CORE_RING_H

#include <stddef.h>
#include <stdint.h>

#define RING_MIN_PART_POWER 1
#define RING_MAX_PART_POWER 24
#define RING_MAX_NODES 65535
/* replicas * 2^part_power may not exceed this (128 MiB of assignment) */
#define RING_MAX_SLOTS ((uint64_t) 1 << 26)

#define RING_HEADER_SIZE 40
#define RING_NODE_SIZE 24
#define RING_FORMAT_VERSION 1

typedef enum ring_status
{
	RING_OK = 0,
	RING_EINVAL,				/* invalid argument */
	RING_ELIMIT,				/* the ring would be too large */
	RING_ENOMEM,				/* the allocator returned NULL */
	RING_ECANCELED,				/* the progress callback asked to stop */
	RING_EFORMAT				/* malformed encoded or text value */
} ring_status;

typedef struct ring_error
{
	ring_status code;
	char		message[256];
} ring_error;

/*
 * How the core gets memory and reports progress.  progress may be NULL; if it
 * returns nonzero the operation stops, frees what it allocated and returns
 * RING_ECANCELED.  (A server's callback may also not return at all.)
 */
typedef struct ring_env
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*free) (void *ctx, void *ptr);
	int			(*progress) (void *ctx);
	void	   *ctx;
} ring_env;

typedef struct ring_node
{
	int32_t		id;
	int32_t		zone;
	int32_t		region;
	double		weight;
} ring_node;

/* A decoded ring.  Everything in it has been validated. */
typedef struct ring
{
	uint32_t	part_power;
	uint32_t	replicas;
	uint32_t	node_count;
	int64_t		seed;
	uint64_t	fingerprint;
	ring_node  *nodes;			/* node_count entries, sorted by id */
	uint16_t   *assignment;		/* replicas << part_power entries */
} ring;

/* The header fields, readable from the first RING_HEADER_SIZE bytes. */
typedef struct ring_header
{
	uint64_t	fingerprint;
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
extern size_t ring_encoded_size(uint32_t part_power, uint32_t replicas,
								 uint32_t node_count);

/* Write r into buf (ring_encoded_size bytes); sets r->fingerprint. */
extern void ring_encode(ring *r, uint8_t *buf);

/* Read the header of an encoded ring (len >= RING_HEADER_SIZE).  Checks the
 * magic and version only. */
extern ring_status ring_read_header(const uint8_t *buf, size_t len,
									ring_header *h, ring_error *err);

/* Validate everything and decode.  On error nothing is left allocated. */
extern ring_status ring_decode(const ring_env *env, const uint8_t *buf,
							   size_t len, ring *out, ring_error *err);

/*
 * Validate a decoded ring in memory (what ring_decode checks after reading
 * the bytes, except the fingerprint).  Used by the JSON reader and the tests.
 */
extern ring_status ring_validate(const ring_env *env, const ring *r,
								 ring_error *err);

/* ---- text form (JSON) ---- */

/* Writes up to cap bytes (no terminating NUL) and returns the full length. */
extern size_t ring_to_json(const ring *r, char *buf, size_t cap);

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
	return r->assignment[((size_t) replica << r->part_power) + partition];
}

/* Index of the node with this id, or -1. */
extern int32_t ring_find_node(const ring *r, int32_t id);

/* stats has r->node_count entries */
extern ring_status ring_core_node_stats(const ring_env *env, const ring *r,
								   ring_node_stat *stats, ring_error *err);

/*
 * Partition-replicas placed in a failure domain of this tier that already
 * holds an earlier replica of the same partition (the dispersion numerator;
 * divide by R * 2^p).
 */
extern ring_status ring_dispersion_count(const ring_env *env, const ring *r,
										 ring_tier tier, uint64_t *count,
										 ring_error *err);

#endif							/* SUBSETTING_CORE_RING_H */
