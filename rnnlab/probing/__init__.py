"""What a model shows when probed: gradients through time, tables of a run, one example unrolled.

- :mod:`.probes`: ||dL/dh_t||, connectivity, the decay sweep and starts from other carries.
- :mod:`.probe_segments`: long probes in time segments that report progress and can be stopped.
- :mod:`.logscale`: the same gradients at their true size, however small (log10, with the cause of every exact 0).
- :mod:`.analysis`: the tables the charts draw from a run's history.
- :mod:`.example`: one example of the task step by step (inputs, answers, carry, gates).
"""

from rnnlab.probing import analysis, example, logscale, probe_segments, probes

__all__ = ["analysis", "example", "logscale", "probe_segments", "probes"]
