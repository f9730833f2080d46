"""How a package door hands out its names. A door (:mod:`rnnlab.server.work`, :mod:`rnnlab.server.access`,
:mod:`rnnlab.server.storage`) lists what the layers above may take from it in a ``DOOR`` table (a name, and the
module that defines it, or is it) and imports that module only when the name is first asked for: opening a door
loads nothing heavy (``app.py`` reads the page's language before JAX is imported)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def opener(package: str, door: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of door ``package``: a name of ``door`` from its module (a module named by the
    table is the name itself), kept on the package once found; AttributeError for any other name."""

    def take(name: str) -> Any:
        where = door.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where)
        value = module if where == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return take
