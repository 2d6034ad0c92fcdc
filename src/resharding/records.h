/*
 * src/resharding/records.h
 *		The extension's records of how tables are placed, outside the
 *		engine's calls (records.c): partition_unique_constraints and
 *		colocated_tables, which only the extension writes, as their owner.
 */
#ifndef SUBSETTING_RESHARDING_RECORDS_H
#define SUBSETTING_RESHARDING_RECORDS_H

/* Oid: postgres.h, which the .c file includes first. */

/*
 * The extension's schema, quoted, and the owner of its table named table
 * (*owner); SPI connected, search_path safe (table_owner.h).
 */
extern char *records_schema(const char *table, Oid *owner);

/* Runs sql (SPI connected) as role, which writes the records; an error unless SPI says expected. */
extern void run_as_records_owner(Oid owner, const char *sql, int expected);

/* An error unless the current user owns relation relid (or is a superuser). */
extern void check_owner(Oid relid);

#endif							/* SUBSETTING_RESHARDING_RECORDS_H */
