"""Running an experiment: exact gradient flow, or gradient descent.

``simulate(experiment)`` picks the cheapest exact coordinates for the flow:

- logistic loss on a target direction: the closed ``(a, p)`` system in the
  loss-free time ``tau`` (PAPER.md section 3), with ``log(1 + t)`` carried as one
  more state variable, so horizons of ``1e15`` cost a few hundred steps;
- a loss ``phi(X beta)`` whose design has fewer rows than ``V`` (``m < d``): the
  coordinates ``W = X V`` (section 4);
- otherwise the full ``(V, a)`` (or the tied model's ``(U, a)``).

Time stepping is scipy's (``DOP853`` with tight tolerances); this module only
drives the stepper and reads each saved time off the step's dense output, so
memory stays proportional to what is saved. Gradient descent always runs in the
full coordinates, step for step as a plain loop would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from scipy.integrate import DOP853, LSODA
from scipy.special import expit
from threadpoolctl import ThreadpoolController

from polarize.config import ConfigError, Experiment
from polarize.diagnostics import N_SINGULAR, Recorder, Result, top_singular_values
from polarize.losses import KL, LinearLoss, Logistic, LogisticData, Square
from polarize.model import (
    logistic_closed_field,
    tied_gradients,
    value_gradients,
    value_gradients_reduced,
)
from polarize.normalizers import DegenerateStateError, make_normalizer

__all__ = ["simulate", "sample_steps", "RTOL", "ATOL"]

RTOL = 1e-10
"""Relative tolerance of the flow's adaptive steps (per step, on every state variable)."""
ATOL = 1e-12
"""Absolute tolerance of the flow's adaptive steps."""
MAX_FLOW_STEPS = 50_000
STALL_STEPS = 1000
"""A flow that needs more than this many steps between two saved times has stalled:
smooth runs need tens. Either it has converged, and its velocity is rounding noise
that the error control keeps chasing (it is then held at rest to the horizon), or
it slides along a kink of the normalizer (relu, l1 and sparsemax switch
coordinates on and off there), where no smooth stepper makes progress: the run
then stops there and says so."""
KINKED = frozenset({"relu", "l1", "sparsemax"})
AT_REST = 64 * np.finfo(float).eps
"""A velocity below this, relative to the state's size, is rounding noise: the flow is at rest."""
STIFF_SIZE = 1500
"""Flows in ``t`` with at most this many state variables use LSODA, which switches to
a stiff method once the loss has converged (square and KL losses, over long
horizons); larger ones use DOP853, since LSODA's dense Jacobian would cost
``size**2`` memory."""


# The engine's linear algebra is on small matrices and vectors, where threaded BLAS
# only adds synchronization (eight times slower here on a busy 2-core machine).
_THREADPOOLS = ThreadpoolController()


class _Stopped(Exception):
    """The run cannot go on; the message says why, in words."""


def sample_steps(horizon: float, lr: float, samples: int) -> np.ndarray:
    """Step counts at which a run is saved: 0, then log-spaced up to ``round(horizon / lr)``.

    Rounding to whole steps can merge neighbours, so there may be fewer than
    ``samples``. The flow uses the same grid (times ``k * lr``) so that flow and
    descent can be compared time for time.
    """
    total = round(horizon / lr)
    if total < 1:
        return np.array([0.0, horizon / lr])
    steps = np.unique(np.round(np.geomspace(1.0, total, samples - 1)))
    return np.concatenate([[0.0], steps])


def _sample_times(experiment: Experiment) -> np.ndarray:
    horizon = experiment.horizon
    t = sample_steps(horizon, experiment.lr, experiment.samples) * experiment.lr
    # The flow ends exactly at the horizon; descent ends after whole steps, which is the
    # horizon itself unless horizon / lr is not a whole number.
    if experiment.method == "flow" or abs(t[-1] - horizon) <= 1e-9 * horizon:
        t[-1] = horizon
    return t


