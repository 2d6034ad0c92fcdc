/*
 * src/ring_cache.c
 *		Reading partition ring values on the server: the core's allocator and
 *		progress callback, decoding a stored ring, and the backend-wide cache
 *		of decoded rings that lookups use.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "compat.h"
#include "module.h"
#include "ring_cache.h"

/* ---- the core's allocator and progress callback, on the server ---- */

static void *
ring_palloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size, MCXT_ALLOC_NO_OOM);
}

static void
ring_pfree(void *ctx, void *ptr)
{
	pfree(ptr);
}

static int
ring_interrupts(void *ctx)
{
	CHECK_FOR_INTERRUPTS();
	return 0;
}

ring_env
ring_server_env(MemoryContext cxt)
{
	ring_env	env;

	env.alloc = ring_palloc;
	env.free = ring_pfree;
	env.progress = ring_interrupts;
	env.ctx = cxt;
	return env;
}

/* Raise the error the core reported; format_code is used for RING_EFORMAT. */
void
ring_report_error(const ring_error *err, int format_code)
{
	switch (err->code)
	{
		case RING_EINVAL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s", err->message)));
			break;
		case RING_ELIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s", err->message)));
			break;
		case RING_ENOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
			break;
		case RING_EFORMAT:
			ereport(ERROR,
					(errcode(format_code),
					 errmsg("%s", err->message)));
			break;
		default:
			elog(ERROR, "partition ring: unexpected status %d: %s",
				 (int) err->code, err->message);
	}
}

/* ---- reading ring values ---- */

/* Decode (and validate) a stored ring into memory of cxt. */
void
ring_decode_datum(Datum d, MemoryContext cxt, ring *out)
{
	struct varlena *v = PG_DETOAST_DATUM(d);
	ring_env	env = ring_server_env(cxt);
	ring_error	err;

	if (ring_decode(&env, (const uint8 *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
					out, &err) != RING_OK)
		ring_report_error(&err, ERRCODE_DATA_CORRUPTED);
	if ((Pointer) v != DatumGetPointer(d))
		pfree(v);
}

/*
 * Decoded rings, kept for the life of the backend and found by the
 * fingerprint and size stored in a value's header, so that lookups decode a
 * ring once per backend, not once per row or per statement, and a different
 * ring never hits a stale entry.  The header is read with a slice fetch, so
 * finding the entry of a large toasted ring costs one toast chunk, not the
 * ring.  The assignment is kept partition-major (the R replicas of a
 * partition side by side), so that a lookup touches one cache line however
 * large the ring.
 *
 * A slice fetch is an index scan of the toast table, many times the cost of
 * the lookup, so each entry also remembers the toast pointer (toast table,
 * value OID and sizes) of the stored value it was last found by, in the
 * current transaction.  A toast value is never changed in place, and its OID
 * is not given to another value while the transaction lasts (that would need
 * the value deleted, removed by VACUUM, and the OID counter to wrap around),
 * so the same pointer in the same transaction is the same ring: the rows of a
 * query after the first find the ring without a fetch.
 */
#define RING_CACHE_ENTRIES 4

/*
 * subsetting.ring_cache_size: the most memory, in kB, the decoded rings kept
 * take together; a larger ring is kept alone.
 */
static int	ring_cache_size_kb = 128 * 1024;

typedef struct ring_cache
{
	MemoryContext context;		/* holds r and by_partition; NULL when unused */
	uint64		fingerprint;
	Size		size;
	uint64		last_used;
	decoded_ring decoded;		/* what ring_decoded_arg gives */
	LocalTransactionId found_in;	/* the transaction of found_by, or
									 * InvalidLocalTransactionId */
	struct varatt_external found_by;	/* the toast pointer it was found by */
} ring_cache;

static ring_cache ring_caches[RING_CACHE_ENTRIES];
static uint64 ring_cache_clock;
static MemoryContext ring_cache_context;	/* parent of the entries' contexts */

/*
 * The fingerprint in the header of a ring value of `size` bytes, read
 * without detoasting the rest; false if the header is not a ring's.
 */
static bool
read_fingerprint(Datum d, Size size, uint64 *fingerprint)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varlena *slice = NULL;
	const uint8 *header;
	ring_header h;
	bool		found;

	if (size < RING_HEADER_SIZE)
		return false;
	if (VARATT_IS_EXTERNAL(raw) || VARATT_IS_COMPRESSED(raw))
	{
		slice = PG_DETOAST_DATUM_SLICE(d, 0, RING_HEADER_SIZE);
		if (VARSIZE_ANY_EXHDR(slice) < RING_HEADER_SIZE)
		{
			pfree(slice);
			return false;
		}
		header = (const uint8 *) VARDATA_ANY(slice);
	}
	else
		header = (const uint8 *) VARDATA_ANY(raw);
	found = ring_read_header(header, RING_HEADER_SIZE, &h, NULL) == RING_OK;
	*fingerprint = h.fingerprint;
	if (slice != NULL)
		pfree(slice);
	return found;
}

