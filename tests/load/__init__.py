"""Load tests without browsers: :mod:`.protocol_client` speaks Streamlit's websocket protocol as a browser tab does,
so that a class of many sessions fits on a small machine; :mod:`.test_protocol_client` checks it without a server.
"""
