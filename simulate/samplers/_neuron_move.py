"""Exact single-neuron moves that change a neuron's code: one hidden layer, orthogonal inputs.

Why. At low temperature the sigmoid networks of seed 000 settle into codes (which classes a
neuron is active on), and local samplers (ULA, HMC) let a neuron change its code only through a
barrier that grows with P: at N = P = 500, T = 0.002 no neuron changed its code in 12 minutes of
Gibbs-HMC (docs/notes/validation_log.md). Part of that barrier is the readout: with the other neurons'
readouts held fixed, a neuron that changes its code breaks the fit on every training input. With
the other readouts integrated out, they re-fit the targets, and one proposal can take a neuron
from one code to another.

The collapsed conditional. The readout A is Gaussian given the hidden weights W (seed 000
Methods; :func:`sample_readout`), so it integrates out: each output column is
Y_r ~ N(0, Sigma), Sigma = kappa H^T H + I/beta, kappa = s^2 sigma_a2, H = phi(z) (N, P),
s = 1/N (non-lazy) or 1/sqrt(N) (lazy), beta = N/T or 1/T. With S = Sigma_{-i}^{-1}, the same
without neuron i, and h = phi(z_i) (P,), the law of neuron i's incoming weights w given the others
is (matrix determinant lemma and Sherman-Morrison)

    log p(w | W_{-i}) = -|w|^2/(2 sigma_w2) - (m/2) log(1 + kappa h^T S h)
                        + (kappa/2) |h^T S Y|^2 / (1 + kappa h^T S h) + const,

the marginal of p(w, a | W_{-i}) ∝ p0(w) p0(a) exp(s a·(h^T S Y) - (s^2/2)|a|^2 h^T S h) over the
neuron's readout a. With orthogonal training inputs (the orthogonal toy task, ``project_inputs=
True``: then the projected coordinates are diagonal) z_mu = d_mu w_mu, d_mu = R_mu,mu/sqrt(N0).

The move (on neuron i, with the other neurons' readouts integrated out):

* the state is extended by the neuron's readout a, drawn exactly from p(a | w, W_{-i}) =
  N(s g/(1/sigma_a2 + s^2 q), 1/(1/sigma_a2 + s^2 q)) with g = h^T S Y, q = h^T S h; the move
  is then an independence Metropolis-Hastings step on (w, a) for the target
  p(w, a | W_{-i}) above, and a is forgotten afterwards (A is redrawn at the end);
* proposal: a mixture over codes. Component k is a self-consistent (mean-field) pair: a readout
  a_k and the mean activations h0_k, iterated ``n_fixed_point`` times from a start readout (by
  default every sign pattern of R^m, so one start per code of the toy) as  h0 <- E_q[h],
  a_k <- s h0^T S Y / (1/sigma_a2 + s^2 E_q[h^T S h]).  Given a, the coordinates are independent:
  h^T S h is linearised around h0 (its fluctuation part replaced by the diagonal of S), which
  leaves, per coordinate mu, the 1-D log density
  f_mu(w) = -w^2/(2 sigma_w2) + l_mu phi(d w) - (s^2 |a|^2/2) S_mu,mu phi(d w)^2 with
  l_mu = s a·(S Y)_mu - s^2 |a|^2 [(S h0)_mu - S_mu,mu h0_mu]. The iteration uses a coarse grid
  of ``n_grid_fixed_point`` cells (piecewise-constant densities, float32: only the proposal's
  shape depends on it). The starts are then ranked by their evidence lower bounds
  E_q[log p] + H(q) (closed form on the coarse grid), starts that reached the same mean
  activations are dropped, and the best ``max_components`` are kept, weighted by the same bounds.
  Each kept component proposes the readout from a Gaussian around a_k whose precision is the
  Laplace precision of the readout's marginal, (1/sigma_a2 + s^2 E[q]) I -
  s^2 sum_mu Var_q(h_mu) (S Y)_mu (S Y)_mu^T, inflated by 1.2^2, and then every coordinate from
  f_mu at that readout on a grid of ``n_grid`` cells over [-h sigma_w, h sigma_w]: inside each
  cell the proposal's log density interpolates f_mu linearly between the cell's edges (a
  truncated exponential, drawn by inverse CDF; cell masses in closed form), which follows the
  target far more closely than a histogram of the same cells (acceptance at N = P = 500 in
  docs/benchmarks.md). Everything depends on the other neurons only (through S), as
  an independence proposal must;
* accept with min(1, r), r = p(w', a') q(w, a) / (p(w, a) q(w', a')), with the exact target
  density and the exact mixture density. So the move leaves the posterior invariant whatever the
  starts, iterations and grid; they only set the acceptance rate. A current w outside the grid
  has q = 0 and its proposals are rejected (the other moves of a sweep keep the chain
  irreducible).

Neurons are visited in turn (a deterministic scan of kernels that each leave p(W) invariant);
Sigma^{-1} follows each acceptance by two rank-one updates (O(P^2)), and is refactorised at the
start of every sweep. After the sweep the readout is drawn exactly from p(A | W), so the returned
state is a joint draw. Cost per neuron: n_fixed_point + 1 coarse tables (E, K, P,
n_grid_fixed_point) and products with S (E, K, P) x (P, P) for the K starts, then 3 fine tables of
at most (E, max_components, P, n_grid + 1) and the O(P^2) update. ReLU outliers, whose
preactivations are of order sqrt(N), lie outside the grid and are left to the other moves.
"""

