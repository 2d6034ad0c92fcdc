/*
 * src/core/ring_place.h
 *		The state of a rebalance and the placement of single replicas
 *		(ring_place.c), shared by the rebalancer (ring_rebalance.c) and its
 *		repair by chains of moves (ring_repair.c).  Internal to the core.
 */
#ifndef SUBSETTING_CORE_RING_PLACE_H
#define SUBSETTING_CORE_RING_PLACE_H

#include <stdint.h>

#include "core/ring.h"
#include "core/ring_tree.h"

#define FREE_SLOT 0xFFFFu		/* an assignment slot with no node yet */
#define FAIL_VERTEX UINT32_MAX	/* no vertex found */

typedef struct rebal
{
	rtree	   *t;
	uint16_t   *assign;			/* the new assignment, replica-major */
	uint32_t	part_power;
	uint32_t	replicas;
	rng_t		rng;
} rebal;

/* ---- ring_place.c ---- */

/* Stamp the domains of the replicas of partition x, except replica skip. */
extern void ring_load_partition(rebal *b, uint32_t x, uint32_t skip);

/* Is vertex v full for the loaded partition (a leaf: holds it already)? */
extern int	ring_blocked(const rtree *t, uint32_t v);

/* Set the need of leaf from its quota and what it holds. */
extern void ring_refresh_need(rtree *t, uint32_t leaf);

/*
 * Draw a leaf under v in proportion to need, among those that keep the
 * loaded partition within its domain caps (ex: room for exmax excluded
 * vertices).  FAIL_VERTEX if there is none.
 */
extern uint32_t ring_sample_receiver(rtree *t, rng_t *rng, uint32_t v,
									 uint32_t *ex, uint32_t exmax);

/* Can leaf take a replica of the loaded partition within the domain caps? */
extern int	ring_eligible_leaf(const rtree *t, uint32_t leaf);

/* A bijection on [0, 2^p): the seeded order in which partitions are visited. */
extern uint32_t ring_permute(uint32_t i, uint32_t part_power, uint64_t key);

/* ---- ring_repair.c ---- */

/*
 * When the rebalance moved nothing although nodes are off quota, search for
 * chains of moves (see ring_repair.c).  map: old node index -> new.
 */
extern ring_status ring_repair_if_stuck(const ring_env *env, rebal *b, arena *a,
										const ring *old, const uint16_t *map,
										uint8_t *touched, uint64_t key,
										ring_error *err);

#endif							/* SUBSETTING_CORE_RING_PLACE_H */
