/*
 * src/key_hash.h
 *		The stable 64-bit hash of keys: XXH3-64 (seed 0) of a text's UTF-8
 *		bytes, of a bytea's bytes, of a uuid's 16 bytes and of a bigint's 8
 *		little-endian bytes.  Every function that places a text, bytea or
 *		uuid key goes through these, so that all of them place a key alike.
 */
#ifndef SUBSETTING_KEY_HASH_H
#define SUBSETTING_KEY_HASH_H

#include "utils/uuid.h"

extern uint64 key_hash_text(text *t);
extern uint64 key_hash_bytea(bytea *b);
extern uint64 key_hash_uuid(pg_uuid_t *u);
extern uint64 key_hash_int8(int64 v);

#endif							/* SUBSETTING_KEY_HASH_H */
