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
	src/resharding/procedures.o \
	src/resharding/driver.o \
	src/resharding/tables.o \
	src/resharding/state.o \
	src/resharding/claims.o \
	src/resharding/cleanup.o \
	src/resharding/xact.o \
	src/resharding/steps.o \
	src/resharding/cutover.o \
	src/resharding/shards.o \
	src/resharding/indexes.o \
	src/resharding/acl.o \
	src/resharding/capture.o \
	src/resharding/copy.o \
	src/resharding/remote.o \
	src/resharding/inspect.o \
	src/resharding/records.o \
	src/resharding/unique_constraints.o \
	src/resharding/foreign_keys.o \
	src/resharding/colocation.o \
	src/ring_lookup_sql.o \
	src/atomic_commit.o \
	src/atomic_commit_recovery.o \
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

# The released versions, oldest first.  A released version's scripts are in
# src/sql/released/ exactly as released, and installed as they are; only the
# current version (EXTVERSION), while it is not released, is assembled from
# the sources.  Releasing: add EXTVERSION here, then `make freeze`
# (docs/development.md, "Releasing"); test/run-build-tests checks all this.
RELEASED = 1.0 1.1

# The SQL sources: every routine, type, operator class and view of the
# current version in one file of src/sql/, in the order the install script
# creates them (docs/architecture.md, "The SQL sources").
SQL_SOURCES = \
	src/sql/consistent_hashing/jumpbackhash.sql \
	src/sql/consistent_hashing/jumphash.sql \
	src/sql/consistent_hashing/xxh3_64.sql \
	src/sql/consistent_hashing/xxh3_64_bigint.sql \
	src/sql/consistent_hashing/jumpbackanchorhash.sql \
	src/sql/consistent_hashing/jumpbackanchorhash_state.sql \
	src/sql/subsets/ringsteady_subset.sql \
	src/sql/subsets/rocksteadier_subset.sql \
	src/sql/subsets/baseline_subsets.sql \
	src/sql/subsets/subset_metrics.sql \
	src/sql/ring/partition_ring.sql \
	src/sql/ring/ring_build.sql \
	src/sql/ring/ring_lookups.sql \
	src/sql/ring/ring_handoff_nodes.sql \
	src/sql/ring/ring_inspect.sql \
	src/sql/partition_hash/support_schema.sql \
	src/sql/partition_hash/operator_classes_ddl.sql \
	src/sql/partition_hash/operator_classes.sql \
	src/sql/partition_hash/jumpbackhash_create_operator_classes.sql \
	src/sql/partition_hash/jumpbackhash_drop_operator_classes.sql \
	src/sql/partition_hash/jumpbackhash_partitioning_problems.sql \
	src/sql/partition_hash/partition_bound_guard.sql \
	src/sql/resharding/sharding_layout.sql \
	src/sql/resharding/reshard_bucket_sql.sql \
	src/sql/resharding/sharded_tables.sql \
	src/sql/resharding/reshard_dry_run.sql \
	src/sql/resharding/reshard_check.sql \
	src/sql/resharding/reshard_state.sql \
	src/sql/resharding/reshard_cleanup.sql \
	src/sql/resharding/reshard_progress.sql \
	src/sql/resharding/reshard_capture.sql \
	src/sql/resharding/reshard_row_image_hash.sql \
	src/sql/resharding/reshard_expect_phase.sql \
	src/sql/resharding/reshard_object_name.sql \
	src/sql/resharding/reshard_free_name.sql \
	src/sql/resharding/reshard_remote_revoke.sql \
	src/sql/resharding/reshard_remote_sql.sql \
	src/sql/resharding/reshard_revoke_others.sql \
	src/sql/resharding/reshard_key_indexes.sql \
	src/sql/resharding/reshard_transfer_table.sql \
	src/sql/resharding/reshard_copy_rows.sql \
	src/sql/resharding/reshard_remote_owner_checks.sql \
	src/sql/resharding/reshard_plan_table.sql \
	src/sql/resharding/reshard_plan_move.sql \
	src/sql/resharding/reshard_plan_bucket.sql \
	src/sql/resharding/reshard_plan_parent.sql \
	src/sql/resharding/reshard_plan_partitions.sql \
	src/sql/resharding/reshard_plan_shard_views.sql \
	src/sql/resharding/reshard_plan_key.sql \
	src/sql/resharding/reshard_plan.sql \
	src/sql/resharding/reshard_phase_setup.sql \
	src/sql/resharding/reshard_phase_copy.sql \
	src/sql/resharding/reshard_apply_log.sql \
	src/sql/resharding/reshard_phase_verify.sql \
	src/sql/resharding/reshard_option_changes.sql \
	src/sql/resharding/reshard_takeover_pairs.sql \
	src/sql/resharding/reshard_takeover_indexes.sql \
	src/sql/resharding/reshard_takeover_table.sql \
	src/sql/resharding/reshard_takeover_privileges.sql \
	src/sql/resharding/reshard_takeover_sql.sql \
	src/sql/resharding/reshard_guard.sql \
	src/sql/resharding/reshard_whole_row.sql \
	src/sql/resharding/reshard_catalog_check.sql \
	src/sql/resharding/reshard_cutover_shard_rows.sql \
	src/sql/resharding/reshard_phase_cutover.sql \
	src/sql/resharding/reshard_phase_finish.sql \
	src/sql/resharding/reshard_phase_undo.sql \
	src/sql/resharding/reshard_shard_views.sql \
	src/sql/resharding/reshard_engine.sql \
	src/sql/resharding/reshard_add_partition.sql \
	src/sql/resharding/reshard_remove_partition.sql \
	src/sql/resharding/reshard_abort.sql \
	src/sql/placement/routing_layout.sql \
	src/sql/placement/placement_plan.sql \
	src/sql/placement/move_collation_name.sql \
	src/sql/placement/move_column_definitions.sql \
	src/sql/placement/move_remote_indexes.sql \
	src/sql/placement/move_remote_checks.sql \
	src/sql/placement/move_destination_guard.sql \
	src/sql/placement/move_plan.sql \
	src/sql/placement/move_phase_setup.sql \
	src/sql/placement/move_phase_copy.sql \
	src/sql/placement/move_phase_verify.sql \
	src/sql/placement/move_phase_cutover.sql \
	src/sql/placement/move_phase_finish.sql \
	src/sql/placement/move_phase_undo.sql \
	src/sql/placement/partition_move.sql \
	src/sql/placement/rebalance.sql \
	src/sql/placement/partition_unique_constraints.sql \
	src/sql/placement/partition_foreign_keys.sql \
	src/sql/placement/colocation.sql \
	src/sql/placement/partition_placement.sql \
	src/sql/atomic_commit/atomic_commit.sql