def _build_loss(e: Experiment):
    target = np.asarray(e.target)
    if e.loss == "kl":
        return KL(target)
    if e.loss == "logistic":
        if e.X is None:
            return Logistic.from_target(target)
        return LogisticData(np.asarray(e.X), np.asarray(e.y))
    if e.X is None:
        return Square(np.eye(e.d), target)
    return Square(np.asarray(e.X), np.asarray(e.y))


class _MatrixSystem:
    """State ``[W.ravel(), a]``: a matrix (``V``, ``X V`` or ``U``) and the logits."""

    def __init__(self, W0, a0, loss, normalizer):
        self.loss, self.normalizer = loss, normalizer
        self.shape = W0.shape
        self.y0 = np.concatenate([W0.ravel(), a0])

    def split(self, y):
        k = self.shape[0] * self.shape[1]
        return y[:k].reshape(self.shape), y[k:]

    def V(self, y):
        return self.split(y)[0]

    def _gradients(self, W, a):
        raise NotImplementedError

    def gradient(self, y):
        G = self._gradients(*self.split(y))
        return np.concatenate([G.grad_V.ravel(), G.grad_a])

    def flow_jacobian(self, _t, y):
        """Jacobian of the flow ``-gradient`` by forward differences, all columns in one batch.

        LSODA would otherwise make one Python call per column; the batched
        gradients make the whole Jacobian cost about as much as a few calls.
        """
        h = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(y))
        Y = y + np.diag(h)  # row j is y + h_j e_j
        k = self.shape[0] * self.shape[1]
        G = self._gradients(Y[:, :k].reshape(len(y), *self.shape), Y[:, k:])
        F = np.concatenate([G.grad_V.reshape(len(y), k), G.grad_a], axis=1)
        return -((F - self.gradient(y)) / h[:, None]).T

    def record(self, Y, recorder: Recorder) -> None:
        """Measure each column of ``Y`` (one state per column) in the full coordinates."""
        for y in Y.T:
            V, a = self.V(y), self.split(y)[1]
            G = self._full_gradients(V, a)
            recorder.add(
                s=G.s, a=a, u=G.u, loss=G.loss,
                p=V.T @ self.loss.target if isinstance(self.loss, Logistic) else None,
                grad_norm_V=np.linalg.norm(G.grad_V), grad_norm_a=np.linalg.norm(G.grad_a),
                singular_values=top_singular_values(V), column_norms=np.linalg.norm(V, axis=0),
            )


class _ValueSystem(_MatrixSystem):
    """The value model in coordinates ``W = X V`` (``X = I``: plain ``V``)."""

    def __init__(self, V0, a0, loss, normalizer, *, reduced: bool):
        self.V0, self.reduced = V0, reduced
        if reduced:
            X = loss.X
            self.gram = X @ X.T
            # V - V0 = X^T Lambda with X X^T Lambda = W - W0, so V = V0 + pinv(X) (W - W0).
            self.pinv = np.linalg.pinv(X)
            self.W0 = X @ V0
        super().__init__(self.W0 if reduced else V0, a0, loss, normalizer)

    def V(self, y):
        W = self.split(y)[0]
        return self.V0 + self.pinv @ (W - self.W0) if self.reduced else W

    def _gradients(self, W, a):
        if self.reduced:
            return value_gradients_reduced(W, a, self.loss, self.gram, self.normalizer)
        return value_gradients(W, a, self.loss, self.normalizer)

    def _full_gradients(self, V, a):
        return value_gradients(V, a, self.loss, self.normalizer)


class _TiedSystem(_MatrixSystem):
    """The tied model ``beta = U sigma(U a)`` in its own coordinates ``(U, a)``."""

    def _gradients(self, U, a):
        return tied_gradients(U, a, self.loss, self.normalizer)

    _full_gradients = _gradients


