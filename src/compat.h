/*
 * src/compat.h
 *		The one place for differences between PostgreSQL major versions, and
 *		for what the module exports.
 *
 * The extension is built and tested with PostgreSQL 15 only; it refuses
 * older versions (it calls MarkGUCPrefixReserved, new in 15).  Newer ones
 * are not tested: the shims below for 16 and 17 follow their headers but
 * are never compiled here.
 *
 * The Makefile compiles each file of the SQL skin (the .c files of src/)
 * with this header included first (-include), so a new file gets it without
 * asking, and every object with -fvisibility=hidden: the shared library exports
 * only what the server looks up by name (the SQL-callable functions, their
 * pg_finfo_ records, Pg_magic_func and _PG_init), never the names of the
 * core (ring_free, jump_back_hash, ...), which would otherwise share the
 * server's namespace with every other library it loads.
 * test/run-symbol-tests checks the exports against the SQL scripts.  The
 * files of the core (src/core) see no PostgreSQL header, this one included.
 */
#ifndef SUBSETTING_COMPAT_H
#define SUBSETTING_COMPAT_H

#include "postgres.h"

#include "fmgr.h"

#if PG_VERSION_NUM < 150000
#error "subsetting needs PostgreSQL 15 or later (it is built and tested with 15)"
#endif

/*
 * What the module exports, marked as PostgreSQL 16 marks it (c.h and fmgr.h
 * there; its PGXS adds -fvisibility=hidden itself).  PostgreSQL 15 defines
 * PGDLLEXPORT empty except on Windows, and its PG_FUNCTION_INFO_V1 marks
 * only the pg_finfo_ record, not the function.
 */
#if PG_VERSION_NUM < 160000 && !defined(WIN32) && defined(__GNUC__)
#undef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))

#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable
#endif

/* The module's initialisation; fmgr.h declares it from PostgreSQL 16 on. */
#if PG_VERSION_NUM < 160000
extern PGDLLEXPORT void _PG_init(void);
#endif

/* The local id of the backend's current top-level transaction (storage/proc.h). */
#if PG_VERSION_NUM >= 170000
#define CURRENT_LOCAL_TRANSACTION_ID() (MyProc->vxid.lxid)
#else
#define CURRENT_LOCAL_TRANSACTION_ID() (MyProc->lxid)
#endif

#endif							/* SUBSETTING_COMPAT_H */
