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
from scipy import optimize, special

from ._deep_middle import _product_rule

__all__: list[str] = []

_CHUNK = 2_000_000  # elements per block of (tilts x g-nodes) in log_z


def _psi_shifted(h, g, s):
    """``psi_s(h, g, s) = log E exp(h relu(g + sqrt(s) xi))`` (xi ~ N(0, 1)) and its derivative
    ``M = d psi/dh = <relu>`` (the tilted mean activation), element-wise, in log space:
    ``psi_s = log[Phi_N(-g/sqrt s) + exp(h g + h^2 s/2) Phi_N((g + h s)/sqrt s)]``."""
    sig = np.sqrt(s)
    u = g / sig
    log_a = special.log_ndtr(-u)
    log_b = h * g + 0.5 * h * h * s + special.log_ndtr(u + h * sig)
    log_sum = np.logaddexp(log_a, log_b)
    p = np.exp(log_b - log_sum)
    dens = np.exp(-0.5 * u * u - 0.5 * np.log(2.0 * np.pi) - log_sum)
    return log_sum, (g + h * s) * p + sig * dens


class _BlockBulk:
    """``log Z(h)`` and the tilted mean activations M_c of the class-block bulk integral by a
    product Gauss-Hermite rule (``nodes`` per dimension) over the class fields g ~ N(0, q) on
    the range of q; the bulk exponent g(a) and its maxima."""

    def __init__(self, counts, s, q, P_s, nodes):
        self.counts, self.s, self.P_s = np.asarray(counts, float), s, P_s
        lam, V = np.linalg.eigh(q)
        keep = lam > 1e-12 * max(float(lam.max(initial=0.0)), float(s.max()))
        self.eta, self.logw = _product_rule(nodes, int(keep.sum()))
        self.Lq = V[:, keep] * np.sqrt(lam[keep])  # q = Lq Lq^T on its range
        self.G = self.eta @ self.Lq.T  # (n_g, k) class fields
        self.shifts = 0  # mean shifts of the field rule per tilt (see log_z)
        self.a_prev = None

    def log_z(self, H):
        """(log Z (n,), M (n, k)) for tilts H (n, k). With ``self.shifts`` = s > 0 the rule over
        the class fields is moved, per tilt, s times onto the tilted mean of the fields
        (``g = Lq (u + eta)``, weights times the prior ratio ``exp(-u.eta - |u|^2/2)``): a large
        tilt moves the integrand's mass by about ``q (n h)``, many prior widths, where a rule
        on the prior alone does not resolve it."""
        H = np.atleast_2d(H)
        lz = np.empty(H.shape[0])
        M = np.empty(H.shape)
        step = max(1, _CHUNK // (self.G.size + 1))
        for i in range(0, H.shape[0], step):
            h = H[i:i + step, None, :]
            u = np.zeros((h.shape[0], self.eta.shape[1]))
            for it in range(self.shifts + 1):
                G = self.G[None] + (u @ self.Lq.T)[:, None, :] if it else self.G[None]
                psi, Mg = _psi_shifted(h, G, self.s)  # (b, n_g, k)
                ell = self.logw + psi @ self.counts
                if it:  # prior ratio of the shifted rule (u = 0 before the first shift)
                    ell = ell - u @ self.eta.T - 0.5 * np.sum(u * u, axis=1)[:, None]
                lzb = special.logsumexp(ell, axis=1)
                wt = np.exp(ell - lzb[:, None])
                if it < self.shifts:
                    u = u + wt @ self.eta
            lz[i:i + step] = lzb
            M[i:i + step] = np.einsum("bn,bnk->bk", wt, Mg)
        return lz, M

    def exponent(self, A, t):
        """Bulk exponent ``g(a) = -P_s|a|^2/2 + log Z(t a)`` (n,), its gradient (n, m), M (n, k)."""
        A = np.atleast_2d(A)
        lz, M = self.log_z(A @ t.T)
        val = -0.5 * self.P_s * np.sum(A * A, axis=1) + lz
        return val, -self.P_s * A + (self.counts * M) @ t, M

    def maxima(self, t, extra=()):
        """Local maxima [(a, g(a), M)] of the bulk exponent from several starts (the last a_0,
        0, half the single-class readouts n_c t_c / P_s, and ``extra``; BFGS, then Newton), best
        first; gradient below 1e-10."""
        m = t.shape[1]
        starts = [np.zeros(m), *(0.5 * self.counts[c] * t[c] / self.P_s for c in range(len(t))),
                  *extra]
        if self.a_prev is not None:
            starts.insert(0, self.a_prev)
        found = []
        for a in starts:
            res = optimize.minimize(lambda x: tuple(-np.squeeze(v) for v in
                                                    self.exponent(x, t)[:2]),
                                    a, jac=True, method="BFGS", options={"gtol": 1e-9})
            a = self.polish(res.x, t)
            if a is None or any(np.max(np.abs(a - f[0])) < 1e-6 for f in found):
                continue
            val, _, M = self.exponent(a, t)
            found.append((a, float(val[0]), M[0]))
        found.sort(key=lambda f: -f[1])
        if found:
            self.a_prev = found[0][0]
        return found

    def readout_law(self, t, centre, chol, nodes):
        """The bulk readout law ``p(a) ∝ exp(g(a))`` on the rule ``a = centre + chol xi`` (xi the
        ``nodes``-point Gauss-Hermite product rule of a standard normal in m dimensions; exact for
        a Gaussian law with that mean and Cholesky factor). Returns a dict: ``W = log int
        exp(g(a)) da`` (whose gradient in t_c is ``n_c E[M_c(t a) a]``), ``B`` (k, m) =
        ``E[M_c(t a) a]`` (the bulk's part of the output on class c), ``mean`` (m,) = E[a],
        ``M`` (k,) = E[M_c(t a)] (the mean activation of a bulk neuron) and ``cov`` (m, m) =
        Cov[a]."""
        m = t.shape[1]
        xi, logw = _product_rule(nodes, m)
        A = centre + xi @ chol.T
        val, _, M = self.exponent(A, t)
        ell = logw + 0.5 * np.sum(xi * xi, axis=1) + val
        lse = float(special.logsumexp(ell))
        W = lse + float(np.sum(np.log(np.abs(np.diag(chol))))) + 0.5 * m * np.log(2.0 * np.pi)
        wt = np.exp(ell - lse)
        mean = wt @ A
        dA = A - mean
        return {"W": W, "B": np.einsum("n,nk,nm->km", wt, M, A), "mean": mean, "M": wt @ M,
                "cov": (dA * wt[:, None]).T @ dA}

    def hessian(self, a, t, eps=1e-5):
        """Hessian of g at a by central differences of the analytic gradient (m, m)."""
        m = a.size
        E = eps * np.eye(m)
        grads = self.exponent(np.vstack([a + E, a - E]), t)[1]
        Hs = (grads[:m] - grads[m:]) / (2 * eps)
        return 0.5 * (Hs + Hs.T)

    def polish(self, a, t):
        """Newton from a to a maximum of g (gradient below 1e-10; at most 8 steps), or None when
        the Hessian is not negative definite on the way or the gradient stays above 1e-8."""
        for _ in range(8):
            grad = self.exponent(a, t)[1][0]
            if np.max(np.abs(grad)) < 1e-10:
                return a
            H = self.hessian(a, t)
            try:
                if np.linalg.eigvalsh(H).max() >= 0:
                    return None
                a = a - np.linalg.solve(H, grad)
            except np.linalg.LinAlgError:
                return None
        return a if np.max(np.abs(self.exponent(a, t)[1])) < 1e-8 else None
