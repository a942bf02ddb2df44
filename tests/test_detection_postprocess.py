"""DETECTION_POSTPROCESS (TFLM's CUSTOM 'TFLite_Detection_PostProcess')
vs TFLM.

* generated models (host_tools/conformance/gen_detection.py, with fast
  NMS models of 2-3 classes per box and outputs larger than what TFLM
  writes added here), each invoked on three input sets in a row on one
  interpreter (new encodings and scores, then the first set again), in
  TFLM and, all models in one MicroPython process, in ours (invoke under
  heap_lock): every value TFLM writes must be bit-identical (the fast
  NMS writes only its detections: the rest holds whatever the arena
  held, in TFLM as in ours, so it is not compared);
* hand cases: TFLM's detection_postprocess_test.cc model (6 boxes, 3
  classes + background), fast and regular, against its golden values;
  score ties, identical boxes, no box above the threshold;
* the TFLM side alone against a float64 numpy reference of the
  algorithm, so that a generator bug shows up on its own;
* rejections: quantized inputs (TFLM's Eval fails on them), wrong
  ranks, counts and shapes, options TFLM fails on at invoke;
* invalid decoded boxes: InvokeError at invoke, as TFLM's ValidateBoxes
  fails its invoke.
"""

import random

import numpy as np
import pytest

from host_tools import opgen
from host_tools.conformance import gen_detection as gd
from host_tools.oracle import Reference
from sequences import run_ours, run_tflm

T = opgen.Tensor
CASES = 60


def _opts(raw):
    from flatbuffers import flexbuffers
    from tflite_micro.tensorflow.lite.micro.python import \
        schema_py_generated as s
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    return flexbuffers.Loads(bytes(m.subgraphs[0].operators[0]
                                   .customOptions))


