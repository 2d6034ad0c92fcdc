/*
 * src/ring_cache.c
 *		Reading partition ring values on the server: the core's allocator,
 *		interrupt check and digest (SHA-256), decoding a stored ring, and
 *		the backend-wide cache of decoded rings that every function reading
 *		a ring goes through.
 *
 * What the cache promises (docs/ring.md says it for users):
 *
 * - A hit is the same ring.  Entries are found by the SHA-256 digest in the
 *   header of a format 2 value (with the format and the size): every way a
 *   value comes into being (ring_build, ring_rebalance, text input, binary
 *   input) computes or checks that digest, so equal digests mean equal
 *   bytes.  A format 1 value (written by 1.0) carries only a 64-bit
 *   fingerprint that anyone can make collide, so it is found by the SHA-256
 *   of its whole bytes, computed when it is read.
 *
 * - Memory is bounded.  Each call site (the FmgrInfo of one function call
 *   in a query) holds a pin on the ring it last used, so that a query
 *   decodes a ring once, not once per row, and rings in use are never
 *   evicted under it; it drops the pin when it moves to another ring and
 *   when the query ends (a reset callback on the call site's memory
 *   context), at the latest at the end of the transaction.  Rings no call
 *   site holds are kept, least recently used first out, within
 *   subsetting.ring_cache_size.  So the memory is at most the setting plus
 *   one ring per call site running, whatever the shape of the query.
 *
 * - Finding a ring reads the header of the value only (a slice of a
 *   toasted value: one toast chunk); and within one statement a call site
 *   that sees the same toast pointer again skips even that.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "int4_array.h"
#include "module.h"
#include "ring_cache.h"
#include "ring_errors.h"

StaticAssertDecl(PG_SHA256_DIGEST_LENGTH == RING_DIGEST_SIZE,
				 "the ring digest is a SHA-256");

/* ---- the core's allocator, interrupt check and digest, on the server ---- */

static void *
ring_palloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
ring_pfree(void *ctx, void *ptr)
{
	pfree(ptr);
}

/* SHA-256 in steps of 4 MB, answering cancel between them (about 3 ms each) */
#define DIGEST_STEP (4 * 1024 * 1024)

static int
ring_sha256(void *ctx, const uint8_t *data, size_t len, uint8_t *out)
{
	pg_cryptohash_ctx *h = pg_cryptohash_create(PG_SHA256);
	size_t		done = 0;

	if (h == NULL || pg_cryptohash_init(h) < 0)
		elog(ERROR, "could not initialize a SHA-256 context: %s",
			 h != NULL ? pg_cryptohash_error(h) : "out of memory");
	do
	{
		size_t		n = Min(len - done, (size_t) DIGEST_STEP);

		CHECK_FOR_INTERRUPTS();
		if (pg_cryptohash_update(h, data + done, n) < 0)
			elog(ERROR, "could not compute a SHA-256 digest: %s", pg_cryptohash_error(h));
		done += n;
	} while (done < len);
	if (pg_cryptohash_final(h, out, RING_DIGEST_SIZE) < 0)
		elog(ERROR, "could not compute a SHA-256 digest: %s", pg_cryptohash_error(h));
	pg_cryptohash_free(h);
	return 0;
}

ring_env
ring_server_env(MemoryContext cxt)
{
	ring_env	env;

	env.alloc = ring_palloc;
	env.free = ring_pfree;
	env.interrupts = &server_interrupts;
	env.digest = ring_sha256;
	env.ctx = cxt;
	return env;
}

/* ---- reading ring values ---- */

