"""Conformance suite: seeded single-operator models, ours vs TFLM.

Generators live in the gen_*.py modules of this package. Each module
defines GENERATORS, a dict {op name: gen}, where

    gen(rng, size) -> bytes | (bytes, inputs)

rng is a random.Random seeded per case, size an int budget from 1 (tiny:
every dimension 1 or 2) to 4 (the largest shapes the generator makes);
the runner lowers size to shrink a failing case. The result is a .tflite
model (host_tools.opgen), optionally with the model's input arrays (numpy,
one per model input) when random bytes would not be valid inputs (indices
out of range, ...); without them the runner fills every input with random
values of its dtype. A generator only makes models that TFLM accepts.
The helpers for random shapes, scales and zero points are in rand.py.

Optional: a module may define STRICT, a collection of its op names whose
models our runtime must all run. For the other ops, a model our runtime
rejects as unsupported (UnsupportedOpError, or a PrepareError whose
message says "support": e.g. a float32-only kernel given int8) is
counted as "unsupported" instead of failing.

Optional: ULP, a dict {op name: n} for ops whose float32 results come
from the C library's sinf / expm1f / ... in TFLM (within 1 ulp of the
exact value, as ours): their float32 outputs pass when each element is
within n ulps of TFLM's (NaNs, infinities and zeros identical); every
other output is compared bit for bit.

Running (runner.py; docs there):

    python -m host_tools conformance [-n N per op] [--seed S] [--ops A,B]
                                     [--corpus DIR] [--jobs J] [--replay]
    make conformance N=200 SEED=3 OPS=CONV_2D,ADD

Modules: cases.py (discovery, seeded case generation, random inputs,
model descriptions), oracle_worker.py (generation + TFLM in a worker
process), driver.py (our runtime, inside MicroPython), runner.py
(orchestration, comparison, shrinking, corpus, command line).
"""
