-- src/sql/ring/partition_ring.sql
--	the partition_ring type and its text and binary I/O

CREATE TYPE partition_ring;

CREATE FUNCTION partition_ring_in(cstring)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_out(partition_ring)
RETURNS cstring
AS 'MODULE_PATHNAME', 'partition_ring_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_recv(internal)
RETURNS partition_ring
AS 'MODULE_PATHNAME', 'partition_ring_recv'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION partition_ring_send(partition_ring)
RETURNS bytea
AS 'MODULE_PATHNAME', 'partition_ring_send'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: large rings live out of line uncompressed, so that the
-- lookups read their header with a cheap slice fetch.
CREATE TYPE partition_ring (
    INPUT = partition_ring_in,
    OUTPUT = partition_ring_out,
    RECEIVE = partition_ring_recv,
    SEND = partition_ring_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = external
);

COMMENT ON TYPE partition_ring IS
'2^part_power partitions, each with replicas placed on distinct weighted nodes in distinct failure domains; text form is JSON';

COMMENT ON FUNCTION partition_ring_in(cstring) IS 'partition_ring from its JSON text form (validated)';

COMMENT ON FUNCTION partition_ring_out(partition_ring) IS 'JSON text form of a partition_ring';

COMMENT ON FUNCTION partition_ring_recv(internal) IS 'partition_ring from its binary form (validated)';

COMMENT ON FUNCTION partition_ring_send(partition_ring) IS 'binary form of a partition_ring (fixed-width little-endian)';
