"""The test suite's helpers, one module a concept (``from support.browser import AppServer``).

- ``browser``: the real app in headless Chromium (servers, the browser, waiting for a state);
- ``layout``: what a page's text overlaps or cuts off, read in the browser;
- ``axe``: axe-core, the accessibility engine, installed from npm once;
- ``app``: pages opened headlessly (``streamlit.testing.v1.AppTest``);
- ``stream_client``: a websocket client of the app that draws nothing (many sessions at once);
- ``cluster``: a real ``dask scheduler`` and ``dask worker`` processes;
- ``proxy``: nginx from ``deploy/``'s template in front of app replicas (``Layout``);
- ``decks``, ``figures``: shared decks and figure lookups of the tests;
- ``official_loops``: the official notebook's loops (the paper's reference, also the benchmarks').

``tests/`` is on the path (``pythonpath`` in pyproject.toml), so the benchmarks import them too.
"""
