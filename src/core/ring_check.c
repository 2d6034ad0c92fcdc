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
		return ring_fail(err, RING_EINVAL, RING_PART_POWER_RANGE,
						 (ring_facts) {.part_power = part_power});
	if (replicas < 1)
		return ring_fail(err, RING_EINVAL, RING_REPLICAS_TOO_FEW,
						 (ring_facts) {.replicas = replicas});
	if (n < 1)
		return ring_fail(err, RING_EINVAL, RING_NO_NODES, RING_NO_FACTS);
	if (n > RING_MAX_NODES)
		return ring_fail(err, RING_ELIMIT, RING_TOO_MANY_NODES,
						 (ring_facts) {.node_count = n, .limit = RING_MAX_NODES});
	if ((uint64_t) replicas > (RING_MAX_SLOTS >> part_power))
		return ring_fail(err, RING_ELIMIT, RING_TOO_MANY_SLOTS,
						 (ring_facts) {.part_power = part_power,
									   .replicas = replicas,
									   .slots = (uint64_t) replicas << part_power,
									   .limit = RING_MAX_SLOTS});
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
			return ring_fail(err, RING_EINVAL, RING_WEIGHT_NAN,
							 (ring_facts) {.node_id = nodes[i].id});
		if (isinf(w))
			return ring_fail(err, RING_EINVAL, RING_WEIGHT_INFINITE,
							 (ring_facts) {.node_id = nodes[i].id, .weight = w});
		if (w < 0 || (w == 0 && signbit(w)))
			return ring_fail(err, RING_EINVAL, RING_WEIGHT_NEGATIVE,
							 (ring_facts) {.node_id = nodes[i].id, .weight = w});
		if (w > 0)
			positive++;
	}
	if (positive == 0)
		return ring_fail(err, RING_EINVAL, RING_WEIGHTS_ALL_ZERO, RING_NO_FACTS);
	if (replicas > positive)
		return ring_fail(err, RING_EINVAL, RING_TOO_FEW_WEIGHTED_NODES,
						 (ring_facts) {.replicas = replicas,
									   .weighted_nodes = positive});
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
