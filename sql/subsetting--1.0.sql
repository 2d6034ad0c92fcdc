/* sql/subsetting--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION subsetting" to load this file. \quit

--
-- Key to bucket: consistent hashing
--

CREATE FUNCTION jumpbackhash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumpbackhash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumpbackhash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by JumpBackHash with SplitMix64 (Ertl 2024), as hash4j''s ConsistentHashing.jumpBackHash(splitMix64_V1())';

CREATE FUNCTION jumphash(key bigint, buckets int)
RETURNS int
AS 'MODULE_PATHNAME', 'jumphash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jumphash(bigint, int) IS
'bucket in [0, buckets) of a 64-bit key by jump consistent hash (Lamping and Veach 2014), as the paper''s C++ code and ClickHouse''s jumpConsistentHash';

--
-- Backend subsetting
--

CREATE FUNCTION ringsteady_subset(frontend int, backends int, subset_size int,
                                  backend_scaling boolean DEFAULT true)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ringsteady_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ringsteady_subset(int, int, int, boolean) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Ringsteady subsetting (Google, ACM Queue 2023), in ring order; with backend_scaling (Figure 4c) exactly the Ringsteady post''s code, with an exact rotation';