/* Remember, for this transaction, that entry holds the ring of *pointer. */
static void
remember_toast_pointer(ring_cache *entry, const struct varatt_external *pointer)
{
	entry->found_in = CURRENT_LOCAL_TRANSACTION_ID();
	entry->found_by = *pointer;
}

/*
 * An unused entry for a ring of `size` bytes: drops the least recently used
 * rings until one entry is free and the rings kept and the new one fit in
 * subsetting.ring_cache_size (or no ring is left).
 */
static ring_cache *
free_cache_entry(Size size)
{
	for (;;)
	{
		ring_cache *unused = NULL;
		ring_cache *least_recent = NULL;
		Size		kept = size;

		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context == NULL)
				unused = c;
			else
			{
				kept += c->size;
				if (least_recent == NULL || c->last_used < least_recent->last_used)
					least_recent = c;
			}
		}
		if (unused != NULL && (least_recent == NULL || kept <= (Size) ring_cache_size_kb * 1024))
			return unused;
		MemoryContextDelete(least_recent->context);
		least_recent->context = NULL;
	}
}

/* The decoded ring of argument argno, from the cache or decoded into it. */
const decoded_ring *
ring_decoded_arg(FunctionCallInfo fcinfo, int argno)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *raw = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast_pointer;
	const struct varatt_external *pointer = NULL;
	Size		size;
	uint64		fingerprint;
	ring_cache *entry;
	MemoryContext context;
	ring		decoded;
	uint16	   *by_partition;
	uint32		partitions;

	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		LocalTransactionId lxid = CURRENT_LOCAL_TRANSACTION_ID();

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, raw);
		pointer = &toast_pointer;
		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context != NULL && c->found_in == lxid && lxid != InvalidLocalTransactionId &&
				memcmp(&c->found_by, pointer, sizeof(toast_pointer)) == 0)
			{
				c->last_used = ++ring_cache_clock;
				return &c->decoded;
			}
		}
	}

	size = toast_raw_datum_size(d) - VARHDRSZ;
	if (read_fingerprint(d, size, &fingerprint))
	{
		for (int i = 0; i < RING_CACHE_ENTRIES; i++)
		{
			ring_cache *c = &ring_caches[i];

			if (c->context != NULL && c->fingerprint == fingerprint && c->size == size)
			{
				c->last_used = ++ring_cache_clock;
				if (pointer != NULL)
					remember_toast_pointer(c, pointer);
				return &c->decoded;
			}
		}
	}

	/*
	 * Make room first, so that the rings kept and the new one never take
	 * more than the setting.  Decode in a context of the query's, so that an
	 * error frees it; only a ring that decoded is moved to the cache.
	 */
	entry = free_cache_entry(size);
	context = AllocSetContextCreate(CurrentMemoryContext, "decoded partition ring",
									ALLOCSET_DEFAULT_SIZES);
	ring_decode_datum(d, context, &decoded);
	partitions = (uint32) 1 << decoded.part_power;
	by_partition = MemoryContextAlloc(context,
									  sizeof(uint16) * (Size) decoded.replicas * partitions);
	for (uint32 replica = 0; replica < decoded.replicas; replica++)
	{
		const uint16 *row = decoded.assignment + ((Size) replica << decoded.part_power);

		for (uint32 partition = 0; partition < partitions; partition++)
			by_partition[(Size) partition * decoded.replicas + replica] = row[partition];
	}
	pfree(decoded.assignment);
	decoded.assignment = NULL;

	if (ring_cache_context == NULL)
		ring_cache_context = AllocSetContextCreate(TopMemoryContext, "partition ring cache",
												   ALLOCSET_SMALL_SIZES);
	MemoryContextSetParent(context, ring_cache_context);
	entry->context = context;
	entry->fingerprint = decoded.fingerprint;
	entry->size = size;
	entry->last_used = ++ring_cache_clock;
	entry->decoded.r = decoded;
	entry->decoded.by_partition = by_partition;
	entry->found_in = InvalidLocalTransactionId;
	if (pointer != NULL)
		remember_toast_pointer(entry, pointer);
	return &entry->decoded;
}

void
ring_define_settings(void)
{
	DefineCustomIntVariable("subsetting.ring_cache_size",
							"Sets the most memory the partition rings a session keeps decoded for lookups may take.",
							"The least recently used rings are dropped to stay within it; a larger ring is kept alone.",
							&ring_cache_size_kb,
							128 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}
