"""The app's pages without Streamlit: each page is a ``PageSpec`` (``polarize.web.pages`` lists them).

Layers, imported one way only: ``app.py`` -> ``ui/`` (the one Streamlit renderer) ->
``polarize.web`` -> ``polarize.serve``, ``polarize.clips`` -> ``polarize.plots`` ->
``polarize.science`` -> the engine.

In tiers, each importing only its own and those below (``tests/test_layers.py`` holds it):

- pages: ``pages``, every page's spec (``pages.PAGES``, in navigation order), one module each;
- study: ``study``, studies of several runs under one time budget (comparison pages, phase portrait);
- experiment: ``experiment_controls``, the Explorer's controls and the experiment their values make
  (shared by every page of runs); ``limited``, one run under the time limit, each failure a view;
  ``precomputed`` (and ``data/``), the comparison shipped ahead;
- view: ``view``, ``View`` and its blocks; ``slides``, ``Slide``; ``page``, ``PageSpec``, what a click
  on a figure sets; ``controls``, ``Control``, one control (widget, link key, range, rules); ``links``,
  ``read_link`` and ``to_query``, the one reader and writer of links (``present`` too); ``echo``, the
  one way a user-supplied value (a link's raw text) reaches the page; ``failures``, what a failed or
  queued run says; ``overtime``, advice for a run cut at its limit; ``progress``, progress reports from
  a run to the page that waits for it; ``text``, the Explorer's words; ``leads``, each page's lead and
  tour; ``export``, the downloads of a run; ``fit``, a view fitted to its display (a phone, a
  projector, presentation mode, dark); ``transport`` (and ``transport.js``), the animated figures'
  keys and step buttons (app and offline HTML); ``deck_store``, lecture decks (SQLite, or in memory
  for a session); ``deck_file``, a deck as a JSON file.
"""
