# tflm for MicroPython: host-side entry points.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL ?= host_tools/data/digits_cnn_int8.tflite
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: test demo run venv clean bench lint docs

$(STAMP): requirements.txt
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(VPY) -m pytest -q $(PYTEST_ARGS) tests

demo: $(STAMP)
	$(VPY) -m host_tools demo

# pyflakes' checks, pycodestyle's E/W checks (ruff.toml); tests/test_lint.py
# runs the same check in `make test`
lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The generated tables of README.md and docs/*.md (host_tools/docs.py), from
# bench/*.json, boards/*/board.json and the kernel registry; tests/test_docs.py
# fails when one is stale.
docs: $(STAMP)
	$(VPY) -m host_tools docs

# Ours (unix port) vs TFLM on every shared model: bench/results.{md,json},
# bench/ratios.png. BENCH_ARGS, e.g. --rounds 9 or --models person,kws.
bench: $(STAMP)
	$(VPY) -m host_tools bench $(BENCH_ARGS)

run: $(STAMP)
	$(VPY) -m host_tools run $(MODEL) --check

# On a board (boards/<id>/board.json, boards/README.md):
#   make mpy BOARD=pico            (or ARCH=armv6m): .mpy into build/<board>/tflm
#   make deploy BOARD=pico PORT=/dev/ttyACM0 [MODEL=m.tflite] [ONLY_NEEDED=1]
#               [ROMFS=1] [DRY_RUN=1] [FORCE=1: copy a model that does not fit]
#               [NO_COMPILE=1: copy the model as it is, not compiled for the board]
#               [CODE_IN_RAM=1: with ROMFS=1, the kernels' machine code copied to RAM]
#   make boards                    which shared models fit which board
BOARD ?=
ARCH ?=
PORT ?= auto
# armv6m instructions per MAC on an emulated Cortex-M0+ MicroPython you
# provide (host_tools/bench_device.py): make bench-device TFLM_ARMV6M_CMD="..."
# and / or TFLM_ARMV7EMSP_CMD="..." (a Cortex-M4F: DSP and FPU loops)
.PHONY: bench-device
bench-device: $(STAMP)
	$(VPY) -m host_tools bench-device

.PHONY: mpy deploy boards package-json

mpy: $(STAMP)
	$(VPY) -m host_tools mpy $(if $(BOARD),--board $(BOARD)) $(if $(ARCH),--arch $(ARCH))

deploy: $(STAMP)
	@test -n "$(BOARD)" || { echo "make deploy needs BOARD=<id>: one of $$(ls boards | grep -v README | tr '\n' ' ')" >&2; exit 2; }
	$(VPY) -m host_tools deploy --board $(BOARD) --port $(PORT) $(if $(filter command line environment,$(origin MODEL)),--model $(MODEL)) $(if $(ONLY_NEEDED),--only-needed) $(if $(ROMFS),--romfs) $(if $(DRY_RUN),--dry-run) $(if $(FORCE),--force) $(if $(FLASH_MODEL),--flash-model $(FLASH_MODEL)) $(if $(FIRMWARE),--firmware $(FIRMWARE)) $(if $(NO_COMPILE),--no-compile) $(if $(CODE_IN_RAM),--code-in-ram)

boards: $(STAMP)
	$(VPY) -m host_tools boards

package-json: $(STAMP)
	$(VPY) -m host_tools package-json

# Mutation fuzzing (host_tools/fuzz.py): make fuzz N=100000 SEED=7
N ?= 20000
SEED ?= 1
.PHONY: fuzz
fuzz: $(STAMP)
	$(VPY) -m host_tools fuzz --n $(N) --seed $(SEED)

# Conformance suite (host_tools/conformance): N cases PER OP, 50 unless
# N is given (the N ?= 20000 above is fuzz's default), e.g.
#   make conformance N=200 SEED=3 OPS=CONV_2D,ADD JOBS=2
OPS ?=
JOBS ?= 2
CONF_N = $(if $(filter command line environment,$(origin N)),$(N),50)
.PHONY: conformance
conformance: $(STAMP)
	$(VPY) -m host_tools conformance -n $(CONF_N) --seed $(SEED) --jobs $(JOBS) $(if $(OPS),--ops $(OPS))

clean:
	rm -rf $(VENV) .pytest_cache
