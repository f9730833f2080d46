"""The Streamlit side of rnnlab: helpers the page scripts in ``pages/`` share (the logic lives in ``rnnlab``).

- :mod:`ui.session`: the session's experiment, kept in step with the URL, and the tab's reload token.
- :mod:`ui.controls`: the sidebar's experiment controls, generated from ``rnnlab.config.SETTINGS``.
- :mod:`ui.queue`: waiting for a server-wide training slot, with the queue position on screen.
- :mod:`ui.navigation`: every page runs through ``app.py``'s navigation, even for a link on a fresh server.
"""
