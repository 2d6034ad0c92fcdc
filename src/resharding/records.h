/*
 * src/resharding/records.h
 *		The extension's records of how tables are placed, outside the
 *		engine's calls (records.c): partition_unique_constraints and
 *		colocated_tables, which only the extension writes, as their owner;
 *		and where the extension is.
 */
#ifndef SUBSETTING_RESHARDING_RECORDS_H
#define SUBSETTING_RESHARDING_RECORDS_H

/* Oid: postgres.h, which the .c file includes first. */

/*
 * The extension's schema, quoted; with a table's name (else NULL), the
 * owner (*owner) and row type (*rowtype) of the extension's table of that
 * name too, either pointer NULL if not wanted.  SPI connected, search_path
 * safe (table_owner.h).
 */
extern char *extension_schema(const char *table, Oid *owner, Oid *rowtype);

/* Runs sql (SPI connected) as role, which writes the records; an error unless SPI says expected. */
extern void run_as_records_owner(Oid owner, const char *sql, int expected);

/* An error unless the current user owns relation relid (or is a superuser). */
extern void check_owner(Oid relid);

#endif							/* SUBSETTING_RESHARDING_RECORDS_H */
