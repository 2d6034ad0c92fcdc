# Makefile for the subsetting extension (PGXS)

MODULE_big = subsetting
OBJS = \
	src/module.o \
	src/buckets.o \
	src/key_hash.o \
	src/subsets.o \
	src/ring.o \
	src/core/baselines.o \
	src/core/jump.o \
	src/core/ring.o \
	src/core/ring_build.o \
	src/core/ring_json.o \
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
	jump \
	jump_in_tables \
	keys \
	reshard \
	reshard_safety \
	reshard_metadata \
	ringsteady \
	rocksteadier \
	subset_baselines \
	subset_metrics \
	ring \
	ring_errors \
	install_as_owner \
	argument_sweep

# Concurrency: PostgreSQL's isolation tester (specs/, expected/), run by
# make installcheck after the regression tests.
ISOLATION = \
	reshard_direct_writers \
	reshard_read_write \
	reshard_two_at_once \
	reshard_long_reader

PG_CPPFLAGS = -I$(srcdir)/src

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS knows no header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/core/*.h)

# `make bench`: every benchmark, and the report docs/performance.md
# (test/run-benchmarks; `test/run-benchmarks --quick` for a short run).
bench:
	test/run-benchmarks

.PHONY: bench