from __future__ import annotations

import itertools
import math

import torch

from ..checks import check_alloc, check_count, check_generator, check_generator_on, check_pos_float
from ..models._network_posterior import NetworkPosterior, check_beta
from ._gibbs import sample_readout

__all__ = ["sample_neuron_codes", "CODE_MOVE_MAX_M"]

#: largest m for the default start readouts (every sign pattern: 2^m proposal components)
CODE_MOVE_MAX_M = 4
_INFLATE = 1.2 ** 2  # variance inflation of the readout proposal


def _check_move_posterior(posterior):
    if not isinstance(posterior, NetworkPosterior):
        raise TypeError(f"posterior must be a NetworkPosterior, got {type(posterior).__name__}")
    if posterior.spec.L != 1:
        raise ValueError(f"the neuron code move needs one hidden layer; posterior.spec.L is "
                         f"{posterior.spec.L}")
    if not posterior.orthogonal_inputs:
        raise ValueError("the neuron code move needs orthogonal training inputs and a posterior built "
                         "with project_inputs=True (then a neuron's preactivations are independent "
                         "coordinates); these inputs are not orthogonal or not projected")


def _start_readouts(readouts, m, device):
    if readouts is None:
        if m > CODE_MOVE_MAX_M:
            raise ValueError(f"readouts=None starts one proposal component per sign pattern (2^m); "
                             f"with m = {m} > {CODE_MOVE_MAX_M} pass readouts= (K, m) start readouts")
        return torch.tensor(list(itertools.product((1.0, -1.0), repeat=m)), dtype=torch.float64,
                            device=device)
    if not torch.is_tensor(readouts):
        raise TypeError(f"readouts must be None or a (K, m) tensor of start readouts, got "
                        f"{type(readouts).__name__}")
    if readouts.ndim != 2 or readouts.shape[1] != m or readouts.shape[0] < 1:
        raise ValueError(f"readouts must have shape (K, m) with m = {m} and K >= 1, got "
                         f"{tuple(readouts.shape)}")
    a = readouts.detach().to(device=device, dtype=torch.float64)
    if not bool(torch.isfinite(a).all()):
        raise ValueError("readouts must be finite")
    return a


