# Makefile for the subsetting extension (PGXS)

MODULE_big = subsetting
OBJS = \
	src/module.o \
	src/jump_sql.o \
	src/jumpbackanchor_sql.o \
	src/key_hash.o \
	src/partition_hash.o \
	src/subsets.o \
	src/table_owner.o \
	src/ring_sql.o \
	src/ring_cache.o \
	src/ring_errors.o \
	src/reshard_inspect.o \
	src/reshard_capture.o \
	src/reshard_engine.o \
	src/reshard_state.o \
	src/reshard_xact.o \
	src/reshard_steps.o \
	src/reshard_cutover.o \
	src/reshard_shards.o \
	src/ring_lookup_sql.o \
	src/core/baselines.o \
	src/core/jump.o \
	src/core/jumpbackanchor.o \
	src/core/ring_build.o \
	src/core/ring_check.o \
	src/core/ring_common.o \
	src/core/ring_domains.o \
	src/core/ring_encoding.o \
	src/core/ring_inspect.o \
	src/core/ring_json.o \
	src/core/ring_lookup.o \
	src/core/ring_place.o \
	src/core/ring_rebalance.o \
	src/core/ring_repair.o \
	src/core/ring_tree.o \
	src/core/ringsteady.o \
	src/core/rocksteadier.o \
	src/core/subset_metrics.o

EXTENSION = subsetting
EXTVERSION = $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" $(srcdir)/$(EXTENSION).control)

# The SQL sources: every routine, type, operator class and view of the
# current version in one file of sql/src/, in the order the install script
# creates them (docs/architecture.md, "The SQL sources").
SQL_SOURCES = \
	sql/src/consistent_hashing/jumpbackhash.sql \
	sql/src/consistent_hashing/jumphash.sql \
	sql/src/consistent_hashing/xxh3_64.sql \
	sql/src/consistent_hashing/jumpbackanchorhash.sql \
	sql/src/consistent_hashing/jumpbackanchorhash_state.sql \
	sql/src/subsets/ringsteady_subset.sql \
	sql/src/subsets/rocksteadier_subset.sql \
	sql/src/subsets/baseline_subsets.sql \
	sql/src/subsets/subset_metrics.sql \
	sql/src/ring/partition_ring.sql \
	sql/src/ring/ring_build.sql \
	sql/src/ring/ring_lookups.sql \
	sql/src/ring/ring_handoff_nodes.sql \
	sql/src/ring/ring_inspect.sql \
	sql/src/partition_hash/operator_classes.sql \
	sql/src/partition_hash/jumpbackhash_create_operator_classes.sql \
	sql/src/partition_hash/jumpbackhash_partitioning_problems.sql \
	sql/src/resharding/sharding_layout.sql \
	sql/src/resharding/reshard_bucket_sql.sql \
	sql/src/resharding/sharded_tables.sql \
	sql/src/resharding/reshard_dry_run.sql \
	sql/src/resharding/reshard_check.sql \
	sql/src/resharding/reshard_state.sql \
	sql/src/resharding/reshard_progress.sql \
	sql/src/resharding/reshard_capture.sql \
	sql/src/resharding/reshard_row_image_hash.sql \
	sql/src/resharding/reshard_expect_phase.sql \
	sql/src/resharding/reshard_phase_plan.sql \
	sql/src/resharding/reshard_phase_setup.sql \
	sql/src/resharding/reshard_phase_copy.sql \
	sql/src/resharding/reshard_phase_apply.sql \
	sql/src/resharding/reshard_phase_verify.sql \
	sql/src/resharding/reshard_takeover_sql.sql \
	sql/src/resharding/reshard_guard.sql \
	sql/src/resharding/reshard_phase_check.sql \
	sql/src/resharding/reshard_phase_cutover.sql \
	sql/src/resharding/reshard_phase_finish.sql \
	sql/src/resharding/reshard_phase_undo.sql \
	sql/src/resharding/reshard_phase_shard_views.sql \
	sql/src/resharding/reshard_engine.sql \
	sql/src/resharding/reshard_add_partition.sql \
	sql/src/resharding/reshard_remove_partition.sql \
	sql/src/resharding/reshard_abort.sql

# Released scripts, never edited; the current version's full script and its
# update script are assembled from sql/src/.
DATA = \
	sql/subsetting--1.0.sql \
	sql/subsetting--1.0--1.1.sql
