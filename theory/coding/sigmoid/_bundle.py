"""Proximal bundle method for the fluctuation-free sigmoid problem on general data (seed 000,
notes §4.4 [RECON]), with a duality-gap certificate.

The outer problem is the convex minimisation over t (P x m) of

    f(t) = max_u Q_t(u) - tr(t^T Y),   Q_t(u) = |t^T phi(B u)|^2 / (2P) - |u|^2 / 2,

where ``K0 = B B^T`` on the range of K0 (B is P x r, r = rank K0) and z = B u are the
preactivations on the training inputs; a singular K0 is solved on its range instead of being
rejected. Its dual is the problem over probability measures (codes) on u: minimise
``E[|u|^2/2 + P |a|^2/2]`` subject to ``E[phi(B u) a^T] = Y``.

Each bundle cut is an exact piece ``q_k(t) = |t^T phi_k|^2/(2P) - |u_k|^2/2`` (a local maximum
u_k found by the oracle), so the model is the restricted problem over the atoms found so far.
Its proximal step is solved in the dual, over the simplex of atom weights w, by a primal-dual
interior-point method: ``max_w -1/2 tr(R^T (Phi W Phi^T/P + I/tau)^{-1} R) - w.c`` with
``R = Y + t_c/tau`` (:func:`._bundle_subproblem._simplex_subproblem`).

Certificate (see :func:`_solve_general_bundle`): an upper bound ``f(t_c)`` from the global search
at the final centre and a lower bound from the restricted problem over all atoms (any restricted
model lies below f), so ``f* in [lower, upper]``; plus the output residual of the code weights.
"""

from __future__ import annotations

import collections

import numpy as np
from scipy import optimize

from ..._numerics import _ascend_to_maxima, _distinct
from ...kernels._gauss import _phi_derivs
from .._problem import KernelFactor, _range_factor
from ._bundle_polish import polish_bundle
from ._bundle_subproblem import (  # noqa: F401  (_bordered_solver: re-exported for the tests)
    _bordered_solver,
    _restricted_dual,
    _simplex_subproblem,
)
from ._general_core import _class_patterns

__all__: list[str] = []

_MAX_RESTARTS = 5  # bundle restarts after the final global search found a missed maximum
_TIGHTEN = 100.0  # rtol is divided by this when rtol is met without a certificate ...
_MAX_TIGHTEN = 2  # ... at most this many times
_ARCHIVE = 300  # replaced cuts kept for the final lower bound
_PERTURB = (1e-3, 1e-2, 1e-1)  # relative sizes of the centre perturbations for the lower bound
_N_PERTURB = 8  # perturbations per size
_RANDOM_EVERY = 10  # bundle iterations between oracle calls with random starts
_CHECK_EVERY = 100  # bundle iterations between certificate checks (once the decrease is small)
_CHECK_DECREASE = 1e-6  # ... namely once the predicted decrease is below this times 1 + |f|
_HOP_TOP = 20  # basin hopping perturbs the best this many maxima ...
_HOP_PER = 8  # ... this many times each, in each of two ways, per round
_HOP_PATIENCE = 12  # the certificate's basin hopping stops after this many rounds without gain
_HOP_ROUNDS = 60  # ... or after this many rounds
_HOP_KEEP = 200  # basin hopping returns at most this many maxima (the best ones)
_CERT_HOP_RUNS = 12  # independent basin-hopping runs in each certificate search
GAP_RTOL = 1e-5  # certified iff the duality gap is <= GAP_RTOL (1 + |f|) ...
OUTPUT_ATOL = 1e-4  # ... and the codes' output constraint holds to this max-abs residual