def sample_neuron_codes(posterior, theta: torch.Tensor, *, generator: torch.Generator, beta=None,
                        readouts=None, n_fixed_point: int = 8, n_grid: int = 64,
                        n_grid_fixed_point: int = 16, max_components: int | None = 2,
                        grid_halfwidth: float = 6.0):
    """One sweep of exact single-neuron moves over all N neurons, then an exact readout draw.

    Parameters
    ----------
    posterior : NetworkPosterior with L = 1 built with ``project_inputs=True`` on orthogonal
        training inputs (the orthogonal toy task); any activation and regime.
    theta : (E, D) parameters of the posterior's dtype and device; not modified.
    generator : torch.Generator on theta's device type.
    beta : likelihood weight: None (``posterior.beta``), a number > 0 or an (E,) tensor.
    readouts : start readouts of the proposal components, (K, m); default None: every sign
        pattern (+-1, ..., +-1), for m <= :data:`CODE_MOVE_MAX_M`.
    n_fixed_point : iterations of each component's self-consistent readout (>= 1).
    n_grid : cells of the histogram proposal of each incoming weight (>= 8; ValueError when the
        proposals' (n_grid, E, components, P) work arrays would exceed 16 GiB).
    n_grid_fixed_point : cells of the coarser histograms used while the components' readouts are
        iterated and ranked (>= 8).
    max_components : the proposal keeps at most this many components per neuron (>= 1): the
        starts are ranked by their evidence lower bounds on the coarse grid, duplicates (starts
        that reached the same mean activations) are dropped, and the best ``max_components`` are
        kept; None keeps every start.
    grid_halfwidth : the grids cover [-h sigma_w, h sigma_w] (> 0).

    Returns ``(theta_new, acceptance)``: a copy of ``theta`` after the sweep (hidden weights moved,
    readout drawn from p(A | W)) and the (E,) fraction of neurons whose proposal was accepted.
    Non-finite chains are left as they are. The move is exact for any settings (module doc);
    they only change the acceptance rate and the cost.
    """
    _check_move_posterior(posterior)
    check_generator(generator)
    n_fp = check_count("n_fixed_point", n_fixed_point, minimum=1)
    n_grid = check_count("n_grid", n_grid, minimum=8)
    n_grid_fp = check_count("n_grid_fixed_point", n_grid_fixed_point, minimum=8)
    k_max = None if max_components is None else check_count("max_components", max_components, minimum=1)
    h = check_pos_float("grid_halfwidth", grid_halfwidth, noun="number")
    theta = posterior._theta(theta)
    check_generator_on(generator, theta.device, what="theta")
    E = theta.shape[0]
    dt, dev, f64 = theta.dtype, theta.device, torch.float64
    b = check_beta(beta, E, dtype=f64, device=dev)
    b_all = torch.full((E,), posterior.beta if b is None else b, dtype=f64, device=dev) \
        if not torch.is_tensor(b) else b
    N, P = posterior.spec.N, posterior.P
    start = _start_readouts(readouts, posterior.spec.m, dev)
    k_max = start.shape[0] if k_max is None else min(k_max, start.shape[0])
    check_alloc(f"n_grid={n_grid} (n_grid_fixed_point={n_grid_fp}) with E={E} chains, P={P} inputs",
                6 * max(n_grid, n_grid_fp) * E * max(k_max, 1) * (P + 2),
                what="the histogram proposals' (cells, E, components, P) work arrays")
    new = theta.clone()
    W = posterior.unflatten(new)["W1"]                        # (E, N, P) view
    sweep = _Sweep(posterior, W, torch.isfinite(new).all(1), b_all, start, n_fp=n_fp, k_max=k_max,
                   grids=(n_grid, n_grid_fp, h), generator=generator)
    for i in range(N):
        sweep.move(i)
    W.copy_(torch.where(sweep.finite[:, None, None], sweep.W64.to(dt), W))
    new = sample_readout(posterior, new, generator=generator,
                         beta=None if beta is None else (b if not torch.is_tensor(b) else b.to(dt)))
    return new, (sweep.accepted / N).to(dt)


