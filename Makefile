# tflm for MicroPython: host-side entry points.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL ?= host_tools/data/digits_cnn_int8.tflite
PYTEST_ARGS ?=

.PHONY: test demo run venv clean

$(STAMP): requirements.txt
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(VPY) -m pytest -q $(PYTEST_ARGS) tests

demo: $(STAMP)
	$(VPY) -m host_tools demo

run: $(STAMP)
	$(VPY) -m host_tools run $(MODEL) --check

clean:
	rm -rf $(VENV) .pytest_cache
