/*
 * src/compat.h
 *		The one place for differences between PostgreSQL major versions, and
 *		for what the module exports.
 *
 * The extension is built and tested with PostgreSQL 15 (Debian's packages)
 * and 18 (built from source by test/build-postgresql); test/run-all-tests
 * runs every suite on both.  It refuses older versions (it calls
 * MarkGUCPrefixReserved, new in 15).  PostgreSQL 16 and 17 are not built or
 * tested here: the shims below that change at 16 or 17 are compiled only as
 * 18 takes them, never with the headers of 16 or 17 themselves.
 *
 * Each file of the SQL skin (the .c files of src/) that uses anything of
 * this header includes it, with the module's own headers, after postgres.h
 * (which this header, as PostgreSQL's own, relies on being included first)
 * and PostgreSQL's headers.  Every file that defines SQL-callable functions
 * (PG_FUNCTION_INFO_V1) must: the Makefile compiles every object with
 * -fvisibility=hidden, so the shared library exports only what the server
 * looks up by name (the SQL-callable functions, their pg_finfo_ records,
 * Pg_magic_func, _PG_init and the background worker's entry point,
 * atomic_commit_recovery_main), never the names of the core (ring_free,
 * jump_back_hash, ...), which would otherwise share the server's namespace
 * with every other library it loads; on PostgreSQL 15 only the markings
 * below export a file's functions, which without this header would
 * silently not be.  test/run-build-tests checks the exports against the SQL
 * scripts.  The files of the core (src/core) see no PostgreSQL header, this
 * one included.
 */
#ifndef SUBSETTING_COMPAT_H
#define SUBSETTING_COMPAT_H

#include "fmgr.h"

#if PG_VERSION_NUM < 150000
#error "subsetting needs PostgreSQL 15 or later (it is built and tested with 15 and 18)"
#endif

/*
 * VARDATA_ANY, VARSIZE_ANY_EXHDR and the other varlena macros: in varatt.h
 * from PostgreSQL 16 on, which postgres.h no longer includes.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * A function that does not return: PostgreSQL 18 writes pg_noreturn before
 * the declaration and has no pg_attribute_noreturn() any more; before 18,
 * pg_attribute_noreturn() is the same attribute (GCC and Clang accept it
 * there too).
 */
#if PG_VERSION_NUM < 180000
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * The module's magic block (src/module.c): from PostgreSQL 18 on with the
 * module's name and version, which pg_get_loaded_modules() shows.
 * SUBSETTING_VERSION is the release's version, from the control file (the
 * Makefile defines it).
 */
#ifdef PG_MODULE_MAGIC_EXT
#define SUBSETTING_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "subsetting", .version = SUBSETTING_VERSION)
#else
#define SUBSETTING_MODULE_MAGIC PG_MODULE_MAGIC
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

/* Whether role owns relation relid, or is a member of its owner (utils/acl.h). */
#if PG_VERSION_NUM >= 160000
#define RELATION_OWNERCHECK(relid, role) object_ownercheck(RelationRelationId, (relid), (role))
#else
#define RELATION_OWNERCHECK(relid, role) pg_class_ownercheck((relid), (role))
#endif

/*
 * The map of a table's columns to another's, by name (access/attmap.h;
 * PostgreSQL 16 added missing_ok), and an index defined on a table as
 * CREATE INDEX does (commands/defrem.h; 16 added the partitions' count,
 * -1 where there are none to count).
 */
#if PG_VERSION_NUM >= 160000
#define ATTRMAP_BY_NAME(in, out) build_attrmap_by_name((in), (out), false)
#define DEFINE_INDEX(relid, stmt) \
	DefineIndex((relid), (stmt), InvalidOid, InvalidOid, InvalidOid, -1, false, true, true, false, true)
#else
#define ATTRMAP_BY_NAME(in, out) build_attrmap_by_name((in), (out))
#define DEFINE_INDEX(relid, stmt) \
	DefineIndex((relid), (stmt), InvalidOid, InvalidOid, InvalidOid, false, true, true, false, true)
#endif

/* The oldest transaction the commit log still knows (access/transam.h). */
#if PG_VERSION_NUM >= 170000
#define OLDEST_CLOG_XID (TransamVariables->oldestClogXid)
#else
#define OLDEST_CLOG_XID (ShmemVariableCache->oldestClogXid)
#endif

#endif							/* SUBSETTING_COMPAT_H */