class _RangeNeuron:
    """Q_t in whitened coordinates on the range of K0: z = B u, K0 = B B^T (B: P x r). ``K0``
    is the kernel or its :class:`._problem.KernelFactor` (whose B is used as it is)."""

    def __init__(self, K0, activation, rank_rtol=1e-10):
        self.B = K0.B if isinstance(K0, KernelFactor) else _range_factor(K0, rank_rtol)[0]
        self.P, self.r = self.B.shape
        self.activation = activation

    def evaluate(self, U, t, order=2):
        P, B = self.P, self.B
        ph, d1, d2 = _phi_derivs(U @ B.T, self.activation)
        V = ph @ t  # (k, m): t^T phi
        Q = np.sum(V * V, axis=1) / (2 * P) - 0.5 * np.sum(U * U, axis=1)
        if order == 0:
            return Q, V
        TV = V @ t.T  # (k, P)
        grad = (d1 * TV / P) @ B - U
        DtB = np.matmul((d1[:, None, :] * t.T[None]), B)  # (k, m, r)
        hess = np.matmul(DtB.transpose(0, 2, 1), DtB) / P
        hess += np.matmul(B.T[None] * (d2 * TV / P)[:, None, :], B)
        idx = np.arange(self.r)
        hess[:, idx, idx] -= 1.0
        return Q, V, grad, hess, ph, d1, d2

    def local_maxima(self, t, starts, *, tol=1e-10, maxiter=200, dedup=1e-6):
        """Distinct local maxima (U (n, r), Q (n,)) of Q_t, sorted by decreasing Q."""
        return _ascend_to_maxima(lambda X, order=2: self.evaluate(X, t, order), starts, tol,
                                 maxiter, dedup)

    def to_u(self, Z):
        """Whitened coordinates of preactivation rows Z (k, P) (ridge least squares)."""
        B = self.B
        return np.linalg.solve(B.T @ B + np.eye(self.r), B.T @ Z.T).T


class _Oracle:
    """Global search for the maxima of Q_t: Newton ascent from the known atoms, the class
    patterns and ``n_random`` random sign patterns and Gaussian points, optionally followed by
    basin hopping (:meth:`hop`). A multi-start search, not an exhaustive one."""

    def __init__(self, neuron, Y, n_random, rng):
        self.neuron, self.n_random, self.rng = neuron, n_random, rng
        self.patterns = neuron.to_u(1.5 * (2.0 * _class_patterns(Y) - 1.0))

    def __call__(self, t, warm, n_random=None, hop_rounds=0, patience=None):
        k = self.n_random if n_random is None else n_random
        nr, P = self.neuron, self.neuron.P
        starts = [self.patterns,
                  nr.to_u(1.5 * (2.0 * self.rng.integers(0, 2, (k, P)) - 1.0)),
                  self.rng.standard_normal((k, nr.r))]
        if warm is not None and len(warm):
            starts.insert(0, warm)
        U, Q = nr.local_maxima(t, np.vstack(starts))
        if hop_rounds:
            U, Q = self.hop(t, U, Q, rounds=hop_rounds, patience=patience)
        return U, Q

    def hop(self, t, U, Q, *, rounds, patience=None):
        """Basin hopping (iterated local search) from the maxima (U, Q), sorted by decreasing Q.

        Each round perturbs each of the best _HOP_TOP maxima _HOP_PER times in two ways: u plus
        Gaussian noise of size 1, 2 or 3 (whitened units), and z = B u with each sign flipped
        with probability 0.05, 0.1 or 0.2; Newton ascent from all of them; the union is kept.
        Stops after ``rounds`` rounds, or earlier after ``patience`` rounds in a row without a
        higher best maximum. Returns every distinct maximum found, sorted by decreasing Q.

        Why: at P = 100 on digits (rank K0 = 54) the landscape of Q_t has thousands of local
        maxima (2000 random starts find 1999 distinct ones) and more random starts keep finding
        higher ones; basin hopping from the best ones reaches a higher maximum than 2000 starts,
        the same one from six independent seeds (docs/coding_sigmoid.md)."""
        nr, rng = self.neuron, self.rng
        best, still = Q[0], 0
        for _ in range(rounds):
            top = U[:_HOP_TOP]
            n = len(top) * _HOP_PER
            size = rng.choice(np.array([1.0, 2.0, 3.0]), size=(n, 1))
            moved = np.repeat(top, _HOP_PER, axis=0) + size * rng.standard_normal((n, nr.r))
            Z = np.repeat(top @ nr.B.T, _HOP_PER, axis=0)
            p_flip = rng.choice(np.array([0.05, 0.1, 0.2]), size=(n, 1))
            flipped = nr.to_u(np.where(rng.random(Z.shape) < p_flip, -Z, Z))
            U2, Q2 = nr.local_maxima(t, np.vstack([moved, flipped]))
            U, Q = _union_maxima(U, Q, U2, Q2)
            if Q[0] > best + 1e-12 * (1.0 + abs(best)):
                best, still = Q[0], 0
            else:
                still += 1
                if patience is not None and still >= patience:
                    break
        return U, Q


