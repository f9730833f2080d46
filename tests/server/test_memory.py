"""A dropped compiled program is freed when a new configuration is set up."""

from __future__ import annotations

import weakref
from dataclasses import replace

from rnnlab import memory
from rnnlab.config import Config
from rnnlab.training import program as programs


def test_a_dropped_program_is_freed_when_a_new_configuration_is_set_up(monkeypatch):
    monkeypatch.setattr(programs, "MAX_PROGRAMS", 1)
    first = programs.get_program(replace(Config(), seq_len=41, features=5))
    first.jitted("probe", lambda p: lambda x: x + 1)  # a jitted method refers back to its program: a cycle
    gone = weakref.ref(first)
    del first
    programs.get_program(replace(Config(), seq_len=42, features=5))  # drops the first, then frees memory
    assert gone() is None



def test_giving_memory_back_works_here():
    memory.give_back_free_memory()
