"""The TFLM reference interpreter (PyPI tflite-micro) as the oracle."""

import numpy as np

from tflm.model import Model

ARENA = 4 << 20


class Reference:
    """TFLM's own interpreter over a .tflite path or bytes.

    run(inputs) takes numpy arrays (one per model input, any shape with the
    right element count) and returns the list of output arrays.
    Raises RuntimeError when TFLM rejects the model.
    """

    def __init__(self, model):
        from tflite_micro.python.tflite_micro import runtime
        if not isinstance(model, (bytes, bytearray)):
            with open(model, "rb") as f:
                model = f.read()
        m = Model(model)
        self.n_in, self.n_out = len(m.inputs), len(m.outputs)
        self.interp = runtime.Interpreter.from_bytes(bytes(model),
                                                     arena_size=ARENA)

    def input_details(self, i):
        return self.interp.get_input_details(i)

    def run(self, inputs):
        for i, x in enumerate(inputs):
            d = self.interp.get_input_details(i)
            x = np.asarray(x, dtype=d["dtype"]).reshape(d["shape"])
            self.interp.set_input(x, i)
        self.interp.invoke()
        return [np.array(self.interp.get_output(j))
                for j in range(self.n_out)]
