"""Files a user downloads or uploads.

- :mod:`.export`: a run's history as CSV, its parameters as msgpack, a script that reproduces it, and parameter
  files read back safely.
- :mod:`.msgpack_scan`: msgpack bytes checked before anything is unpacked.
"""

from rnnlab.files import export, msgpack_scan

__all__ = ["export", "msgpack_scan"]