def _union_maxima(U1, Q1, U2, Q2, dedup=1e-6, keep_max=_HOP_KEEP):
    """The best ``keep_max`` maxima of both lists, duplicates (max-abs distance <=
    dedup (1 + |u|)) removed, sorted by decreasing Q."""
    U, Q = np.vstack([U1, U2]), np.concatenate([Q1, Q2])
    order = np.argsort(-Q, kind="stable")[:2 * keep_max]
    keep = order[_distinct(U[order], dedup)][:keep_max]
    return U[keep], Q[keep]


def _bundle_loop(neuron, oracle, Y, t_c, atoms, maxiter, rtol, report, tau=1.0, certify=None,
                 archive=()):
    """Proximal bundle iterations from centre t_c with the cuts ``atoms`` (and the replaced
    cuts ``archive`` of an earlier pass); returns (t_c, f_c, atoms, w, nit, converged, the last
    replaced atoms, certificate). Stops when the predicted
    decrease is below ``rtol (1 + |f|)`` or, every _CHECK_EVERY iterations once it is below
    _CHECK_DECREASE (1 + |f|), when ``certify(t_c, atoms, w, archive, staged=True)`` (a dict
    of :func:`_certificate`) is certified; that certificate is returned (else None). Such a
    check whose search finds a maximum above f_c adds it as a cut and goes on."""
    P = neuron.P
    U, Q = oracle(t_c, atoms)
    f_c = Q[0] - np.sum(t_c * Y)
    atoms = U.copy() if atoms is None else np.vstack([atoms, U])
    age = np.zeros(len(atoms))
    w = np.full(len(atoms), 1.0 / len(atoms))
    archive = collections.deque(archive, maxlen=_ARCHIVE)
    for it in range(maxiter):
        Phi = _phi_derivs(atoms @ neuron.B.T, neuron.activation)[0].T
        c = 0.5 * np.sum(atoms * atoms, axis=1)
        v = Phi.T @ t_c
        q_c = np.sum(v * v, axis=1) / (2 * P) - c  # every cut's piece at the centre
        if np.max(q_c) - np.sum(t_c * Y) > f_c + 1e-12 * (1.0 + abs(f_c)):
            # a later cut lies above f_c: the search at the centre missed a higher maximum,
            # and a model above f_c would stop the bundle with a negative predicted decrease.
            # Ascend from every cut at the centre (raises f_c at least to the model there).
            U, Q = oracle(t_c, atoms, n_random=0)
            f_c = max(f_c, Q[0] - np.sum(t_c * Y))
            atoms, age, w, replaced = _merge_cuts(atoms, age, w, q_c, U, Q)
            archive.extend(replaced)
            Phi = _phi_derivs(atoms @ neuron.B.T, neuron.activation)[0].T
            c = 0.5 * np.sum(atoms * atoms, axis=1)
        w, t_new = _simplex_subproblem(Phi, c, Y, t_c, tau, w)
        v = Phi.T @ t_new
        q_new = np.sum(v * v, axis=1) / (2 * P) - c  # every cut's piece at t_new
        model = np.max(q_new) - np.sum(t_new * Y)
        delta = f_c - (model + np.sum((t_new - t_c) ** 2) / (2 * tau))
        if report is not None:
            report(f"bundle iteration {it}: f = {f_c:.12g}, predicted decrease {delta:.2e}, "
                   f"{len(atoms)} atoms, proximal weight tau {tau:.3g}")
        if delta < rtol * (1.0 + abs(f_c)):
            return t_c, f_c, atoms, w, it + 1, True, list(archive), None
        if (certify is not None and it % _CHECK_EVERY == _CHECK_EVERY - 1
                and delta < _CHECK_DECREASE * (1.0 + abs(f_c))):
            cert = certify(t_c, atoms, w, list(archive), staged=True)
            if cert["upper"] > f_c + rtol * (1.0 + abs(f_c)):  # a missed maximum: a new cut
                f_c = cert["upper"]
                atoms = np.vstack([atoms, cert["U_all"]])
                age = np.concatenate([age, np.zeros(len(cert["U_all"]))])
                w = np.concatenate([w, np.zeros(len(cert["U_all"]))])
                continue
            if _certified(cert):
                if report is not None:
                    report(f"bundle iteration {it}: certified (relative duality gap "
                           f"{_relative_gap(cert):.1e}, output residual {cert['out_res']:.1e})")
                return t_c, f_c, atoms, w, it + 1, True, list(archive), cert
        # warm starts from every cut, so that f(t_new) >= the model there (ascent from u_k only
        # raises Q_t(u_k) = q_k(t_new)); random starts and one round of basin hopping on every
        # _RANDOM_EVERY-th iteration only: a maximum missed in between is caught by the
        # certificate's search (restart)
        wide = it % _RANDOM_EVERY == 0
        U, Q = oracle(t_new, atoms, n_random=None if wide else 0, hop_rounds=int(wide))
        f_new = Q[0] - np.sum(t_new * Y)
        serious = f_c - f_new >= 0.1 * (f_c - model)
        age = np.where(w > 1e-7, 0, age + 1)
        keep = age < 4
        atoms, age, w, q_new = atoms[keep], age[keep], w[keep], q_new[keep]
        n_keep = max(20, 2 * int(np.sum(w > 1e-7)))
        atoms, age, w, replaced = _merge_cuts(atoms, age, w, q_new, U[:n_keep], Q[:n_keep])
        archive.extend(replaced)
        if serious:
            t_c, f_c = t_new, f_new
            tau = min(2.0 * tau, 1e4)
        else:
            tau = max(0.5 * tau, 1e-3)
    return t_c, f_c, atoms, w, maxiter, False, list(archive), None


