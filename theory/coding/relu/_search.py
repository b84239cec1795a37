"""Batched search for the local maxima of the ReLU dual ratio (seed 000, notes §5.2 [RECON]).

The dual margin of a multiplier t (P, m) of the outlier-only ReLU theory is

    max_{w != 0}  f(w) = |t^T relu(B w)|^2 / (Ps |w|^2),        z = B w,  K0 = B B^T

(:mod:`._relu_certificate`). On each region of fixed activation pattern D = diag(z > 0), f is the
Rayleigh quotient of ``B^T D t t^T D B / Ps``, of rank <= m. Its maximum over the whole space is
``lambda_max(C_D) / Ps`` with the m x m matrix ``C_D = t^T D K0 D t``, attained at
``w = B^T D t c`` (c the top eigenvector of C_D). So a local maximiser of f is either that
eigenvector of its own region (when it lies inside the region) or the same eigenproblem
restricted to a face ``{z_K = 0}`` of the region (a maximiser on a kink).

Every start is maximised by its own L-BFGS run, all of them in one numba kernel
(:func:`_lbfgs_kernel`; arrays and scalars only, wrapped by :func:`_ascend`), which removes the
per-start Python overhead of one scipy call each (about 90 % of a solve's time before). The
stopping rules are scipy L-BFGS-B's defaults. The maximisers then get an exact polish
(:func:`_face_polish`): the face eigenproblem on the entries with |z_mu| below a few relative
thresholds, accepted only when the polished point keeps its signs and does not lower f. The
polished value is the exact local maximum of f on that face (to rounding); L-BFGS alone stops
about 1e-9 short of it, or more on a kink.

Source of the problem: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks
learning classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse
coding scheme"; the dual and its margin are the reconstruction in :mod:`._relu_outliers`.
"""

from __future__ import annotations

import numba
import numpy as np

__all__: list[str] = []

_FACE_TOLS = (1e-9, 1e-7, 1e-5, 1e-3)


def _ratio(W, B, t, Ps):
    """f(w) for the rows of W (S, r); also Z = W B^T, V = relu(Z) t and |w|^2."""
    Z = W @ B.T
    V = np.maximum(Z, 0.0) @ t
    nw = np.einsum("ij,ij->i", W, W)
    return np.einsum("ij,ij->i", V, V) / (Ps * nw), Z, V, nw


@numba.njit(cache=True)
def _ratio_grad(w, B, t, Ps, z, v, g):
    """f(w) (returned) and its gradient (into g); z (P,) and v (m,) are work arrays."""
    P, r = B.shape
    m = t.shape[1]
    nw = 0.0
    for k in range(r):
        nw += w[k] * w[k]
    for q in range(m):
        v[q] = 0.0
    for mu in range(P):
        acc = 0.0
        for k in range(r):
            acc += B[mu, k] * w[k]
        z[mu] = acc
        if acc > 0.0:
            for q in range(m):
                v[q] += t[mu, q] * acc
    vv = 0.0
    for q in range(m):
        vv += v[q] * v[q]
    f = vv / (Ps * nw)
    for k in range(r):
        g[k] = -2.0 * f * w[k] / nw
    for mu in range(P):
        if z[mu] > 0.0:
            c = 0.0
            for q in range(m):
                c += t[mu, q] * v[q]
            c *= 2.0 / (Ps * nw)
            for k in range(r):
                g[k] += c * B[mu, k]
    return f


# kept in one piece (> 80 lines): one compiled loop; helpers would add call overhead inside it
@numba.njit(cache=True)
def _lbfgs_kernel(W0, B, t, Ps, maxiter, memory, ftol, gtol, W, f_out):
    """L-BFGS on F = -f from every row of W0 (results into W, f_out): two-loop recursion with
    ``memory`` pairs (s.y <= 1e-10 |s||y| skipped), Armijo backtracking from the step 1 (the
    first step 1/|G|, at most 1), at most 40 halvings. Stops like scipy's L-BFGS-B: relative
    decrease <= ftol, largest gradient entry <= gtol, a failed line search, or maxiter steps."""
    S, r = W0.shape
    P = B.shape[0]
    m = t.shape[1]
    z = np.empty(P)
    v = np.empty(m)
    Sm = np.empty((memory, r))
    Ym = np.empty((memory, r))
    rho = np.empty(memory)
    al = np.empty(memory)
    w = np.empty(r)
    wn = np.empty(r)
    g = np.empty(r)
    gn = np.empty(r)
    d = np.empty(r)
    for i in range(S):
        nrm = 0.0
        for k in range(r):
            nrm += W0[i, k] * W0[i, k]
        nrm = np.sqrt(nrm)
        for k in range(r):
            w[k] = W0[i, k] / nrm
        F = -_ratio_grad(w, B, t, Ps, z, v, g)
        for k in range(r):
            g[k] = -g[k]
        count = 0
        if F < 0.0:
            for _it in range(maxiter):
                gmax = 0.0
                gg = 0.0
                for k in range(r):
                    gmax = max(gmax, abs(g[k]))
                    gg += g[k] * g[k]
                if gmax <= gtol:
                    break
                # two-loop recursion: d = -H g
                for k in range(r):
                    d[k] = g[k]
                n = min(count, memory)
                for back in range(n):
                    j = (count - 1 - back) % memory
                    a = 0.0
                    for k in range(r):
                        a += Sm[j, k] * d[k]
                    a *= rho[j]
                    al[j] = a
                    for k in range(r):
                        d[k] -= a * Ym[j, k]
                if n > 0:
                    j = (count - 1) % memory
                    sy = 0.0
                    yy = 0.0
                    for k in range(r):
                        sy += Sm[j, k] * Ym[j, k]
                        yy += Ym[j, k] * Ym[j, k]
                    gam = sy / yy
                    for k in range(r):
                        d[k] *= gam
                for back in range(n - 1, -1, -1):
                    j = (count - 1 - back) % memory
                    b = 0.0
                    for k in range(r):
                        b += Ym[j, k] * d[k]
                    b *= rho[j]
                    for k in range(r):
                        d[k] += (al[j] - b) * Sm[j, k]
                slope = 0.0
                for k in range(r):
                    d[k] = -d[k]
                    slope += d[k] * g[k]
                if not slope < 0.0:  # not a descent direction: restart from the gradient
                    count = 0
                    for k in range(r):
                        d[k] = -g[k]
                    slope = -gg
                alpha = 1.0 if count > 0 else min(1.0, 1.0 / np.sqrt(gg))
                accepted = False
                Fn = F
                for _ls in range(40):
                    for k in range(r):
                        wn[k] = w[k] + alpha * d[k]
                    Fn = -_ratio_grad(wn, B, t, Ps, z, v, gn)
                    if Fn <= F + 1e-4 * alpha * slope:
                        accepted = True
                        break
                    alpha *= 0.5
                if not accepted:
                    break
                sy = 0.0
                ss = 0.0
                yy = 0.0
                for k in range(r):
                    gn[k] = -gn[k]
                    sk = wn[k] - w[k]
                    yk = gn[k] - g[k]
                    sy += sk * yk
                    ss += sk * sk
                    yy += yk * yk
                if sy > 1e-10 * np.sqrt(ss * yy):
                    j = count % memory
                    for k in range(r):
                        Sm[j, k] = wn[k] - w[k]
                        Ym[j, k] = gn[k] - g[k]
                    rho[j] = 1.0 / sy
                    count += 1
                rel = (F - Fn) / max(abs(F), abs(Fn), 1.0)
                for k in range(r):
                    w[k] = wn[k]
                    g[k] = gn[k]
                F = Fn
                if rel <= ftol:
                    break
        nrm = 0.0
        for k in range(r):
            nrm += w[k] * w[k]
        nrm = np.sqrt(nrm)
        for k in range(r):
            W[i, k] = w[k] / nrm
        f_out[i] = max(-F, 0.0)


