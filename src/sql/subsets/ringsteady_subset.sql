-- src/sql/subsets/ringsteady_subset.sql
--	ringsteady_subset: the backends of a frontend by Ringsteady

CREATE FUNCTION ringsteady_subset(frontend int, backends int, subset_size int,
                                  backend_scaling boolean DEFAULT true)
RETURNS int[]
AS 'MODULE_PATHNAME', 'ringsteady_subset'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ringsteady_subset(int, int, int, boolean) IS
'the subset_size backends (of backends) that frontend task number frontend connects to, by Ringsteady subsetting (Google, ACM Queue 2023), in ring order; with backend_scaling (Figure 4c) exactly the Ringsteady post''s code, with an exact rotation';