def _merge_cuts(atoms, age, w, q_atoms, U, Q, dedup=1e-9):
    """Add the oracle's maxima U (pieces Q at the trial centre t) as cuts; ``q_atoms`` are the
    atoms' pieces at the same t. A maximum that is the continuation of an atom (the nearest
    atom within 5 % of |u|) replaces it when its piece is higher at t: the cut moves
    with the maximum instead of piling up near-copies (which made the subproblem size grow
    without bound on real data). Returns (atoms, age, w, the replaced atoms)."""
    q_atoms = q_atoms.copy()
    new, replaced = [], []
    for u, q in zip(U, Q, strict=True):
        dist = np.max(np.abs(atoms - u), axis=1)
        j = int(np.argmin(dist))
        if dist[j] <= dedup:
            continue
        if dist[j] <= 0.05 * (1.0 + np.max(np.abs(u))) and q > q_atoms[j]:
            replaced.append(atoms[j].copy())
            atoms[j], q_atoms[j], age[j] = u, q, 0
        else:
            new.append(u)
    if new:
        atoms = np.vstack([atoms, new])
        age = np.concatenate([age, np.zeros(len(new))])
        w = np.concatenate([w, np.zeros(len(new))])
    return atoms, age, w, replaced


def _codes_at(neuron, Y, t, atoms, w, wmin):
    """Codes at the centre t: the atoms carrying weight, moved to their local maxima of Q_t and
    merged; weights from the output constraint ``sum_g P_g phi_g a_g^T = Y`` with
    ``a_g = t^T phi_g / P`` (non-negative least squares with sum 1). Returns
    (U, P_gamma, Q, output residual, |sum P_gamma - 1|)."""
    P, m = Y.shape
    sel = w > wmin
    U, Q = neuron.local_maxima(t, atoms[sel])
    ph = _phi_derivs(U @ neuron.B.T, neuron.activation)[0]
    A = ph @ t / P
    cols = np.einsum("gp,gr->prg", ph, A).reshape(P * m, -1)
    scale = 1e3 * (1.0 + np.max(np.abs(Y)))
    M = np.vstack([cols, scale * np.ones((1, cols.shape[1]))])
    b = np.concatenate([Y.ravel(), [scale]])
    Pg = optimize.nnls(M, b, maxiter=50 * M.shape[1])[0]
    keep = Pg > 0
    U, Q, Pg = U[keep], Q[keep], Pg[keep]
    out = np.einsum("g,gp,gr->pr", Pg, ph[keep], A[keep])
    return U, Pg, Q, float(np.max(np.abs(out - Y))), abs(Pg.sum() - 1.0)