DATA_built = \
	sql/subsetting--$(EXTVERSION).sql \
	sql/subsetting--1.1--1.2.sql
PGFILEDESC = "subsetting - consistent hashing, backend subsetting and partition rings"

REGRESS = \
	upgrade \
	ring_upgrade \
	jump \
	jumpbackanchorhash \
	jump_in_tables \
	keys \
	reshard \
	reshard_safety \
	reshard_metadata \
	reshard_hash \
	reshard_anchor \
	reshard_helpers_security \
	reshard_attacks \
	reshard_constraints \
	reshard_takeover \
	reshard_engine \
	engine_setup \
	engine_capture \
	engine_copy \
	engine_catch_up \
	engine_verify \
	engine_cutover \
	engine_finish \
	engine_undo \
	partition_hash \
	ringsteady \
	rocksteadier \
	subset_baselines \
	subset_metrics \
	ring \
	ring_errors \
	ring_cache \
	ring_golden \
	ring_lookup \
	install_as_owner \
	internal_routines \
	argument_sweep

# Concurrency: PostgreSQL's isolation tester (specs/, expected/), run by
# make installcheck after the regression tests.
ISOLATION = \
	reshard_direct_writers \
	reshard_read_write \
	reshard_two_at_once \
	reshard_long_reader \
	reshard_engine_writers \
	reshard_engine_cutover \
	reshard_foreign_keys \
	reshard_catch_up \
	reshard_session_settings

# Tests with servers of their own (a coordinator and shards, dump and
# restore, encodings, query cancel, memory, Swift's handoffs): TAP tests on
# PostgreSQL::Test::Cluster, test/t/*.pl, run by make installcheck after the
# isolation tests (PROVE_TESTS=test/t/001_sharding_fdw.pl picks one).
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# The release's version: the control file's default_version as a semantic
# version (1.1 gives 1.1.0).  The library carries it in its magic block
# (src/compat.h, PostgreSQL 18 on); make dist names the archive with it.
DISTVERSION = $(if $(word 3,$(subst ., ,$(EXTVERSION))),$(EXTVERSION),$(EXTVERSION).0)

PG_CPPFLAGS = -I$(srcdir)/src -DSUBSETTING_VERSION='"$(DISTVERSION)"'
# Export only what the server looks up by name (src/compat.h says how).
PG_CFLAGS = -fvisibility=hidden

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

sql/subsetting--$(EXTVERSION).sql: $(SQL_SOURCES) sql/src/assemble
	sql/src/assemble install $(EXTVERSION) $(SQL_SOURCES) >$@

sql/subsetting--1.1--1.2.sql: sql/src/updates/subsetting--1.1--1.2.sql $(SQL_SOURCES) sql/src/assemble
	sql/src/assemble update 1.1 1.2 $< >$@

# PGXS knows no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/core/*.h)
# ... and the magic block when the version changes.
src/module.o src/module.bc: $(srcdir)/$(EXTENSION).control

# `make check-core`: the C tests of the pure core, without PostgreSQL
# (test/Makefile; `make check-core VARIANT=sanitize` under ASan and UBSan).
check-core:
	$(MAKE) -C test check

# `make bench`: every benchmark, and the report docs/performance.md
# (test/run-benchmarks; `test/run-benchmarks --quick` for a short run).
bench:
	test/run-benchmarks

# `make dist`: the release archive $(EXTENSION)-$(DISTVERSION).zip of the
# files committed at HEAD (git archive), under the directory
# $(EXTENSION)-$(DISTVERSION)/, written into DIST_DIR (default: here).  Its
# version is DISTVERSION (above), as META.json says (test/run-build-tests
# checks both).
DIST_DIR = .
dist:
	@git -C $(srcdir) diff --quiet HEAD -- || \
		echo "warning: uncommitted changes are not in the archive (it is made from HEAD)" >&2
	git -C $(srcdir) archive --format=zip --prefix=$(EXTENSION)-$(DISTVERSION)/ \
		-o $(abspath $(DIST_DIR))/$(EXTENSION)-$(DISTVERSION).zip HEAD

# `make clean` also removes the C tests' builds and the release archives.
EXTRA_CLEAN = $(EXTENSION)-*.zip
clean: clean-core
clean-core:
	$(MAKE) -C test clean

.PHONY: check-core bench dist clean-core