class _Sweep:
    """One sweep of :func:`sample_neuron_codes`: its running state and the moves' constants."""

    def __init__(self, posterior, W, finite, b_all, start, *, n_fp, k_max, grids, generator):
        f64, dev = torch.float64, W.device
        n_grid, n_grid_fp, h = grids
        self.dev = dev
        self.E, self.m, P = W.shape[0], posterior.spec.m, posterior.P
        self.start, self.n_fp, self.k_max, self.generator = start, n_fp, k_max, generator
        self.s = s = posterior.spec.readout_scale
        self.sw = sw = math.sqrt(posterior.sigma_w2)
        self.inv_sa2 = 1.0 / posterior.sigma_a2
        self.kappa = kappa = s * s * posterior.sigma_a2
        self.d = d = posterior._X1_diag.to(f64)
        self.phi = phi = posterior.phi
        self.Y = Y = posterior.Y.to(f64)
        self.finite = finite
        self.W64 = torch.where(finite[:, None, None], W.to(f64), torch.zeros((), dtype=f64, device=dev))
        self.fine = _Grid(n_grid, h, phi, d, sw)
        self.coarse = _Grid(n_grid_fp, h, phi, d, sw, moments_dtype=torch.float32)
        self.H = H = phi(self.W64 * d)                            # (E, N, P)
        self.Sinv = torch.cholesky_inverse(torch.linalg.cholesky(
            kappa * H.transpose(1, 2) @ H + torch.eye(P, dtype=f64, device=dev) / b_all[:, None, None]))
        self.SinvY = self.Sinv @ Y                                # (E, P, m)
        self.eye_m = torch.eye(self.m, dtype=f64, device=dev)
        self.ar = torch.arange(self.E, device=dev)
        self.accepted = torch.zeros(self.E, dtype=f64, device=dev)

    def move(self, i: int) -> None:
        """The exact move of neuron i in every chain (module doc)."""
        s, sw, inv_sa2, fine = self.s, self.sw, self.inv_sa2, self.fine
        w_old, h_old = self.W64[:, i].clone(), self.H[:, i].clone()
        cav, hv, vY = self._cavity(h_old)
        # the auxiliary readout of neuron i, exactly from p(a | w, W_{-i})
        q_old = hv / cav.den
        g_old = torch.einsum("ep,epm->em", h_old, cav.SY)
        prec = inv_sa2 + s * s * q_old
        a_aux = (s * g_old / prec[:, None]
                 + torch.randn(self.E, self.m, generator=self.generator, device=self.dev,
                               dtype=torch.float64) / prec.sqrt()[:, None])
        comps = _components(cav, self.start, self.n_fp, inv_sa2, self.coarse, self.k_max)
        a_new, w_new, f_new = self._propose(cav, comps)
        h_new = self.phi(w_new * self.d)
        un = cav.S_times(h_new)                                 # S h', reused by the update
        q_new = (h_new * un).sum(1)
        g_new = torch.einsum("ep,epm->em", h_new, cav.SY)
        log_r = (_log_joint(a_new, w_new, g_new, q_new, s, sw, inv_sa2)
                 - _log_proposal(cav, comps, a_new, w_new, fine, f_new)
                 - _log_joint(a_aux, w_old, g_old, q_old, s, sw, inv_sa2)
                 + _log_proposal(cav, comps, a_aux, w_old, fine))
        r = torch.rand(self.E, generator=self.generator, device=self.dev, dtype=torch.float64)
        acc = (torch.log(r) < log_r) & self.finite             # NaN or -inf: rejected
        if bool(acc.any()):
            self._accept(i, acc, cav, vY, un, q_new, g_new, (w_new, h_new), (w_old, h_old))
        self.accepted += acc.to(torch.float64)

    def _cavity(self, h_old):
        """The cavity of activations ``h_old``, with h^T Sigma^{-1} h and v^T Y (v = Sigma^{-1} h)."""
        kappa, Sinv = self.kappa, self.Sinv
        # S = Sigma_{-i}^{-1} = Sigma^{-1} + kappa v v^T / den  (Sherman-Morrison downdate)
        v = (Sinv @ h_old[..., None])[..., 0]
        hv = (h_old * v).sum(1)
        den = (1.0 - kappa * hv).clamp_min(1e-12)
        vY = (v[..., None] * self.Y).sum(1)                             # (E, m)
        SY = self.SinvY + kappa * v[..., None] * (vY / den[:, None])[:, None, :]
        Sdiag = torch.diagonal(Sinv, dim1=1, dim2=2) + kappa * v.square() / den[:, None]
        return _Cavity(Sinv, v, den, kappa, SY, Sdiag, self.s), hv, vY

    def _propose(self, cav, comps):
        """Draw a component, a' around it, then w': ``(a', w', f')``, f' every component's tables."""
        a_k, _, _, chol_p, log_pi = comps
        E, m, ar, g = self.E, self.m, self.ar, self.generator
        kk = torch.multinomial(torch.exp(log_pi), 1, generator=g)[:, 0]
        chol_c = math.sqrt(_INFLATE) * torch.linalg.solve_triangular(
            chol_p[ar, kk].transpose(-1, -2), self.eye_m.expand(E, m, m), upper=True)
        xi = torch.randn(E, m, 1, generator=g, device=self.dev, dtype=torch.float64)
        a_new = a_k[ar, kk] + (chol_c @ xi)[..., 0]
        # every component's tables at a': the drawn component's slice is the draw's density
        f_new, mass_new = _tables_at(cav, comps, a_new, self.fine)
        w_new = self.fine.draw(f_new[:, ar, kk][:, :, None], mass_new[:, ar, kk][:, :, None], g)
        return a_new, w_new, f_new

    def _accept(self, i, acc, cav, vY, un, q_new, g_new, new, old):
        """Set neuron i to ``new`` where ``acc`` (else ``old``) and update Sigma^{-1}, Sigma^{-1} Y."""
        kappa, den, v = self.kappa, cav.den, cav.v
        # Sigma'^{-1} = S - kappa u u^T / (1 + kappa h'^T S h'),  u = S h',  S = Sigma^{-1} +
        # kappa v v^T / den: one rank-2 update in place (zero for the rejected chains)
        c1 = torch.where(acc, kappa / den, torch.zeros_like(den))
        c2 = torch.where(acc, -kappa / (1.0 + kappa * q_new), torch.zeros_like(den))
        vu = torch.stack([v, un], -1)                                # (E, P, 2)
        self.Sinv.baddbmm_(vu, torch.stack([c1[:, None] * v, c2[:, None] * un], 1))
        self.SinvY.baddbmm_(vu, torch.stack([c1[:, None] * vY, c2[:, None] * g_new], 1))
        self.W64[:, i] = torch.where(acc[:, None], new[0], old[0])
        self.H[:, i] = torch.where(acc[:, None], new[1], old[1])


