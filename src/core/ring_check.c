/*
 * src/core/ring_check.c
 *		Argument checks of the partition ring: sizes (part power, replicas,
 *		nodes) and node weights.  No allocation.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <math.h>

/* ---- arguments ---- */

ring_status
ring_check_sizes(uint32_t n, uint32_t part_power, uint32_t replicas,
				 ring_error *err)
{
	if (part_power < RING_MIN_PART_POWER || part_power > RING_MAX_PART_POWER)
		return ring_fail(err, RING_EINVAL,
						 "part power must be between %d and %d, got %u",
						 RING_MIN_PART_POWER, RING_MAX_PART_POWER, part_power);
	if (replicas < 1)
		return ring_fail(err, RING_EINVAL,
						 "replicas must be at least 1, got %u", replicas);
	if (n < 1)
		return ring_fail(err, RING_EINVAL, "a ring needs at least one node");
	if (n > RING_MAX_NODES)
		return ring_fail(err, RING_ELIMIT,
						 "a ring can have at most %d nodes, got %u",
						 RING_MAX_NODES, n);
	if ((uint64_t) replicas > (RING_MAX_SLOTS >> part_power))
		return ring_fail(err, RING_ELIMIT,
						 "a ring of 2^%u partitions with %u replicas would hold %llu partition-replicas, more than the limit of %llu",
						 part_power, replicas,
						 (unsigned long long) ((uint64_t) replicas << part_power),
						 (unsigned long long) RING_MAX_SLOTS);
	return RING_OK;
}

/* Weights finite and non-negative, not all zero, enough positive nodes. */
ring_status
ring_check_weights(const ring_node *nodes, uint32_t n, uint32_t replicas,
			  ring_error *err)
{
	uint32_t	positive = 0;
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		double		w = nodes[i].weight;

		if (isnan(w))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d must be a number, got NaN",
							 (int) nodes[i].id);
		if (isinf(w))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d must be finite, got %sinfinity",
							 (int) nodes[i].id, w < 0 ? "-" : "");
		if (w < 0 || (w == 0 && signbit(w)))
			return ring_fail(err, RING_EINVAL,
							 "weight of node %d cannot be negative, got %g",
							 (int) nodes[i].id, w);
		if (w > 0)
			positive++;
	}
	if (positive == 0)
		return ring_fail(err, RING_EINVAL,
						 "all node weights are zero");
	if (replicas > positive)
		return ring_fail(err, RING_EINVAL,
						 "replicas (%u) cannot exceed the number of nodes with positive weight (%u)",
						 replicas, positive);
	return RING_OK;
}

ring_status
ring_check_args(const ring_node *nodes, uint32_t n, uint32_t part_power,
				uint32_t replicas, ring_error *err)
{
	ring_status st = ring_check_sizes(n, part_power, replicas, err);

	if (st != RING_OK)
		return st;
	return ring_check_weights(nodes, n, replicas, err);
}
