/*
 * src/resharding/claims.h
 *		Who runs a call of the engine: one backend per table at a time, and
 *		no call while one of a table linked to it by a foreign key runs
 *		(claims.c).
 */
#ifndef SUBSETTING_RESHARDING_CLAIMS_H
#define SUBSETTING_RESHARDING_CLAIMS_H

#include "resharding/engine.h"

extern void claim_for_transaction(Oid table);
extern void claim(engine *e);
extern void unclaim(engine *e);
extern void claim_new_parent(engine *e);
extern void follow_new_parent(engine *e);
extern void refuse_linked_reshardings(engine *e, reshard_operation operation);

#endif							/* SUBSETTING_RESHARDING_CLAIMS_H */
