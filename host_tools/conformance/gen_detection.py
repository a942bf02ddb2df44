"""Conformance generator: TFLM's DETECTION_POSTPROCESS, the CUSTOM
operator 'TFLite_Detection_PostProcess' that ends SSD object detectors
(tensorflow/lite/micro/kernels/detection_postprocess.cc).

Every model is one CUSTOM operator whose options are a FlexBuffers map
(flatbuffers.flexbuffers.Dumps) with the keys TFLM's Init reads by name:
max_detections, max_classes_per_detection, detections_per_class
(sometimes left out: 100), use_regular_nms (sometimes left out: false),
nms_score_threshold, nms_iou_threshold, num_classes, y_scale, x_scale,
h_scale, w_scale. Inputs: box encodings [1, boxes, 4] (sometimes more
coordinates per box, which TFLM skips) and class scores [1, boxes,
classes (+ 1 background)], float32 (TFLM's kernel takes no other type);
the anchors [boxes, 4] (y, x, h, w) are a constant. Outputs: boxes
[1, N, 4], classes [1, N], scores [1, N], count [1], float32.

The cases aim at what decides which boxes are kept: scores with ties
(values on a coarse grid, repeated rows), scores equal to the score
threshold, duplicate anchors and zero encodings (identical boxes, IoU
1), overlapping anchors, fewer boxes above the threshold than
max_detections, both the fast NMS (max_classes_per_detection 1-3) and
the regular one (detections_per_class 1 to more than the boxes).

What TFLM does not check, and so the generators never make:
* decoded boxes with ymin >= ymax or xmin >= xmax: TFLM's Eval fails on
  them (so anchor sizes are positive and encodings moderate);
* fast NMS with c = min(max_classes_per_detection, num_classes) > 1
  and outputs of fewer than c * c * max_detections entries: TFLM writes
  detection i's class k at c * (i * c + k) + k (it counts a box once per
  class), past the end of smaller outputs;
* outputs with entries TFLM leaves unwritten: they hold whatever its
  arena held (not zeros). The regular NMS writes all max_detections
  entries; for the fast NMS the generator runs TFLM once with
  max_detections = boxes and then asks for at most the detections it
  found, with one class per box. tests/test_detection_postprocess.py
  makes the other models (gen_detection_postprocess(full=False): 2-3
  classes per box, larger outputs) and compares what TFLM writes.
"""

import numpy as np
from flatbuffers import flexbuffers

from host_tools import opgen

T = opgen.Tensor
NAME = "TFLite_Detection_PostProcess"


def options(d):
    """FlexBuffers map bytes of an options dict."""
    return bytes(flexbuffers.Dumps(d))


def _f32(x):
    return float(np.float32(x))


def model(boxes, classes, bg, anchors, opts, n_out, coords=4):
    """A DETECTION_POSTPROCESS model: boxes x classes (+ bg background
    column), anchors an array [boxes, 4], n_out output entries."""
    return opgen.single_op(
        "CUSTOM:" + NAME,
        [T([1, boxes, coords], "float32"),
         T([1, boxes, classes + bg], "float32"),
         T([boxes, 4], "float32", data=np.asarray(anchors, np.float32))],
        [T([1, n_out, 4], "float32"), T([1, n_out], "float32"),
         T([1, n_out], "float32"), T([1], "float32")],
        custom_options=options(opts))


