"""What a model shows when probed: gradients through time, grids of runs, tables of a run, one example unrolled.

- :mod:`.probes`: ||dL/dh_t||, connectivity, the decay sweep and starts from other carries.
- :mod:`.probe_segments`: long probes in time segments that report progress and can be stopped.
- :mod:`.sweep`: grids of runs trained at once (vmapped), with their verdicts.
- :mod:`.analysis`: the tables the charts draw from a run's history.
- :mod:`.example`: one example of the task step by step (inputs, answers, carry, gates).
"""

from rnnlab.probing import analysis, example, probe_segments, probes, sweep

__all__ = ["analysis", "example", "probe_segments", "probes", "sweep"]
