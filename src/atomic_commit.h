/*
 * src/atomic_commit.h
 *		Atomic commit across servers (docs/scaling-out.md, "Atomic commit"):
 *		what atomic_commit.c, the two-phase commit of a transaction, and
 *		atomic_commit_recovery.c, the resolution of what a crash left
 *		prepared, share.
 */
#ifndef SUBSETTING_ATOMIC_COMMIT_H
#define SUBSETTING_ATOMIC_COMMIT_H

#include "libpq-fe.h"

/*
 * The name of every part the extension prepares on a server:
 * subsetting_<system>_<database>_<start>_<transaction>_<mapping>_<random>:
 * this coordinator's system identifier and database OID (recovery touches
 * only the names of this database's), the postmaster's start time here (a
 * transaction ID that a crash left unused may be given again after it), the
 * transaction's full ID, the user mapping's OID (one part per mapping), and
 * a random number (so that no one on a server can take a name first).
 */
#define ATOMIC_COMMIT_GID_PREFIX "subsetting_"

/*
 * The transaction's part on server, through user's mapping, commits with it
 * (or not at all), as if the transaction had written there: for work done
 * there through postgres_fdw that the executor does not see as a write (the
 * resharding engine's, through a view).  Nothing if server is not a
 * postgres_fdw server.
 */
extern void atomic_commit_include(Oid server, Oid user);

/* This database's prefix of those names (no other system's, no other database's). */
extern char *atomic_commit_gid_prefix(void);

/* The table of decisions, by the parts' names: its OID and owner; InvalidOid without the extension. */
extern Oid	atomic_commit_decisions(Oid *owner);

/*
 * The next result of conn, waiting at most timeout_ms (< 0: no limit; this
 * backend's interrupts are then served); NULL when the time ran out, after
 * closing the connection's socket (so that its next user finds it broken).
 */
extern PGresult *atomic_commit_await(PGconn *conn, long timeout_ms);

/* atomic_commit_recovery.c: starts the recovery worker of this database, unless it is running. */
extern void atomic_commit_start_recovery(void);

#endif							/* SUBSETTING_ATOMIC_COMMIT_H */