static void
decode_value(struct varlena *v, MemoryContext cxt, bool partition_major, ring *out)
{
	ring_env	env = ring_server_env(cxt);
	ring_error	err;

	if (ring_decode_as(&env, (const uint8 *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
					   partition_major, out, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
}

void
ring_decode_datum(Datum d, MemoryContext cxt, ring *out)
{
	struct varlena *v = PG_DETOAST_DATUM(d);

	decode_value(v, cxt, false, out);
	if ((Pointer) v != DatumGetPointer(d))
		pfree(v);
}

/* ---- the cache ---- */

/* What identifies a stored ring: equal identities, equal bytes. */
typedef struct ring_identity
{
	uint32		format_version;
	Size		size;			/* bytes, without the varlena header */
	uint8		digest[RING_DIGEST_SIZE];	/* format 2: the header's; format
											 * 1: SHA-256 of all the bytes */
} ring_identity;

typedef struct ring_cache_entry
{
	decoded_ring decoded;		/* first: what callers get */
	dlist_node	node;			/* in ring_cache_entries */
	MemoryContext context;		/* holds the entry and all it points to */
	ring_identity id;
	Size		memory;			/* bytes of the decoded ring */
	uint64		last_used;
	int			pins;			/* call sites holding it, this transaction */
	/* computed when first asked for */
	ring_node_stat *stats;
	bool		dispersion_known[3];
	uint64		dispersion[3];
	bool		digest_known;
	uint8		digest[RING_DIGEST_SIZE];	/* of the format 2 encoding */
} ring_cache_entry;

/*
 * subsetting.ring_cache_size: the most memory, in kB, that the decoded rings
 * no running call site holds may take.
 */
static int	ring_cache_size_kb = 128 * 1024;

static dlist_head ring_cache_entries = DLIST_STATIC_INIT(ring_cache_entries);
static Size ring_cache_memory;	/* of all entries */
static uint64 ring_cache_clock;
static MemoryContext ring_cache_context;	/* parent of the entries' contexts */

/* Pins taken in an earlier transaction are void; see release_all_pins. */
static uint64 pin_epoch = 1;
static bool xact_callback_registered;

/*
 * A pin: a call site's hold on an entry.  While pins > 0 the entry is not
 * evicted.
 */
typedef struct ring_pin
{
	ring_cache_entry *entry;	/* NULL: holds nothing */
	uint64		epoch;			/* pin_epoch when taken */
	/* the toast pointer the entry was last found by, in this statement */
	bool		has_pointer;
	struct varatt_external pointer;
	LocalTransactionId lxid;
	TimestampTz statement_start;
} ring_pin;

/* The pins of one call site (fn_extra), one per argument. */
typedef struct ring_call_site
{
	MemoryContextCallback callback;
	int			nargs;
	ring_pin	pins[FLEXIBLE_ARRAY_MEMBER];
} ring_call_site;

/* A pin held until a memory context is reset or deleted (SRFs). */
typedef struct ring_held
{
	MemoryContextCallback callback;
	ring_pin	pin;
} ring_held;

static bool
pin_valid(const ring_pin *pin)
{
	return pin->entry != NULL && pin->epoch == pin_epoch;
}

static void
evict(ring_cache_entry *e)
{
	Assert(e->pins == 0);
	dlist_delete(&e->node);
	ring_cache_memory -= e->memory;
	MemoryContextDelete(e->context);
}

/*
 * Drop rings no call site holds, least recently used first, until those
 * kept and `wanted` more bytes fit in subsetting.ring_cache_size.
 */
static void
trim_cache(Size wanted)
{
	Size		limit = (Size) ring_cache_size_kb * 1024;

	while (ring_cache_memory + wanted > limit)
	{
		ring_cache_entry *victim = NULL;
		dlist_iter	it;

		dlist_foreach(it, &ring_cache_entries)
		{
			ring_cache_entry *e = dlist_container(ring_cache_entry, node, it.cur);

			if (e->pins == 0 && (victim == NULL || e->last_used < victim->last_used))
				victim = e;
		}
		if (victim == NULL)
			return;				/* everything left is in use */
		evict(victim);
	}
}

static void
unpin(ring_pin *pin)
{
	if (pin_valid(pin))
	{
		Assert(pin->entry->pins > 0);
		pin->entry->pins--;
	}
	pin->entry = NULL;
	pin->has_pointer = false;
}

static void
pin_entry(ring_pin *pin, ring_cache_entry *e)
{
	if (pin_valid(pin) && pin->entry == e)
		return;
	unpin(pin);
	e->pins++;
	pin->entry = e;
	pin->epoch = pin_epoch;
}

/* The query (or the SRF) is over: drop the pins, keep within the setting. */
static void
call_site_done(void *arg)
{
	ring_call_site *site = (ring_call_site *) arg;

	for (int i = 0; i < site->nargs; i++)
		unpin(&site->pins[i]);
	trim_cache(0);
}

static void
held_done(void *arg)
{
	ring_held  *held = (ring_held *) arg;

	unpin(&held->pin);
	trim_cache(0);
}

/*
 * At the end of a transaction every query is over, also those whose call
 * sites live on in a longer-lived context (a PL/pgSQL function's): their
 * pins are void from now on (the epoch), and rings beyond the setting go.
 */
static void
release_all_pins(XactEvent event, void *arg)
{
	dlist_iter	it;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT &&
		event != XACT_EVENT_PREPARE)
		return;
	pin_epoch++;
	dlist_foreach(it, &ring_cache_entries)
		dlist_container(ring_cache_entry, node, it.cur)->pins = 0;
	trim_cache(0);
}

static bool
same_identity(const ring_identity *a, const ring_identity *b)
{
	return a->format_version == b->format_version && a->size == b->size &&
		memcmp(a->digest, b->digest, RING_DIGEST_SIZE) == 0;
}

static ring_cache_entry *
find_entry(const ring_identity *id)
{
	dlist_iter	it;

	dlist_foreach(it, &ring_cache_entries)
	{
		ring_cache_entry *e = dlist_container(ring_cache_entry, node, it.cur);

		if (same_identity(&e->id, id))
			return e;
	}
	return NULL;
}

/*
 * The identity of a stored ring, from the header alone for format 2.  For
 * format 1 the whole value is read and digested; *full receives it then (to
 * decode from), else NULL.  Returns false if the header is not a ring's:
 * then decoding reports what is wrong.  *header receives the header.
 */
static bool
identify(Datum d, ring_identity *id, ring_header *header, struct varlena **full)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varlena *slice = NULL;
	const uint8 *bytes;
	Size		have;
	bool		ok;

	*full = NULL;
	memset(id, 0, sizeof(*id));
	if (VARATT_IS_EXTERNAL(raw) || VARATT_IS_COMPRESSED(raw))
	{
		id->size = toast_raw_datum_size(d) - VARHDRSZ;
		slice = PG_DETOAST_DATUM_SLICE(d, 0, RING_HEADER_SIZE);
		bytes = (const uint8 *) VARDATA_ANY(slice);
		have = VARSIZE_ANY_EXHDR(slice);
	}
	else
	{
		bytes = (const uint8 *) VARDATA_ANY(raw);
		have = VARSIZE_ANY_EXHDR(raw);
		id->size = have;
	}
	ok = ring_read_header(bytes, have, header, NULL) == RING_OK;
	if (slice != NULL)
		pfree(slice);
	if (!ok)
		return false;
	id->format_version = header->format_version;
	if (header->format_version == RING_FORMAT_VERSION)
		memcpy(id->digest, header->digest, RING_DIGEST_SIZE);
	else
	{
		/* the fingerprint proves nothing: digest the whole value */
		*full = PG_DETOAST_DATUM(d);
		ring_sha256(NULL, (const uint8 *) VARDATA_ANY(*full),
					VARSIZE_ANY_EXHDR(*full), id->digest);
	}
	return true;
}

/* Decode d into a new entry (the cache made room first). */
static ring_cache_entry *
new_entry(Datum d, const ring_identity *id, const ring_header *header,
		  struct varlena *full)
{
	MemoryContext context;
	ring_cache_entry *e;
	struct varlena *v = full != NULL ? full : PG_DETOAST_DATUM(d);
	Size		memory;

	if (header->part_power <= RING_MAX_PART_POWER && header->node_count <= RING_MAX_NODES &&
		(uint64) header->replicas <= (RING_MAX_SLOTS >> header->part_power))
		memory = sizeof(ring_node) * (Size) header->node_count +
			sizeof(uint16) * ((Size) header->replicas << header->part_power);
	else
		memory = 0;				/* decoding will say what is wrong */
	trim_cache(memory);

	/*
	 * Decode in a context of the query's, so that an error frees it; only a
	 * ring that decoded is moved to the cache.
	 */
	context = AllocSetContextCreate(CurrentMemoryContext, "decoded partition ring",
									ALLOCSET_DEFAULT_SIZES);
	e = MemoryContextAllocZero(context, sizeof(ring_cache_entry));
	decode_value(v, context, true, &e->decoded.r);
	if ((Pointer) v != DatumGetPointer(d))
		pfree(v);
	elog(DEBUG1, "partition ring cache: decoded a ring of %zu bytes (format %u)",
		 id->size, id->format_version);
	e->decoded.by_partition = e->decoded.r.assignment;
	e->context = context;
	e->id = *id;
	e->memory = memory;
	if (e->decoded.r.format_version == RING_FORMAT_VERSION)
	{
		e->digest_known = true;
		memcpy(e->digest, e->decoded.r.digest, RING_DIGEST_SIZE);
	}

	if (ring_cache_context == NULL)
		ring_cache_context = AllocSetContextCreate(TopMemoryContext, "partition ring cache",
												   ALLOCSET_SMALL_SIZES);
	if (!xact_callback_registered)
	{
		RegisterXactCallback(release_all_pins, NULL);
		xact_callback_registered = true;
	}
	MemoryContextSetParent(context, ring_cache_context);
	dlist_push_head(&ring_cache_entries, &e->node);
	ring_cache_memory += memory;
	return e;
}

/* The decoded ring of argument argno, held by pin. */
static const decoded_ring *
pinned_ring(FunctionCallInfo fcinfo, int argno, ring_pin *pin)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast_pointer;
	bool		on_disk = VARATT_IS_EXTERNAL_ONDISK(raw);
	LocalTransactionId lxid = CURRENT_LOCAL_TRANSACTION_ID();
	TimestampTz statement_start = GetCurrentStatementStartTimestamp();
	ring_identity id;
	ring_header header;
	struct varlena *full;
	ring_cache_entry *e;

	if (on_disk)
	{
		/*
		 * A toast value is never changed in place, and its OID is not given
		 * to another value while a statement runs (that would need the value
		 * deleted, removed by VACUUM, and the OID counter to wrap around,
		 * while the statement's snapshot holds the value back): the same
		 * pointer in the same statement is the same ring.
		 */
		VARATT_EXTERNAL_GET_POINTER(toast_pointer, raw);
		if (pin_valid(pin) && pin->has_pointer && pin->lxid == lxid &&
			lxid != InvalidLocalTransactionId &&
			pin->statement_start == statement_start &&
			memcmp(&pin->pointer, &toast_pointer, sizeof(toast_pointer)) == 0)
		{
			pin->entry->last_used = ++ring_cache_clock;
			return &pin->entry->decoded;
		}
	}

	if (!identify(d, &id, &header, &full))
	{
		/* not a ring's header: decoding says what is wrong */
		ring		r;

		ring_decode_datum(d, CurrentMemoryContext, &r);
		elog(ERROR, "partition ring with a malformed header decoded");
	}
	if (pin_valid(pin) && same_identity(&pin->entry->id, &id))
		e = pin->entry;
	else if ((e = find_entry(&id)) == NULL)
	{
		/* drop this site's old ring first, so that it can make room */
		unpin(pin);
		e = new_entry(d, &id, &header, full);
		full = NULL;
	}
	if (full != NULL && (Pointer) full != DatumGetPointer(d))
		pfree(full);
	pin_entry(pin, e);
	e->last_used = ++ring_cache_clock;
	pin->has_pointer = on_disk;
	if (on_disk)
	{
		pin->pointer = toast_pointer;
		pin->lxid = lxid;
		pin->statement_start = statement_start;
	}
	return &e->decoded;
}