def _relative_gap(cert):
    return (cert["upper"] - cert["lower"]) / (1.0 + abs(cert["upper"]))


def _shortfall(cert):
    """What a certificate lacks, for messages: its relative gap, or the codes' output residual
    when a staged check stopped there (no search, no bound)."""
    if cert["runs"] == 0:
        return f"output residual {cert['out_res']:.1e}"
    return f"relative gap {_relative_gap(cert):.1e}"


def _certified(cert):
    return bool(cert["Pg"].size and cert["out_res"] <= OUTPUT_ATOL
                and _relative_gap(cert) <= GAP_RTOL)


def _certificate(neuron, oracle, Y, t_c, atoms, w, archive, n_random, staged=False):
    """Certificate at the centre t_c: ``upper`` = f(t_c) from a global search (five times the
    random starts and basin hopping from the atoms carrying weight, plus _CERT_HOP_RUNS - 1
    independent basin-hopping runs from fresh random starts; its maxima U_all, Q_all), the
    codes at t_c (``_codes_at``) and ``lower``, the restricted problem (tau -> inf) over all
    atoms, the search's maxima, the replaced cuts and the codes' continuations at perturbed
    centres t_c + d (mixtures of these nearby atoms approximate the optimal code positions to
    second order in |d|). ``staged``: a check that may stop as soon as it must fail (during
    the iterations, at an rtol stop, at a polished centre): the search and the bound (seconds,
    with about a thousand candidate atoms) are skipped while the codes' output residual alone
    already fails (``lower`` = -inf), and the independent runs while the certificate fails
    without them. ``runs`` counts the searches made (0, 1 or _CERT_HOP_RUNS); a certificate is
    only granted after all of them."""
    U, Pg, Q, out_res, norm_res = _codes_at(neuron, Y, t_c, atoms, w, 1e-9)
    if staged and not out_res <= OUTPUT_ATOL:
        return dict(t=t_c, upper=-np.inf, lower=-np.inf, U=U, Pg=Pg, Q=Q, out_res=out_res,
                    norm_res=norm_res, runs=0)
    U_all, Q_all = oracle(t_c, atoms[w > 1e-9], n_random=5 * n_random, hop_rounds=_HOP_ROUNDS,
                          patience=_HOP_PATIENCE)
    cand = [atoms, U_all] + ([np.array(archive)] if archive else [])
    scale = np.sqrt(np.mean(t_c**2))
    for eps in _PERTURB:
        for _ in range(_N_PERTURB):
            d = eps * scale * oracle.rng.standard_normal(t_c.shape)
            cand.append(neuron.local_maxima(t_c + d, U)[0])
    cand = np.vstack(cand)
    Phi = _phi_derivs(cand @ neuron.B.T, neuron.activation)[0].T
    c = 0.5 * np.sum(cand * cand, axis=1)
    w_r, _t_r = _simplex_subproblem(Phi, c, Y, t_c, 1e12,
                                   np.concatenate([w, np.zeros(len(cand) - len(w))]))
    cert = dict(t=t_c, U_all=U_all, Q_all=Q_all, upper=Q_all[0] - np.sum(t_c * Y),
                lower=_restricted_dual(Phi, c, Y, w_r), U=U, Pg=Pg, Q=Q, out_res=out_res,
                norm_res=norm_res, runs=1)
    if staged and not _certified(cert):
        return cert
    return _independent_runs(oracle, Y, cert, n_random)


