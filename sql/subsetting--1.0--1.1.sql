/* sql/subsetting--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION subsetting UPDATE TO '1.1'" to load this file. \quit

--
-- Key to bucket: JumpBackAnchorHash
--


--
-- Hash operator classes: PARTITION BY HASH placed by JumpBackHash
--


--
-- Resharding
--


--
-- Partition ring
--

-- Values carry a SHA-256 digest since 1.1 (format 2; format 1 still reads):
-- ring_info's fingerprint is that digest, in hex.
COMMENT ON FUNCTION ring_info(partition_ring) IS
'summary of a ring: sizes, seed, fingerprint (SHA-256 digest of its contents, hex), largest |balance| in percent, zone and region dispersion';

