/*
 * src/compat.h
 *		The one place for differences between PostgreSQL major versions.
 *
 * The extension builds against PostgreSQL 13 to 17.
 */
#ifndef SUBSETTING_COMPAT_H
#define SUBSETTING_COMPAT_H

#if PG_VERSION_NUM < 130000
#error "subsetting needs PostgreSQL 13 or later"
#endif

/* The local id of the backend's current top-level transaction (storage/proc.h). */
#if PG_VERSION_NUM >= 170000
#define CURRENT_LOCAL_TRANSACTION_ID() (MyProc->vxid.lxid)
#else
#define CURRENT_LOCAL_TRANSACTION_ID() (MyProc->lxid)
#endif

#endif							/* SUBSETTING_COMPAT_H */
