"""Counting msgpack objects without unpacking, against what the msgpack library packs and unpacks."""

from __future__ import annotations

import random

import flax.serialization
import msgpack
import numpy as np
import pytest

from rnnlab.files.msgpack_scan import FLAX_EXT_TYPES, TooManyObjects, count_objects


def reference_count(obj) -> int:
    """Objects in an unpacked value (map keys count; Flax's array extensions hold msgpack themselves)."""
    if isinstance(obj, msgpack.ExtType):  # a named tuple: before the containers
        if obj.code not in FLAX_EXT_TYPES:
            return 1
        return 1 + reference_count(msgpack.unpackb(obj.data, strict_map_key=False))
    if isinstance(obj, dict):
        return 1 + sum(reference_count(k) + reference_count(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return 1 + sum(reference_count(v) for v in obj)
    return 1


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(12 if depth < 4 else 8)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1])
    if kind == 2:
        return rng.choice([-1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63)])
    if kind == 3:
        return rng.choice([0.5, -1e300, float("inf")])
    if kind == 4:
        return "x" * rng.choice([0, 1, 31, 32, 255, 256, 65535, 65536])
    if kind == 5:
        return b"y" * rng.choice([0, 1, 255, 256, 65535, 65536])
    if kind == 6:
        return msgpack.ExtType(rng.choice([5, 17, 100]), b"z" * rng.choice([1, 2, 4, 8, 16, 3, 300, 70000]))
    if kind == 7:
        return msgpack.ExtType(1, msgpack.packb([[rng.randrange(9)], "float32", b"abcd"]))
    if kind in (8, 9):
        return [random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 15, 16, 17]))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.choice([0, 1, 15, 16, 17]))}


@pytest.mark.parametrize("seed", range(40))
def test_counts_what_msgpack_packs(seed):
    value = random_value(random.Random(seed))
    data = msgpack.packb(value)
    assert count_objects(data, 10**9) == reference_count(msgpack.unpackb(data, strict_map_key=False))


def test_long_containers_and_every_length_field():
    for n in (15, 16, 65535, 65536):
        assert count_objects(msgpack.packb(list(range(n))), 10**9) == 1 + n
        assert count_objects(msgpack.packb({i: None for i in range(n)}), 10**9) == 1 + 2 * n


def test_a_real_flax_parameter_file():
    params = {"params": {"cell": {"kernel": np.ones((3, 4), np.float32), "bias": np.zeros(4, np.float32)},
                         "h0": np.arange(4, dtype=np.float32), "scalar": np.float32(2.0)}}
    data = flax.serialization.to_bytes(params)
    assert count_objects(data, 10**9) == reference_count(msgpack.unpackb(data, strict_map_key=False))


@pytest.mark.parametrize("crafted", [
    msgpack.packb({"params": [{} for _ in range(3_000_000)]}),
    msgpack.packb({"params": [b""] * 2_000_000}),
    msgpack.packb({"params": msgpack.ExtType(1, msgpack.packb([list(range(2_000_000)), "float32", b""]))}),
])
def test_stops_at_the_limit_without_walking_on(crafted):
    with pytest.raises(TooManyObjects):
        count_objects(crafted, 1000)


def test_deep_nesting_and_broken_bytes():
    deep = b"\x91" * 100 + b"\xc0"
    with pytest.raises(TooManyObjects, match="nested more than"):
        count_objects(deep, 10**6)
    good = msgpack.packb({"a": [1, 2, "three"]})
    for cut in range(len(good)):
        with pytest.raises(ValueError):
            count_objects(good[:cut], 10**6)
    with pytest.raises(ValueError):
        count_objects(good + b"\x00", 10**6)
    with pytest.raises(ValueError):
        count_objects(b"\xc1", 10)  # never used by msgpack
