"""The app's pages without Streamlit: each page is a ``PageSpec`` (``polarize.web.pages`` lists them).

Layers, imported one way only: ``pages/*.py`` -> ``ui/`` (the one Streamlit
renderer) -> ``polarize.web`` (page specs, controls, links, views) ->
``polarize.plots`` -> ``polarize.science`` -> the engine.

- ``controls``: ``Control``, one control (widget, link key, range, rules);
- ``links``: ``read_link`` and ``to_query``, the one reader and writer of links (``present`` too);
- ``echo``: ``echo``, the one way a user-supplied value (a link's raw text) reaches the page;
- ``page``: ``PageSpec``, ``View`` and its blocks, ``Problem``;
- ``explorer``, ``comparisons.*``, ``maths``: the pages; ``text``: the Explorer's words;
- ``export``: the downloads of a run; ``present``: a view in presentation mode;
- ``transport``: the script of the animated figures' keys and step buttons (app and offline HTML);
- ``deck``: the Deck page (lecture decks);
- ``pages``: every page, in navigation order.
"""
