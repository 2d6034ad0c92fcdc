# Makefile for the subsetting extension (PGXS)

MODULE_big = subsetting
OBJS = \
	src/module.o \
	src/buckets.o \
	src/key_hash.o \
	src/partition_hash.o \
	src/subsets.o \
	src/ring_sql.o \
	src/ring_cache.o \
	src/ring_errors.o \
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
DATA = \
	sql/subsetting--1.0.sql \
	sql/subsetting--1.0--1.1.sql
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
	argument_sweep

# Concurrency: PostgreSQL's isolation tester (specs/, expected/), run by
# make installcheck after the regression tests.
ISOLATION = \
	reshard_direct_writers \
	reshard_read_write \
	reshard_two_at_once \
	reshard_long_reader

# The release's version: the control file's default_version as a semantic
# version (1.1 gives 1.1.0).  The library carries it in its magic block
# (src/compat.h, PostgreSQL 18 on); make dist names the archive with it.
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(srcdir)/$(EXTENSION).control)
DISTVERSION = $(if $(word 3,$(subst ., ,$(EXTVERSION))),$(EXTVERSION),$(EXTVERSION).0)

PG_CPPFLAGS = -I$(srcdir)/src -DSUBSETTING_VERSION='"$(DISTVERSION)"'
# Export only what the server looks up by name (src/compat.h says how).
PG_CFLAGS = -fvisibility=hidden

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS knows no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/core/*.h)
# ... and the magic block when the version changes.
src/module.o src/module.bc: $(srcdir)/$(EXTENSION).control

# The SQL skin (src/*.c, not src/core) starts with src/compat.h: the version
# shims and the export markings apply to every file of it, new ones too.
SKIN_OBJS = $(filter-out src/core/%,$(OBJS))
$(SKIN_OBJS) $(SKIN_OBJS:.o=.bc): override CPPFLAGS += -include $(srcdir)/src/compat.h

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
