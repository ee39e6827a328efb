"""The Explorer's words: option names, the numbers beside the dashboard, what to notice in each panel."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from polarize.config import Experiment
from polarize.losses import LOSSES
from polarize.plots import style
from polarize.plots.dashboard import titles
from polarize.science import (
    distance_to_simplex,
    ends,
    format_time,
    format_value,
    judge,
    simplex_shares,
    slow_tail,
)

__all__ = ["A_INIT_NAMES", "V_INIT_NAMES", "init_note",
           "not_a_distribution", "panel_captions", "summary_metrics"]

A_INIT_NAMES = {"zeros": "zeros (uniform scores)", "gaussian": "scale \u00d7 randn",
                "shifted": "shift + scale \u00d7 randn", "vertex": "near a vertex"}
V_INIT_NAMES = {"gaussian": "scale \u00d7 randn", "zeros": "zeros", "identity": "scale \u00d7 identity"}

_ARRAYS = ("a0", "V0", "target", "X", "y")


def summary_metrics(result: Any) -> list[tuple[str, str, str]]:
    """The final numbers shown beside the dashboard, as (label, value, help).

    Final entropy, winning token, ``1 - max s`` (off the simplex: the distance to it), final loss and
    the time reached. Where the final ``s`` is not a distribution (every score 0 in a dead ReLU run,
    a negative score, a total other than 1) entropy and winner mean nothing: a dash, and why.
    """
    n = result.s.shape[1]
    why = not_a_distribution(np.asarray(result.s[-1], dtype=float))
    if why:
        shown = [("Final entropy", "\u2014", f"No entropy: {why}."),
                 ("Winning token", "\u2014", f"No winner: {why}.")]
    else:
        shown = [("Final entropy", format_value(float(result.entropy[-1])),
                  "Entropy of the final scores, in nats; uniform "
                  f"scores have log n = {math.log(n):.3g}, one-hot 0."),
                 ("Winning token", f"{result.winner}",
                  "The token with the largest final score (tokens count from 0).")]
    dead = not np.any(np.asarray(result.s[-1]) != 0)
    return [
        *shown,
        ("1 \u2212 max s", "\u2014", f"No largest share: {why}.") if dead else _distance_metric(result),
        ("Final loss", format_value(float(result.loss[-1])), "The loss at the last saved time."),
        ("Time reached", format_time(float(result.t[-1])), "The last saved time t."),
    ]


def not_a_distribution(s: np.ndarray) -> str:
    """Why the scores ``s`` (n,) are not a probability distribution, in words; empty when they are."""
    if not np.all(np.isfinite(s)):
        return "the final scores are not finite numbers"
    if np.all(s == 0):
        return "every score is 0 (every token switched off), so s is not a distribution"
    if np.min(s) < -1e-9:
        return f"a score is negative ({np.min(s):.3g}), so s is not a distribution"
    if abs(np.sum(s) - 1) > 1e-6:
        return f"the scores add up to {np.sum(s):.3g}, not 1, so s is not a distribution"
    return ""


def _distance_metric(result: Any) -> tuple[str, str, str]:
    """``1 - max s`` on the simplex; off it, where ``1 - max s`` means nothing, the distance to it."""
    if result.experiment.sigma.on_simplex:
        return ("1 \u2212 max s", format_value(float(result.one_minus_max[-1])),
                "The weight left for all tokens but the winner: 0 at a vertex of the simplex.")
    s = np.asarray(result.s[-1], dtype=float)
    return ("Distance to the simplex", format_value(float(distance_to_simplex(s))),
            f"{result.experiment.sigma.short} scores need not lie on the simplex, so 1 \u2212 max s means "
            "nothing here: this is the Euclidean distance from s to the simplex (0 on it).")


def init_note(experiment: Experiment) -> str:
    """A note when a preset's own arrays are in use (the page gives arrays only through presets), or empty."""
    kept = [k for k in _ARRAYS if getattr(experiment, k) is not None]
    if not kept:
        return ""
    return (f"Starting from the preset's own arrays ({', '.join(kept)}), as in the paper; the init settings "
            "above do not describe them. Changing the seed, n, d, the loss or an init setting draws "
            "fresh ones.")