def _ascend(W0, B, t, Ps, *, maxiter=500, memory=10, ftol=2.220446049250313e-09, gtol=1e-5):
    """Local maximisation of f from every row of W0 (nonzero rows) by :func:`_lbfgs_kernel`,
    with scipy's L-BFGS-B defaults for the stopping rules. Returns (W with unit rows, f)."""
    W0 = np.ascontiguousarray(W0, dtype=np.float64)
    W = np.empty_like(W0)
    f = np.empty(W0.shape[0])
    _lbfgs_kernel(W0, np.ascontiguousarray(B, dtype=np.float64),
                  np.ascontiguousarray(t, dtype=np.float64), float(Ps), int(maxiter),
                  int(memory), float(ftol), float(gtol), W, f)
    return W, f


def _face_polish(w, fw, B, t, Ps):
    """The exact maximiser of f on the face of w's region (entries with |z_mu| <= tol max|z|
    held at 0) for a few tolerances; the best consistent one that does not lower f."""
    z = B @ w
    scale = float(np.max(np.abs(z)))
    best_w, best_f = w, fw
    seen = None
    for tol in (0.0, *_FACE_TOLS):
        face = np.abs(z) <= tol * scale
        pos = (z > 0) & ~face
        if not np.any(pos) or (seen is not None and np.array_equal(face, seen)):
            continue  # no active input, or the same face as the previous tolerance
        seen = face
        Dt = pos[:, None] * t
        if np.any(face):
            _, s, Vt = np.linalg.svd(B[face], full_matrices=True)
            rank = int(np.sum(s > 1e-12 * s[0])) if s.size else 0
            Q = Vt[rank:].T
            if Q.shape[1] == 0:
                continue
        else:
            Q = np.eye(B.shape[1])
        BQ = B @ Q
        M = BQ.T @ Dt  # (q, m)
        _, U = np.linalg.eigh(M.T @ M)
        y = M @ U[:, -1]
        for sgn in (1.0, -1.0):
            wn = Q @ (sgn * y)
            nn = np.linalg.norm(wn)
            if nn == 0:
                continue
            wn = wn / nn
            zn = B @ wn
            zs = float(np.max(np.abs(zn)))
            if np.any((zn > 1e-12 * zs) != pos):
                continue
            fn = float(_ratio(wn[None, :], B, t, Ps)[0][0])
            if fn >= best_f:
                best_w, best_f = wn, fn
    return best_w, best_f


def _batched_local_maxima(starts, B, t, Ps, *, n_polish=200):
    """Distinct local maxima (value, unit w) of f from the rows of ``starts``, largest first;
    maximisers closer than 1e-6 count once. The ``n_polish`` largest distinct maxima with at
    least half the largest value get the exact face polish."""
    starts = np.asarray(starts, dtype=float)
    if len(starts) == 0:
        return []
    W, f = _ascend(starts, B, t, Ps)
    order = [i for i in np.argsort(-f, kind="stable") if f[i] > 0]
    kept = np.empty((len(order), W.shape[1]))
    vals = np.empty(len(order))
    n = 0
    for i in order:
        w, fw = W[i], float(f[i])
        if n < n_polish and fw >= 0.5 * f[order[0]]:
            w, fw = _face_polish(w, fw, B, t, Ps)
        if n and np.min(np.linalg.norm(kept[:n] - w, axis=1)) <= 1e-6:
            continue
        kept[n], vals[n] = w, fw
        n += 1
    ranked = np.argsort(-vals[:n], kind="stable")
    return [(float(vals[j]), kept[j].copy()) for j in ranked]
