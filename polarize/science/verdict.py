"""Whether a run polarized, judged from its result and said in plain words."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.losses import LOSSES
from polarize.methods import METHODS
from polarize.models import MODELS
from polarize.science.simplex import simplex_shares
from polarize.science.time_words import format_time
from polarize.status import Status

__all__ = ["PARTLY_ENTROPY", "PARTLY_SHARE", "POLARIZED_SHARE", "THRESHOLDS", "Polarization", "Verdict",
           "ends", "judge", "settings_line", "slow_tail", "title_lines"]

POLARIZED_SHARE = 0.95
"""A run counts as polarized when the leading token holds at least this share of the scores."""


class Polarization(StrEnum):
    """The verdict's grade, with its words: ``headline``, ``answer`` (to "Polarized?") and ``group``.

    A ``str`` enum: its values are the strings verdicts have always been compared as.
    """

    YES = "yes"
    PARTLY = "partly"
    NO = "no"
    CUT = "cut"
    """Stopped by its time or step limit before the horizon: no verdict about its end."""

    @property
    def headline(self) -> str:
        """Two or three words: "Polarized", "Partly polarized", "Not polarized", "Cut short"."""
        return _WORDS[self][0]

    @property
    def answer(self) -> str:
        """The one-word answer to "Polarized?" ("Yes", "Partly", "No", "Not known: cut short")."""
        return _WORDS[self][1]

    @property
    def group(self) -> str:
        """The title of a group of runs with this grade (the Normalizers page's caption)."""
        return _WORDS[self][2]


_WORDS = {
    Polarization.YES: ("Polarized", "Yes", f"Polarized (leader \u2265 {POLARIZED_SHARE:.0%})"),
    Polarization.PARTLY: ("Partly polarized", "Partly", "Partly polarized"),
    Polarization.NO: ("Not polarized", "No", "Not polarized"),
    Polarization.CUT: ("Cut short", "Not known: cut short",
                       "Cut short by the time or step limit (no verdict about the end)"),
}


@dataclass(frozen=True)
class Verdict:
    """Whether a run polarized, in plain words.

    Attributes
    ----------
    status : Polarization
        ``CUT``: stopped by its time limit before the horizon, so no verdict about its end.
    sentence : str
        What happened, with the numbers.
    winner : int
        Token with the largest final score (0-based).
    share : float
        The winner's share ``|s_w| / sum |s_j|`` of the final scores.
    entropy : float
        Final entropy (nats).
    gap : float
        Final ``1 - max s``.
    """

    status: Polarization
    sentence: str
    winner: int
    share: float
    entropy: float
    gap: float

    @property
    def headline(self) -> str:
        """Two or three words: "Polarized", "Partly polarized", "Not polarized", "Cut short"."""
        return self.status.headline


PARTLY_SHARE = 0.5
"""Partly polarized: the leader holds at least this share (and less than ``POLARIZED_SHARE``) ..."""
PARTLY_ENTROPY = 0.5
"""... or the entropy fell to at most this fraction of its maximum ``log n``."""
THRESHOLDS = (f"Polarized: the leading token holds at least {POLARIZED_SHARE:.0%} of the weight. Partly: "
              f"at least {PARTLY_SHARE:.0%}, or the entropy is at most {PARTLY_ENTROPY:.0%} of log n. "
              "Not polarized otherwise.")
"""The one graded verdict, in words: every page that says "polarized" means this."""


def judge(result: Result) -> Verdict:
    """Whether a run polarized (s(t) near a vertex of the simplex), in plain words.

    One graded verdict (``THRESHOLDS``): polarized when the leading token holds
    at least 95% of the scores; partly when it holds at least half, or the
    entropy fell to half of ``log n``; not polarized otherwise. Scores off the
    simplex (sigmoid, linear, sum) are judged by their shares ``|s_i| / sum |s_j|``.

    Parameters
    ----------
    result : Result

    Returns
    -------
    Verdict
    """
    s = np.asarray(result.s[-1], dtype=float)
    n = len(s)
    q = simplex_shares(s)
    winner = int(np.argmax(q))
    share = float(q[winner])
    entropy = float(result.entropy[-1])
    gap = float(result.one_minus_max[-1])
    log_n = math.log(n)
    t = np.asarray(result.t, dtype=float)
    on_simplex = result.experiment.sigma.on_simplex
    shares_note = "" if on_simplex else (
        f" ({result.experiment.normalizer} scores need not sum to 1; these are shares |s_i| / Σ|s_j|.)")
    # Is the entropy still falling over the last decade of time?
    earlier = int(np.searchsorted(t, t[-1] / 10.0)) if t[-1] > 0 else 0
    earlier = min(max(earlier, 0), len(t) - 1)
    falling = float(result.entropy[earlier]) - entropy > 0.01 * log_n
    stopped = "" if result.finished else f" The run stopped early, at t = {format_time(float(t[-1]))}."

    if result.status is Status.OUT_OF_TIME:
        # Cut by the clock before its horizon: where it got says nothing about where it would end.
        sentence = (f"Cut short at t = {format_time(float(t[-1]))} of {format_time(float(_asked(result)))} "
                    "by the time limit, and drawn up to there: no verdict about where it ends (at the cut, "
                    f"the leader held {share:.0%}).")
        return Verdict(Polarization.CUT, sentence, winner, share, entropy, gap)
    if result.status is Status.OUT_OF_STEPS:
        # Still moving when its integrator steps ran out: no more known about its end than the clock's cut.
        sentence = (f"Cut short at t = {format_time(float(t[-1]))} of {format_time(float(_asked(result)))}: "
                    "the flow was still moving when it used up its integrator steps, and is drawn up to "
                    f"there: no verdict about where it ends (at the cut, the leader held {share:.0%}).")
        return Verdict(Polarization.CUT, sentence, winner, share, entropy, gap)
    if not np.any(s != 0):
        return Verdict(Polarization.NO,
                       "Every score is zero: the normalizer switched all tokens off, so nothing can move."
                       + stopped,
                       winner, 1.0 / n, entropy, gap)
    if share >= POLARIZED_SHARE:
        sentence = (f"Yes. Token {winner} holds {share:.1%} of the weight: "
                    + _near_vertex(result, gap, on_simplex))
        return Verdict(Polarization.YES, sentence + shares_note + stopped, winner, share, entropy, gap)
    if share >= PARTLY_SHARE or entropy <= PARTLY_ENTROPY * log_n:
        why = ("the entropy is still falling: try a longer horizon." if falling else
               "the flow has settled before reaching a vertex.")
        sentence = (f"Partly polarized. Token {winner} leads with {share:.0%} of the weight, but "
                    f"{1 - share:.0%} stays spread over the others; {why}")
        return Verdict(Polarization.PARTLY, sentence + shares_note + stopped, winner, share,
                       entropy, gap)
    sentence = (f"Not polarized. The scores stay spread out: the leader, token {winner}, has {share:.0%} of "
                f"the weight (uniform would be {1 / n:.0%}), and the entropy is {entropy / log_n:.0%} of its "
                "maximum, log n.")
    if falling:
        sentence += " The entropy is still falling: a longer horizon may change this."
    return Verdict(Polarization.NO, sentence + shares_note + stopped, winner, share, entropy, gap)


def _asked(result: Result) -> float:
    """The time the run was asked to reach (gradient descent: its whole steps of ``lr``)."""
    e = result.experiment
    return METHODS[e.method].end(e.horizon, e.lr)


def _near_vertex(result: Result, gap: float, on_simplex: bool) -> str:
    """How close ``s`` is to the vertex, without claiming more than the numbers show."""
    e = result.experiment
    if not on_simplex:
        return "its shares approach a vertex."
    if gap == 0:
        return "s sits on a vertex of the simplex, the other scores switched off (exactly 0)."
    more = " It keeps sharpening, slowly: the others shrink like 1/log\u00b2 t." if slow_tail(e) else ""
    return f"s(t) approaches a vertex of the simplex (1 \u2212 max s = {gap:.2g}).{more}"


def slow_tail(experiment: Experiment) -> bool:
    """Whether the losers' total is known to shrink like ``1/log^2 t``: the logistic loss on a target
    direction with softmax in the value model (the paper's theorem and its sharp asymptotics)."""
    e = experiment
    return bool(LOSSES[e.loss].margin and e.normalizer == "softmax" and "closed" in MODELS[e.model].systems
                and e.X is None)


def ends(verdict: Verdict) -> str:
    """How one run ends, for a sentence about that run: e.g. ``polarized (leader 97%)``.

    A run cut short gets no grade: where it stopped says nothing about where it would end.

    Parameters
    ----------
    verdict : Verdict

    Returns
    -------
    str
        Lower-case words, no final stop.
    """
    if verdict.status is Polarization.CUT:
        return f"cut short (leader {verdict.share:.0%} where it stopped; no verdict)"
    return f"{verdict.headline.lower()} (leader {verdict.share:.0%})"


def settings_line(experiment: Experiment) -> str:
    """The settings of a run in one line, e.g. ``n = 8, d = 8 · logistic loss · softmax · exact flow · ...``.

    Parameters
    ----------
    experiment : Experiment

    Returns
    -------
    str
        Plain text (no markup): model, sizes, loss, normalizer, method, horizon, start and seed.
    """
    e = experiment
    # a temperature other than 1 is one the normalizer takes (Experiment refuses any other)
    normalizer = e.normalizer + (f" (T = {e.temperature:g})" if e.temperature != 1.0 else "")
    method = METHODS[e.method].words(e.lr)
    start = "a(0) = 0" if e.a_init == "zeros" else f"a(0) {e.a_init} \u00d7 {e.a_scale:g}"
    parts = [f"n = {e.n}, d = {e.d}" + MODELS[e.model].mark, f"{e.loss} loss",
             normalizer, method, f"to t = {format_time(float(e.horizon))}", start, f"seed {e.seed}"]
    return " \u00b7 ".join(parts)


def title_lines(result: Result) -> tuple[str, str]:
    """The two lines that title a clip or an exported dashboard: the settings, then the verdict.

    Parameters
    ----------
    result : Result

    Returns
    -------
    (str, str)
        ``settings_line`` of the run, and the verdict's headline with its sentence (plain text).
    """
    verdict = judge(result)
    answer, _, rest = verdict.sentence.partition(". ")
    sentence = rest if answer in ("Yes", verdict.headline) else verdict.sentence  # the headline says it
    return settings_line(result.experiment), f"{verdict.headline}: {sentence}"
