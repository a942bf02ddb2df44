# Runs in MicroPython: tests/test_tensor_api.py appends its calls to this
# helper.
def outcomes(calls, env):
    res = []
    for call in calls:
        try:
            exec(call, env)
            res.append('no error')
        except Exception as e:
            res.append(type(e).__name__)
    return res
