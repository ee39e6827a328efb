"""A shipped sweep measures what its comment says: sweeps/square-kappa.toml records where its runs end.

Independent of the engine: the square-loss flow on (V, a) (paper, section 2: dV/dt = -grad_V l,
da/dt = -grad_a l with beta = V softmax(a), l = |X beta - y|^2 / 2) is integrated here by scipy's solve_ivp
from each cell's resolved start, to the file's horizon and to ten times it. At the horizon the loss must be
at its floor and 1 - max s must be where it is ten times later, so `polarized` is the end, not a transient.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import softmax

from polarize.sweeps.spec import read_sweep

ROOT = Path(__file__).resolve().parents[1]


def flow(e, until):
    X, y = np.asarray(e.X, dtype=float), np.asarray(e.y, dtype=float)
    V0, a0 = np.asarray(e.V0, dtype=float), np.asarray(e.a0, dtype=float)
    d, n = V0.shape

    def rhs(_t, z):
        V, a = z[:d * n].reshape(d, n), z[d * n:]
        s = softmax(a)
        g = X.T @ (X @ (V @ s) - y)  # grad of l in beta
        ds = -(V.T @ g)
        return np.concatenate([-np.outer(g, s).ravel(), s * (ds - s @ ds)])

    run = solve_ivp(rhs, (0, until), np.concatenate([V0.ravel(), a0]), method="LSODA", rtol=1e-10,
                    atol=1e-12)
    V, a = run.y[:d * n, -1].reshape(d, n), run.y[d * n:, -1]
    s = softmax(a)
    return 0.5 * float(np.sum((X @ (V @ s) - y) ** 2)), 1 - float(np.max(s))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [4, 8])
def test_square_kappa_runs_have_ended_by_the_file_s_horizon(seed, n):
    sweep = read_sweep(ROOT / "sweeps" / "square-kappa.toml")
    e = sweep.config({"kappa": 100.0, "n": n, "seed": seed}).resolved()
    loss, gap = flow(e, e.horizon)
    later_loss, later_gap = flow(e, 10 * e.horizon)
    threshold = sweep.settings.polarized_below
    assert loss < 1e-8 and later_loss < 1e-8
    assert abs(gap - later_gap) < 1e-6
    assert (gap < threshold) == (later_gap < threshold)
