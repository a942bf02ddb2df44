"""Train and convert tflm's default demo model: a tiny int8 CNN for 8x8 digits.

Host-side (CPython) tool, not part of the MicroPython runtime. Needs the
packages in requirements-dev.txt:

    python3 -m venv .venv-dev && .venv-dev/bin/pip install -r requirements-dev.txt
    .venv-dev/bin/python host_tools/make_digits_model.py

Steps: load scikit-learn's bundled digits (1797 samples, 8x8, values 0..16),
scale to [0, 1], hold out 300 test digits (fixed seed), train a small Keras CNN
(fixed seeds, deterministic ops), convert it with the official TFLite converter
to a fully-int8 model, and evaluate that model with the TFLM reference
interpreter. Writes, next to this script:

    data/digits_cnn_int8.tflite   the model (int8 input [1,8,8,1], int8 output [1,10])
    data/digits_test.npz          x (int8, quantized with the model input's
                                  scale/zero point), x_float (float32 in [0, 1]),
                                  y (int labels), 300 test digits each, and
                                  out_int8 (the TFLM reference interpreter's int8
                                  outputs [300,10], for bit-exact checks)

The converted model uses only these builtin ops: CONV_2D, DEPTHWISE_CONV_2D,
ADD, MAX_POOL_2D, AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("PYTHONHASHSEED", "0")

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
N_TEST = 300
EPOCHS = 60
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MODEL_PATH = os.path.join(DATA_DIR, "digits_cnn_int8.tflite")
TEST_PATH = os.path.join(DATA_DIR, "digits_test.npz")
ALLOWED_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
               "MAX_POOL_2D", "ADD", "SOFTMAX", "RESHAPE", "QUANTIZE", "DEQUANTIZE"}


def build_model(batch_size=None):
    """8x8x1 -> conv(8) -> +depthwise residual -> maxpool -> conv(16) -> avgpool -> dense(10)."""
    L = tf.keras.layers
    inp = tf.keras.Input(shape=(8, 8, 1), batch_size=batch_size)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)             # 8x8x8
    x = L.Add()([x, L.DepthwiseConv2D(3, padding="same", activation="relu")(x)])
    x = L.MaxPooling2D(2)(x)                                               # 4x4x8
    x = L.Conv2D(16, 3, padding="same", activation="relu")(x)              # 4x4x16
    x = L.AveragePooling2D(2)(x)                                           # 2x2x16
    x = L.Reshape((64,))(x)  # static shape -> a single RESHAPE op
    x = L.Dense(10)(x)
    out = L.Softmax()(x)
    return tf.keras.Model(inp, out)


def model_info(model_bytes):
    """(op names in execution order, input (scale, zp), output (scale, zp)) from the flatbuffer."""
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    model = schema.Model.GetRootAs(model_bytes, 0)
    graph = model.Subgraphs(0)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    ops = []
    for i in range(graph.OperatorsLength()):
        code = codes[graph.Operators(i).OpcodeIndex()]
        ops.append(names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())])

    def quant(tensor_index):
        q = graph.Tensors(tensor_index).Quantization()
        return float(q.Scale(0)), int(q.ZeroPoint(0))

    return ops, quant(graph.Inputs(0)), quant(graph.Outputs(0))


def main():
    tf.keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[..., None]  # [1797, 8, 8, 1]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=N_TEST, random_state=SEED, stratify=y)

    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=EPOCHS, shuffle=True, verbose=0)
    float_acc = model.evaluate(x_test, y_test, verbose=0)[1]
    print(f"float test accuracy: {float_acc:.4f} ({N_TEST} digits)")

    # Same graph with a fixed batch of 1 so every shape in the .tflite is static.
    export = build_model(batch_size=1)
    export.set_weights(model.get_weights())

    def representative_dataset():
        for i in range(0, len(x_train), 3):
            yield [x_train[i:i + 1]]

    conv = tf.lite.TFLiteConverter.from_keras_model(export)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative_dataset
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    model_bytes = conv.convert()

    ops, (in_scale, in_zp), (out_scale, out_zp) = model_info(model_bytes)
    assert set(ops) <= ALLOWED_OPS, f"unexpected ops: {sorted(set(ops) - ALLOWED_OPS)}"
    os.makedirs(DATA_DIR, exist_ok=True)
    with open(MODEL_PATH, "wb") as f:
        f.write(model_bytes)
    print(f"wrote {MODEL_PATH} ({len(model_bytes)} bytes), ops: {' '.join(ops)}")

    # Evaluate with the TFLM reference interpreter (the behaviour tflm must match).
    from tflite_micro.python.tflite_micro import runtime
    x_q = np.clip(np.round(x_test / in_scale) + in_zp, -128, 127).astype(np.int8)
    micro = runtime.Interpreter.from_bytes(model_bytes)
    outs = []
    for xi in x_q:
        micro.set_input(xi[None], 0)
        micro.invoke()
        outs.append(micro.get_output(0)[0].copy())
    outs = np.array(outs, dtype=np.int8)
    int8_acc = float(np.mean(outs.argmax(axis=1) == y_test))
    print(f"input  scale={in_scale!r} zero_point={in_zp}")
    print(f"output scale={out_scale!r} zero_point={out_zp}")
    print(f"int8 test accuracy (TFLM reference interpreter): {int8_acc:.4f}")

    np.savez_compressed(TEST_PATH, x=x_q, x_float=x_test.astype(np.float32),
                        y=y_test.astype(np.int64), out_int8=outs)
    print(f"wrote {TEST_PATH}")


if __name__ == "__main__":
    main()
