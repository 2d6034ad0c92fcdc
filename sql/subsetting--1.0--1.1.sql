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