class _Grid:
    """The cells of the coordinates' proposals: n cells of width delta (in units of sigma_w) over
    [-h, h]. A coordinate's proposal density is log-linear inside each cell, interpolating the
    log density between the cell's edges (so it is continuous and exact where the log density is
    linear), a truncated exponential per cell; the moments used to build the proposal take the
    cheaper piecewise-constant version at the cells' centres."""

    def __init__(self, n, h, phi, d, sw, moments_dtype=None):
        self.n, self.h, self.sw = n, h, sw
        self.delta = 2.0 * h / n
        edges = -h + torch.arange(n + 1, device=d.device, dtype=d.dtype) * self.delta
        zeta = 0.5 * (edges[1:] + edges[:-1])                          # centres
        # the piecewise-constant densities of :meth:`moments`, grid dimension first (reductions over
        # it are then elementwise passes), in moments_dtype: they only shape the proposal
        mdt = d.dtype if moments_dtype is None else moments_dtype
        self._PhiT = phi(d[None, :] * (sw * zeta)[:, None]).reshape(n, 1, 1, -1).to(mdt)
        self._Phi2T = self._PhiT.square()
        self._lpT = (-0.5 * zeta.square()).reshape(n, 1, 1, 1).to(mdt)
        self._z2T = zeta.square().reshape(n, 1, 1, 1).to(mdt)
        self._Phi_eT = phi(d[None, :] * (sw * edges)[:, None]).reshape(n + 1, 1, 1, -1)
        self._Phi2_eT = self._Phi_eT.square()
        self._lp_eT = (-0.5 * edges.square()).reshape(n + 1, 1, 1, 1)
        self.log_cell = d.shape[0] * math.log(sw * self.delta)

    def moments(self, lin, quad, entropy=False):
        """Piecewise-constant densities at the centres for coefficients lin, quad (E, K, P) of
        phi and -phi^2: the mean and second moment of phi (E, K, P); with ``entropy``, also
        E_q[|w|^2] / sigma_w2 and the entropy of the coordinates' cell distributions, (E, K)."""
        dt = lin.dtype
        lin, quad = lin.to(self._PhiT.dtype), quad.to(self._PhiT.dtype)
        lf = torch.addcmul(self._lpT, lin, self._PhiT)                  # (n, E, K, P)
        lf.addcmul_(quad, self._Phi2T, value=-1.0)
        lf -= lf.amax(0)
        lf.clamp_min_(-80.0)  # cells below e^-80 of the peak are empty; exp's slow path avoided
        pr = lf.exp()
        z = pr.sum(0)
        m1, m2 = (pr * self._PhiT).sum(0) / z, (pr * self._Phi2T).sum(0) / z
        if not entropy:
            return m1.to(dt), m2.to(dt)
        pr /= z
        lf -= z.log()
        return (m1.to(dt), m2.to(dt), (pr * self._z2T).sum(0).sum(-1).to(dt),
                -(pr * lf).sum(0).sum(-1).to(dt))

    def log_edges(self, lin, quad):
        """The proposal's log densities at the edges for coefficients lin, quad (E, K, P),
        f (n + 1, E, K, P), normalised so that the cells' masses int exp(f) dzeta / delta sum to
        one, and the cells' masses (n, E, K, P)."""
        f = torch.addcmul(self._lp_eT, lin, self._Phi_eT)
        f.addcmul_(quad, self._Phi2_eT, value=-1.0)
        f -= f.amax(0)
        # a floor far below the peak keeps exp off its slow path (underflow); the draw and the
        # density both use the floored f, so they stay one and the same proposal
        f.clamp_min_(-600.0)
        # a cell's mass (e^{f_j+1} - e^{f_j}) / (f_j+1 - f_j), its limit e^{f_j} (1 + x/2) for a
        # flat cell; the difference loses ~1e-16 / |x| relative accuracy (<= 1e-10 here)
        ef = f.exp()
        x = f[1:] - f[:-1]
        flat = x.abs() < 1e-6
        mass = torch.where(flat, ef[:-1] * (1.0 + 0.5 * x),
                           (ef[1:] - ef[:-1]) / torch.where(flat, torch.ones_like(x), x))
        z = mass.sum(0)
        return f - z.log(), mass / z

    def draw(self, f, mass, generator):
        """A draw (E, P) from the densities of :meth:`log_edges` with K = 1: a cell by inverse
        CDF, then the point inside it by the truncated exponential's inverse CDF."""
        G, E, _, P = mass.shape
        cdf = mass[:, :, 0].permute(1, 2, 0).cumsum(-1)                 # (E, P, n)
        cdf = cdf / cdf[..., -1:]
        u = torch.rand(E, P, 1, generator=generator, device=mass.device, dtype=mass.dtype)
        k = torch.searchsorted(cdf, u).clamp_(max=G - 1)[..., 0]        # (E, P)
        u2 = torch.rand(E, P, generator=generator, device=mass.device, dtype=mass.dtype)
        f = f[:, :, 0]
        slope = f.gather(0, (k + 1)[None])[0] - f.gather(0, k[None])[0]
        t = torch.where(slope > 0, 1.0 + torch.log(u2 + (1.0 - u2) * torch.exp(-slope)) / slope,
                        torch.log1p(u2 * torch.expm1(slope)) / slope)
        t = torch.where(slope.abs() < 1e-12, u2, t).clamp_(0.0, 1.0)
        return self.sw * (-self.h + self.delta * (k + t))

    def log_density(self, f, w):
        """log q(w) (E, K) summed over the P coordinates of w (E, P) for the edge log densities
        f (n + 1, E, K, P) of :meth:`log_edges`; -inf outside the grid."""
        x = (w / self.sw + self.h) / self.delta
        k = torch.floor(x)
        inside = ((k >= 0) & (k < self.n)).all(1)
        k = k.clamp(0, self.n - 1)
        t = (x - k)[:, None]                                            # (E, 1, P)
        idx = k.long()[None, :, None].expand(1, *f.shape[1:])
        lo, hi = f.gather(0, idx)[0], f.gather(0, idx + 1)[0]
        out = (lo + t * (hi - lo)).sum(-1) - self.log_cell
        return torch.where(inside[:, None], out, torch.full_like(out, -math.inf))


