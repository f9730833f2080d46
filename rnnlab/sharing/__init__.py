"""An experiment passed on: in the URL, as a preset lesson, or as a class link with a QR code.

- :mod:`.urlstate`: query parameters <-> the experiment (:class:`UrlState`), with notes for bad values.
- :mod:`.presets`: one-click lessons, each a URL query for a page.
- :mod:`.class_link`: the link a teacher projects (:func:`~.class_link.projected_link`) and its QR code.
- :mod:`.classes`: a class predicting together, as values: its code, questions and answers, the students' and the
  teacher's links, the answers as a table.
"""

from rnnlab.sharing.presets import PRESETS, PRESETS_BY_KEY, Preset
from rnnlab.sharing.urlstate import UrlState, parse_query, to_query

__all__ = ["PRESETS", "PRESETS_BY_KEY", "Preset", "UrlState", "parse_query", "to_query"]
