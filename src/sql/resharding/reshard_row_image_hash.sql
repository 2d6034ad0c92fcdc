-- src/sql/resharding/reshard_row_image_hash.sql
--	reshard_row_image_hash: a hash of a row's bytes

CREATE FUNCTION reshard_row_image_hash(row_value record) RETURNS bigint
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'reshard_row_image_hash';

COMMENT ON FUNCTION reshard_row_image_hash(record) IS
'a 64-bit hash of the binary image of a row''s values (dropped columns skipped; no output function or setting involved): what resharding sums to compare a table''s rows with their copies';
