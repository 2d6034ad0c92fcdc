/*
 * test/stats.h
 *		Statistics for the C property tests: the chi-squared distribution's
 *		upper tail (for G-tests) and the binomial tail (to judge how many
 *		rejections are consistent with chance).
 */
#ifndef SUBSETTING_TEST_STATS_H
#define SUBSETTING_TEST_STATS_H

#include <math.h>

/* Regularized upper incomplete gamma function Q(a, x), for a > 0, x >= 0. */
static inline double
stats_gamma_q(double a, double x)
{
	double		log_prefix;

	if (x <= 0.0)
		return 1.0;
	log_prefix = a * log(x) - x - lgamma(a);
	if (x < a + 1.0)
	{
		/* series for P(a, x) */
		double		term = 1.0 / a;
		double		sum = term;
		double		ap = a;

		for (int i = 0; i < 10000; i++)
		{
			ap += 1.0;
			term *= x / ap;
			sum += term;
			if (fabs(term) < fabs(sum) * 1e-15)
				break;
		}
		return 1.0 - sum * exp(log_prefix);
	}
	else
	{
		/* continued fraction for Q(a, x), modified Lentz */
		double		tiny = 1e-300;
		double		b = x + 1.0 - a;
		double		c = 1.0 / tiny;
		double		d = 1.0 / b;
		double		h = d;

		for (int i = 1; i < 10000; i++)
		{
			double		an = -i * (i - a);
			double		delta;

			b += 2.0;
			d = an * d + b;
			if (fabs(d) < tiny)
				d = tiny;
			c = b + an / c;
			if (fabs(c) < tiny)
				c = tiny;
			d = 1.0 / d;
			delta = d * c;
			h *= delta;
			if (fabs(delta - 1.0) < 1e-15)
				break;
		}
		return exp(log_prefix) * h;
	}
}

/* P(X >= x) for X chi-squared distributed with df degrees of freedom. */
static inline double
stats_chi2_upper_tail(double x, double df)
{
	return stats_gamma_q(df / 2.0, x / 2.0);
}

/*
 * The smallest c such that P(X > c) < tail for X ~ Binomial(trials, p):
 * more than c rejections in `trials` tests at level p would happen by chance
 * with probability below `tail`.
 */
static inline int
stats_binomial_bound(int trials, double p, double tail)
{
	double		pmf = pow(1.0 - p, trials);	/* P(X = 0) */
	double		cdf = pmf;
	int			c = 0;

	while (1.0 - cdf >= tail && c < trials)
	{
		pmf *= (double) (trials - c) / (c + 1) * p / (1.0 - p);
		c++;
		cdf += pmf;
	}
	return c;
}

#endif							/* SUBSETTING_TEST_STATS_H */