def _independent_runs(oracle, Y, cert, n_random):
    """Complete a certificate after its first search (``runs`` = 1): _CERT_HOP_RUNS - 1
    independent basin-hopping runs from fresh random starts at its centre, since hopping stays
    near where it starts. A higher maximum they find raises ``upper`` (the caller then adds it
    as a cut); the lower bound stays valid. Needed before a certificate is granted and for the
    bounds an uncertified result reports."""
    t_c, U_all, Q_all = cert["t"], cert["U_all"], cert["Q_all"]
    for _ in range(_CERT_HOP_RUNS - 1):
        U_i, Q_i = oracle(t_c, None, n_random=n_random, hop_rounds=_HOP_ROUNDS,
                          patience=_HOP_PATIENCE)
        U_all, Q_all = _union_maxima(U_all, Q_all, U_i, Q_i)
    return dict(cert, U_all=U_all, Q_all=Q_all, upper=Q_all[0] - np.sum(t_c * Y),
                runs=_CERT_HOP_RUNS)


def _polish_and_certify(neuron, Y, t_c, cert, atoms, archive, certify, report):
    """Newton on the exact equations from the codes of ``cert`` at t_c (``polish_bundle``), then
    the staged certificate at the polished centre with its codes added to the candidate atoms.
    Returns ``(t_p, cert_p, residual)``, or None when Newton finds no root with these codes."""
    pol = polish_bundle(neuron, Y, t_c, cert["U"], cert["Pg"])
    if pol is None:
        if report is not None:
            report(f"exact polish of {len(cert['Pg'])} codes: no root ({_shortfall(cert)} "
                   "stays)")
        return None
    t_p, U_p, P_p, res = pol
    cert_p = certify(t_p, np.vstack([U_p, atoms]), np.concatenate([P_p, np.zeros(len(atoms))]),
                     archive, staged=True)
    if report is not None:
        report(f"exact polish of {len(P_p)} codes: Newton residual {res:.1e}; "
               f"{_shortfall(cert)} -> {_shortfall(cert_p)}")
    return t_p, cert_p, res


def _solve_general_bundle(K0, Y, activation, rng, n_random, rtol, maxiter, report=None):
    """Bundle solve with certificate (``K0``: the kernel or its :class:`._problem.KernelFactor`,
    as for :class:`_RangeNeuron`). Returns a dict: t, Z (n, P), Pg, A, G (tied Q/P), the
    bounds ``upper`` = f(t_c) and ``lower`` (restricted problem), ``gap`` = upper - lower and
    ``rel_gap`` = gap / (1 + |upper|), output residual, degeneracy spread, the other maxima,
    nit, converged, certified, message."""
    neuron = _RangeNeuron(K0, activation)
    run = _BundleRun(neuron, _Oracle(neuron, Y, n_random, rng), Y, n_random, report)
    t_c, cert, atoms, w, archive, nit, done, rtol_k, polished_at = _bundle_passes(run, rtol,
                                                                                 maxiter)
    t_c, cert = _final_certificate(run, t_c, cert, atoms, w, archive, nit, polished_at)
    return _bundle_result(run, t_c, cert, nit, done, rtol_k, maxiter)


