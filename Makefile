# mpsched: in-network multipath scheduler. `make help` lists the targets.
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
# `mpsched bench NAME` (src/mpsched/bench/cli.py): every bench-* target and soak run their
# benchmark through it
BENCH := $(PY) -m mpsched.cli bench
BUILD ?= build
P4SRC := $(wildcard p4src/*.p4 p4src/include/*.p4)
# Paths the P4 program can schedule over (p4src/include/defines.p4, MAX_PATHS:
# 4 or 8). The default builds build/p4; `make p4 P4_PATHS=8` (or `make p4-8`)
# builds build/p4-8paths with -DMAX_PATHS=8.
P4_PATHS ?= 4
ifeq ($(P4_PATHS),4)
P4OUT  := $(BUILD)/p4
P4DEFS :=
else
P4OUT  := $(BUILD)/p4-$(P4_PATHS)paths
P4DEFS := -DMAX_PATHS=$(P4_PATHS)
endif
# Edge switches the program holds (p4src/include/sizes.p4, MAX_EDGES; default
# 8): `make p4 P4_EDGES=64` (or `make p4-scale`) builds build/p4-64edges. The
# per-(edge, path) registers' index is 8 bits while (MAX_EDGES + 1) *
# (MAX_PATHS + 1) <= 256 (the default), 16 bits beyond; edge ids are 8 bits.
P4_EDGES ?= 8
ifneq ($(P4_EDGES),8)
P4OUT  := $(P4OUT)-$(P4_EDGES)edges
P4DEFS += -DMAX_EDGES=$(P4_EDGES)
endif
# Compile-time profiles (p4src/include/defines.p4): stages left out. The
# default (full) has every stage; `make p4 P4_PROFILE=lean` builds
# build/p4-lean (build/p4-8paths-lean with P4_PATHS=8). The profiles are defined
# once, in src/mpsched/p4profiles.py (standard library only): its `--make` output
# (P4_PROFILES, P4_PROFILES_REDUCED, one P4_PROFILE_DEFS_<name> per profile, and
# P4_SCALE_EDGES, the edges of `make p4-scale`) is included here, made anew
# when the module changes (make then reads itself again).
P4_PROFILE ?= full
P4_PROFILES_MK := $(BUILD)/p4profiles.mk
$(P4_PROFILES_MK): src/mpsched/p4profiles.py
	@mkdir -p $(@D)
	@python3 src/mpsched/p4profiles.py --make > $@.tmp && mv $@.tmp $@
include $(P4_PROFILES_MK)
ifneq ($(P4_PROFILES),)
ifeq ($(filter $(P4_PROFILE),$(P4_PROFILES)),)
$(error P4_PROFILE=$(P4_PROFILE): not one of $(P4_PROFILES))
endif
endif
ifneq ($(P4_PROFILE),full)
P4OUT  := $(P4OUT)-$(P4_PROFILE)
P4DEFS += $(P4_PROFILE_DEFS_$(P4_PROFILE))
endif
# CPU_LIMIT=P: the targets that start a testbed (CPU_LIMIT_TARGETS) give the whole testbed
# (switches, link emulators, hosts, controller, traffic) P % of the cores, a cgroup CPU quota
# (`--cpu-limit P`, src/mpsched/proc/cpulimit.py; root): a fast machine standing in for a slower
# one. Any other goal with CPU_LIMIT set is refused rather than run without the limit.
CPU_LIMIT ?=
CPU_LIMIT_ARG = $(if $(strip $(CPU_LIMIT)),--cpu-limit $(strip $(CPU_LIMIT)))
CPU_LIMIT_TARGETS := bench-links bench-telemetry bench-control bench-scale bench-sched \
  bench-adaptive bench-fct bench-fabric bench-fabric-mptcp bench-mptcp bench-capacity \
  bench-dataplane bench-dpcost bench-ui bench-reliability soak compare
# what those targets build first, which may be named beside them
CPU_LIMIT_BUILDS := help p4 p4-8 p4-scale p4-profiles p4-if-present linkem ensure-setup \
  ensure-toolchain
ifneq ($(strip $(CPU_LIMIT)),)
CPU_LIMIT_IGNORED := $(filter-out $(CPU_LIMIT_TARGETS) $(CPU_LIMIT_BUILDS),$(MAKECMDGOALS))
ifneq ($(CPU_LIMIT_IGNORED),)
$(error CPU_LIMIT=$(CPU_LIMIT) does not apply to $(CPU_LIMIT_IGNORED), only to: $(CPU_LIMIT_TARGETS))
endif
endif
.PHONY: help setup toolchain p4 p4-8 p4-scale p4-profiles p4-if-present test lint typecheck unit integration ptf demo cleanup clean linkem bench-links bench-dataplane bench-dpcost bench-telemetry bench-control bench-scale bench-sched bench-adaptive bench-fct bench-fabric bench-fabric-mptcp bench-mptcp bench-capacity bench-reliability bench-ui soak compare

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'
	@printf "  %-18s %s\n" "CPU_LIMIT=P" "on bench-*, soak and compare: the whole testbed gets P % of the cores (a cgroup CPU quota, root; idle and cpu_bound against it; docs/experiments.md)"

# The Debian packages (scripts/setup.sh --list-packages) and .venv; the ensure-*
# targets skip what is done, so that `make demo` and `make test` can run them every time.
.PHONY: ensure-setup ensure-toolchain
setup: ## install the Debian packages (root) and the pinned Python virtualenv .venv (scripts/setup.sh)
	VENV=$(VENV) scripts/setup.sh

ensure-setup: ## setup's steps not done yet: apt-get for missing packages, .venv if requirements.txt changed
	@VENV=$(VENV) scripts/setup.sh --if-needed

toolchain: ## install p4c, BMv2 (simple_switch_grpc) and PI at the pinned versions: p4lang's packages, else built from source (root)
	scripts/toolchain.sh

ensure-toolchain: ## toolchain, unless p4c and simple_switch_grpc are on PATH at the pinned versions
	@scripts/toolchain.sh --ensure

# p4c for BMv2 (v1model): the first prerequisite into the target's directory,
# BMv2 JSON ($@) and P4Info beside it; P4C_DEFS: -D defines.
define p4c-compile
@command -v p4c >/dev/null || { echo "p4: p4c is not on PATH (see docs/setup.md, Prerequisites)"; exit 2; }
@mkdir -p $(@D)
p4c --target bmv2 --arch v1model --std p4-16 $(P4C_DEFS) -o $(@D) \
    --p4runtime-files $(basename $@).p4info.txt $<
endef

$(P4OUT)/main.json: P4C_DEFS := $(P4DEFS)
$(P4OUT)/main.json: p4src/main.p4 $(P4SRC)
	$(p4c-compile)

p4: $(P4OUT)/main.json $(BUILD)/p4-minimal/minimal.json $(BUILD)/p4-ipv4/ipv4.json $(BUILD)/p4-plain-ecmp/plain_ecmp.json ## compile p4src/ with p4c into build/p4 (BMv2 JSON + P4Info; the reference programs of p4src/bench/ into build/p4-<name>); P4_PATHS=8: build/p4-8paths; P4_PROFILE=lean: build/p4-lean

p4-8: ## compile the 8-path variant (-DMAX_PATHS=8) into build/p4-8paths
	$(MAKE) --no-print-directory p4 P4_PATHS=8

p4-scale: ## compile the variant holding 64 edges (-DMAX_EDGES=64, 16-bit per-(edge, path) indices) into build/p4-64edges, for bench-scale
	$(MAKE) --no-print-directory p4 P4_EDGES=$(P4_SCALE_EDGES)

$(BUILD)/p4-minimal/minimal.json: p4src/bench/minimal.p4
	$(p4c-compile)

$(BUILD)/p4-ipv4/ipv4.json: p4src/bench/ipv4.p4
	$(p4c-compile)

$(BUILD)/p4-plain-ecmp/plain_ecmp.json: p4src/bench/plain_ecmp.p4
	$(p4c-compile)

$(BUILD)/bin/linkem: csrc/linkem.c
	@mkdir -p $(@D)
	cc -O2 -Wall -Wextra -o $@ $< -lm

linkem: $(BUILD)/bin/linkem ## build the userspace link emulator (csrc/linkem.c)

bench-links: linkem ## link emulator accuracy on a veth pair (delay, loss, rate, CPU)
	$(BENCH) links $(CPU_LIMIT_ARG)

bench-telemetry: p4 linkem ## data-plane path measurements vs known emulated delay/loss/rate
	$(BENCH) telemetry $(CPU_LIMIT_ARG)

bench-control: p4 p4-8 ## control-loop latency (telemetry -> policy -> write acked), 2/4/8 paths
	$(BENCH) control $(CPU_LIMIT_ARG)

bench-scale: p4-scale ## the control plane on leaf-spine fabrics of 8/16/32/64 leaves and 4 spines (one BMv2 each): programming time, loop p50/p99, RSS, CPU, writes/s, entries, probes/s, spine-failure re-route; PROBE_MAX_PPS=N caps the probes
	$(BENCH) scale $(if $(PROBE_MAX_PPS),--probe-max-pps $(PROBE_MAX_PPS)) $(CPU_LIMIT_ARG)

bench-sched: p4 linkem ## all policies, many-flow workload of LLHD #1, 3 runs each (about 20 min)
	$(BENCH) sched $(CPU_LIMIT_ARG)

bench-adaptive: p4 linkem ## adaptive vs the best fixed policy on the four docs/results scenarios and mixed (hours); REUSE=DIR evaluates an earlier comparison
	$(BENCH) adaptive $(if $(REUSE),--reuse $(REUSE)) $(CPU_LIMIT_ARG)

bench-fct: p4 linkem ## congestion-aware choice vs ecmp and letflow: asymmetric paths, web-search flows at 70 % load, 5 runs each (about 10 min)
	$(BENCH) fct $(CPU_LIMIT_ARG)

bench-fabric: p4 linkem ## congestion-aware choice per destination (ca and llhd-ca) vs ecmp and letflow on an asymmetric 4x2 leaf-spine, 5 runs each; a spine link's failover, 3 runs (about 32 min)
	$(BENCH) fabric $(CPU_LIMIT_ARG)

bench-fabric-mptcp: p4 linkem ## MPTCP across a 4x2 leaf-spine: subflows steered onto distinct paths vs hashed, 2 bulks + short flows, a spine link failing and returning, 5 runs each (about 12 min)
	$(BENCH) fabric-mptcp $(CPU_LIMIT_ARG)

bench-mptcp: p4 linkem ## MPTCP subflows hashed vs steered onto their own paths, 3 runs each (about 4 min)
	$(BENCH) mptcp $(CPU_LIMIT_ARG)

bench-capacity: p4 linkem ## the MPTCP shape (3 paths, 3:2:1) at 12..60 Mbit/s until goodput or CPU give out; the controller's CPU at 4 paths; data plane vs IPv4 forwarding
	$(BENCH) capacity $(CPU_LIMIT_ARG)

bench-dataplane: p4 ## maximum forwarding rate of the full program vs a minimal one on the same BMv2
	$(BENCH) dataplane $(CPU_LIMIT_ARG)

bench-dpcost: p4 $(if $(PROFILES),p4-profiles) ## per packet: CPU time, field writes, table applies, conditions (perf uprobes); PROFILES=1: each P4_PROFILE and each stage's cost
	$(BENCH) dpcost $(if $(PROFILES),--profiles) $(CPU_LIMIT_ARG)

p4-profiles: ## compile every P4_PROFILE but full, each into its own directory (build/p4-lean etc.)
	@for p in $(P4_PROFILES_REDUCED); do \
	  $(MAKE) --no-print-directory p4 P4_PROFILE=$$p || exit 1; done

bench-ui: p4 ## the dashboard in headless Chromium: 4 paths, 10 min of history; load time, update lag, JS heap; FABRIC=8x4: a leaf-spine's fabric view
	$(BENCH) ui $(if $(FABRIC),--fabric $(FABRIC)) $(CPU_LIMIT_ARG)

# ONLY=restart,takeover,switch,fuzz,rest,scenario picks sections; rest and scenario need no root,
# BMv2 or p4c (ONLY of those alone skips building them)
comma := ,
RELIABILITY_NEEDS_TESTBED := $(if $(ONLY),$(filter-out rest scenario,$(subst $(comma), ,$(ONLY))),all)
bench-reliability: $(if $(RELIABILITY_NEEDS_TESTBED),p4 linkem) ## controller kill -9 and restart, backup takeover, switch restart, fuzz, REST abuse and stall, malformed files (ONLY=rest,scenario: those alone, no root)
	$(BENCH) reliability $(if $(ONLY),--only $(ONLY)) $(CPU_LIMIT_ARG)

SOAK_MINUTES ?= 20
soak: p4 linkem ## SOAK_MINUTES=20 of traffic and policy changes: RSS (growth, slope after 10 min), fds, threads, loop p99; FABRIC=4x2 (or a fabric scenario): on a leaf-spine with link flaps and a spine restart
	$(BENCH) soak --minutes $(SOAK_MINUTES) $(if $(FABRIC),--fabric $(FABRIC)) $(CPU_LIMIT_ARG)

RUNS ?= 3
COMPARE_OUT ?= $(BUILD)/results/compare
compare: p4 linkem ## every shipped scenario under every policy, RUNS=3 seeded runs each
	$(PY) -m mpsched.cli compare scenarios/*.yaml --runs $(RUNS) --out $(COMPARE_OUT) $(CPU_LIMIT_ARG)

# lint-imports: the import contracts of pyproject.toml's [tool.importlinter] (docs/architecture.md,
# "Layers").
lint: typecheck ## ruff, mypy (typecheck) and the import contracts between the layers (lint-imports)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache --no-logo

# mypy over the whole package, src/mpsched (the mypy_path and packages of pyproject.toml).
typecheck: ## mypy over src/mpsched
	$(VENV)/bin/mypy

# The P4 programs where p4c is installed; without it the tests that need them skip and say so.
p4-if-present: ## the P4 programs if p4c is on PATH (else says so; the tests that need them skip)
	@if command -v p4c >/dev/null; then $(MAKE) --no-print-directory p4; \
	  else echo "p4c not on PATH: P4 build skipped (tests that need it will skip)"; fi

unit: p4-if-present linkem ## unit tests (tests/unit: no root, no switch; about a minute)
	$(PY) -m pytest -q -rs tests/unit

integration: p4-if-present linkem ## tests that need root, BMv2 or Mininet (tests/integration)
	$(PY) -m pytest -q -rs tests/integration

ptf: p4-if-present ## PTF data-plane tests on BMv2 over P4Runtime; TEST=module.Class runs one case
	MPSCHED_PTF_TESTS="$(TEST)" $(PY) -m pytest -q -rs tests/ptf

test: ensure-setup ensure-toolchain lint unit integration ptf ## everything: lint, unit, integration and PTF tests (each prints its own summary)

demo: ensure-setup ensure-toolchain p4 linkem ## two-path demo on Mininet+BMv2 (links emulated by linkem): weights 1:0 then 1:1 over REST; FABRIC=1: a 4x2 leaf-spine under all-to-all flows, per-pair goodput; both regenerate the dashboard's screenshots in docs/ (1400 and 1024 px)
	$(PY) -m mpsched.demo $(if $(FABRIC),--fabric)

cleanup: ## remove processes, links, nftables tables, P4Runtime TLS directories and CPU-limit cgroups left behind by killed runs
	$(PY) -m mpsched.cli cleanup

clean: ## remove build outputs
	rm -rf $(BUILD) .pytest_cache .ruff_cache
