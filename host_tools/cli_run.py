"""`python -m host_tools run MODEL`: run a model on the unix port."""

import numpy as np

from tflm.model import Model

from . import device, inputs
from .inputs import NP_DTYPES


def tensor_info(t):
    """A plain dict describing a tflm model.Tensor (for the host side)."""
    return {"name": t.name, "dtype": t.dtype, "shape": t.shape,
            "scale": t.scale, "zero_point": t.zero_point,
            "nbytes": t.nbytes}


def model_io(path):
    """(input infos, output infos) of a .tflite file."""
    with open(path, "rb") as f:
        m = Model(f.read())
    return ([tensor_info(m.tensors[i]) for i in m.inputs],
            [tensor_info(m.tensors[i]) for i in m.outputs])


def as_array(raw, info):
    """Raw output bytes as a numpy array of the tensor's dtype and shape."""
    return np.frombuffer(raw, NP_DTYPES[info["dtype"]]).reshape(info["shape"])


def dequantize(arr, info):
    if info["dtype"] == "float32" or not info["scale"]:
        return arr.astype(np.float32)
    return (arr.astype(np.float32) - info["zero_point"]) * info["scale"]


def make_inputs(path, files, seed, raw=False):
    """One list of input bytes: from files, else seeded random."""
    ins, _ = model_io(path)
    if files:
        if len(files) != len(ins):
            raise SystemExit("model has %d inputs, %d files given"
                             % (len(ins), len(files)))
        return [inputs.from_file(f, t, raw) for f, t in zip(files, ins)]
    rng = np.random.default_rng(seed)
    return [inputs.random_input(t, rng) for t in ins]


SHOW = 16  # values printed per output (the rest are summarised)


def _show(values):
    """At most SHOW values of a list, then how many more there are."""
    more = len(values) - SHOW
    text = str(values[:SHOW])
    return text if more <= 0 else text[:-1] + ", ... %d more]" % more


def main(args):
    from tflm import TFLMError
    try:
        ins, outs = model_io(args.model)
    except TFLMError as e:
        print("rejected: %s: %s" % (type(e).__name__, e))
        return 1
    try:
        data = make_inputs(args.model, args.input, args.seed, args.raw)
    except ValueError as e:
        raise SystemExit("bad input: %s" % e)
    results, info = device.run_model(args.model, [data], len(outs),
                                     repeat=args.repeat)
    if results is None:
        print("rejected: %s: %s" % (info["error"], info["message"]))
        return 1
    us = sorted(info["us"])[len(info["us"]) // 2]
    for j, (raw, o) in enumerate(zip(results[0], outs)):
        arr = as_array(raw, o)
        print("output %d '%s' %s %s" % (j, o["name"], o["dtype"],
                                        tuple(o["shape"])))
        print("  raw:        ", _show(arr.ravel().tolist()))
        if o["dtype"] != "float32" and o["scale"]:  # quantized only
            real = dequantize(arr, o).ravel().astype(np.float64)
            print("  dequantized:", _show([round(v, 5)
                                            for v in real.tolist()]))
    print("time per inference: %.3f ms (median of %d, unix port)"
          % (us / 1000, len(info["us"])))
    tail = info.get("tail_ram", info["persistent"])
    print("arena: %d bytes (%d head + %d tail): arena=bytearray(%d) holds it"
          "%s" % (info["arena"] + tail, info["arena"], tail,
                  info["arena"] + tail,
                  " (built from its compiled block, the tail's other %d "
                  "bytes read in place from the model's bytes)"
                  % (info["persistent"] - tail) if info.get("compiled")
                  and info["persistent"] > tail else ""))
    if args.check:
        return check(args.model, data, results[0], ins, args.repeat)
    return 0


def check(path, data, ours, ins, repeat=1):
    """Compare our output bytes (after `repeat` invokes on the same
    inputs: a model with state, such as TFLM's audio preprocessor, moves
    on with each) with TFLM's after as many; returns 0 if identical."""
    from .oracle import Reference
    ref = Reference(path)
    arrs = [np.frombuffer(d, NP_DTYPES[t["dtype"]]) for d, t in zip(data, ins)]
    for _ in range(max(repeat, 1)):
        theirs = ref.run(arrs)
    same = all(t.tobytes() == o for t, o in zip(theirs, ours))
    print("TFLM reference: %s" % ("identical (bit-exact)" if same
                                  else "DIFFERENT"))
    for k, (t, o) in enumerate(zip(theirs, ours)):
        if t.tobytes() == o:
            continue
        mine = np.frombuffer(o, t.dtype).reshape(t.shape) \
            if len(o) == t.nbytes else None
        if mine is None:
            print("  output %d: %d bytes, TFLM %d" % (k, len(o), t.nbytes))
            continue
        diff = np.abs(mine.astype(np.float64) - t.astype(np.float64))
        print("  output %d: %d of %d values differ, by at most %.3g%s" % (
            k, int(np.count_nonzero(mine != t)), t.size,
            float(np.nanmax(diff)) if diff.size else 0.0,
            " (float32: exp / tanh follow the C library there, see "
            "docs/operators.md, float32)" if t.dtype == np.float32 else ""))
    return 0 if same else 2
