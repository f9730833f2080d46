"""Counting the objects in msgpack bytes without building any of them, so that a crafted file is refused at once.

A parameter file of a few arrays holds a few dozen msgpack objects; a crafted one of the same size can hold
millions (empty maps are one byte each), and unpacking it costs a hundred times its size in memory while the
unpacker holds the interpreter. :func:`count_objects` walks the encoding (headers only, payloads skipped) and
stops as soon as it has seen more objects than allowed. Flax's array extensions (types 1-3) hold msgpack
themselves and are walked too.
"""

from __future__ import annotations

import struct

from rnnlab.i18n import tn

FLAX_EXT_TYPES = (1, 2, 3)  # flax.serialization: ndarray, native complex, numpy scalar
MAX_DEPTH = 64

# first byte -> (bytes of the length that follows, kind); kinds: "raw" (skip the length), "ext" (type + payload)
_SIZED = {0xC4: (1, "raw"), 0xC5: (2, "raw"), 0xC6: (4, "raw"),
          0xD9: (1, "raw"), 0xDA: (2, "raw"), 0xDB: (4, "raw"),
          0xC7: (1, "ext"), 0xC8: (2, "ext"), 0xC9: (4, "ext"),
          0xDC: (2, "array"), 0xDD: (4, "array"), 0xDE: (2, "map"), 0xDF: (4, "map")}
_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
          0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8}
_FIXEXT = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}


class TooManyObjects(ValueError):
    """The bytes hold more msgpack objects (or deeper nesting) than allowed."""


def count_objects(data: bytes, limit: int) -> int:
    """The number of msgpack objects in ``data`` (one top-level object; map keys count), walked without
    unpacking. Raises :class:`TooManyObjects` past ``limit`` objects or :data:`MAX_DEPTH` levels, and ValueError
    when the bytes are cut short or not msgpack."""
    view = memoryview(data)
    end, count = _walk(view, 0, limit, 0, 0)
    if end != len(view):
        raise ValueError("bytes after the first msgpack object")
    return count


def _walk(view: memoryview, pos: int, limit: int, count: int, depth: int) -> tuple[int, int]:
    """One object from ``pos``: (position after it, objects counted so far)."""
    if depth > MAX_DEPTH:
        # TRANSLATORS: what a refused file holds, inside a sentence ('it holds {found}').
        raise TooManyObjects(tn("msgpack objects nested more than {n} level deep",
                                "msgpack objects nested more than {n} levels deep", MAX_DEPTH))
    count += 1
    if count > limit:
        raise TooManyObjects(_too_many(limit))
    if pos >= len(view):
        raise ValueError("cut short")
    first = view[pos]
    pos += 1
    if first <= 0x7F or first >= 0xE0:  # fixints
        return pos, count
    if 0x80 <= first <= 0x8F:
        return _items(view, pos, 2 * (first & 0x0F), limit, count, depth)
    if 0x90 <= first <= 0x9F:
        return _items(view, pos, first & 0x0F, limit, count, depth)
    if 0xA0 <= first <= 0xBF:
        return _skip(view, pos, first & 0x1F), count
    if first in _FIXED:
        return _skip(view, pos, _FIXED[first]), count
    if first in _FIXEXT:
        return _ext(view, pos + 1, view[pos] if pos < len(view) else -1, _FIXEXT[first], limit, count, depth)
    if first not in _SIZED:
        raise ValueError(f"byte 0x{first:02x} starts no msgpack object")
    width, kind = _SIZED[first]
    length = _length(view, pos, width)
    pos += width
    if kind == "raw":
        return _skip(view, pos, length), count
    if kind == "ext":
        return _ext(view, pos + 1, view[pos] if pos < len(view) else -1, length, limit, count, depth)
    return _items(view, pos, length * (2 if kind == "map" else 1), limit, count, depth)


def _too_many(limit: int) -> str:
    # TRANSLATORS: what a refused file holds, inside a sentence ('it holds {found}').
    return tn("more than {n:,} msgpack object", "more than {n:,} msgpack objects", limit)


def _length(view: memoryview, pos: int, width: int) -> int:
    if pos + width > len(view):
        raise ValueError("cut short")
    return struct.unpack(">" + {1: "B", 2: "H", 4: "I"}[width], view[pos:pos + width])[0]


def _skip(view: memoryview, pos: int, length: int) -> int:
    if pos + length > len(view):
        raise ValueError("cut short")
    return pos + length


def _items(view: memoryview, pos: int, n: int, limit: int, count: int, depth: int) -> tuple[int, int]:
    if count + n > limit:
        raise TooManyObjects(_too_many(limit))
    for _ in range(n):
        pos, count = _walk(view, pos, limit, count, depth + 1)
    return pos, count


def _ext(view: memoryview, pos: int, code: int, length: int, limit: int, count: int, depth: int) -> tuple[int, int]:
    end = _skip(view, pos, length)
    if code in FLAX_EXT_TYPES:
        inner_end, count = _walk(view[:end], pos, limit, count, depth + 1)
        if inner_end != end:
            raise ValueError("an array extension with bytes after its contents")
    return end, count
