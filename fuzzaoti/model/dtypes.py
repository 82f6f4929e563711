"""The dtypes a Program may use and their facts, without torch (the parent process never needs
it). A leaf: every other module of the model imports it, it imports none of them."""

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool")
FLOAT_DTYPES = ("float64", "float32", "bfloat16", "float16")
EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}
"""torch.finfo(dtype).eps."""
ITEMSIZE = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2}
"""Bytes per element (int8, uint8 and bool: 1)."""
