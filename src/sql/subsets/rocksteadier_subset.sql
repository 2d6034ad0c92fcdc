-- src/sql/subsets/rocksteadier_subset.sql
--	rocksteadier_subset: the backends of a frontend by Rocksteadier

CREATE FUNCTION rocksteadier_subset(frontend int, backends int, subset_size int,
                                    lot_size int DEFAULT 10)
RETURNS int[]
AS 'MODULE_PATHNAME', 'rocksteadier_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION rocksteadier_subset(int, int, int, int) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Rocksteadier subsetting (Google, ACM Queue 2023): lots of lot_size backends shuffled per lot of frontends, visited in Ringsteady order';