const decoded_ring *
ring_decoded_arg(FunctionCallInfo fcinfo, int argno)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	ring_call_site *site;

	if (flinfo == NULL)			/* a direct call: hold it for the caller's context */
		return ring_decoded_arg_held(fcinfo, argno, CurrentMemoryContext);
	site = (ring_call_site *) flinfo->fn_extra;
	if (flinfo->fn_retset)
		elog(ERROR, "ring_decoded_arg called in a set-returning function; use ring_decoded_arg_held");
	if (argno < 0 || argno >= fcinfo->nargs)
		elog(ERROR, "ring_decoded_arg: no argument %d", argno);
	if (site == NULL)
	{
		site = MemoryContextAllocZero(flinfo->fn_mcxt,
									  offsetof(ring_call_site, pins) +
									  sizeof(ring_pin) * fcinfo->nargs);
		site->nargs = fcinfo->nargs;
		site->callback.func = call_site_done;
		site->callback.arg = site;
		MemoryContextRegisterResetCallback(flinfo->fn_mcxt, &site->callback);
		flinfo->fn_extra = site;
	}
	else if (argno >= site->nargs)
		elog(ERROR, "ring_decoded_arg: call site has %d arguments, not %d",
			 site->nargs, argno + 1);
	return pinned_ring(fcinfo, argno, &site->pins[argno]);
}

