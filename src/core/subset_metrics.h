/*
 * src/core/subset_metrics.h
 *		The properties of a subsetting algorithm over a whole job (M frontends
 *		numbered 0..M-1, N backends, subsets of k), as the Google article
 *		(Reinventing Backend Subsetting at Google, ACM Queue 2023) defines them:
 *		connection balance, subset diversity, churn and subset spread.
 *
 * Memory comes from the caller's allocator, and the caller's interrupt check
 * is called between frontends and every few milliseconds of a sort (the
 * server's CHECK_FOR_INTERRUPTS may leave by longjmp: nothing here holds
 * anything but that memory).  Jobs above the limits below are refused up
 * front with SUBSET_METRICS_TOO_LARGE.
 */
#ifndef SUBSETTING_CORE_SUBSET_METRICS_H
#define SUBSETTING_CORE_SUBSET_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "interrupts.h"
#include "rocksteadier.h"

typedef enum subset_algorithm_id
{
	SUBSET_RANDOM,
	SUBSET_ROUND_ROBIN,
	SUBSET_DETERMINISTIC,
	SUBSET_CONSISTENT,
	SUBSET_RINGSTEADY,			/* with backend scaling (Figure 4c) */
	SUBSET_RINGSTEADY_UNSCALED, /* without (Figure 4b) */
	SUBSET_ROCKSTEADIER
} subset_algorithm_id;

#define SUBSET_ALGORITHMS 7

typedef struct subset_algorithm
{
	subset_algorithm_id id;
	uint64_t	seed;			/* random, deterministic, consistent */
	uint32_t	lot_size;		/* rocksteadier */
} subset_algorithm;

typedef struct subset_job
{
	subset_algorithm algorithm;
	uint32_t	frontends;		/* M >= 1 */
	uint32_t	backends;		/* N >= 1 */
	uint32_t	subset_size;	/* k >= 1 */
} subset_job;

/* Where memory and interrupt checks come from. */
typedef struct subset_env
{
	void	   *(*allocate) (void *arg, size_t bytes);	/* NULL: out of memory */
	void		(*release) (void *arg, void *pointer);
	const core_interrupts *interrupts;	/* may be NULL; see interrupts.h */
	void	   *arg;			/* of allocate and release */
} subset_env;

/* Return codes. */
#define SUBSET_METRICS_OK 0
#define SUBSET_METRICS_INVALID (-1)		/* an argument out of its range */
#define SUBSET_METRICS_TOO_LARGE (-2)	/* above the limits below */
#define SUBSET_METRICS_NO_MEMORY (-3)

/*
 * Limits on a job measured; also, subsets of consistent subsetting have at
 * most CONSISTENT_MAX_MEMBERS members (baselines.h).
 */
#define SUBSET_METRICS_MAX_FRONTENDS (1u << 24)
#define SUBSET_METRICS_MAX_BACKENDS (1u << 24)
#define SUBSET_METRICS_MAX_WORK (UINT64_C(1) << 28)	/* steps, see subset_job_work: about a second */

/* The algorithm's name ("random", "round_robin", "deterministic",
 * "consistent", "ringsteady", "ringsteady_unscaled", "rocksteadier"), or NULL. */
extern const char *subset_algorithm_name(subset_algorithm_id id);

/* Finds an algorithm by name; returns 0, or -1 if there is none. */
extern int	subset_algorithm_by_name(const char *name, subset_algorithm_id *id);

/*
 * An estimate of the steps that generating every subset of the job takes
 * (about a nanosecond each); a job above SUBSET_METRICS_MAX_WORK is refused.
 * Defined for every job: 0 for no frontends, UINT64_MAX for an estimate
 * beyond 64 bits.
 */
extern uint64_t subset_job_work(const subset_job *job);

/* SUBSET_METRICS_OK, or why the job cannot be measured. */
extern int	subset_job_check(const subset_job *job);

/*
 * Frontend subsets one after the other, for any algorithm: a generator holds
 * the working memory (and, for deterministic subsetting, the shuffle of the
 * current round; for Rocksteadier, the lot shuffles of the current frontend
 * lot).
 */
typedef struct subset_generator
{
	subset_algorithm algorithm;
	uint32_t	backends;
	uint32_t	subset_size;
	void	   *workspace;
	int64_t		cached_round;
	rocksteadier_cache rocksteadier;
} subset_generator;

extern size_t subset_generator_workspace_bytes(const subset_algorithm *algorithm,
											   uint32_t backends, uint32_t subset_size);
extern void subset_generator_init(subset_generator *generator, const subset_algorithm *algorithm,
								  uint32_t backends, uint32_t subset_size, void *workspace);

/* Writes frontend m's subset (min(k, N) backends) to out; returns how many. */
extern int64_t subset_generator_write(subset_generator *generator, uint32_t frontend, uint32_t *out);

/*
 * Connection balance: C_n connections to backend n.  utilization =
 * M * k' / (N * max C_n) and achievable_utilization = ceil(M * k' / N) /
 * max C_n, k' = min(k, N): the article's two measures (1 is ideal).
 */
typedef struct subset_balance_result
{
	uint64_t	connections;	/* M * k' */
	uint32_t	min_connections;
	uint32_t	max_connections;
	double		mean_connections;
	double		utilization;
	double		achievable_utilization;
} subset_balance_result;

extern int	subset_measure_balance(const subset_job *job, const subset_env *env, subset_balance_result *result);

/*
 * Subset diversity: the number of distinct subsets (as sets) among the M
 * frontends, and the most frontends that share one subset.  Subsets are
 * compared by a 64-bit hash of their sorted members: two different subsets
 * are taken as one with probability about M^2 / 2^65.
 */
typedef struct subset_diversity_result
{
	uint32_t	distinct_subsets;
	uint32_t	largest_group;
} subset_diversity_result;

extern int	subset_measure_diversity(const subset_job *job, const subset_env *env,
							 subset_diversity_result *result);

/*
 * Churn from job `before` to job `after` (the same algorithm; any of M, N and
 * k may change): for each frontend present in both, the connections it drops
 * (members of its old subset not in its new one).
 */
typedef struct subset_churn_result
{
	uint32_t	frontends_compared; /* min(M before, M after) */
	uint64_t	dropped;		/* total connections dropped */
	double		mean_dropped;	/* per frontend compared */
	uint32_t	max_dropped;
	uint32_t	frontends_losing_all;	/* whose new subset shares nothing
										 * with the old */
	double		share_losing_all;
} subset_churn_result;

extern int	subset_measure_churn(const subset_job *before, const subset_job *after, const subset_env *env,
						 subset_churn_result *result);

/*
 * Subset spread: a rolling restart takes down w consecutive backends
 * [s, s + w) at a time, for s = 0 .. N - w.  For each frontend, the most of
 * its subset down at once; the result gives the worst frontend's share of its
 * subset and the mean of those shares.
 */
typedef struct subset_spread_result
{
	uint32_t	max_down;		/* the most members of one subset down at once */
	double		max_down_share; /* ... as a share of that subset's size */
	double		mean_max_down_share;	/* each frontend's worst share, averaged */
} subset_spread_result;

extern int	subset_measure_spread(const subset_job *job, uint32_t restart_width, const subset_env *env,
						  subset_spread_result *result);

#endif							/* SUBSETTING_CORE_SUBSET_METRICS_H */
