/*
 * src/core/ring_lookup.h
 *		Partition ring lookups as applications make them: many keys in one
 *		call with the memory latency of the ring hidden by prefetching, and
 *		handoff nodes, the further nodes to try for a partition when one of
 *		its primaries is down (OpenStack Swift's Ring.get_more_nodes).
 *
 * Pure C99 core, no PostgreSQL header.  Both read a ring partition-major
 * ("by partition"): the node indexes of the R replicas of partition x at
 * by_partition[x * R .. x * R + R - 1], primary first, which is how the
 * server keeps decoded rings; ring_lookup_transpose makes that array from a
 * ring's replica-major assignment.  Of the ring struct they read the sizes
 * and the node table (r->assignment may be NULL).
 */
#ifndef SUBSETTING_CORE_RING_LOOKUP_H
#define SUBSETTING_CORE_RING_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "core/ring.h"

/* keys ahead of the one being read whose partition row is prefetched */
#define RING_LOOKUP_PREFETCH_DISTANCE 16

/* assignments of at most this many bytes are not prefetched (they stay in cache) */
#define RING_LOOKUP_CACHED_BYTES (256 * 1024)

/* Fill by_partition (replicas << part_power entries) from r's assignment. */
extern void ring_lookup_transpose(const ring *r, uint16_t *by_partition);

/*
 * Look up count keys at once.  Writes the partition of keys[i] to
 * partitions[i] (if partitions is not NULL) and the node ids of its replicas,
 * primary first, to node_ids[i * R .. i * R + R - 1].  The same answers as
 * one ring_partition_of / by_partition read per key, but the partition rows
 * of the keys RING_LOOKUP_PREFETCH_DISTANCE places ahead are prefetched, so
 * that the cache misses of a large ring overlap instead of queueing (not for
 * an assignment of at most RING_LOOKUP_CACHED_BYTES, which stays in cache).
 * env may be NULL; if not, env->interrupts is called every 65536 keys, and
 * RING_ECANCELED returned if it asks to stop.
 */
extern ring_status ring_lookup_keys(const ring *r, const uint16_t *by_partition,
									const uint64_t *keys, size_t count,
									int32_t *partitions, int32_t *node_ids,
									const ring_env *env);

/* The same with another prefetch distance (0: no prefetch), for benchmarks. */
extern ring_status ring_lookup_keys_prefetching(const ring *r,
												const uint16_t *by_partition,
												const uint64_t *keys, size_t count,
												int32_t *partitions,
												int32_t *node_ids,
												const ring_env *env,
												uint32_t distance);

/* ring_domains (the failure domains of the nodes) is in ring.h. */

/* Bytes of the workspace that ring_handoff needs (any content). */
extern size_t ring_handoff_workspace_size(const ring_domains *d);

/*
 * The first `count` handoff nodes of a partition, in the order of Swift's
 * Ring.get_more_nodes(partition) on a ring with the same assignment and
 * node table where every node is its own server (one IP per device):
 *
 *	1. nodes in regions that hold no replica of the partition yet,
 *	2. then nodes in zones that hold none yet,
 *	3. then any node not yet named,
 *
 * each pass walking the replicas of the partitions start, start + inc, ...
 * (wrapping around) with start = the first 4 bytes of MD5 of the partition
 * number in decimal, big-endian, shifted right by 32 - part_power, and
 * inc = max(1, 2^part_power / 65536) (see ring_handoff_start).  No primary of
 * the partition and no node twice.  Node indexes go to out[0 .. *found - 1];
 * *found < count when no further node can be found.  Reads at most
 * 3 * min(2^part_power, 65536) * R assignment entries.  env may be NULL; if
 * not, env->interrupts is called every 4096 partitions walked.
 */
extern ring_status ring_handoff(const ring *r, const uint16_t *by_partition,
								const ring_domains *d, uint32_t partition,
								uint32_t count, void *workspace,
								uint16_t *out, uint32_t *found,
								const ring_env *env);

/* Where the walk of ring_handoff starts for a partition. */
extern uint32_t ring_handoff_start(uint32_t part_power, uint32_t partition);

/* MD5 (RFC 1321) of len bytes. */
extern void ring_md5(const uint8_t *data, size_t len, uint8_t digest[16]);

#endif							/* SUBSETTING_CORE_RING_LOOKUP_H */
