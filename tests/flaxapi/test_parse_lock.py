"""Python source is parsed one thread at a time: CPython 3.11's syntax tree builder shares one recursion counter
between threads, and two readers opening the Old vs new API page at once made it fail ("SystemError: AST constructor
recursion depth mismatch", reproduced with six threads parsing the checker's example)."""

from __future__ import annotations

import ast
import inspect

from rnnlab.flaxapi import migrate, recipes
from rnnlab.flaxapi.migrate import parsing
from rnnlab.text import PYTHON_PARSE_LOCK


def test_the_checker_parses_pasted_code_holding_the_lock(monkeypatch):
    held = []

    def parse(source, *args, **kwargs):
        held.append(PYTHON_PARSE_LOCK.locked())
        return real_parse(source, *args, **kwargs)

    real_parse = ast.parse
    monkeypatch.setattr(parsing.ast, "parse", parse)
    assert isinstance(parsing.parse_code(migrate.EXAMPLE), ast.Module)
    assert held == [True] and not PYTHON_PARSE_LOCK.locked()


def test_the_recipes_read_their_source_holding_the_lock(monkeypatch):
    held = []

    def getsource(obj):
        held.append(PYTHON_PARSE_LOCK.locked())
        return real_getsource(obj)

    real_getsource = inspect.getsource
    monkeypatch.setattr(recipes.inspect, "getsource", getsource)
    assert "class CarryDefaultRNN" in recipes._source(recipes.CarryDefaultRNN)
    assert held == [True] and not PYTHON_PARSE_LOCK.locked()
