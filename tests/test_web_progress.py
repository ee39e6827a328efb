"""Progress notices: a view reports, the listener of its thread hears it, clipped to [0, 1]."""

from __future__ import annotations

from polarize.web.progress import progress_notices, report


def test_report_reaches_the_listener_only_inside():
    heard = []
    report(0.5, "nobody listens")  # no listener: nothing happens
    with progress_notices(lambda fraction, text: heard.append((fraction, text))):
        report(0.25, "a quarter")
        report(1.5, "over")
        report(-1, "under")
    report(0.75, "after")
    assert heard == [(0.25, "a quarter"), (1.0, "over"), (0.0, "under")]