class _LogisticClosedSystem:
    """Logistic loss on a direction: the closed ``(a, p, log(1 + t))`` system in ``tau``.

    ``V(t) = V0 + beta_* (p(t) - p(0))^T`` exactly, so ``V`` is never integrated:
    its column norms and singular values at a saved time come from ``p`` and
    quantities of ``V0`` computed once, for a whole batch of saved times at once.
    """

    def __init__(self, V0, a0, loss: Logistic, normalizer):
        self.V0, self.normalizer = V0, normalizer
        self.b = loss.target
        self.n = len(a0)
        self.p0 = V0.T @ self.b
        self.column_sq0 = np.sum(V0 * V0, axis=0)
        d, n = V0.shape
        # Gram matrix of the smaller side of V0, for the singular values of V0 + b q^T.
        self.gram0 = V0 @ V0.T if d <= n else V0.T @ V0
        self.y0 = np.concatenate([a0, self.p0, [0.0]])

    def field(self, tau, y):
        n = self.n
        da, dp, z, _ = logistic_closed_field(y[:n], y[n:2 * n], self.normalizer)
        # dt/dtau = 1 + e^z, carried as d log(1 + t)/dtau without overflow.
        return np.concatenate([da, dp, [np.exp(np.logaddexp(0.0, z) - y[2 * n])]])

    def clock(self, y):
        """``log(1 + t)``, the last state variable (also on a batch of columns)."""
        return y[-1]

    def clock_rate(self, y):
        """``d log(1 + t) / d tau = (1 + e^z) / (1 + t)``, on a batch of columns."""
        n = self.n
        z = np.sum(y[n:2 * n] * self.normalizer.forward(y[:n].T).T, axis=0)
        return np.exp(np.logaddexp(0.0, z) - y[-1])

    def V(self, y):
        return self.V0 + np.outer(self.b, y[self.n:2 * self.n] - self.p0)

    def record(self, Y, recorder: Recorder) -> None:
        n = self.n
        a, p = Y[:n].T, Y[n:2 * n].T  # (K, n)
        s = self.normalizer.forward(a)
        z = np.sum(p * s, axis=1)
        c = expit(-z)
        q = p - self.p0
        recorder.add(
            s=s, a=a, u=c[:, None] * p, p=p, loss=np.logaddexp(0.0, -z),
            # |dL/dV| = |g| |s| with g = -c beta_*, |beta_*| = 1.
            grad_norm_V=c * np.linalg.norm(s, axis=1),
            grad_norm_a=c * np.linalg.norm(self.normalizer.vjp(a, p), axis=1),
            singular_values=self._singular_values(q),
            # |v_i|^2 = |v_i(0)|^2 + 2 q_i b.v_i(0) + q_i^2, and b.v_i(0) = p_i(0).
            column_norms=np.sqrt(np.maximum(self.column_sq0 - self.p0**2 + p**2, 0.0)),
            batch=True,
        )

    def _singular_values(self, q):
        """Leading singular values of ``V0 + b q_k^T`` for each row ``q_k`` of ``q``."""
        d, n = self.V0.shape
        side = min(d, n)
        out = np.zeros((len(q), N_SINGULAR))
        chunk = max(1, (1 << 22) // (side * side))  # bound the stack of Gram matrices
        for start in range(0, len(q), chunk):
            qs = q[start:start + chunk]
            if d <= n:
                r = qs @ self.V0.T  # V0 q, (k, d)
                b = self.b
                gram = (self.gram0 + r[:, :, None] * b[None, None, :] + b[None, :, None] * r[:, None, :]
                        + np.sum(qs * qs, axis=1)[:, None, None] * np.outer(b, b))
            else:
                p0 = self.p0
                gram = (self.gram0 + p0[None, :, None] * qs[:, None, :] + qs[:, :, None] * p0[None, None, :]
                        + qs[:, :, None] * qs[:, None, :])
            top = np.linalg.eigvalsh(gram)[:, ::-1][:, :N_SINGULAR]
            out[start:start + len(qs), :top.shape[1]] = np.sqrt(np.maximum(top, 0.0))
        return out


def _march(fun, y0, targets, clock: Callable | None = None,
           clock_rate: Callable | None = None, *, stepper=DOP853,
           jacobian: Callable | None = None, stall_reason: str = "") -> Iterator[np.ndarray]:
    """Step a scipy ``OdeSolver`` and yield the states at the targets of the clock.

    Yields arrays of shape (state, k): the states at the targets that one step
    crossed, one per column.

    Without ``clock`` the targets are values of the independent variable. With
    it, they are values of the monotone function ``clock(y)`` of the state, and
    each is located inside the step that crosses it by Newton's method on the
    step's dense output.

    A run that takes ``STALL_STEPS`` steps without reaching a target is held at
    rest if its velocity is rounding noise, and stopped otherwise, with
    ``stall_reason`` appended to the message.
    """
    bound = targets[-1] if clock is None else np.inf
    options = {"jac": jacobian} if jacobian is not None else {}
    solver = stepper(fun, 0.0, y0, bound, rtol=RTOL, atol=ATOL, **options)
    yield y0[:, None]
    k = 1
    now = clock(y0) if clock else 0.0
    since = 0
    for _ in range(MAX_FLOW_STEPS):
        if since == STALL_STEPS:
            velocity = np.max(np.abs(fun(solver.t, solver.y)))
            if velocity <= AT_REST * max(1.0, np.max(np.abs(solver.y))):
                yield np.repeat(solver.y[:, None], len(targets) - k, axis=1)
                return
            raise _Stopped(
                f"the flow stalled (over {STALL_STEPS} steps without reaching the next saved "
                f"time){stall_reason}")
        start, before = solver.t, now
        since += 1
        message = solver.step()
        if solver.status == "failed":
            raise _Stopped(f"the integrator stopped: {message}")
        if not np.all(np.isfinite(solver.y)):
            raise _Stopped("the state overflowed (the flow diverges)")
        now = clock(solver.y) if clock else solver.t
        if now < targets[k]:
            continue
        since = 0
        j = int(np.searchsorted(targets, now, side="right"))
        inside = targets[k:j]
        local = solver.dense_output()
        where = inside if clock is None else _locate(local, clock, clock_rate, inside,
                                                    start, solver.t, before, now)
        yield local(where).reshape(len(y0), -1)
        k = j
        if k == len(targets):
            return
    raise _Stopped(f"gave up after {MAX_FLOW_STEPS} integrator steps")


def _locate(local, clock, clock_rate, want, lo, hi, clock_lo, clock_hi):
    """Solve ``clock(local(x)) = want`` for each entry of ``want`` on ``[lo, hi]``.

    Newton's method from the linear-interpolation guess, with the derivative
    ``clock_rate`` (d clock / dx) and every iterate kept inside the step; the clock is monotone
    and smooth over one accurate step, so three or four iterations reach rounding.
    """
    x = lo + (hi - lo) * (want - clock_lo) / (clock_hi - clock_lo)
    tolerance = 8 * np.finfo(float).eps * np.maximum(1.0, np.abs(want))
    for _ in range(20):
        y = local(x)
        miss = clock(y) - want
        if np.all(np.abs(miss) <= tolerance):
            break
        x = np.clip(x - miss / clock_rate(y), lo, hi)
    return x


def simulate(experiment: Experiment) -> Result:
    """Run an experiment and measure it at every saved time.

    Parameters
    ----------
    experiment : Experiment
        Drawn arrays (``a0``, ``V0``, ``target``, ...) are filled in from its
        seed where not given; the result's ``experiment`` holds them all.

    Returns
    -------
    Result
        Arrays over the K saved times: ``t`` (K), ``s``, ``a``, ``u`` (K x n),
        ``loss``, ``entropy`` (K) and more. A run that cannot go on (descent
        diverging, a normalizer reaching a state where it is undefined) stops
        early with ``status == "stopped"`` and a ``message`` saying why; what
        was saved until then is kept.

    Raises
    ------
    ConfigError
        Naming ``a0`` or ``a_init`` when the normalizer is undefined at the
        starting logits (e.g. ``l1`` or ``l2`` with every logit zero).
    """
    with _THREADPOOLS.limit(limits=1, user_api="blas"):
        return _simulate(experiment)


def _simulate(experiment: Experiment) -> Result:
    e = experiment.resolved()
    normalizer = make_normalizer(e.normalizer, temperature=e.temperature)
    loss = _build_loss(e)
    V0, a0 = np.asarray(e.V0), np.asarray(e.a0)
    t = _sample_times(e)

    if e.model == "tied":
        system = _TiedSystem(V0, a0, loss, normalizer)
    elif e.method == "flow" and isinstance(loss, Logistic):
        system = _LogisticClosedSystem(V0, a0, loss, normalizer)
    else:
        reduced = e.method == "flow" and isinstance(loss, LinearLoss) and loss.X.shape[0] < e.d
        system = _ValueSystem(V0, a0, loss, normalizer, reduced=reduced)

    recorder = Recorder()
    try:
        # Measured before anything runs, so that a start where the normalizer is undefined is
        # refused as bad input rather than reported as a run that stopped at t = 0.
        system.record(system.y0[:, None], recorder)
    except DegenerateStateError as exc:
        name = "a0" if experiment.a0 is not None else "a_init"
        raise ConfigError(name, f"cannot start there: {exc}") from None

    reason = ("; it slides along a kink of the normalizer, where it is not smooth: method gd "
              "can go on past it") if e.normalizer in KINKED else ""
    calls = [0]
    status, message = "finished", ""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            if e.method == "gd":
                states = _descend(system, e.lr, np.rint(t / e.lr).astype(np.int64), calls)
            elif isinstance(system, _LogisticClosedSystem):
                states = _march(_counted(system.field, calls), system.y0, np.log1p(t),
                                clock=system.clock, clock_rate=system.clock_rate, stall_reason=reason)
            else:
                def field(_, y):
                    return -system.gradient(y)
                if system.y0.size <= STIFF_SIZE:
                    states = _march(_counted(field, calls), system.y0, t, stepper=LSODA,
                                    jacobian=system.flow_jacobian, stall_reason=reason)
                else:
                    states = _march(_counted(field, calls), system.y0, t, stall_reason=reason)
            next(states)  # the start, measured above
            last = system.y0
            for Y in states:
                system.record(Y, recorder)
                last = Y[:, -1]
        except (DegenerateStateError, FloatingPointError, _Stopped) as exc:
            status = "stopped"
            message = _stopped_message(e, t, len(recorder), str(exc))
    return recorder.result(e, t, system.V(last), status=status, message=message,
                           n_evaluations=calls[0])


def _counted(fun, calls):
    def wrapped(tau, y):
        calls[0] += 1
        return fun(tau, y)
    return wrapped


def _descend(system, lr: float, save_at: np.ndarray, calls) -> Iterator[np.ndarray]:
    """Gradient descent ``y <- y - lr * grad``, yielding the state at each step count in ``save_at``."""
    y = system.y0.copy()
    yield y[:, None]
    step = 0
    for target in save_at[1:]:
        while step < target:
            y = y - lr * system.gradient(y)
            step += 1
        calls[0] = step
        if not np.all(np.isfinite(y)):
            raise _Stopped(f"gradient descent diverged before step {step} (lr = {lr:g} is too large)")
        yield y[:, None]


def _stopped_message(e: Experiment, t: np.ndarray, saved: int, why: str) -> str:
    when = f"t = {t[saved - 1]:.3g}" if saved else "the start"
    return f"stopped after {when} of {e.horizon:.3g}: {why}"
