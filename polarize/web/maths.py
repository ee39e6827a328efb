"""About the maths: the model, the replicator form, and what to look for in the Explorer.

The prose is here as markdown and LaTeX blocks; the four small figures are
computed live by the same engine as the Explorer (once per server: the
renderer caches the view).
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from polarize.config import Experiment
from polarize.integrate import simulate
from polarize.plots import comparison_figure, gap_figure, scores_figure
from polarize.presets import get_preset
from polarize.science import compare_normalizers, polarization_rate
from polarize.web.page import Columns, Header, Maths, PageSpec, Plot, Text, View

__all__ = ["MATHS", "maths_figures"]


def maths_figures() -> dict[str, go.Figure]:
    """The page's live figures.

    Returns
    -------
    dict
        ``"scores"``: each ``s_i(t)`` of a logistic run on log-log axes; ``"rate"``: ``1 - max s``
        against the sharp asymptotics ``2(n-1)/(n z^2)`` and the theorem's ``1/log t``;
        ``"normalizers"``: the entropy under softmax, sigmoid, linear and ReLU from one start;
        ``"losses"``: the entropy under the logistic, square and cross-entropy losses.
    """
    logistic = simulate(Experiment(n=5, d=5, horizon=1e12, seed=1))
    rate = polarization_rate(logistic)
    rows = compare_normalizers(get_preset("paper-compare-logistic").experiment,
                               names=("softmax", "sigmoid", "linear", "relu"))
    n = rows[0].result.s.shape[1]
    normalizers = comparison_figure({r.normalizer: r.result for r in rows}, "entropy",
                                    reference=[math.log(n)])
    losses = comparison_figure(
        {loss: simulate(Experiment(loss=loss, horizon=1e6, a_init="gaussian", a_scale=0.5))
         for loss in ("logistic", "square", "kl")}, "entropy", reference=[math.log(8)])
    return {"scores": scores_figure(logistic, log_y=True), "rate": gap_figure(rate),
            "normalizers": normalizers, "losses": losses}


def _model() -> tuple[Any, ...]:
    left = (
        Text("Logits $a \\in \\mathbb{R}^n$ (one per token) become scores on the simplex, which "
             "weigh the columns $v_i$ of a value matrix $V$ ($d \\times n$):"),
        Maths(r"s = \sigma(a) = \operatorname{softmax}(a), \qquad \beta = V s = \sum_i s_i\, v_i ."),
        Text("Training is gradient flow on a loss $\\ell(\\beta)$, jointly in $V$ and $a$. With the "
             "gradient $g = \\nabla \\ell(\\beta)$:"),
        Maths(r"\dot V = -\,g\, s^\top, \qquad \dot a = -J(a)^\top V^\top g, \qquad "
              r"J(a) = \operatorname{diag}(s) - s s^\top ."),
    )
    right = (
        Text("The **logistic** loss on a target direction $\\beta^*$ ($|\\beta^*| = 1$) is the main case:"),
        Maths(r"\ell(\beta) = \log\!\left(1 + e^{-z}\right), \qquad z = \beta^{*\top} V s ."),
        Text("The Explorer also offers the square loss $\\tfrac12 |Vs - \\beta^*|^2$, cross-entropy, "
             "and seven other normalizers $\\sigma$ in place of softmax."),
    )
    return Header("1. The value-softmax model"), Columns((left, right), widths=(1.1, 1), gap="large")


def _replicator(figures: dict[str, go.Figure]) -> tuple[Any, ...]:
    left = (
        Text("Call $u = -V^\\top g$ the **fitness** of the tokens ($u_i$: how much moving weight to "
             "token $i$ would lower the loss). Softmax's Jacobian turns the logit flow into"),
        Maths(r"\dot a_i = s_i \,\bigl(u_i - s \cdot u\bigr), \qquad s\cdot u = \sum_j s_j u_j ,"),
        Text("the **replicator equation** of evolutionary game theory: a token grows when its fitness "
             "beats the "
             "average, and at a speed proportional to its current share $s_i$. A token ahead gains share, "
             "which makes it move faster still, while the others' shares (and speeds) shrink: **rich get "
             "richer**. This is the repulsion panel of the Explorer: the points move apart."),
        Text("Under the logistic loss, $u = c\\,p$ with $c = \\sigma(-z)$ and the value projections "
             "$p = V^\\top\\beta^*$, and the pair $(a, p)$ evolves on its own:"),
        Maths(r"\dot p = c\, s, \qquad \dot a = c\, s \odot (p - s\cdot p)."),
    )
    right = (Plot("scores", figures["scores"], "One logistic run (n = 5, seed 1) up to t = 1e12, log-log: "
                  "one "
                  "score rises to 1, the others fall, but slowly.", modebar=False),)
    return (Header("2. The replicator form: rich get richer"),
            Columns((left, right), widths=(1.1, 1), gap="large"))


def _slowness(figures: dict[str, go.Figure]) -> tuple[Any, ...]:
    left = (
        Text("**Theorem (logistic loss).** For a generic start, $s(t)$ converges to a vertex of the simplex "
             "(a one-hot vector): every non-maximal score over the maximal one decays like "
             "$O(1/\\log t)$, and "
             "$V$ becomes rank one, aligned with the winner's direction."),
        Text("The decay is in fact faster than the bound, yet still only logarithmic: "
             "with $z \\sim \\log t$,"),
        Maths(r"1 - \max_i s_i \;\sim\; \frac{2(n-1)}{n\, z^2} \;\sim\; \frac{2(n-1)}{n \log^2 t}."),
        Text("That is why the Explorer's horizon goes up to $10^{12}$: polarization never quite ends."),
    )
    right = (Plot("rate", figures["rate"], "The gap 1 - max s of the run above against the sharp asymptotics "
                  "and the theorem's 1/log t (scaled to meet at the end). Both log axes.", modebar=False),)
    return Header("3. Polarization, and how slow it is"), Columns((left, right), widths=(1.1, 1), gap="large")


def _only_softmax(figures: dict[str, go.Figure]) -> tuple[Any, ...]:
    left = (
        Text("The mean-centring $u_i - s\\cdot u$ weighted by $s_i$ comes from softmax's Jacobian. Sigmoid "
             "($\\dot a_i = s_i(1 - s_i)\\,u_i$) and linear scores have neither the weighting nor the "
             "centring, and stay spread out. ReLU-based scores can reach a vertex, but abruptly, by "
             "switching tokens off (a token at zero never comes back), not by rich-get-richer."),
        Plot("normalizers", figures["normalizers"], "Entropy of the scores under four normalizers, "
             "same start "
             "(the paper's comparison: n = d = 10, logistic loss). Dashed: log n, the uniform value.",
             modebar=False),
    )
    right = (
        Text("With the **square** loss the problem is realizable: the loss reaches its floor in finite "
             "time, the "
             "fitness vanishes, and the scores freeze part-way: polarization exists but is partial. The "
             "**cross-entropy** loss stops at its floor $H(p^*)$ too, usually closer to a vertex."),
        Plot("losses", figures["losses"], "Entropy under the three losses, same start (n = d = 8, a(0) = 0.5 "
             "randn).", modebar=False),
    )
    return Header("4. Only softmax polarizes like this"), Columns((left, right), gap="large")


LOOK_FOR = """
- **Simplex panel**: the point leaves the centre (uniform scores) and runs into a corner: polarization.
  Try n = 3 for a triangle, n = 2 for a segment, n = 64 for a crowd.
