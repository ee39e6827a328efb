"""About the maths: the model, the replicator form, and what to look for in the Explorer.

The prose is here as markdown and LaTeX blocks; the four small figures are
computed live by the same engine as the Explorer (once per server: the
renderer caches the view).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from polarize.config import Experiment
from polarize.diagnostics import Result
from polarize.integrate import simulate
from polarize.plots import comparison_figure, gap_figure, scores_figure
from polarize.presets import get_preset
from polarize.science import (
    THRESHOLDS,
    NormalizerRow,
    Rate,
    compare_normalizers,
    ends,
    format_time,
    judge,
    polarization_rate,
)
from polarize.web.leads import LEADS
from polarize.web.page import PageSpec
from polarize.web.view import Columns, Header, Maths, Plot, Text, View

__all__ = ["MATHS", "MathsRuns", "maths_figures", "maths_runs"]


@dataclass(frozen=True, kw_only=True, eq=False)
class MathsRuns:
    """The runs behind the page's figures and the numbers its text quotes."""

    logistic: Result
    rate: Rate
    normalizers: list[NormalizerRow]
    losses: dict[str, Result]


def maths_runs() -> MathsRuns:
    """Run the page's experiments: a long logistic run, four normalizers, three losses."""
    logistic = simulate(Experiment(n=5, d=5, horizon=1e12, seed=1))
    return MathsRuns(
        logistic=logistic, rate=polarization_rate(logistic),
        normalizers=compare_normalizers(get_preset("paper-compare-logistic").experiment,
                                        names=("softmax", "sigmoid", "linear", "relu")),
        losses={name: simulate(Experiment(loss=name, horizon=1e6, a_init="gaussian", a_scale=0.5))
                for name in ("logistic", "square", "kl")})


def maths_figures(runs: MathsRuns | None = None, *, narrow: bool = False) -> dict[str, dict[str, Any]]:
    """The page's live figures.

    Returns
    -------
    dict
        ``"scores"``: each ``s_i(t)`` of a logistic run on log-log axes; ``"rate"``: ``1 - max s``
        against the sharp asymptotics ``2(n-1)/(n z^2)`` and the theorem's ``1/log t``;
        ``"normalizers"``: the entropy under softmax, sigmoid, linear and ReLU from one start;
        ``"losses"``: the entropy under the logistic, square and cross-entropy losses.
    """
    runs = runs or maths_runs()
    n = runs.normalizers[0].result.s.shape[1]
    normalizers = comparison_figure({r.normalizer: r.result for r in runs.normalizers}, "entropy",
                                    reference=[math.log(n)], narrow=narrow)
    losses = comparison_figure(runs.losses, "entropy", reference=[math.log(8)], narrow=narrow)
    return {"scores": scores_figure(runs.logistic, log_y=True, narrow=narrow),
            "rate": gap_figure(runs.rate, narrow=narrow),
            "normalizers": normalizers, "losses": losses}


def _model() -> tuple[Any, ...]:
    left = (
        Text("Logits $a \\in \\mathbb{R}^n$ (one per token) become scores on the simplex, which "
             "weigh the columns $v_i$ of a value matrix $V$ ($d \\times n$):"),
        Maths(r"s = \operatorname{softmax}(a / T), \qquad \beta = V s = \sum_i s_i\, v_i ,"),
        Text("with a temperature $T > 0$ ($T = 1$ unless said otherwise). Training is gradient flow on a "
             "loss $\\ell(\\beta)$, jointly in $V$ and $a$. With the gradient $g = \\nabla \\ell(\\beta)$:"),
        Maths(r"\dot V = -\,g\, s^\top, \qquad \dot a = -J(a)^\top V^\top g, \qquad "
              r"J(a) = \tfrac{1}{T}\bigl(\operatorname{diag}(s) - s s^\top\bigr) ."),
    )
    right = (
        Text("The **logistic** loss on a target direction $\\beta^*$ ($|\\beta^*| = 1$) is the main case:"),
        Maths(r"\ell(\beta) = \log\!\left(1 + e^{-z}\right), \qquad z = \beta^{*\top} V s ."),
        Text("The Explorer also offers the square loss $\\tfrac12 |Vs - \\beta^*|^2$, cross-entropy, "
             "and seven other normalizers in place of softmax (written $\\sigma$ on the other pages)."),
    )
    return Header("1. The value-softmax model"), Columns((left, right), widths=(1.1, 1), gap="large")


