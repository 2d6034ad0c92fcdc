/*
 * src/resharding/tables.h
 *		The phase and operation tables of the resharding engine (tables.c).
 */
#ifndef SUBSETTING_RESHARDING_TABLES_H
#define SUBSETTING_RESHARDING_TABLES_H

#include "resharding/engine.h"

extern const phase_row *phase_of(reshard_phase phase);
extern const char *phase_name(reshard_phase phase);
extern reshard_phase phase_from_name(const char *name);
extern reshard_phase next_phase(reshard_phase phase);
extern bool phase_ended(reshard_phase phase);

extern const operation_row *operation_of(reshard_operation operation);
extern reshard_operation operation_from_name(const char *name);
extern routine_id phase_routine(reshard_operation operation, reshard_phase phase);

#endif							/* SUBSETTING_RESHARDING_TABLES_H */