# The scripts the sources make (src/sql/assemble), in SQL_BUILD (gitignored):
# the full script of the current version, and an update script for each
# template src/sql/updates/subsetting--FROM--TO.sql.in.  SQL_BUILT: those of
# the current version.
SQL_BUILD = src/sql/built
SQL_UPDATES = $(patsubst src/sql/updates/%.in,$(SQL_BUILD)/%,$(wildcard src/sql/updates/$(EXTENSION)--*--*.sql.in))
SQL_BUILT = $(SQL_BUILD)/$(EXTENSION)--$(EXTVERSION).sql $(filter %--$(EXTVERSION).sql,$(SQL_UPDATES))

# Installed: every released script, never edited, and while the current
# version is not released, its scripts as the sources make them.
DATA = $(sort $(wildcard src/sql/released/$(EXTENSION)--*.sql))
DATA_built = $(if $(filter $(EXTVERSION),$(RELEASED)),,$(SQL_BUILT))
PGFILEDESC = "subsetting - consistent hashing, backend subsetting and partition rings"

REGRESS = \
	upgrade \
	ring_upgrade \
	jump \
	jumpbackanchor \
	jump_in_tables \
	keys \
	usage_errors \
	reshard \
	reshard_safety \
	reshard_metadata \
	reshard_hash \
	reshard_anchor \
	reshard_helpers_security \
	reshard_attacks \
	reshard_constraints \
	reshard_takeover \
	reshard_engine_phases \
	engine_setup \
	engine_capture \
	engine_copy \
	engine_catch_up \
	engine_verify \
	engine_cutover \
	engine_finish \
	engine_undo \
	engine_cleanup \
	engine_move_setup \
	engine_move_capture \
	engine_move_copy \
	engine_move_catch_up \
	engine_move_verify \
	engine_move_cutover \
	engine_move_finish \
	engine_move_undo \
	move_interrupted \
	move_foreign_deletes \
	unique_constraints \
	foreign_keys \
	colocation \
	move_rebalance_weights \
	routing_layout \
	partition_bounds \
	reshard_settings \
	reshard_database_settings \
	reshard_privileges \
	reshard_state_tampering \
	reshard_event_triggers \
	reshard_names \
	reshard_adopted_key_index \
	reshard_grants \
	reshard_definition_changes \
	reshard_foreign_key_arrangements \
	partition_hash \
	ringsteady \
	rocksteadier \
	subset_baselines \
	subset_measures \
	ring \
	ring_errors \
	ring_cache \
	ring_golden \
	ring_lookup \
	install_as_owner \
	internal_routines \
	argument_sweep \
	placement \
	move_refusals \
	event_trigger_grants \
	engine_state_write_fails \
	atomic_commit

