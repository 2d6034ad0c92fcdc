/*
 * test/unit.h
 *		A minimal test harness for the C tests of the pure core.
 *
 * A test program defines test cases with TEST(name) { ... }, runs them from
 * main() with RUN(name), and returns unit_report(), which prints the one line
 * "N passed, N failed" that the test runner adds up.  A case fails if any of
 * its CHECKs fails; a failing CHECK prints where and why, and the case goes on
 * (up to a few reports) so one run shows more than the first problem.
 */
#ifndef SUBSETTING_TEST_UNIT_H
#define SUBSETTING_TEST_UNIT_H

#include <inttypes.h>
#include <stdio.h>

static int	unit_cases_passed;
static int	unit_cases_failed;
static int	unit_case_failures;

#define UNIT_MAX_REPORTS_PER_CASE 10

#define TEST(name) static void test_##name(void)

#define RUN(name) \
	do { \
		unit_case_failures = 0; \
		test_##name(); \
		if (unit_case_failures == 0) \
			unit_cases_passed++; \
		else \
			unit_cases_failed++; \
		printf("%s %s\n", unit_case_failures == 0 ? "ok    " : "FAILED", #name); \
		fflush(stdout); \
	} while (0)

#define UNIT_FAIL(...) \
	do { \
		if (unit_case_failures++ < UNIT_MAX_REPORTS_PER_CASE) \
		{ \
			printf("  %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

#define CHECK(cond) \
	do { if (!(cond)) UNIT_FAIL("check failed: %s", #cond); } while (0)

#define CHECK_MSG(cond, ...) \
	do { if (!(cond)) UNIT_FAIL(__VA_ARGS__); } while (0)

#define CHECK_EQ_INT(actual, expected) \
	do { \
		long long unit_a_ = (long long) (actual), unit_e_ = (long long) (expected); \
		if (unit_a_ != unit_e_) \
			UNIT_FAIL("%s == %lld, expected %lld", #actual, unit_a_, unit_e_); \
	} while (0)

/* Print the summary line and give the exit status for main(). */
static inline int
unit_report(void)
{
	printf("%d passed, %d failed\n", unit_cases_passed, unit_cases_failed);
	return unit_cases_failed == 0 ? 0 : 1;
}

#endif							/* SUBSETTING_TEST_UNIT_H */