- **Scores**: one line rises, the others fall, on a *log* time axis: the race is decided early, then the
  losers fade slowly.
- **Entropy**: from log n toward 0 for softmax with the logistic loss; stuck near log n for sigmoid or linear.
- **Repulsion**: points move apart; those right of the dashed mean fitness gain share.
- **Loss**: keeps decreasing like 1/t for the logistic loss; flat at its floor for the square loss.
- Compare the **flow** with **gradient descent** at a large learning rate: descent can pick another winner.
"""


def view(job: Any = ()) -> View:
    """The whole page (its figures computed here)."""
    figures = maths_figures()
    intro = Text("A digest of A. Varre, M. Rofin, N. Flammarion, *Gradient Flow Polarizes Softmax Outputs "
                 "towards Low-Entropy Solutions* (arXiv:2603.06248). The figures on this page are computed "
                 "live by the "
                 "same engine as the Explorer.")
    return View(blocks=(intro, *_model(), *_replicator(figures), *_slowness(figures), *_only_softmax(figures),
                        Header("5. What to look for in the Explorer"), Text(LOOK_FOR)), data=figures)


MATHS = PageSpec(name="maths", nav_title="About the maths", title="About the maths",
                 icon=":material/functions:",
                 url_path="maths", view=view, spinner="Computing the figures...")