const decoded_ring *
ring_decoded_arg_held(FunctionCallInfo fcinfo, int argno, MemoryContext holder)
{
	ring_held  *held = MemoryContextAllocZero(holder, sizeof(ring_held));

	held->callback.func = held_done;
	held->callback.arg = held;
	MemoryContextRegisterResetCallback(holder, &held->callback);
	return pinned_ring(fcinfo, argno, &held->pin);
}

static ring_cache_entry *
entry_of(const decoded_ring *dr)
{
	return (ring_cache_entry *) dr;
}

const ring_node_stat *
ring_decoded_node_stats(const decoded_ring *dr)
{
	ring_cache_entry *e = entry_of(dr);

	if (e->stats == NULL)
	{
		ring_env	env = ring_server_env(CurrentMemoryContext);
		ring_error	err;
		ring_node_stat *stats = MemoryContextAlloc(e->context,
												   sizeof(ring_node_stat) * e->decoded.r.node_count);

		if (ring_core_node_stats(&env, &e->decoded.r, stats, &err) != RING_OK)
		{
			pfree(stats);
			ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
		}
		e->stats = stats;
	}
	return e->stats;
}

uint64
ring_decoded_dispersion_count(const decoded_ring *dr, ring_tier tier)
{
	ring_cache_entry *e = entry_of(dr);

	if (!e->dispersion_known[tier])
	{
		ring_env	env = ring_server_env(CurrentMemoryContext);
		ring_error	err;

		if (ring_dispersion_count(&env, &e->decoded.r, tier, &e->dispersion[tier],
								  &err) != RING_OK)
			ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
		e->dispersion_known[tier] = true;
	}
	return e->dispersion[tier];
}

