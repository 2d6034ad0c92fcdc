/*
 * src/key_hash.c
 *		XXH3-64 of text, bytea, uuid and bigint keys (see key_hash.h).
 *
 * xxHash is used header-only (XXH_INLINE_ALL): the hash is compiled into the
 * module, which depends on no libxxhash at run time, and its values depend
 * only on the header's version, checked here.
 */
#include "postgres.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "mb/pg_wchar.h"

#include "compat.h"
#include "key_hash.h"

/* XXH3 was experimental, and its values changed, before xxHash 0.8.0. */
#if XXH_VERSION_NUMBER < 800
#error "subsetting needs xxHash 0.8.0 or later (XXH3 values are stable since 0.8.0)"
#endif

/*
 * XXH3-64 with seed 0 of len bytes.  The SQL functions return it as a
 * bigint, the unsigned value's two's complement.
 */
static inline uint64
xxh3_of_bytes(const void *data, size_t len)
{
	return (uint64) XXH3_64bits(data, len);
}

/*
 * The key hash of a text: XXH3-64 of its UTF-8 bytes, whatever the database
 * encoding.  Text in another encoding is converted to UTF-8 first (which
 * raises an error for a character that UTF-8 cannot represent); in a
 * SQL_ASCII database, where the bytes carry no encoding, they are hashed as
 * they are if they are valid UTF-8, and rejected if they are not.
 */
uint64
key_hash_text(text *t)
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

uint64
key_hash_bytea(bytea *b)
{
	return xxh3_of_bytes(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

/* The 16 bytes of a uuid, in network byte order: as it is stored. */
uint64
key_hash_uuid(pg_uuid_t *u)
{
	return xxh3_of_bytes(u->data, UUID_LEN);
}

/*
 * The 8 bytes of a bigint, least significant first, whatever the platform's
 * byte order: hash4j's Hashing.xxh3_64().hashLongToLong(v).
 */
uint64
key_hash_int8(int64 v)
{
	uint64		u = (uint64) v;
	unsigned char bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (unsigned char) (u >> (8 * i));
	return xxh3_of_bytes(bytes, sizeof(bytes));
}
