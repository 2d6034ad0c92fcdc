/*
 * src/ring_errors.h
 *		The SQL error of a failure the partition ring core reported
 *		(src/ring_errors.c).
 */
#ifndef SUBSETTING_RING_ERRORS_H
#define SUBSETTING_RING_ERRORS_H

#include "compat.h"
#include "core/ring.h"

/*
 * Raise the error the core reported in err: the SQLSTATE from its code (for
 * RING_EFORMAT, format_code: 22P02 for text input, 22P03 for binary input,
 * XX001 for a stored value), the message from its problem and facts.
 */
pg_noreturn extern void ring_report_error(const ring_error *err, int format_code);

#endif							/* SUBSETTING_RING_ERRORS_H */
