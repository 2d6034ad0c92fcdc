/*
 * test/ring_test_env.h
 *		The ring core's environment for the C tests: an allocator that counts
 *		and can be told to fail, an interrupt check that counts its calls and
 *		can be told to cancel, and SHA-256 from OpenSSL's libcrypto (the server uses
 *		PostgreSQL's).  Included by one test file each.
 */
#ifndef SUBSETTING_RING_TEST_ENV_H
#define SUBSETTING_RING_TEST_ENV_H

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "core/ring.h"

/* ---- an allocator that counts, and can be told to fail ---- */

typedef struct test_ctx
{
	long		live;
	long		allocs;
	long		fail_at;		/* fail the allocation with this number (1-based), 0 never */
	long		interrupt_calls;
	long		cancel_at;		/* the check returns 1 at this call, 0 never */
} test_ctx;

static void *
t_alloc(void *ctx, size_t n)
{
	test_ctx   *c = ctx;

	c->allocs++;
	if (c->fail_at != 0 && c->allocs == c->fail_at)
		return NULL;
	c->live++;
	return malloc(n);
}

static void
t_free(void *ctx, void *p)
{
	test_ctx   *c = ctx;

	c->live--;
	free(p);
}

static int
t_interrupts(void *ctx)
{
	test_ctx   *c = ctx;

	c->interrupt_calls++;
	return c->cancel_at != 0 && c->interrupt_calls >= c->cancel_at;
}

/* SHA-256 from OpenSSL's libcrypto: the server uses PostgreSQL's */
static int
t_digest(void *ctx, const uint8_t *data, size_t len, uint8_t *out)
{
	(void) ctx;
	return SHA256(data, len, out) == NULL;
}

static test_ctx tctx;
static const core_interrupts t_interrupt_check = {t_interrupts, &tctx};
static ring_env env = {t_alloc, t_free, &t_interrupt_check, t_digest, &tctx};

static void
reset_ctx(void)
{
	memset(&tctx, 0, sizeof(tctx));
}

#endif							/* SUBSETTING_RING_TEST_ENV_H */
