"""The Streamlit side of rnnlab: helpers the page scripts in ``app_pages/`` share (the logic lives in ``rnnlab``).

- :mod:`ui.language`: the reader's language for each script run (the link's ``lang``, then the browser's), and
  the sidebar's language selector.
- :mod:`ui.session`: the session's experiment, kept in step with the URL, and the tab's reload token.
- :mod:`ui.controls`: the sidebar's experiment controls, generated from ``rnnlab.config.SETTINGS``.
- :mod:`ui.queue`: heavy work through the executor and the one loop that waits for it, drawing the queue position,
  what runs and for how long.
- :mod:`ui.work`: a page's heavy work on runs, submitted to the executor and waited for on the page.
- :mod:`ui.navigation`: the sidebar's page links; every page runs through ``app.py``'s navigation, even for a
  link on a fresh server.
- :mod:`ui.compiling`: a configuration's first compile as a page shows it (a long one in a worker Stop ends).
- :mod:`ui.progress`: progress of long work on a page: what runs, how far it is and about how long is left.
- :mod:`ui.charts`: drawing rnnlab's Plotly figures, one place for how every chart behaves in the browser.
- :mod:`ui.marks`: the time step marked in every per-step chart of a session.
- :mod:`ui.example_view`: Explore's "One example, unrolled" section.
- Explore's parts: :mod:`ui.explore_state` (its state in one object), :mod:`ui.explore_controls` (buttons, notes,
  loader and downloads), :mod:`ui.explore_training` (runs and training loops that redraw as they go) and
  :mod:`ui.explore_charts` (its progress line and charts).
- :mod:`ui.share`: the "Share with the class" dialog: controls to hide, autorun, the link and its QR code.
- :mod:`ui.slots`: a place on the page that stays one element in every script run.
- :mod:`ui.starting`: a fresh server's first seconds on a page: what it is loading, before the page can draw.
"""
