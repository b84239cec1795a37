"""The bulk of a ReLU feature layer on a class-block kernel: its tilted preactivation integral
and the maximum of its readout exponent (seed 000, notes §5.2 [RECON]; class-block reduction [OURS]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme".

A bulk neuron's single-neuron posterior is ``P(a, z) ∝ N(a | 0, I/P_s) N(z | 0, K) exp(a^T t^T
relu(z))`` (notes §2.2). For a class-block K (``K_{mu nu} = s_c delta + q_{cc'}``) the z-integral
is ``Z(h) = E_g exp(sum_c n_c psi_s(h_c, g_c, s_c))`` with class fields g ~ N(0, q) and
``h_c = t_c . a`` (module :mod:`._relu_block`). This module evaluates

* ``log Z(h)`` and ``M_c(h) = <relu(z_mu)>`` (mu in class c) by a product Gauss-Hermite rule over
  the prior of g (:class:`_BlockBulk`);
* the bulk exponent ``g(a) = -P_s |a|^2/2 + log Z(t a)`` and its maximum a_0, the bulk readout
  of the notes (exact as P_s -> infinity; for L = 1, P_s = P);
* the whole bulk readout law ``p(a) ∝ exp(g(a))`` at finite P_s [OURS]: ``W(t) = log int
  exp(g(a)) da`` and its moments (:meth:`_BlockBulk.readout_law`), by a Gauss-Hermite product
  rule over a centred on the law.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ...kernels._gauss import _product_rule

__all__: list[str] = []

_CHUNK = 2_000_000  # elements per block of (tilts x g-nodes) in log_z


def _psi_shifted(h, g, s, order=1):
    """``psi_s(h, g, s) = log E exp(h relu(g + sqrt(s) xi))`` (xi ~ N(0, 1)) and its derivative
    ``M = d psi/dh = <relu>`` (the tilted mean activation), element-wise, in log space:
    ``psi_s = log[Phi_N(-g/sqrt s) + exp(h g + h^2 s/2) Phi_N((g + h s)/sqrt s)]``. With
    ``order=2`` also ``V = d^2 psi/dh^2 = <relu^2> - M^2``: on z > 0 the tilted law is
    N(mu, s) with mu = g + h s, so ``<relu> = mu p + sqrt(s) d`` and ``<relu^2> = (mu^2 + s) p +
    mu sqrt(s) d``, where p is the second term's share of the sum and ``d = phi_N(g/sqrt s)
    e^{-psi_s}``."""
    sig = np.sqrt(s)
    u = g / sig
    log_a = special.log_ndtr(-u)
    log_b = h * g + 0.5 * h * h * s + special.log_ndtr(u + h * sig)
    log_sum = np.logaddexp(log_a, log_b)
    p = np.exp(log_b - log_sum)
    dens = np.exp(-0.5 * u * u - 0.5 * np.log(2.0 * np.pi) - log_sum)
    mu = g + h * s
    M = mu * p + sig * dens
    if order == 1:
        return log_sum, M
    return log_sum, M, (mu * mu + s) * p + mu * sig * dens - M * M


def _field_range(lam, s):
    """The eigenvalues ``lam`` of q kept as the range of the class fields (the rule's dimensions
    are ``sum(_field_range(lam, s))``)."""
    return lam > 1e-12 * max(float(lam.max(initial=0.0)), float(s.max()))


class _BlockBulk:
    """``log Z(h)`` and the tilted mean activations M_c of the class-block bulk integral by a
    product Gauss-Hermite rule (``nodes`` per dimension) over the class fields g ~ N(0, q) on
    the range of q; the bulk exponent g(a) and its maxima."""

    def __init__(self, counts, s, q, P_s, nodes):
        self.counts, self.s, self.P_s = np.asarray(counts, float), s, P_s
        lam, V = np.linalg.eigh(q)
        keep = _field_range(lam, s)
        self.eta, self.logw = _product_rule(nodes, int(keep.sum()))
        self.Lq = V[:, keep] * np.sqrt(lam[keep])  # q = Lq Lq^T on its range
        self.G = self.eta @ self.Lq.T  # (n_g, k) class fields
        self.shifts = 0  # mean shifts of the field rule per tilt (see log_z)
        self.a_prev = None

    def log_z(self, H, order=1):
        """(log Z (n,), M (n, k)) for tilts H (n, k); with ``order=2`` also the Hessian of log Z
        in h (n, k, k), ``n_c n_c' Cov_w(M_c, M_c') + delta_cc' n_c E_w[V_c]`` over the rule's
        weights w (``V = d^2 psi/dh^2``, :func:`_psi_shifted`). With ``self.shifts`` = s > 0 the
        rule over the class fields is moved, per tilt, s times onto the tilted mean of the fields
        (``g = Lq (u + eta)``, weights times the prior ratio ``exp(-u.eta - |u|^2/2)``): a large
        tilt moves the integrand's mass by about ``q (n h)``, many prior widths, where a rule
        on the prior alone does not resolve it. M and the Hessian are those of the rule at its
        last shift (the shift held fixed)."""
        H = np.atleast_2d(H)
        n = self.counts
        lz = np.empty(H.shape[0])
        M = np.empty(H.shape)
        hess = np.empty(H.shape + H.shape[1:]) if order == 2 else None
        step = max(1, _CHUNK // (self.G.size + 1))
        for i in range(0, H.shape[0], step):
            h = H[i:i + step, None, :]
            u = np.zeros((h.shape[0], self.eta.shape[1]))
            for it in range(self.shifts + 1):
                G = self.G[None] + (u @ self.Lq.T)[:, None, :] if it else self.G[None]
                psi, Mg, *Vg = _psi_shifted(h, G, self.s, order if it == self.shifts else 1)
                ell = self.logw + psi @ n
                if it:  # prior ratio of the shifted rule (u = 0 before the first shift)
                    ell = ell - u @ self.eta.T - 0.5 * np.sum(u * u, axis=1)[:, None]
                lzb = special.logsumexp(ell, axis=1)
                wt = np.exp(ell - lzb[:, None])
                if it < self.shifts:
                    u = u + wt @ self.eta
            lz[i:i + step] = lzb
            Mb = np.einsum("bn,bnk->bk", wt, Mg)
            M[i:i + step] = Mb
            if order == 2:
                nMg = Mg * n
                hb = np.einsum("bn,bnc,bnd->bcd", wt, nMg, nMg)
                hb -= (Mb * n)[:, :, None] * (Mb * n)[:, None, :]
                idx = np.arange(n.size)
                hb[:, idx, idx] += n * np.einsum("bn,bnk->bk", wt, Vg[0])
                hess[i:i + step] = hb
        return (lz, M) if order == 1 else (lz, M, hess)

    def exponent(self, A, t, order=1):
        """Bulk exponent ``g(a) = -P_s|a|^2/2 + log Z(t a)`` (n,), its gradient (n, m), M (n, k);
        with ``order=2`` also its Hessian ``-P_s I + t^T (d^2 log Z/dh^2) t`` (n, m, m)."""
        A = np.atleast_2d(A)
        lz, M, *hz = self.log_z(A @ t.T, order)
        val = -0.5 * self.P_s * np.sum(A * A, axis=1) + lz
        grad = -self.P_s * A + (self.counts * M) @ t
        if order == 1:
            return val, grad, M
        hess = np.einsum("cm,bcd,dl->bml", t, hz[0], t)
        idx = np.arange(A.shape[1])
        hess[:, idx, idx] -= self.P_s
        return val, grad, M, 0.5 * (hess + hess.transpose(0, 2, 1))

    def maxima(self, t, extra=()):
        """Local maxima [(a, g(a), M)] of the bulk exponent from several starts (the last a_0,
        0, half the single-class readouts n_c t_c / P_s, and ``extra``; batched Newton ascent,
        :meth:`_ascend`), best first, duplicates (within 1e-6) removed."""
        starts = [np.zeros(t.shape[1]),
                  *(0.5 * self.counts[c] * t[c] / self.P_s for c in range(len(t))), *extra]
        if self.a_prev is not None:
            starts.insert(0, self.a_prev)
        A, ok, val, M = self._ascend(np.array(starts, dtype=float), t)
        found = []
        for a, v, Ma in zip(A[ok], val[ok], M[ok], strict=True):
            if any(np.max(np.abs(a - f[0])) < 1e-6 for f in found):
                continue
            found.append((a, float(v), Ma))
        found.sort(key=lambda f: -f[1])
        if found:
            self.a_prev = found[0][0]
        return found

    def _ascend(self, A, t, maxiter=100):
        """Batched Newton ascent of g from the rows of A: Newton where the Hessian is negative
        definite, else the saddle-free step (|eigenvalues| floored at 1e-8 of the largest); steps
        of at most 1 (max-abs), halved until g does not decrease (by more than 1e-13 (1 + |g|):
        M, the gradient, is that of the rule at its last shift). Returns (A, ok, g(A), M(A)): ok
        marks rows at a maximum: a negative-definite Hessian and a gradient below 1e-8 (rows stop
        at 1e-10, or when no step keeps g from decreasing, or after ``maxiter`` steps)."""
        A = A.copy()
        active = np.ones(len(A), dtype=bool)
        for _ in range(maxiter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            val, grad, _M, hess = self.exponent(A[idx], t, 2)
            finite = np.isfinite(val) & np.all(np.isfinite(hess), axis=(1, 2))
            lam, V = np.linalg.eigh(np.where(finite[:, None, None], hess, -np.eye(hess.shape[1])))
            done = ((np.max(np.abs(grad), axis=1) < 1e-10) & (lam[:, -1] < 0)) | ~finite
            active[idx[done]] = False  # a non-finite row stops here and fails the final test
            keep = ~done
            idx, val, grad, lam, V = idx[keep], val[keep], grad[keep], lam[keep], V[keep]
            if idx.size == 0:
                break
            floor = 1e-8 * np.maximum(np.max(np.abs(lam), axis=1), 1e-300)
            inv = 1.0 / np.maximum(np.abs(lam), floor[:, None])
            step = np.einsum("bij,bj,bkj,bk->bi", V, inv, V, grad)  # |H|^-1 grad
            step *= np.minimum(1.0, 1.0 / np.maximum(np.max(np.abs(step), axis=1), 1e-300))[:, None]
            alpha = np.ones(idx.size)
            todo = np.ones(idx.size, dtype=bool)
            for _ls in range(40):
                trial = A[idx[todo]] + alpha[todo, None] * step[todo]
                new = self.exponent(trial, t)[0]
                good = new >= val[todo] - 1e-13 * (1.0 + np.abs(val[todo]))
                sub = np.flatnonzero(todo)
                A[idx[sub[good]]] = trial[good]
                alpha[sub[~good]] *= 0.5
                todo[sub[good]] = False
                if not todo.any():
                    break
            stalled = idx[todo]  # no step kept g from decreasing: judged below as they stand
            active[stalled] = False
        val, grad, M, hess = self.exponent(A, t, 2)
        finite = np.all(np.isfinite(grad), axis=1) & np.all(np.isfinite(hess), axis=(1, 2))
        hess = np.where(finite[:, None, None], hess, 0.0)
        ok = finite & (np.max(np.abs(grad), axis=1) < 1e-8) & (np.linalg.eigvalsh(hess)[:, -1] < 0)
        return A, ok, val, M

    def readout_law(self, t, centre, chol, nodes, jac=False):
        """The bulk readout law ``p(a) ∝ exp(g(a))`` on the rule ``a = centre + chol xi`` (xi the
        ``nodes``-point Gauss-Hermite product rule of a standard normal in m dimensions; exact for
        a Gaussian law with that mean and Cholesky factor). Returns a dict: ``W = log int
        exp(g(a)) da`` (whose gradient in t_c is ``n_c E[M_c(t a) a]``), ``B`` (k, m) =
        ``E[M_c(t a) a]`` (the bulk's part of the output on class c), ``mean`` (m,) = E[a],
        ``M`` (k,) = E[M_c(t a)] (the mean activation of a bulk neuron) and ``cov`` (m, m) =
        Cov[a]. With ``jac=True`` also ``dB`` (k, m, k, m), the derivative of B in t on the same
        rule: with ``D_c'(a) = n_c' M_c'(t a) a`` (the derivative of g in t_c'),

            dB_cj/dt_c'l = E[a_j a_l d^2 log Z/dh_c dh_c' / n_c] + Cov(M_c a_j, D_c'l)

        (the field rule's shift held fixed, as for the gradient M)."""
        m = t.shape[1]
        xi, logw = _product_rule(nodes, m)
        A = centre + xi @ chol.T
        lz, M, *hz = self.log_z(A @ t.T, 2 if jac else 1)
        val = -0.5 * self.P_s * np.sum(A * A, axis=1) + lz
        ell = logw + 0.5 * np.sum(xi * xi, axis=1) + val
        lse = float(special.logsumexp(ell))
        W = lse + float(np.sum(np.log(np.abs(np.diag(chol))))) + 0.5 * m * np.log(2.0 * np.pi)
        wt = np.exp(ell - lse)
        mean = wt @ A
        dA = A - mean
        B = np.einsum("n,nk,nm->km", wt, M, A)
        out = {"W": W, "B": B, "mean": mean, "M": wt @ M, "cov": (dA * wt[:, None]).T @ dA}
        if jac:
            D = (M * self.counts)[:, :, None] * A[:, None, :]  # (n, k, m)
            dB = np.einsum("n,ncd,nj,nl->cjdl", wt, hz[0] / self.counts[None, :, None], A, A)
            dB += np.einsum("n,nc,nj,ndl->cjdl", wt, M, A, D)
            dB -= B[:, :, None, None] * np.einsum("n,ndl->dl", wt, D)[None, None]
            out["dB"] = dB
        return out

    def hessian(self, a, t):
        """Hessian of g at a (m, m), analytic (:meth:`exponent` with ``order=2``)."""
        return self.exponent(a, t, 2)[3][0]

    def polish(self, a, t):
        """Newton from a to a maximum of g (gradient below 1e-10; at most 8 steps), or None when
        the Hessian is not negative definite on the way or the gradient stays above 1e-8."""
        for _ in range(8):
            _val, grad, _M, H = self.exponent(a, t, 2)
            if np.max(np.abs(grad[0])) < 1e-10:
                return a
            try:
                if np.linalg.eigvalsh(H[0]).max() >= 0:
                    return None
                a = a - np.linalg.solve(H[0], grad[0])
            except np.linalg.LinAlgError:
                return None
        return a if np.max(np.abs(self.exponent(a, t)[1])) < 1e-8 else None