def _replicator(figures: dict[str, dict[str, Any]]) -> tuple[Any, ...]:
    left = (
        Text("Call $u = -V^\\top g$ the **fitness** of the tokens. Moving weight from the average onto "
             "token $i$ lowers the loss at the rate $u_i - s\\cdot u$, the fitness minus the mean fitness. "
             "Softmax's Jacobian turns the logit flow into"),
        Maths(r"\dot a_i = \frac{s_i}{T} \,\bigl(u_i - s \cdot u\bigr), \qquad s\cdot u = \sum_j s_j u_j ,"),
        Text("the **replicator equation** of evolutionary game theory: a token's logit grows when its "
             "fitness beats the average, at a speed proportional to its current share $s_i$. A token ahead "
             "gains logit faster, while the others slow down: **rich get richer**. A *share* need not rise "
             "with its logit at every instant: with $s = (0.8, 0.1, 0.1)$ and $u = (1, 1.1, 0)$ the "
             "fittest token 1 gains logit yet loses share, token 0's logit rising faster on its larger "
             "share. But the gaps between the fitter and the rest widen. "
             "This is the repulsion panel of the Explorer: the points move apart."),
        Text("Under the logistic loss, $u = c\\,p$ with $c = 1/(1 + e^{z})$ and the value projections "
             "$p = V^\\top\\beta^*$, and the pair $(a, p)$ evolves on its own:"),
        Maths(r"\dot p = c\, s, \qquad \dot a = \frac{c}{T}\, s \odot (p - s\cdot p)."),
    )
    right = (Plot("scores", figures["scores"], "One logistic run (n = 5, seed 1) up to t = 1e12, log-log: "
                  "one score rises toward 1, the others fall, but slowly."),)
    return (Header("2. The replicator form: rich get richer"),
            Columns((left, right), widths=(1.1, 1), gap="large"))


def _slowness(figures: dict[str, dict[str, Any]], runs: MathsRuns) -> tuple[Any, ...]:
    rate, run = runs.rate, runs.logistic
    sv = run.singular_values
    early = int(np.searchsorted(run.t, 1e3))
    left = (
        Text("**Theorem (logistic loss).** For a generic start, $s(t)$ converges to a vertex of the simplex "
             "(a one-hot vector): every non-maximal score over the maximal one decays like "
             "$O(1/\\log t)$, and $V/|V|$ tends to a rank-one matrix, aligned with the winner's direction. "
             "$V$ itself does not become rank one: its second singular value stays bounded while the first "
             "grows like $\\log t$, so their ratio falls only like $1/\\log t$ (in the run here: "
             f"{sv[early, 1] / sv[early, 0]:.3f} at t = {format_time(float(run.t[early]))}, "
             f"{sv[-1, 1] / sv[-1, 0]:.4f} at t = 1e12, the second singular value staying at "
             f"{sv[-1, 1]:.3g})."),
        Text("The decay is in fact faster than the bound, yet still only logarithmic (derived for this "
             "project, not in the paper): with $z \\sim \\log t$,"),
        Maths(r"1 - \max_i s_i \;\sim\; \frac{2(n-1)\,T^2}{n\, z^2} "
              r"\;\sim\; \frac{2(n-1)\,T^2}{n \log^2 t}."),
        Text("The limit is approached slowly: in this run the ratio of the two is still "
             f"{rate.gap[-1] / rate.sharp[-1]:.2f} at t = 1e12. The losers explain it. Their "
             "projections $p_j$ converge (they grow at the rate $c\\,s_j$, which is integrable), to a "
             "mean $\\bar q$, while "
             "the winner's $p_w \\approx z$ grows like $\\tau$, the loss-free time. With the losers' total "
             "$\\varepsilon = 1 - s_w$ shared about equally, the replicator form gives "
             "$\\dot\\varepsilon \\approx -\\tfrac{n}{n-1}\\,(p_w - \\bar q)\\,\\varepsilon^2 / T^2$ in "
             "$\\tau$, so $1/\\varepsilon$ grows like $\\tfrac{n}{2(n-1)T^2}(p_w - \\bar q)^2$:"),
        Maths(r"1 - \max_i s_i \;\approx\; \frac{2(n-1)\,T^2}{n\,(z - \bar q)^2}, \qquad "
              r"\frac{d \log(1 - \max s)}{d \log z} \approx -\frac{2z}{z - \bar q} ."),
        Text(f"Here $\\bar q = {rate.qbar:.3g}$: the corrected form is within "
             f"{abs(rate.gap[-1] / rate.corrected[-1] - 1):.1%} at t = 1e12, and its slope against "
             f"$\\log\\log t$ over the late times, {rate.corrected_slope:.3f}, is the run's "
             f"{rate.slope:.3f}: steeper than $-2$ until $z \\gg \\bar q$. That is why the Explorer's "
             "horizon goes up to $10^{12}$, and the Rates page to $10^{300}$: polarization never quite "
             "ends."),
    )
    right = (Plot("rate", figures["rate"], "The gap 1 - max s of the run above against the sharp asymptotics "
                  "and the theorem's 1/log t (scaled to meet at the end). Both log axes."),)
    return Header("3. Polarization, and how slow it is"), Columns((left, right), widths=(1.1, 1), gap="large")