def gen_detection_postprocess(rng, size, full=True):
    """Random SSD-like post-processing (see the module doc). full: every
    output value written by TFLM (fast NMS: one class per box and
    max_detections at most the boxes it keeps); else outputs larger
    than what TFLM writes and 1-3 classes per box."""
    g = np.random.default_rng(rng.getrandbits(64))
    nb = rng.randint(1, (4, 12, 32, 80)[size - 1])
    nc = rng.randint(1, (2, 4, 6, 10)[size - 1])
    bg = rng.choice((0, 1, 1))
    coords = 4 if rng.random() < 0.85 else rng.randint(5, 7)
    regular = rng.random() < 0.5
    max_det = rng.randint(1, min(nb, 10) + 2)
    ncat = 1
    opts = {"max_detections": max_det, "num_classes": nc}
    if not regular and not full and rng.random() < 0.3:
        opts["max_classes_per_detection"] = rng.randint(2, 3)
        ncat = min(opts["max_classes_per_detection"], nc)
    else:
        opts["max_classes_per_detection"] = 1
    if regular or rng.random() < 0.5:
        opts["use_regular_nms"] = regular
    if rng.random() < 0.8:
        opts["detections_per_class"] = rng.randint(1, nb + 2)
    # scores: a coarse grid (ties) or continuous, maybe repeated rows
    if rng.random() < 0.5:
        q = rng.choice((2, 4, 8, 16))
        scores = g.integers(0, q + 1, (nb, nc + bg)) / q
    else:
        scores = g.random((nb, nc + bg))
    if nb > 1 and rng.random() < 0.3:
        k = g.integers(0, nb, nb // 2 + 1)
        scores[k] = scores[k[0]]
    scores = scores.astype(np.float32)
    thr = rng.choice((0.0, 0.1, 0.3, 0.5, rng.random() * 0.8))
    if rng.random() < 0.3:  # a score exactly at the threshold
        thr = float(scores.flat[rng.randrange(scores.size)])
    opts["nms_score_threshold"] = _f32(thr)
    opts["nms_iou_threshold"] = _f32(rng.choice(
        (0.5, 0.6, 0.3, 1.0, 0.01, rng.uniform(0.05, 1.0))))
    ys, xs, hs, ws = 10.0, 10.0, 5.0, 5.0
    if rng.random() < 0.4:
        ys, xs = (_f32(rng.uniform(0.5, 20)) for _ in range(2))
        hs, ws = (_f32(rng.uniform(0.5, 10)) for _ in range(2))
    opts.update(y_scale=ys, x_scale=xs, h_scale=hs, w_scale=ws)
    # anchors (y, x, h, w): a grid, random, or few distinct ones
    centers = g.random((nb, 2))
    sizes = g.uniform(0.05, 0.6, (nb, 2))
    if rng.random() < 0.3 and nb > 1:  # duplicates: identical boxes
        k = g.integers(0, max(1, nb // 3), nb)
        centers, sizes = centers[k], sizes[k]
    anchors = np.concatenate([centers, sizes], 1).astype(np.float32)
    enc = g.standard_normal((nb, coords)) * rng.choice((0.0, 0.5, 1.0, 3.0))
    if rng.random() < 0.3:
        enc[g.random(nb) < 0.5] = 0.0
    enc = enc.astype(np.float32)
    ins = [enc.reshape(1, nb, coords), scores.reshape(1, nb, nc + bg)]
    if regular or not full:
        n_out = max_det * ncat * ncat + (0 if full else rng.choice(
            (0, 0, 0, 1, 2)))
        return model(nb, nc, bg, anchors, opts, n_out, coords), ins
    # The fast NMS writes only its detections (the rest of the outputs
    # holds whatever TFLM's arena held): max_detections at most the
    # boxes it keeps, found by running TFLM with max_detections = boxes.
    from host_tools.oracle import Reference
    opts["max_classes_per_detection"] = 1
    opts["max_detections"] = nb
    raw = model(nb, nc, bg, anchors, opts, nb, coords)
    kept = int(Reference(raw).run(ins)[3][0])
    if kept == 0:  # nothing above the threshold: the regular NMS
        opts["use_regular_nms"] = True
        kept = max_det
    opts["max_detections"] = min(max_det, kept)
    n = opts["max_detections"]
    return model(nb, nc, bg, anchors, opts, n, coords), ins


GENERATORS = {NAME: gen_detection_postprocess}

# every generated model must run here (a rejection is a failure)
STRICT = tuple(GENERATORS)