# Concurrency: PostgreSQL's isolation tester (specs/, expected/), run by
# make installcheck after the regression tests.
ISOLATION = \
	reshard_direct_writers \
	reshard_read_write \
	reshard_two_at_once \
	reshard_long_reader \
	reshard_engine_writers \
	reshard_engine_cutover \
	reshard_move_cutover \
	reshard_foreign_keys \
	reshard_foreign_key_writers \
	reshard_catch_up \
	reshard_session_settings \
	reshard_caller_lock_timeout \
	reshard_finish_lock_order

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

PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir) -DSUBSETTING_VERSION='"$(DISTVERSION)"'
# reshard_copy_rows (src/resharding/copy.c) opens connections of its own to
# postgres_fdw servers: the module links libpq, as postgres_fdw does.
SHLIB_LINK_INTERNAL = $(libpq)
# Export only what the server looks up by name (src/compat.h says how).
PG_CFLAGS = -fvisibility=hidden

# `make clean` removes the release archives (make dist) and the assembled
# scripts too (set before PGXS, which reads it at once).
EXTRA_CLEAN = $(EXTENSION)-*.zip $(SQL_BUILD)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(SQL_BUILD)/$(EXTENSION)--$(EXTVERSION).sql: $(SQL_SOURCES) src/sql/assemble
	@mkdir -p $(@D)
	src/sql/assemble install $(EXTVERSION) $(SQL_SOURCES) >$@

$(SQL_BUILD)/$(EXTENSION)--%.sql: src/sql/updates/$(EXTENSION)--%.sql.in $(SQL_SOURCES) src/sql/assemble
	@mkdir -p $(@D)
	src/sql/assemble update $(subst --, ,$*) $< >$@

# `make freeze`, when the current version is released (in RELEASED): its
# scripts as the sources make them, copied into src/sql/released/ to be
# committed.  A script frozen already stays as it is; if the sources now make
# it differently, freeze says so and fails.
freeze: $(SQL_BUILT)
	@$(if $(filter $(EXTVERSION),$(RELEASED)),:,echo "$(EXTVERSION) is not released: add it to RELEASED first" >&2; exit 1)
	@for built in $(SQL_BUILT); do \
		frozen=src/sql/released/$${built##*/}; \
		if [ ! -e "$$frozen" ]; then cp "$$built" "$$frozen" && echo "froze $$frozen"; \
		elif cmp -s "$$built" "$$frozen"; then echo "$$frozen is frozen already"; \
		else echo "$$frozen is frozen already, and the sources now make it differently" >&2; exit 1; fi; \
	done

# `make print-VARIABLE`: the value of a variable (test/run-build-tests).
print-%:
	@echo '$($*)'

# PGXS knows no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/resharding/*.h src/core/*.h)
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

# `make clean` also removes the C tests' builds, and (EXTRA_CLEAN, above) the
# release archives and the assembled scripts.
clean: clean-core
clean-core:
	$(MAKE) -C test clean

.PHONY: check-core bench dist clean-core freeze