class _BundleRun:
    """The certificate and the exact polish of one bundle solve at its centres (the oracle's
    searches with ``n_random`` starts), with the note of its last polish for the message."""

    def __init__(self, neuron, oracle, Y, n_random, report):
        self.neuron, self.oracle, self.Y, self.n_random, self.report = (neuron, oracle, Y,
                                                                        n_random, report)
        self.notes = []  # [certified by the polish, its note] of the last polish

    def certify(self, t, atoms, w, archive, staged=False):
        """The certificate (:func:`_certificate`) at the centre t."""
        return _certificate(self.neuron, self.oracle, self.Y, t, atoms, w, archive,
                            self.n_random, staged)

    def polish(self, t, cert, atoms, archive):
        """The polish of :func:`_polish_and_certify`; its outcome (the last one) goes into the
        message."""
        got = _polish_and_certify(self.neuron, self.Y, t, cert, atoms, archive, self.certify,
                                  self.report)
        if got is None:
            self.notes[:] = [False, "; an exact polish of its codes found no root"]
        elif _certified(got[1]):
            self.notes[:] = [True, f"; certified after an exact polish of the bundle's "
                                   f"{len(cert['Pg'])} codes (Newton residual {got[2]:.1e}; "
                                   f"before: {_shortfall(cert)})"]
        else:
            self.notes[:] = [False, f"; an exact polish of its codes (Newton residual "
                                    f"{got[2]:.1e}) was not certified either "
                                    f"({_shortfall(got[1])})"]
        return got


def _bundle_passes(run, rtol, maxiter):
    """The bundle iterations (:func:`_bundle_loop`) from ``t = 2 (Y - mean Y)`` within
    ``maxiter`` in all, until certified: a pass that stops without a certificate is checked
    (staged), polished when it met rtol (:meth:`_BundleRun.polish`), continued with rtol /
    _TIGHTEN (at most _MAX_TIGHTEN times) or restarted with the higher maximum the check found
    as a cut (at most _MAX_RESTARTS times). Returns (centre, certificate, atoms, weights,
    archive, iterations, whether the last pass met its rtol, that rtol, the iteration count at
    the last polish)."""
    neuron, oracle, Y, report = run.neuron, run.oracle, run.Y, run.report
    t_c, atoms, nit, archive = 2.0 * (Y - Y.mean()), None, 0, []
    rtol_k, restarts, tightened, polished_at = rtol, 0, 0, -1
    while True:
        t_c, f_c, atoms, w, k, done, archive, cert = _bundle_loop(
            neuron, oracle, Y, t_c, atoms, maxiter - nit, rtol_k, report,
            tau=1.0 if nit == 0 else 1e2, certify=run.certify, archive=archive)
        nit += k
        if cert is not None:  # certified early
            break
        # the certificate's search has five times the random starts; a maximum the iterations
        # missed restarts the bundle with it as a cut. Staged: a check that fails on the codes'
        # output residual, or on the gap after the first search, skips the rest (the polish or
        # the tightened bundle follows, and the check after it searches again)
        cert = run.certify(t_c, atoms, w, archive, staged=True)
        upper = cert["upper"]
        missed = upper - f_c > rtol_k * (1.0 + abs(f_c))
        if done and not missed and not _certified(cert) and cert["Pg"].size:
            # rtol met, no missed maximum, no certificate: Newton on the exact equations from
            # these codes usually lands on the optimum (a higher maximum its search finds at the
            # polished centre becomes a cut)
            got, polished_at = run.polish(t_c, cert, atoms, archive), nit
            if got is not None and _certified(got[1]):
                t_c, cert = got[:2]
                break
            if got is not None and "U_all" in got[1]:
                atoms = np.vstack([atoms, got[1]["U_all"]])
                w = np.concatenate([w, np.zeros(len(got[1]["U_all"]))])
        if done and not missed and not _certified(cert) and nit < maxiter \
                and tightened < _MAX_TIGHTEN:
            # rtol met, no missed maximum, but the lower bound is not yet tight: refine the
            # cuts further from the same centre, atoms and archive
            rtol_k /= _TIGHTEN
            tightened += 1
            if report is not None:
                report(f"no certificate at rtol {rtol_k * _TIGHTEN:g} ({_shortfall(cert)}): "
                       f"bundle continued with rtol {rtol_k:g}")
            continue
        if not done or not missed or nit >= maxiter or restarts == _MAX_RESTARTS:
            break  # the gap then shows a missed maximum
        restarts += 1
        if report is not None:
            report(f"final search found a higher maximum (f {f_c:.12g} -> {upper:.12g}): "
                   "bundle restarted with it")
        atoms = np.vstack([atoms, cert["U_all"]])
    return t_c, cert, atoms, w, archive, nit, done, rtol_k, polished_at