def _only_softmax(figures: dict[str, dict[str, Any]], runs: MathsRuns) -> tuple[Any, ...]:
    verdicts = {loss: judge(r) for loss, r in runs.losses.items()}
    square = runs.losses["square"]
    left = (
        Text("The mean-centring $u_i - s\\cdot u$ weighted by $s_i$ comes from softmax's Jacobian. Sigmoid "
             "($\\dot a_i = s_i(1 - s_i)\\,u_i$) has a weighting but no centring, and linear scores have "
             "neither: both stay spread out. The normalized maps (ReLU, L1, L2, sum, sparsemax) keep the "
             "centring but lack softmax's mobility proportional to $s_i$: ReLU and sparsemax can switch "
             "tokens off (a token at zero stays there), sum can leave the simplex, and L2 polarizes "
             "smoothly, every score staying positive. The Normalizers page says which does what, from "
             "its runs."),
        Plot("normalizers", figures["normalizers"], "Entropy of the scores under four normalizers, "
             "same start (the paper's comparison: n = d = 10, logistic loss). Dashed: log n, the uniform "
             "value."),
    )
    right = (
        Text("With the **square** loss the problem is realizable: the loss decays exponentially toward its "
             "floor (a smooth gradient flow never reaches it in finite time), the fitness vanishes as fast, "
             "and the scores settle short of a vertex, what the paper calls partial polarization (how near "
             "depends on the problem: the Loss and conditioning page's \u03ba = 10 regression ends polarized "
             "by this app's verdict). By the one graded "
             f"verdict of this app the square run in the figure ends {ends(verdicts['square'])}, its "
             f"entropy gone from {square.entropy[0]:.3g} to "
             f"{square.entropy[-1]:.3g} (log n = {math.log(square.s.shape[1]):.3g}); ill-conditioned "
             "problems sparsify more (Loss and conditioning page). The **cross-entropy** loss approaches its "
             f"floor $H(p^*)$ too; here it ends {ends(verdicts['kl'])}, the logistic run "
             f"{ends(verdicts['logistic'])}. {THRESHOLDS}"),
        Plot("losses", figures["losses"], "Entropy under the three losses, same start (n = d = 8, a(0) = 0.5 "
             "randn)."),
    )
    return Header("4. Only softmax polarizes like this"), Columns((left, right), gap="large")


LOOK_FOR = """
- **Simplex panel**: the point leaves the centre (uniform scores) and runs toward a corner: polarization.
  Try n = 3 for a triangle, n = 2 for a segment, n = 64 for a crowd.
- **Scores**: one line per token, on a *log* time axis. Others than the winner may rise for a while
  before they fall (3 of the other 7 do from the Explorer's default start); under the logistic loss the
  losers then fade slowly.
- **Entropy**: from log n toward 0 for softmax with the logistic loss; stuck near log n for sigmoid or linear.
- **Repulsion**: points move apart; the logits of the tokens right of the dashed mean fitness rise.
- **Loss**: for the logistic loss it keeps decreasing, like 1/t when the scores stay on the simplex; the
  square loss falls exponentially toward its floor.
- Compare the **flow** with **gradient descent** at a large learning rate: does descent keep the flow's
  winner?
"""


def view(job: Any = (), narrow: bool = False) -> View:
    """The whole page (its figures computed here, for a phone when ``narrow``)."""
    runs = maths_runs()
    figures = maths_figures(runs, narrow=narrow)
    intro = Text("A digest of A. Varre, M. Rofin, N. Flammarion, *Gradient Flow Polarizes Softmax Outputs "
                 "towards Low-Entropy Solutions* (arXiv:2603.06248). The figures on this page are computed "
                 "live by the "
                 "same engine as the Explorer.")
    return View(blocks=(intro, *_model(), *_replicator(figures), *_slowness(figures, runs),
                        *_only_softmax(figures, runs),
                        Header("5. What to look for in the Explorer"), Text(LOOK_FOR)), data=figures)


MATHS = PageSpec(name="maths", lead=LEADS["maths"], nav_title="About the maths", title="About the maths",
                 icon=":material/functions:",
                 url_path="maths", view=view, spinner="Computing the figures...")
