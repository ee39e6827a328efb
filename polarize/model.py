"""The models' gradients and the gradient-flow vector fields built from them.

Value model (arXiv:2603.06248; docs/derivations.md section 1): ``beta = V s``, ``s = sigma(a)``, so with
``g = grad l(beta)``

    dL/dV = g s^T,        dL/da = J(a)^T V^T g = -J(a)^T u,

with the fitness ``u = -V^T g``. Tied model (section 6, item 3): ``z = U a``,
``alpha = sigma(z)``, ``beta = U alpha``; ``U`` enters twice, so

    dL/dU = g alpha^T + r a^T,   dL/da = U^T r,   r = J(z)^T U^T g.

The flows are the negatives of these gradients. Everything here is a pure
function of arrays, batched over any leading axes (a stack of states at once,
which is how the integrator builds Jacobians); ``polarize.integrate`` packs them
into ``solve_ivp`` form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polarize.losses import Loss
from polarize.normalizers import Normalizer

__all__ = [
    "Gradients",
    "logistic_closed_field",
    "tied_gradients",
    "value_gradients",
    "value_gradients_reduced",
]


def _mv(M: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``M x`` for stacks: M (..., p, q), x (..., q) -> (..., p)."""
    return (M @ x[..., None])[..., 0]


def _mtv(M: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``M^T x`` for stacks: M (..., p, q), x (..., p) -> (..., q)."""
    return (x[..., None, :] @ M)[..., 0, :]


def _outer(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x[..., :, None] * y[..., None, :]


@dataclass(frozen=True, eq=False)
class Gradients:
    """Loss, scores and gradients at one point of parameter space.

    Attributes
    ----------
    loss : float or ndarray of the batch shape
    s : ndarray, shape (n,)
        Scores ``sigma(a)`` (for the tied model, ``alpha``).
    u : ndarray, shape (n,)
        Fitness ``-V^T grad l`` (tied model: ``-U^T grad l``).
    grad_V : ndarray, shape (d, n) or (m, n)
        Gradient of the loss with respect to the value matrix, or to ``W = X V`` (reduced).
    grad_a : ndarray, shape (n,)
        Gradient of the loss with respect to the logits.
    """

    loss: float | np.ndarray
    s: np.ndarray
    u: np.ndarray
    grad_V: np.ndarray
    grad_a: np.ndarray


def value_gradients(V: np.ndarray, a: np.ndarray, loss: Loss, normalizer: Normalizer) -> Gradients:
    """Gradients of ``L(V, a) = l(V sigma(a))``.

    Parameters
    ----------
    V : ndarray, shape (d, n)
    a : ndarray, shape (n,)
    loss : object with ``value_and_grad(beta)``
    normalizer : Normalizer

    Returns
    -------
    Gradients
    """
    s = normalizer.forward(a)
    value, g = loss.value_and_grad(_mv(V, s))
    u = -_mtv(V, g)
    return Gradients(value, s, u, _outer(g, s), -normalizer.vjp(a, u))


def value_gradients_reduced(
    W: np.ndarray, a: np.ndarray, loss, gram: np.ndarray, normalizer: Normalizer
) -> Gradients:
    """The value model's flow in the coordinates ``W = X V`` of a linear loss.

    For ``l(beta) = phi(X beta)`` the loss and the logits' gradient depend on
    ``V`` only through ``W`` (m x n), and ``d W / dt = -X X^T h s^T`` with
    ``h = grad phi(W s)``. ``grad_V`` is returned as *minus the velocity of W*,
    ``(X X^T) h s^T``, so that ``dW/dt = -grad_V`` as in the full coordinates.

    Parameters
    ----------
    W : ndarray, shape (m, n)
    a : ndarray, shape (n,)
    loss : LinearLoss
    gram : ndarray, shape (m, m)
        ``X X^T``.
    normalizer : Normalizer
    """
    s = normalizer.forward(a)
    value, h = loss.outer(_mv(W, s))
    u = -_mtv(W, h)
    return Gradients(value, s, u, _outer(h @ gram, s), -normalizer.vjp(a, u))


def tied_gradients(U: np.ndarray, a: np.ndarray, loss: Loss, normalizer: Normalizer) -> Gradients:
    """Gradients of the tied model ``L(U, a) = l(U sigma(U a))``.

    Parameters
    ----------
    U : ndarray, shape (D, D)
    a : ndarray, shape (D,)
    loss : object with ``value_and_grad(beta)``
    normalizer : Normalizer

    Returns
    -------
    Gradients
        ``s`` is ``alpha = sigma(U a)`` and ``u = -U^T grad l``.
    """
    z = _mv(U, a)
    alpha = normalizer.forward(z)
    value, g = loss.value_and_grad(_mv(U, alpha))
    u = -_mtv(U, g)
    r = -normalizer.vjp(z, u)
    return Gradients(value, alpha, u, _outer(g, alpha) + _outer(r, a), _mtv(U, r))


def logistic_closed_field(a: np.ndarray, p: np.ndarray, normalizer: Normalizer):
    """The closed ``(a, p)`` system of the logistic loss, in the loss-free time ``tau``.

    With ``p = V^T beta_*`` and ``c = sigmoid(-z)``, ``z = p.s``, gradient flow
    gives ``dp/dt = c s`` and ``da/dt = c J^T p`` whatever ``d`` is (docs/derivations.md
    section 3). Dividing by ``c`` (``d tau = c dt``) removes the loss:

        da/dtau = J(a)^T p,   dp/dtau = s,   dt/dtau = 1 + exp(z).

    The one home of this field: ``systems.LogisticClosedSystem`` evaluates it here for a batch of
    starts (one or many), marched in ``log(1 + t)``.

    Parameters
    ----------
    a, p : ndarray, shape (..., n)
        Logits and value projections; leading axes are a batch of starts.
    normalizer : Normalizer

    Returns
    -------
    da, dp : ndarray, shape (..., n)
    z : float or ndarray, shape (...)
        The margin, from which ``dt/dtau`` follows.
    s : ndarray, shape (..., n)
    """
    s = normalizer.forward(a)
    return normalizer.vjp(a, p), s, np.sum(p * s, axis=-1), s