class _Cavity:
    """The other neurons' view of neuron i: S = Sigma_{-i}^{-1} (through Sigma^{-1} and the
    downdate vector v), S Y and diag S; s is the readout scale."""

    def __init__(self, Sinv, v, den, kappa, SY, Sdiag, s):
        self.Sinv, self.v, self.den, self.kappa, self.SY, self.Sdiag = Sinv, v, den, kappa, SY, Sdiag
        self.s = s

    def S_times(self, x):
        """S x for x of shape (E, ..., P)."""
        E, P = x.shape[0], x.shape[-1]
        xf = x.reshape(E, -1, P)
        out = xf @ self.Sinv + self.kappa * (
            (xf * self.v[:, None]).sum(-1) / self.den[:, None])[..., None] * self.v[:, None]
        return out.reshape(x.shape)

    def coefficients(self, a, h0, Sh0):
        """The coefficients (lin, quad), each (E, K, P), of phi and -phi^2 in the log density of
        each coordinate's proposal at readouts a (E, K, m), h^T S h linearised around h0
        (E, K, P) (module doc), given Sh0 = S h0."""
        s = self.s
        c = s * s * a.square().sum(-1)                                  # (E, K)
        lin = (s * torch.einsum("ekm,epm->ekp", a, self.SY)
               - c[..., None] * (Sh0 - self.Sdiag[:, None] * h0))
        return lin, 0.5 * c[..., None] * self.Sdiag[:, None]


