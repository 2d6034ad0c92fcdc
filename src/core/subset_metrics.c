/*
 * src/core/subset_metrics.c
 *		Connection balance, subset diversity, churn and spread of a job, by
 *		generating every frontend's subset once.
 */
#include <string.h>

#include "baselines.h"
#include "ringsteady.h"
#include "rocksteadier.h"
#include "splitmix64.h"
#include "subset_metrics.h"

#define SORT_NAME sort_u32
#define SORT_TYPE uint32_t
#include "sort_template.h"
#define SORT_NAME sort_u64
#define SORT_TYPE uint64_t
#include "sort_template.h"

static const char *const algorithm_names[SUBSET_ALGORITHMS] = {
	"random", "round_robin", "deterministic", "consistent",
	"ringsteady", "ringsteady_unscaled", "rocksteadier"
};

const char *
subset_algorithm_name(subset_algorithm_id id)
{
	return (unsigned) id < SUBSET_ALGORITHMS ? algorithm_names[id] : NULL;
}

int
subset_algorithm_by_name(const char *name, subset_algorithm_id *id)
{
	for (int i = 0; i < SUBSET_ALGORITHMS; i++)
		if (strcmp(name, algorithm_names[i]) == 0)
		{
			*id = (subset_algorithm_id) i;
			return 0;
		}
	return -1;
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int
log2_ceil(uint64_t x)
{
	int			bits = 0;

	while ((UINT64_C(1) << bits) < x)
		bits++;
	return bits;
}

/* a + b and a * b, or UINT64_MAX if that does not fit */
static inline uint64_t
saturating_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t
saturating_multiply(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/*
 * Any job, also one far above the limits (whose estimate is reported when it
 * is refused), gets its estimate or UINT64_MAX, never a product that
 * wrapped around; a job of no frontends costs nothing.
 */
uint64_t
subset_job_work(const subset_job *job)
{
	uint64_t	m = job->frontends;
	uint64_t	n = job->backends;
	uint64_t	count = min_u32(job->subset_size, job->backends);
	uint64_t	per_frontend;

	if (m == 0)
		return 0;
	switch (job->algorithm.id)
	{
		case SUBSET_RANDOM:
			per_frontend = count + (n < 4 * count ? n : 4 * count);
			break;
		case SUBSET_ROUND_ROBIN:
			per_frontend = count;
			break;
		case SUBSET_DETERMINISTIC:
			{
				uint64_t	per_round = count == 0 ? 1 : n / count;
				uint64_t	rounds = (m + per_round - 1) / per_round;
				uint64_t	shuffled = saturating_multiply(rounds, 2 * n);

				/* every round shuffles N tasks: 2N steps, shared by its frontends */
				per_frontend = count + shuffled / m + (shuffled % m != 0);
				break;
			}
		case SUBSET_CONSISTENT:
			per_frontend = 2 * n;	/* a position per backend; few heap moves */
			break;
		case SUBSET_RINGSTEADY:
		case SUBSET_RINGSTEADY_UNSCALED:
			per_frontend = count + 64;
			break;
		case SUBSET_ROCKSTEADIER:
			per_frontend = job->algorithm.lot_size == 0 ? 0 :
				rocksteadier_shuffle_steps(job->backends, job->subset_size, job->algorithm.lot_size) + count;
			break;
		default:
			return UINT64_MAX;
	}
	/* and sorting or marking each subset */
	return saturating_multiply(m, saturating_add(per_frontend,
												 16 + count * (1 + log2_ceil(count + 1))));
}

int
subset_job_check(const subset_job *job)
{
	if ((unsigned) job->algorithm.id >= SUBSET_ALGORITHMS ||
		job->frontends < 1 || job->backends < 1 || job->subset_size < 1)
		return SUBSET_METRICS_INVALID;
	if (job->algorithm.id == SUBSET_ROCKSTEADIER &&
		(job->algorithm.lot_size < 1 || job->algorithm.lot_size > ROCKSTEADIER_MAX_LOT_SIZE))
		return SUBSET_METRICS_INVALID;
	if (job->frontends > SUBSET_METRICS_MAX_FRONTENDS ||
		job->backends > SUBSET_METRICS_MAX_BACKENDS ||
		(job->algorithm.id == SUBSET_CONSISTENT &&
		 min_u32(job->subset_size, job->backends) > CONSISTENT_MAX_MEMBERS) ||
		subset_job_work(job) > SUBSET_METRICS_MAX_WORK)
		return SUBSET_METRICS_TOO_LARGE;
	return SUBSET_METRICS_OK;
}

size_t
subset_generator_workspace_bytes(const subset_algorithm *algorithm, uint32_t backends,
								 uint32_t subset_size)
{
	switch (algorithm->id)
	{
		case SUBSET_RANDOM:
			return random_subset_workspace_bytes(backends, subset_size);
		case SUBSET_DETERMINISTIC:
			return deterministic_subset_workspace_bytes(backends);
		case SUBSET_CONSISTENT:
			return consistent_subset_workspace_bytes(backends, subset_size);
		case SUBSET_ROCKSTEADIER:
			/* the workspace of a subset, then the cache's shuffles (< N + 2L) */
			return sizeof(uint32_t) * (ROCKSTEADIER_WORKSPACE(algorithm->lot_size) +
									   rocksteadier_shuffle_steps(backends, subset_size,
																  algorithm->lot_size));
		default:
			return 0;
	}
}

void
subset_generator_init(subset_generator *generator, const subset_algorithm *algorithm,
					  uint32_t backends, uint32_t subset_size, void *workspace)
{
	generator->algorithm = *algorithm;
	generator->backends = backends;
	generator->subset_size = subset_size;
	generator->workspace = workspace;
	generator->cached_round = -1;
	if (algorithm->id == SUBSET_ROCKSTEADIER)
		rocksteadier_cache_init(&generator->rocksteadier,
								(uint32_t *) workspace + ROCKSTEADIER_WORKSPACE(algorithm->lot_size));
}

int64_t
subset_generator_write(subset_generator *g, uint32_t frontend, uint32_t *out)
{
	switch (g->algorithm.id)
	{
		case SUBSET_RANDOM:
			return random_write_subset(frontend, g->backends, g->subset_size, g->algorithm.seed,
									   out, g->workspace, NULL);
		case SUBSET_ROUND_ROBIN:
			return round_robin_write_subset(frontend, g->backends, g->subset_size, out);
		case SUBSET_DETERMINISTIC:
			return deterministic_write_subset_cached(frontend, g->backends, g->subset_size,
													 g->algorithm.seed, out, g->workspace,
													 &g->cached_round);
		case SUBSET_CONSISTENT:
			return consistent_write_subset(frontend, g->backends, g->subset_size,
										   g->algorithm.seed, out, g->workspace, NULL);
		case SUBSET_RINGSTEADY:
		case SUBSET_RINGSTEADY_UNSCALED:
			return ringsteady_write_subset(frontend, g->backends, g->subset_size,
										   g->algorithm.id == SUBSET_RINGSTEADY, out);
		case SUBSET_ROCKSTEADIER:
			return rocksteadier_write_subset_cached(frontend, g->backends, g->subset_size,
													g->algorithm.lot_size, out, g->workspace,
													&g->rocksteadier);
	}
	return -1;
}

/*
 * A job being generated: the generator, its workspace and a buffer for one
 * subset.  open_job() allocates; close_job() releases what was allocated.
 */
typedef struct job_state
{
	subset_generator generator;
	uint32_t   *subset;
	uint32_t	count;			/* min(k, N) */
} job_state;

static void *
allocate(const subset_env *env, size_t bytes)
{
	return env->allocate(env->arg, bytes == 0 ? 1 : bytes);
}

static void
release(const subset_env *env, void *pointer)
{
	if (pointer != NULL)
		env->release(env->arg, pointer);
}

static void
close_job(const subset_env *env, job_state *state)
{
	release(env, state->generator.workspace);
	release(env, state->subset);
	state->generator.workspace = NULL;
	state->subset = NULL;
}

static int
open_job(const subset_job *job, const subset_env *env, job_state *state)
{
	int			check = subset_job_check(job);
	void	   *workspace;

	state->subset = NULL;
	state->generator.workspace = NULL;
	if (check != SUBSET_METRICS_OK)
		return check;
	state->count = min_u32(job->subset_size, job->backends);
	workspace = allocate(env, subset_generator_workspace_bytes(&job->algorithm, job->backends,
															   job->subset_size));
	state->subset = allocate(env, sizeof(uint32_t) * (size_t) state->count);
	if (workspace == NULL || state->subset == NULL)
	{
		state->generator.workspace = workspace;
		close_job(env, state);
		return SUBSET_METRICS_NO_MEMORY;
	}
	subset_generator_init(&state->generator, &job->algorithm, job->backends, job->subset_size,
						  workspace);
	return SUBSET_METRICS_OK;
}

/*
 * env->interrupts is called before each frontend's subset (each of the two
 * of subset_churn) and as the sorts go: one subset costs at most O(N) (a
 * deterministic shuffle of up to 2^24 backends), a fraction of a second
 * within the limits, and a sort of millions of values up to a second.
 */

static inline const uint32_t *
generate(job_state *state, uint32_t frontend)
{
	subset_generator_write(&state->generator, frontend, state->subset);
	return state->subset;
}

int
subset_measure_balance(const subset_job *job, const subset_env *env, subset_balance_result *result)
{
	job_state	state;
	uint32_t   *connections;
	int			status = open_job(job, env, &state);
	uint64_t	total;

	if (status != SUBSET_METRICS_OK)
		return status;
	connections = allocate(env, sizeof(uint32_t) * (size_t) job->backends);
	if (connections == NULL)
	{
		close_job(env, &state);
		return SUBSET_METRICS_NO_MEMORY;
	}
	memset(connections, 0, sizeof(uint32_t) * (size_t) job->backends);
	for (uint32_t m = 0; m < job->frontends; m++)
	{
		const uint32_t *subset;

		core_interrupts_check(env->interrupts);
		subset = generate(&state, m);
		for (uint32_t i = 0; i < state.count; i++)
			connections[subset[i]]++;
	}
	total = (uint64_t) job->frontends * state.count;
	result->connections = total;
	result->min_connections = UINT32_MAX;
	result->max_connections = 0;
	for (uint32_t n = 0; n < job->backends; n++)
	{
		result->min_connections = min_u32(result->min_connections, connections[n]);
		if (connections[n] > result->max_connections)
			result->max_connections = connections[n];
	}
	/* single divisions of exact integers: the same on every IEEE platform */
	result->mean_connections = (double) total / (double) job->backends;
	result->utilization = (double) total /
		((double) job->backends * (double) result->max_connections);
	result->achievable_utilization =
		(double) ((total + job->backends - 1) / job->backends) / (double) result->max_connections;
	release(env, connections);
	close_job(env, &state);
	return SUBSET_METRICS_OK;
}

int
subset_measure_diversity(const subset_job *job, const subset_env *env, subset_diversity_result *result)
{
	job_state	state;
	uint64_t   *hashes;
	int			status = open_job(job, env, &state);
	uint32_t	run = 0;

	if (status != SUBSET_METRICS_OK)
		return status;
	hashes = allocate(env, sizeof(uint64_t) * (size_t) job->frontends);
	if (hashes == NULL)
	{
		close_job(env, &state);
		return SUBSET_METRICS_NO_MEMORY;
	}
	for (uint32_t m = 0; m < job->frontends; m++)
	{
		uint64_t	h = UINT64_C(0x6A09E667F3BCC908);

		core_interrupts_check(env->interrupts);
		generate(&state, m);
		sort_u32(state.subset, state.count, env->interrupts);
		for (uint32_t i = 0; i < state.count; i++)
			h = splitmix64_mix(h + state.subset[i] + SPLITMIX64_GAMMA);
		hashes[m] = h;
	}
	sort_u64(hashes, job->frontends, env->interrupts);
	result->distinct_subsets = 0;
	result->largest_group = 0;
	for (uint32_t m = 0; m < job->frontends; m++)
	{
		if (m == 0 || hashes[m] != hashes[m - 1])
		{
			result->distinct_subsets++;
			run = 0;
		}
		run++;
		if (run > result->largest_group)
			result->largest_group = run;
	}
	release(env, hashes);
	close_job(env, &state);
	return SUBSET_METRICS_OK;
}

int
subset_measure_churn(const subset_job *before, const subset_job *after, const subset_env *env,
			 subset_churn_result *result)
{
	job_state	old_state,
				new_state;
	uint32_t   *stamp;
	uint32_t	backends = before->backends > after->backends ? before->backends : after->backends;
	uint32_t	compared = min_u32(before->frontends, after->frontends);
	int			status;

	if (before->algorithm.id != after->algorithm.id ||
		before->algorithm.seed != after->algorithm.seed ||
		before->algorithm.lot_size != after->algorithm.lot_size)
		return SUBSET_METRICS_INVALID;
	/* both jobs up front, before anything is allocated for either */
	status = subset_job_check(before);
	if (status == SUBSET_METRICS_OK)
		status = subset_job_check(after);
	if (status != SUBSET_METRICS_OK)
		return status;
	status = open_job(before, env, &old_state);
	if (status != SUBSET_METRICS_OK)
		return status;
	status = open_job(after, env, &new_state);
	if (status != SUBSET_METRICS_OK)
	{
		close_job(env, &old_state);
		return status;
	}
	stamp = allocate(env, sizeof(uint32_t) * (size_t) backends);
	if (stamp == NULL)
	{
		close_job(env, &new_state);
		close_job(env, &old_state);
		return SUBSET_METRICS_NO_MEMORY;
	}
	/* stamp[n] == m + 1: backend n is in frontend m's new subset */
	memset(stamp, 0, sizeof(uint32_t) * (size_t) backends);
	memset(result, 0, sizeof(*result));
	result->frontends_compared = compared;
	for (uint32_t m = 0; m < compared; m++)
	{
		const uint32_t *old_subset,
				   *new_subset;
		uint32_t	dropped = 0;

		core_interrupts_check(env->interrupts);
		new_subset = generate(&new_state, m);
		for (uint32_t i = 0; i < new_state.count; i++)
			stamp[new_subset[i]] = m + 1;
		core_interrupts_check(env->interrupts);	/* a subset may take a good part of a second */
		old_subset = generate(&old_state, m);
		for (uint32_t i = 0; i < old_state.count; i++)
			dropped += stamp[old_subset[i]] != m + 1;
		result->dropped += dropped;
		if (dropped > result->max_dropped)
			result->max_dropped = dropped;
		result->frontends_losing_all += old_state.count > 0 && dropped == old_state.count;
	}
	result->mean_dropped = (double) result->dropped / (double) compared;
	result->share_losing_all = (double) result->frontends_losing_all / (double) compared;
	release(env, stamp);
	close_job(env, &new_state);
	close_job(env, &old_state);
	return SUBSET_METRICS_OK;
}

int
subset_measure_spread(const subset_job *job, uint32_t restart_width, const subset_env *env,
			  subset_spread_result *result)
{
	job_state	state;
	int			status;
	uint64_t	sum_of_worst = 0;	/* sum over frontends of max_down, all of
									 * one size */

	if (restart_width < 1)
		return SUBSET_METRICS_INVALID;
	status = open_job(job, env, &state);
	if (status != SUBSET_METRICS_OK)
		return status;
	result->max_down = 0;
	for (uint32_t m = 0; m < job->frontends; m++)
	{
		uint32_t	worst = 0;
		uint32_t	first = 0;

		core_interrupts_check(env->interrupts);
		generate(&state, m);
		sort_u32(state.subset, state.count, env->interrupts);

		/*
		 * The window [a_i, a_i + w), clipped to [0, N), lies in a window of
		 * the restart, and every window of the restart holding members holds
		 * no more than the one starting at its first member.
		 */
		for (uint32_t last = 0; last < state.count; last++)
		{
			while ((uint64_t) state.subset[last] >= (uint64_t) state.subset[first] + restart_width)
				first++;
			if (last - first + 1 > worst)
				worst = last - first + 1;
		}
		sum_of_worst += worst;
		if (worst > result->max_down)
			result->max_down = worst;
	}
	result->max_down_share = (double) result->max_down / (double) state.count;
	result->mean_max_down_share = (double) sum_of_worst /
		((double) state.count * (double) job->frontends);
	close_job(env, &state);
	return SUBSET_METRICS_OK;
}
