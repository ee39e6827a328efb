"""A run cut short by the clock is drawn up to where it got and said to be cut; no verdict about its end.

Issue 31 ("a run cut short is judged as if complete") and issue 34 item 7: under load the Normalizers page
called a sparsemax run cut at max s = 0.33 "Not polarized", while the whole run polarizes. The cut run is
made here from the whole run itself (its first saved times, marked out of time), so nothing depends on a
machine's speed; that the whole run polarizes is read from the whole run's own scores.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from polarize import simulate
from polarize.science.studies import normalizer_row
from polarize.science.verdict import Polarization, judge
from polarize.status import Status


def cut(result, upto: int):
    """The run as the clock would have left it after ``upto`` saved times."""
    fields = {f.name: getattr(result, f.name)[:upto] for f in dataclasses.fields(result)
              if isinstance(getattr(result, f.name), np.ndarray) and getattr(result, f.name).ndim
              and len(getattr(result, f.name)) == len(result.t)}
    return dataclasses.replace(result, **fields, status=Status.OUT_OF_TIME, message="out of time")


def sparsemax_run():
    from polarize.web.pages import normalizers

    values = normalizers.defaults(None)
    e = dataclasses.replace(normalizers.experiment(values).resolved(), normalizer="sparsemax")
    return values, simulate(e)


def test_a_cut_run_gets_no_verdict_about_its_end():
    _, whole = sparsemax_run()
    assert whole.finished and whole.s[-1].max() > 0.99  # the whole run polarizes
    early = int(np.argmax(np.max(whole.s, axis=1) > 0.3)) + 1
    part = cut(whole, early)
    assert part.s[-1].max() < 0.5
    verdict = judge(part)
    assert verdict.status is Polarization.CUT and "no verdict" in verdict.sentence
    assert "Not polarized" not in verdict.sentence and "Partly" not in verdict.sentence


def test_the_normalizers_caption_says_a_cut_run_is_cut_not_unpolarized():
    from polarize.science.studies import compare_normalizers
    from polarize.web.pages import normalizers

    values, whole = sparsemax_run()
    rows = [r for r in compare_normalizers(normalizers.experiment(values)) if r.normalizer != "sparsemax"]
    early = int(np.argmax(np.max(whole.s, axis=1) > 0.3)) + 1
    rows.append(normalizer_row(cut(whole, early)))
    caption = normalizers.draw(values, rows).plots[0].caption
    not_polarized = caption.split("Not polarized:")[1].split(".")[0] if "Not polarized:" in caption else ""
    assert "sparsemax" not in not_polarized
    assert ("Cut short by the time or step limit (no verdict about the end): sparsemax (drawn to t = "
            in caption)
    assert f"At t = {normalizers.format_time(float(whole.t[-1]))}" in caption


def test_the_explorer_says_a_cut_run_is_not_known():
    _, whole = sparsemax_run()
    assert judge(cut(whole, 5)).status.answer == "Not known: cut short"


def test_a_run_out_of_steps_gets_no_verdict_either():
    """Issue 42, finding 6: a flow still moving when its integrator steps ran out was judged where it
    stopped. Now said to be cut, with no verdict about its end, as a run cut by the clock is."""
    _, whole = sparsemax_run()
    early = int(np.argmax(np.max(whole.s, axis=1) > 0.3)) + 1
    part = dataclasses.replace(cut(whole, early), status=Status.OUT_OF_STEPS,
                               message="stopped: gave up after 50000 integrator steps")
    verdict = judge(part)
    assert verdict.status is Polarization.CUT and "no verdict" in verdict.sentence
    assert "integrator steps" in verdict.sentence and "Not polarized" not in verdict.sentence
    assert not part.finished and verdict.status.answer == "Not known: cut short"
