"""About the maths: the model, the replicator form, and what to look for in the Explorer."""

import streamlit as st

import ui

ui.through_app()

st.title("About the maths")
st.markdown(
    "A digest of A. Varre, M. Rofin, N. Flammarion, *Gradient Flow Polarizes Softmax Outputs towards "
    "Low-Entropy Solutions* (arXiv:2603.06248). The figures on this page are computed live by the same "
    "engine as the Explorer."
)

with st.spinner("Computing the figures...", show_time=True):
    figures = ui.maths_figures()


def show(name: str, caption: str) -> None:
    st.plotly_chart(figures[name], key=f"maths_{name}", theme=None, config={"displaylogo": False})
    st.caption(caption)


st.header("1. The value-softmax model")
left, right = st.columns([1.1, 1], gap="large")
with left:
    st.markdown("Logits $a \\in \\mathbb{R}^n$ (one per token) become scores on the simplex, which "
                "weigh the columns $v_i$ of a value matrix $V$ ($d \\times n$):")
    st.latex(r"s = \sigma(a) = \operatorname{softmax}(a), \qquad \beta = V s = \sum_i s_i\, v_i .")
    st.markdown("Training is gradient flow on a loss $\\ell(\\beta)$, jointly in $V$ and $a$. With the "
                "gradient $g = \\nabla \\ell(\\beta)$:")
    st.latex(r"\dot V = -\,g\, s^\top, \qquad \dot a = -J(a)^\top V^\top g, \qquad "
             r"J(a) = \operatorname{diag}(s) - s s^\top .")
with right:
    st.markdown("The **logistic** loss on a target direction $\\beta^*$ ($|\\beta^*| = 1$) is the main case:")
    st.latex(r"\ell(\beta) = \log\!\left(1 + e^{-z}\right), \qquad z = \beta^{*\top} V s .")
    st.markdown("The Explorer also offers the square loss $\\tfrac12 |Vs - \\beta^*|^2$, cross-entropy, "
                "and seven other normalizers $\\sigma$ in place of softmax.")

st.header("2. The replicator form: rich get richer")
left, right = st.columns([1.1, 1], gap="large")
with left:
    st.markdown("Call $u = -V^\\top g$ the **fitness** of the tokens ($u_i$: how much moving weight to "
                "token $i$ would lower the loss). Softmax's Jacobian turns the logit flow into")
    st.latex(r"\dot a_i = s_i \,\bigl(u_i - s \cdot u\bigr), \qquad s\cdot u = \sum_j s_j u_j ,")
    st.markdown(
        "the **replicator equation** of evolutionary game theory: a token grows when its fitness beats the "
        "average, and at a speed proportional to its current share $s_i$. A token ahead gains share, "
        "which makes it move faster still, while the others' shares (and speeds) shrink: **rich get "
        "richer**. This is the repulsion panel of the Explorer: the points move apart."
    )
    st.markdown(
        "Under the logistic loss, $u = c\\,p$ with $c = \\sigma(-z)$ and the value projections "
        "$p = V^\\top\\beta^*$, and the pair $(a, p)$ evolves on its own:"
    )
    st.latex(r"\dot p = c\, s, \qquad \dot a = c\, s \odot (p - s\cdot p).")
with right:
    show("scores", "One logistic run (n = 5, seed 1) up to t = 1e12, log-log: one score rises to 1, the "
                   "others fall, but slowly.")

st.header("3. Polarization, and how slow it is")
left, right = st.columns([1.1, 1], gap="large")
with left:
    st.markdown(
        "**Theorem (logistic loss).** For a generic start, $s(t)$ converges to a vertex of the simplex "
        "(a one-hot vector): every non-maximal score over the maximal one decays like $O(1/\\log t)$, and "
        "$V$ becomes rank one, aligned with the winner's direction."
    )
    st.markdown("The decay is in fact faster than the bound, yet still only logarithmic: with "
                "$z \\sim \\log t$,")
    st.latex(r"1 - \max_i s_i \;\sim\; \frac{2(n-1)}{n\, z^2} \;\sim\; \frac{2(n-1)}{n \log^2 t}.")
    st.markdown("That is why the Explorer's horizon goes up to $10^{12}$: polarization never quite ends.")
with right:
    show("rate", "The gap 1 - max s of the run above against the sharp asymptotics and the theorem's "
                 "1/log t (scaled to meet at the end). Both log axes.")

st.header("4. Only softmax polarizes like this")
left, right = st.columns(2, gap="large")
with left:
    st.markdown(
        "The mean-centring $u_i - s\\cdot u$ weighted by $s_i$ comes from softmax's Jacobian. Sigmoid "
        "($\\dot a_i = s_i(1 - s_i)\\,u_i$) and linear scores have neither the weighting nor the "
        "centring, and stay spread out. ReLU-based scores can reach a vertex, but abruptly, by "
        "switching tokens off (a token at zero never comes back), not by rich-get-richer."
    )
    show("normalizers", "Entropy of the scores under four normalizers, same start (the paper's comparison: "
                        "n = d = 10, logistic loss). Dashed: log n, the uniform value.")
with right:
    st.markdown(
        "With the **square** loss the problem is realizable: the loss reaches its floor in finite time, the "
        "fitness vanishes, and the scores freeze part-way: polarization exists but is partial. The "
        "**cross-entropy** loss stops at its floor $H(p^*)$ too, usually closer to a vertex."
    )
    show("losses", "Entropy under the three losses, same start (n = d = 8, a(0) = 0.5 randn).")

st.header("5. What to look for in the Explorer")
st.markdown(
    """
- **Simplex panel**: the point leaves the centre (uniform scores) and runs into a corner: polarization.
  Try n = 3 for a triangle, n = 2 for a segment, n = 64 for a crowd.
- **Scores**: one line rises, the others fall, on a *log* time axis: the race is decided early, then the
  losers fade slowly.
- **Entropy**: from log n toward 0 for softmax with the logistic loss; stuck near log n for sigmoid or linear.
- **Repulsion**: points move apart; those right of the dashed mean fitness gain share.
- **Loss**: keeps decreasing like 1/t for the logistic loss; flat at its floor for the square loss.
- Compare the **flow** with **gradient descent** at a large learning rate: descent can pick another winner.
"""
)
