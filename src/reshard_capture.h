/*
 * src/reshard_capture.h
 *		The change log of an online resharding: what the engine calls.
 */
#ifndef SUBSETTING_RESHARD_CAPTURE_H
#define SUBSETTING_RESHARD_CAPTURE_H

#include "postgres.h"

/*
 * Internal triggers on partition that append its writes to log (numbered
 * by sequence) with function (reshard_capture), and refuse TRUNCATE.
 */
extern void reshard_capture_start(Oid partition, Oid log, Oid sequence, Oid function);

#endif							/* SUBSETTING_RESHARD_CAPTURE_H */
