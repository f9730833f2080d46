"""Reading Plotly figures as the browser does, for tests: typed arrays decoded, and animation frames merged into the
traces they replace."""

from __future__ import annotations

import base64

import numpy as np


def decoded(data: object) -> np.ndarray:
    """An attribute's array, decoding Plotly's typed-array encoding (``{'dtype', 'bdata', 'shape'}``)."""
    if isinstance(data, dict) and "bdata" in data:
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = data.get("shape")
        if isinstance(shape, str):
            shape = [int(n) for n in shape.split(",")]
        return flat.reshape(shape) if shape else flat
    return np.asarray(data)


def plotly_merge(trace: dict, update: dict) -> dict:
    """``update`` merged into ``trace`` as Plotly's animation merges a frame's trace: nested attributes one by one,
    anything else (arrays too) replaced."""
    out = dict(trace)
    for key, value in update.items():
        out[key] = plotly_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
            else value
    return out


def frame_traces(figure: dict, frame: dict) -> list[dict]:
    """A frame's traces as the browser draws them: each merged into the figure's trace it replaces."""
    return [plotly_merge(figure["data"][i], update) for i, update in zip(frame["traces"], frame["data"])]
