/*
 * src/core/core.h
 *		What every part of the pure core (src/core/) agrees on.
 *
 * Plain C99, no PostgreSQL header, no global state; memory comes from the
 * caller (its buffers, or an allocator it passes, as ring_env does).
 *
 * Errors.  A core function never raises, never writes a message and never
 * chooses an SQLSTATE.  It returns a status code that says what kind of
 * failure it was, and the facts the message needs:
 *	- the caller's input is wrong (an argument, a stored or text value):
 *	  a code of its own (EINVAL, EFORMAT, or a finer one such as
 *	  JUMP_BACK_ANCHOR_ERANGE), and which value was wrong and how, in
 *	  out-parameters (a ring_error in the ring: the exact problem, such as
 *	  RING_WEIGHT_NAN, and its facts, such as the node id);
 *	- a limit is exceeded (ELIMIT), memory ran out (ENOMEM), the caller
 *	  asked to stop (ECANCELED);
 *	- something that cannot happen did (EINTERNAL: an invariant failed, a
 *	  bug).
 * The SQL skin (the files of src/) writes the message, in PostgreSQL's style
 * and from a literal format string (src/ring_errors.c for the ring), and
 * picks the SQLSTATE from the code: 22xxx for input (22023 invalid
 * parameter, 22004 null, 22P02/22P03 malformed text/binary input), XX001
 * for a stored value found corrupt, 54000 for limits, 53200 for memory,
 * elog(ERROR) (XX000) for EINTERNAL and any code it does not expect.
 * Checks of what a C type cannot carry (SQL NULLs, array shapes, negative
 * numbers before an unsigned conversion) are the skin's own.
 *
 * Long loops let the caller answer query cancel through one callback,
 * core_interrupts: see core/interrupts.h.
 */
#ifndef SUBSETTING_CORE_CORE_H
#define SUBSETTING_CORE_CORE_H

#include "core/interrupts.h"

#endif							/* SUBSETTING_CORE_CORE_H */