def _log_joint(a, w, g, q, s, sw, inv_sa2):
    """log p(w, a | W_{-i}) up to a constant (module doc), given g = h^T S Y and q = h^T S h."""
    a2 = a.square().sum(1)
    return (-0.5 * w.square().sum(1) / sw ** 2 - 0.5 * a2 * inv_sa2 + s * (a * g).sum(1)
            - 0.5 * s * s * a2 * q)


def _weigh(cav, a_k, moments, Sm1, inv_sa2, log_cell):
    """Cholesky factors of the components' readout precisions (E, K, m, m) and their evidence lower
    bounds (E, K) (-inf where not finite), from the coordinates' ``moments`` at readouts a_k
    (:meth:`_Grid.moments` with entropy) on a grid of P log(cell volume) ``log_cell``; Sm1 = S m1."""
    s = cav.s
    m = a_k.shape[-1]
    m1, m2, e_z2, ent = moments
    var_h = (m2 - m1.square()).clamp_min(0.0)
    e_q = (m1 * Sm1).sum(-1) + (cav.Sdiag[:, None] * var_h).sum(-1)
    # Laplace precision of the readout's marginal: the conditional precision minus the variance
    # of the linear term s h^T S Y under the coordinates' proposals
    eye_m = torch.eye(m, dtype=a_k.dtype, device=a_k.device)
    prec_a = ((inv_sa2 + s * s * e_q)[..., None, None] * eye_m
              - s * s * torch.einsum("ekp,epm,epn->ekmn", var_h, cav.SY, cav.SY))
    chol_p, info = torch.linalg.cholesky_ex(prec_a)
    bad = info != 0
    if bool(bad.any()):
        chol_p = torch.where(bad[..., None, None],
                             torch.linalg.cholesky((inv_sa2 + s * s * e_q)[..., None, None] * eye_m), chol_p)
    # evidence lower bounds E_q[log p] + H(q) of the components, in closed form
    a2 = a_k.square().sum(-1)
    e_g = torch.einsum("ekp,epm->ekm", m1, cav.SY)
    e_logp0w = -0.5 * e_z2
    ent_w = ent + log_cell
    elbo = (-0.5 * a2 * inv_sa2 + s * (a_k * e_g).sum(-1) - 0.5 * s * s * a2 * e_q + e_logp0w + ent_w
            - torch.log(torch.diagonal(chol_p, dim1=-2, dim2=-1)).sum(-1))
    return chol_p, torch.where(torch.isfinite(elbo), elbo, torch.full_like(elbo, -math.inf))