def written(raw, outs):
    """Masks (per output, over float32 values) of what TFLM wrote, from
    its number of detections and the options."""
    o = _opts(raw)
    n = len(np.frombuffer(outs[1], np.float32))
    k = int(np.frombuffer(outs[3], np.float32)[0])
    m = np.zeros(n, bool)
    if o.get("use_regular_nms", False):
        m[:o["max_detections"]] = True
    else:
        c = min(o["max_classes_per_detection"], o["num_classes"])
        for i in range(k // c):
            for j in range(c):
                m[c * (i * c + j) + j] = True
    return [np.repeat(m, 4), m, m, np.ones(1, bool)]


def same(raw, want, got):
    """Every value TFLM wrote equal bit for bit."""
    for w, g, m in zip(want, got, written(raw, want)):
        w = np.frombuffer(w, np.uint32)
        g = np.frombuffer(g, np.uint32)
        if len(w) != len(g) or not np.array_equal(w[m], g[m]):
            return False
    return True


def fast_multi(rng, size):
    """A fast-NMS model with 2-3 classes per box (TFLM's spread-out
    writes) and outputs larger than needed."""
    for _ in range(100):
        raw, ins = gd.gen_detection_postprocess(rng, size, False)
        o = _opts(raw)
        if not o.get("use_regular_nms", False) and o["num_classes"] > 1:
            break
    nb, coords = ins[0].shape[1], ins[0].shape[2]
    o["max_classes_per_detection"] = c = rng.randint(2, 3)
    c = min(c, o["num_classes"])
    anchors = np.abs(np.random.default_rng(rng.getrandbits(32)).random(
        (nb, 4))).astype(np.float32) + np.float32(0.05)
    n = c * c * min(o["max_detections"], nb) + rng.randint(0, 3)
    bg = ins[1].shape[2] - o["num_classes"]
    return gd.model(nb, o["num_classes"], bg, anchors, o, n, coords), ins


def cases():
    out = []
    for i in range(CASES):
        rng = random.Random("detpp:%d" % i)
        if i % 5 == 4:
            raw, ins = fast_multi(rng, 1 + i % 4)
        else:
            raw, ins = gd.gen_detection_postprocess(rng, 1 + i % 4, i % 2)
        g = np.random.default_rng(i)
        other = [(x + g.standard_normal(x.shape).astype(np.float32)
                  * np.float32(0.3 * (k == 0))).astype(np.float32)
                 if k == 0 else g.permutation(x.ravel()).reshape(x.shape)
                 for k, x in enumerate(ins)]
        out.append(("case %d" % i, raw, [ins, other, ins]))
    return out


def test_generated_models_match_tflm(tmp_path):
    cs = cases()
    want = [run_tflm(raw, steps) for _, raw, steps in cs]
    got = run_ours([(raw, steps) for _, raw, steps in cs], tmp_path)
    dets = 0
    for (name, raw, _), w, (st, g) in zip(cs, want, got):
        assert st == "OK", (name, g)
        for j in range(3):
            assert same(raw, w[j], g[j]), "%s step %d:\n%s\n%s" % (
                name, j, [np.frombuffer(x, np.float32) for x in w[j]],
                [np.frombuffer(x, np.float32) for x in g[j]])
            dets += int(np.frombuffer(w[j][3], np.float32)[0])
    assert dets > 3 * CASES  # detections, not empty outputs


# --- TFLM's own test model ---

ANCHORS = [[0.5, 0.5, 1.0, 1.0]] * 3 + [[0.5, 10.5, 1.0, 1.0]] * 2 + [
    [0.5, 100.5, 1.0, 1.0]]
ENC = [[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0],
       [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
SCORES = [[0., .9, .8], [0., .75, .72], [0., .6, .5], [0., .93, .95],
          [0., .5, .4], [0., .3, .2]]
BASE = {"max_detections": 3, "max_classes_per_detection": 1,
        "detections_per_class": 1, "nms_score_threshold": 0.0,
        "nms_iou_threshold": 0.5, "num_classes": 2, "y_scale": 10.0,
        "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}


def tflm_model(n=3, **kw):
    o = dict(BASE, **kw)
    return gd.model(6, 2, 1, ANCHORS, o, n)


def test_tflm_test_vectors(tmp_path):
    """detection_postprocess_test.cc's goldens (FloatFastNMS,
    FloatRegularNMS, MaxClassesDetectionsFastNMS with 2 classes per
    box), reproduced by TFLM and by ours."""
    ins = [np.array(ENC, np.float32).reshape(1, 6, 4),
           np.array(SCORES, np.float32).reshape(1, 6, 3)]
    gold = {
        "fast": (tflm_model(), [0, 10, 1, 11, 0, 0, 1, 1, 0, 100, 1, 101],
                 [1, 0, 0], [0.95, 0.9, 0.3], 3),
        "regular": (tflm_model(use_regular_nms=True),
                    [0, 10, 1, 11, 0, 10, 1, 11, 0, 0, 0, 0],
                    [1, 0, 0], [0.95, 0.93, 0.0], 2),  # dpc 1
    }
    cs = []
    for name, (raw, boxes, cls, sc, n) in gold.items():
        want = run_tflm(raw, [ins])[0]
        np.testing.assert_allclose(np.frombuffer(want[0], np.float32),
                                   boxes, atol=1e-6)
        assert list(np.frombuffer(want[1], np.float32)) == cls
        np.testing.assert_allclose(np.frombuffer(want[2], np.float32), sc,
                                   atol=1e-6)
        assert np.frombuffer(want[3], np.float32)[0] == n
        cs.append((name, raw, want))
    got = run_ours([(raw, [ins]) for _, raw, _ in cs], tmp_path)
    for (name, raw, want), (st, g) in zip(cs, got):
        assert st == "OK", (name, g)
        assert same(raw, want, g[0]), name


def test_ties_and_identical_boxes(tmp_path):
    """Equal scores everywhere and identical boxes: which of the tied
    boxes survive is decided by TFLM's order (lowest index first)."""
    cs = []
    for regular in (False, True):
        for thr, iou in ((0.5, 0.5), (0.0, 1.0), (0.5, 0.01), (0.9, 0.5)):
            anchors = [[0.5, 0.5, 0.4, 0.4]] * 3 + [[0.6, 0.6, 0.4, 0.4]] * 3
            o = dict(BASE, use_regular_nms=regular, max_detections=5,
                     detections_per_class=4, nms_score_threshold=thr,
                     nms_iou_threshold=iou)
            raw = gd.model(6, 2, 0, anchors, o, 5)
            sc = np.full((1, 6, 2), 0.5, np.float32)
            sc[0, 4, 1] = 0.75
            enc = np.zeros((1, 6, 4), np.float32)
            cs.append(("regular %s thr %s iou %s" % (regular, thr, iou), raw,
                       [[enc, sc]]))
    want = [run_tflm(raw, steps) for _, raw, steps in cs]
    got = run_ours([(raw, steps) for _, raw, steps in cs], tmp_path)
    for (name, raw, _), w, (st, g) in zip(cs, want, got):
        assert st == "OK", (name, g)
        assert same(raw, w[0], g[0]), name


# --- rejections ---

def _model(ins, outs, **kw):
    return opgen.single_op("CUSTOM:" + gd.NAME, ins, outs,
                           custom_options=gd.options(dict(BASE, **kw)))


def _outs(n=3, dtype="float32"):
    return [T([1, n, 4], dtype), T([1, n], dtype), T([1, n], dtype),
            T([1], dtype)]


def _ins(nb=6, ncwb=3, coords=4, dtype="float32", anchors=6, scale=None):
    return [T([1, nb, coords], dtype, scale=scale),
            T([1, nb, ncwb], dtype, scale=scale),
            T([anchors, 4], "float32",
              data=np.ones((anchors, 4), np.float32))]


def reject_cases():
    """(name, model, TFLM: False if its Prepare rejects it too, 'invoke'
    if its invoke fails, None if it would read or write out of bounds)."""
    c = []
    c.append(("int8 inputs", _model(_ins(dtype="int8", scale=0.1),
                                    _outs()), "invoke"))
    c.append(("uint8 inputs", _model(_ins(dtype="uint8", scale=0.1),
                                     _outs()), "invoke"))
    c.append(("two inputs", _model(_ins()[:2], _outs()), False))
    c.append(("three outputs", _model(_ins(), _outs()[:3]), False))
    c.append(("rank-2 boxes", _model(
        [T([6, 4], "float32")] + _ins()[1:], _outs()), False))
    c.append(("3 coordinates", _model(_ins(coords=3), _outs()), "invoke"))
    c.append(("scores for 5 boxes", _model(
        _ins()[:1] + [T([1, 5, 3], "float32")] + _ins()[2:], _outs()),
        "invoke"))
    c.append(("4 score columns for 2 classes", _model(_ins(ncwb=4),
                                                      _outs()), "invoke"))
    c.append(("num_classes 0", _model(_ins(ncwb=1), _outs(),
                                      num_classes=0), None))
    c.append(("iou threshold 0", _model(_ins(), _outs(),
                                        nms_iou_threshold=0.0), "invoke"))
    c.append(("iou threshold 1.5", _model(_ins(), _outs(),
                                          nms_iou_threshold=1.5), "invoke"))
    c.append(("max_detections -1", _model(_ins(), _outs(),
                                          max_detections=-1), None))
    c.append(("max_classes_per_detection 0", _model(
        _ins(), _outs(), max_classes_per_detection=0), "invoke"))
    c.append(("detections_per_class 0", _model(
        _ins(), _outs(), use_regular_nms=True, detections_per_class=0),
        "invoke"))
    c.append(("outputs of 2 for 3 detections", _model(_ins(), _outs(2)),
              None))
    c.append(("fast, 2 classes per box, outputs of 6", _model(
        _ins(), _outs(6), max_classes_per_detection=2), None))
    c.append(("anchors for 5 boxes", _model(_ins(anchors=5), _outs()),
              None))
    c.append(("int8 outputs", _model(_ins(), _outs(dtype="int8")), None))
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    x = [np.zeros((1, 6, 4), np.float32), np.zeros((1, 6, 3), np.float32)]
    for name, raw, tflm in rc:
        if tflm is False:
            with pytest.raises(RuntimeError):
                Reference(raw)
        elif tflm == "invoke":
            r = Reference(raw)
            d = [r.input_details(i) for i in range(2)]
            with pytest.raises(RuntimeError):
                r.run([np.zeros(dd["shape"], dd["dtype"]) for dd in d])
    got = run_ours([(raw, []) for _, raw, _ in rc], tmp_path)
    for (name, _, _), (st, msg) in zip(rc, got):
        assert st == "ERR", "%s: accepted (%s)" % (name, st)
        assert msg.startswith("PrepareError"), (name, msg)
        assert "op 0" in msg, (name, msg)
    assert x  # (inputs of the right shapes, for TFLM's side above)


def test_invalid_boxes_fail_invoke(tmp_path):
    """An anchor of height 0 decodes to ymin == ymax: TFLM's invoke
    fails, ours raises InvokeError (and runs again on valid inputs)."""
    anchors = [[0.5, 0.5, 0.0, 1.0]] + ANCHORS[1:]
    raw = gd.model(6, 2, 1, anchors, BASE, 3)
    ins = [np.array(ENC, np.float32).reshape(1, 6, 4),
           np.array(SCORES, np.float32).reshape(1, 6, 3)]
    with pytest.raises(RuntimeError):
        run_tflm(raw, [ins])
    st, msg = run_ours([(raw, [ins])], tmp_path)[0]
    assert st == "IERR" and "ValidateBoxes" in msg, (st, msg)
