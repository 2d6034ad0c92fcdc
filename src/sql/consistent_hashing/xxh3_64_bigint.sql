-- src/sql/consistent_hashing/xxh3_64_bigint.sql
--	xxh3_64(bigint): the stable 64-bit hash of an integer key, for the
--	functions that take a bigint key as already hashed (ring_partition,
--	ring_nodes).  A file of its own, beside xxh3_64.sql, because it came in
--	1.2: the update to 1.2 creates it alone.

CREATE FUNCTION xxh3_64(key bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxh3_64_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION xxh3_64(bigint) IS
'XXH3-64 (seed 0) of the 8 bytes of the integer, least significant first, as a signed 64-bit integer: hash4j''s Hashing.xxh3_64().hashLongToLong(key); ring_partition(ring, xxh3_64(id)) spreads integer ids over a ring''s partitions';