def _select(h0, elbo, k_max, rtol=0.05):
    """Indices (E, k_max) of the best components by ``elbo``, skipping any whose mean activations
    h0 lie within ``rtol`` (mean absolute difference relative to the mean magnitude) of a better
    one already kept, and whether each selected index is a kept one (E, k_max); the best is always
    kept."""
    E, K, _ = h0.shape
    order = torch.argsort(elbo, 1, descending=True)
    ho = h0.gather(1, order[..., None].expand_as(h0))
    size = ho.abs().mean(-1)                                            # (E, K)
    keep = torch.zeros(E, K, dtype=torch.bool, device=h0.device)
    keep[:, 0] = True
    for j in range(1, K):
        diff = (ho[:, :j] - ho[:, j:j + 1]).abs().mean(-1)             # (E, j)
        close = diff <= rtol * 0.5 * (size[:, :j] + size[:, j:j + 1])
        keep[:, j] = ~(close & keep[:, :j]).any(1) & (keep[:, :j].sum(1) < k_max)
    pos = torch.arange(K, device=h0.device).expand(E, K)
    first = torch.argsort(torch.where(keep, pos, pos + K), 1)[:, :k_max]
    return order.gather(1, first), keep.gather(1, first)


def _components(cav, start, n_fp, inv_sa2, coarse, k_max):
    """The proposal's components: self-consistent readouts a_k (E, k, m), mean activations h0
    (E, k, P) and S h0, Cholesky factors of the readout precisions (E, k, m, m) and log weights
    (E, k), k = k_max. The readouts are iterated on the coarse grid from every start; the moments
    at the final readouts give h0 and the weights, by which the starts are ranked and deduplicated
    (:func:`_select`)."""
    s = cav.s
    E, P = cav.SY.shape[0], cav.SY.shape[1]
    K, m = start.shape
    a_k = start[None].expand(E, K, m)
    h0 = Sh0 = torch.zeros(E, K, P, dtype=start.dtype, device=start.device)
    for it in range(n_fp + 1):
        mom = coarse.moments(*cav.coefficients(a_k, h0, Sh0), entropy=it == n_fp)
        h0, h2 = mom[0], mom[1]
        Sh0 = cav.S_times(h0)
        if it < n_fp:
            q = (h0 * Sh0).sum(-1) + (cav.Sdiag[:, None] * (h2 - h0.square())).sum(-1)
            a_k = s * torch.einsum("ekp,epm->ekm", h0, cav.SY) / (inv_sa2 + s * s * q)[..., None]
    chol_p, elbo = _weigh(cav, a_k, mom, Sh0, inv_sa2, coarse.log_cell)
    if k_max < K:
        idx, valid = _select(h0, elbo, k_max)
        a_k = a_k.gather(1, idx[..., None].expand(E, k_max, m))
        h0 = h0.gather(1, idx[..., None].expand(E, k_max, P))
        Sh0 = Sh0.gather(1, idx[..., None].expand(E, k_max, P))
        chol_p = chol_p.gather(1, idx[..., None, None].expand(E, k_max, m, m))
        elbo = torch.where(valid, elbo.gather(1, idx), torch.full_like(idx, -math.inf, dtype=elbo.dtype))
    return a_k, h0, Sh0, chol_p, torch.log_softmax(elbo, 1)


def _tables_at(cav, comps, a, grid):
    """The coordinates' proposal tables (:meth:`_Grid.log_edges`) of every component at readout
    a (E, m)."""
    _, h0, Sh0, _, _ = comps
    E, K, _ = h0.shape
    return grid.log_edges(*cav.coefficients(a[:, None].expand(E, K, a.shape[1]), h0, Sh0))


def _log_proposal(cav, comps, a, w, grid, f=None):
    """log q(a, w) of the mixture proposal; -inf for w outside the grid. ``f``: the edge log
    densities of :func:`_tables_at` at a, if already computed."""
    a_k, _, _, chol_p, log_pi = comps
    m = a.shape[1]
    lw = grid.log_density(_tables_at(cav, comps, a, grid)[0] if f is None else f, w)
    # N(a; a_k, _INFLATE prec^{-1}) with prec = chol_p chol_p^T
    r = ((chol_p.transpose(-1, -2) @ (a[:, None] - a_k)[..., None])[..., 0]).square().sum(-1)
    la = (-0.5 * r / _INFLATE + torch.log(torch.diagonal(chol_p, dim1=-2, dim2=-1)).sum(-1)
          - 0.5 * m * math.log(2 * math.pi * _INFLATE))
    return torch.logsumexp(log_pi + la + lw, 1)