const uint8 *
ring_decoded_digest(const decoded_ring *dr)
{
	ring_cache_entry *e = entry_of(dr);

	if (!e->digest_known)
	{
		/* decoded from format 1: the digest of its format 2 encoding */
		ring		copy = e->decoded.r;
		ring_env	env = ring_server_env(CurrentMemoryContext);
		ring_error	err;
		Size		size = ring_encoded_size(copy.part_power, copy.replicas, copy.node_count);
		uint8	   *buf = palloc_extended(size, MCXT_ALLOC_HUGE);

		if (ring_encode(&env, &copy, buf, &err) != RING_OK)
			ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
		memcpy(e->digest, copy.digest, RING_DIGEST_SIZE);
		e->digest_known = true;
		pfree(buf);
	}
	return e->digest;
}

void
ring_define_settings(void)
{
	DefineCustomIntVariable("subsetting.ring_cache_size",
							"Sets the most memory the partition rings a session keeps decoded for lookups may take.",
							"The least recently used rings are dropped to stay within it; the rings running queries use are kept while they run.",
							&ring_cache_size_kb,
							128 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

uint32
ring_decoded_partition_arg(const decoded_ring *dr, int32 partition)
{
	int64		parts = (int64) 1 << dr->r.part_power;

	if (partition < 0 || partition >= parts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition must be between 0 and %lld, got %d",
						(long long) (parts - 1), partition)));
	return (uint32) partition;
}

ArrayType *
ring_decoded_replicas(const decoded_ring *c, uint32 partition)
{
	uint32		R = c->r.replicas;
	ArrayType  *a = int4_array(NULL, (int) R);
	const uint16 *slots = c->by_partition + (Size) partition * R;
	int32	   *ids = (int32 *) ARR_DATA_PTR(a);
	uint32		rep;

	for (rep = 0; rep < R; rep++)
		ids[rep] = c->r.nodes[slots[rep]].id;
	return a;
}
