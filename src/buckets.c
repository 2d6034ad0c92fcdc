/*
 * src/buckets.c
 *		SQL functions that map a key to one of n buckets: jumpbackhash and
 *		jumphash of a bigint key, the stable 64-bit key hash xxh3_64 of text,
 *		bytea and uuid keys, and the jumpbackhash and jumphash overloads that
 *		take those keys.
 */
#include "postgres.h"

#include <xxhash.h>

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/uuid.h"

#include "compat.h"
#include "core/jump.h"

/*
 * XXH3 was experimental, and its values changed, before xxHash 0.8.0.  The
 * header is checked here, the library at run time (xxh3_of_bytes).
 */
#if XXH_VERSION_NUMBER < 800
#error "subsetting needs xxHash 0.8.0 or later (XXH3 values are stable since 0.8.0)"
#endif

static inline void
check_buckets(int32 buckets)
{
	if (buckets < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of buckets must be at least 1, got %d", buckets)));
}

/*
 * XXH3-64 with seed 0 of len bytes.  The SQL functions return it as a
 * bigint, the unsigned value's two's complement.
 */
static uint64
xxh3_of_bytes(const void *data, size_t len)
{
	static bool library_checked = false;

	if (!library_checked)
	{
		unsigned	version = XXH_versionNumber();

		if (version < 800)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the loaded libxxhash is version %u.%u.%u, 0.8.0 or later is needed",
							version / 10000, version / 100 % 100, version % 100),
					 errdetail("XXH3 values are stable only since xxHash 0.8.0.")));
		library_checked = true;
	}
	return (uint64) XXH3_64bits(data, len);
}

/*
 * The key hash of a text: XXH3-64 of its UTF-8 bytes, whatever the database
 * encoding.  Text in another encoding is converted to UTF-8 first (which
 * raises an error for a character that UTF-8 cannot represent); in a
 * SQL_ASCII database, where the bytes carry no encoding, they are hashed as
 * they are if they are valid UTF-8, and rejected if they are not.
 */
static uint64
xxh3_of_text(text *t)
{
	const char *data = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	char	   *utf8;
	uint64		hash;

	if (GetDatabaseEncoding() == PG_UTF8)
		return xxh3_of_bytes(data, len);

	utf8 = pg_server_to_any(data, len, PG_UTF8);
	if (utf8 == data)
		return xxh3_of_bytes(data, len);
	hash = xxh3_of_bytes(utf8, strlen(utf8));
	pfree(utf8);
	return hash;
}

static uint64
xxh3_of_bytea(bytea *b)
{
	return xxh3_of_bytes(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

/* The 16 bytes of a uuid, in network byte order: as it is stored. */
static uint64
xxh3_of_uuid(pg_uuid_t *u)
{
	return xxh3_of_bytes(u->data, UUID_LEN);
}

PG_FUNCTION_INFO_V1(jumpbackhash);
Datum
jumpbackhash(PG_FUNCTION_ARGS)
{
	uint64		key = (uint64) PG_GETARG_INT64(0);
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(key, buckets));
}

PG_FUNCTION_INFO_V1(jumphash);
Datum
jumphash(PG_FUNCTION_ARGS)
{
	uint64		key = (uint64) PG_GETARG_INT64(0);
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(key, buckets));
}

/*
 * xxh3_64(text), xxh3_64(bytea) and xxh3_64(uuid): one SQL name, three C
 * functions named after the SQL name and the argument type.
 */
PG_FUNCTION_INFO_V1(xxh3_64_text);
Datum
xxh3_64_text(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) xxh3_of_text(PG_GETARG_TEXT_PP(0)));
}

PG_FUNCTION_INFO_V1(xxh3_64_bytea);
Datum
xxh3_64_bytea(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) xxh3_of_bytea(PG_GETARG_BYTEA_PP(0)));
}

PG_FUNCTION_INFO_V1(xxh3_64_uuid);
Datum
xxh3_64_uuid(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) xxh3_of_uuid(PG_GETARG_UUID_P(0)));
}

/*
 * jumpbackhash(x, buckets) and jumphash(x, buckets) of a text, bytea or uuid
 * key x: the same as of the bigint xxh3_64(x).  The number of buckets is
 * checked before the key is hashed.
 */
PG_FUNCTION_INFO_V1(jumpbackhash_text);
Datum
jumpbackhash_text(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(xxh3_of_text(PG_GETARG_TEXT_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumpbackhash_bytea);
Datum
jumpbackhash_bytea(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(xxh3_of_bytea(PG_GETARG_BYTEA_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumpbackhash_uuid);
Datum
jumpbackhash_uuid(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_back_hash(xxh3_of_uuid(PG_GETARG_UUID_P(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_text);
Datum
jumphash_text(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(xxh3_of_text(PG_GETARG_TEXT_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_bytea);
Datum
jumphash_bytea(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(xxh3_of_bytea(PG_GETARG_BYTEA_PP(0)), buckets));
}

PG_FUNCTION_INFO_V1(jumphash_uuid);
Datum
jumphash_uuid(PG_FUNCTION_ARGS)
{
	int32		buckets = PG_GETARG_INT32(1);

	check_buckets(buckets);
	PG_RETURN_INT32(jump_consistent_hash(xxh3_of_uuid(PG_GETARG_UUID_P(0)), buckets));
}