def _final_certificate(run, t_c, cert, atoms, w, archive, nit, polished_at):
    """An uncertified result: the exact polish of its codes unless it was just tried at this
    stop, and, still uncertified after a staged check, the bounds of the full search (the
    first search is reused when the staged check made it). Returns (centre, certificate)."""
    if not _certified(cert) and cert["Pg"].size and polished_at != nit:
        got = run.polish(t_c, cert, atoms, archive)
        if got is not None and _certified(got[1]):
            t_c, cert = got[:2]
    # uncertified after a staged check: report the bounds of the full search (the first search
    # is reused when the staged check made it)
    if cert["runs"] == 0:
        cert = run.certify(t_c, atoms, w, archive)
    elif cert["runs"] < _CERT_HOP_RUNS:
        cert = _independent_runs(run.oracle, run.Y, cert, run.n_random)
    return t_c, cert


def _bundle_result(run, t_c, cert, nit, done, rtol_k, maxiter):
    """The dict of :func:`_solve_general_bundle` from the final centre and certificate: the
    codes, the bounds, the tie spread of the codes against the best maximum, the other maxima
    of the search (those away from every code) and the message."""
    neuron, P = run.neuron, run.Y.shape[0]
    U, Pg, Q, U_all, Q_all = cert["U"], cert["Pg"], cert["Q"], cert["U_all"], cert["Q_all"]
    upper, lower = cert["upper"], cert["lower"]
    gap = upper - lower
    spread = float(Q_all[0] - Q.min()) if Q.size else float("inf")
    far = np.array([np.min(np.max(np.abs(U - u), axis=1)) > 1e-6 for u in U_all]) \
        if U.size else np.ones(len(U_all), bool)
    Z = U @ neuron.B.T
    ph = _phi_derivs(Z, neuron.activation)[0]
    msg = (f"proximal bundle: {nit} iterations, f in [{lower:.12g}, {upper:.12g}] (duality gap "
           f"{gap:.2e}), {len(Pg)} codes, output residual {cert['out_res']:.1e}, tie spread "
           f"{spread:.1e}")
    certified = _certified(cert)
    notes = run.notes
    if notes and (notes[0] or not certified):
        # a polish that failed before the bundle certified by itself is history, not status
        msg += notes[1]
    if not done and not certified:
        msg += f"; the bundle did not reach rtol={rtol_k:g} within maxiter={maxiter}: raise maxiter"
    return dict(converged=done, certified=certified, t=t_c, Z=Z, U=U, Pg=Pg, A=ph @ t_c / P,
                G=Q_all[0] / P, upper=upper, lower=lower, gap=gap,
                rel_gap=_relative_gap(cert),
                output_residual=cert["out_res"], normalisation_residual=cert["norm_res"],
                spread=spread, other=U_all[far] @ neuron.B.T, other_G=Q_all[far] / P, nit=nit,
                message=msg, B=neuron.B, rtol=rtol_k)