def panel_captions(experiment: Experiment, repulsion: str = "fitness", dead_from: float | None = None,
                   *, result: Any = None) -> list[str]:
    """What to notice in each panel of the dashboard, each as ``**Panel.** sentence`` (markdown).

    In the order simplex, scores, repulsion (in the mode ``repulsion``), entropy, loss. ``dead_from``:
    the time from which every score is 0 (a dead ReLU run), whose panels then say so instead.
    ``result``: the run drawn (a ``Result``); the scores and loss captions then say what this run did,
    where no general statement holds for every setting of its loss.
    """
    if dead_from is not None:
        return _dead_captions(experiment, dead_from, repulsion)
    logistic = LOSSES[experiment.loss].margin
    simplex = ("Each corner is a token, marked in its colour: the key to every panel"
               + ("" if experiment.n <= len(style.PALETTE.tokens) else
                  f" (the {len(style.PALETTE.tokens)} leading tokens in colour, the others grey)")
               + ". The centre is uniform scores. Polarization is the point running into one corner "
               "(a one-hot $s$); the dark comet tail shows the last moments.")
    if not experiment.sigma.on_simplex:
        simplex += f" ({experiment.sigma.short} scores need not sum to 1: the point shows their shares.)"
    points = (r"Each token at (fitness $u_i$, score $s_i$). Softmax moves the logits as "
              r"$\dot a_i = s_i\,(u_i - s\cdot u)/T$: the logits of tokens right of the dashed mean "
              "rise, the others fall, and the gaps widen (rich get richer). A share need not follow its "
              r"own logit at once: with $s = (0.8, 0.1, 0.1)$ and $u = (1, 1.1, 0)$ the fittest token's "
              "logit rises, yet its share falls (the leader's rises faster).")
    if not experiment.sigma.replicator:
        points = (r"Each token at (fitness $u_i$, score $s_i$). Only softmax has the replicator form "
                  r"$\dot a_i = s_i\,(u_i - s\cdot u)/T$: under " + experiment.sigma.short
                  + " a token right of the dashed mean need not gain logit, nor gain share.")
    if logistic:
        points += (r" Diamonds: value projections $p_i = v_i\cdot\beta^*$; circles: fitness "
                   r"$u_i = c\,p_i$, which shrinks as the loss vanishes while the spread in $p$ keeps "
                   "growing.")
    on_simplex = experiment.sigma.on_simplex
    if logistic:
        loss = ("Log-log axes. The logistic loss never reaches 0, so the flow never stops pushing; "
                + ("with scores on the simplex it decays like $1/t$." if on_simplex else
                   f"{experiment.sigma.short} scores are off the simplex, and it need not decay like $1/t$."))
    else:
        loss = ("Log-log axes. The loss falls toward its floor (for the square loss, exponentially fast, "
                "without reaching it in finite time) and the fitness vanishes with it, so the scores "
                "settle; how near a vertex they settle depends on the setting.")
        if result is not None:
            loss += f" This run ends {ends(judge(result))}."
    scores = "One line per token, on log time." + ("" if result is None else _scores_caption(result))
    if slow_tail(experiment):
        scores += r" Under the logistic loss the others' total shrinks slowly, like $1/\log^2 t$."
    words = {
        "simplex": simplex,
        "scores": scores,
        "repulsion": points if repulsion == "fitness" else _replicator_caption(experiment),
        "entropy": (r"Starts at $\log n$ (uniform, dashed) and falls toward 0 when $s$ polarizes; "
                    r"it stays near $\log n$ when it does not."),
        "loss": loss,
    }
    heads = titles(repulsion)
    return [f"**{heads[key].replace('<sub>i</sub>', '_i')}.** {sentence}" for key, sentence in words.items()]


RISE = 1e-6
"""A share counts as risen above (or ended below) its start only by more than this: closer is a tie."""


def _scores_caption(result: Any) -> str:
    """What the shares of this run did: the winner's from start to end, how many others rose at some
    saved time above their start, and how many end below it (no general rule holds: others can gain)."""
    q = simplex_shares(np.asarray(result.s, dtype=float))
    winner = int(np.argmax(q[-1]))
    others = np.delete(q, winner, axis=1)
    rose = int(np.sum(np.max(others, axis=0) > others[0] + RISE))
    fell = int(np.sum(others[-1] < others[0] - RISE))
    return (f" Here token {winner} ends with the largest share, {q[-1, winner]:.3g} "
            f"(from {q[0, winner]:.3g}); of the other {others.shape[1]}, {rose} rise above their starting "
            f"share at some time and {fell} end below it.")


def _dead_captions(experiment: Experiment, dead_from: float, repulsion: str) -> list[str]:
    """The panels of a dead run (every score 0 from ``dead_from`` on): no distribution, nothing moves."""
    when = "from the start" if dead_from <= 0 else f"from t = {format_time(dead_from)}"
    gone = (f"Every score is 0 {when} ({experiment.sigma.short} switched every token off): "
            "there is no distribution")
    words = {
        "simplex": f"{gone}, so no point on the simplex there.",
        "scores": f"{gone}; every line sits at 0 and stays there (the dead state is a fixed point).",
        "repulsion": f"{gone}. With every score 0 the scores pass no gradient back to the logits: "
                     "no token gains or loses, and no one wins.",
        "entropy": f"{gone}, so no entropy: the curve has a gap there.",
        "loss": f"{gone}: beta = V s is 0, so the loss stays at its value at beta = 0 and the run never "
                "polarizes.",
    }
    heads = titles(repulsion)
    return [f"**{heads[key].replace('<sub>i</sub>', '_i')}.** {sentence}" for key, sentence in words.items()]


def _replicator_caption(experiment: Experiment) -> str:
    """What to notice in the repulsion panel's replicator mode (markdown)."""
    words = (r"Each bar is a token's fitness minus the mean fitness, $u_i - s\cdot u$, divided by the "
             "largest at that time (the label above gives it; hover for each value), so the bars stay "
             "readable as the fitness fades. ")
    if not experiment.sigma.replicator:
        return words + (f"Only softmax has the replicator form: under {experiment.sigma.short} a bar's sign "
                        "need not be the direction its logit moves.")
    words += (r"Softmax moves the logits as $\dot a_i = s_i\,(u_i - s\cdot u)/T$: tokens above zero gain "
              "logit, those below lose it. As one token takes over, the mean fitness becomes its own "
              "fitness, so its bar shrinks toward zero beside the others'.")
    if LOSSES[experiment.loss].margin:
        words += r" Under the logistic loss $u = c\,p$ with $c > 0$: the same bars are $p_i - s\cdot p$."
    return words
