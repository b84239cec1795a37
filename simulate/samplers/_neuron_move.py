"""Exact single-neuron moves that change a neuron's code: one hidden layer, orthogonal inputs.

Why. At low temperature the sigmoid networks of seed 000 settle into codes (which classes a
neuron is active on), and local samplers (ULA, HMC) let a neuron change its code only through a
barrier that grows with P: at N = P = 500, T = 0.002 no neuron changed its code in 12 minutes of
Gibbs-HMC (docs/validation.md). Part of that barrier is the readout: with the other neurons'
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
* proposal: a mixture with one component per code. Component k is a self-consistent
  (mean-field) pair: a readout a_k and the mean activations h0_k, iterated ``n_fixed_point``
  times from a start readout (by default every sign pattern of R^m, so one start per code of
  the toy) as  h0 <- E_q[h],  a_k <- s h0^T S Y / (1/sigma_a2 + s^2 E_q[h^T S h]).  Given a, the
  coordinates are independent: h^T S h is linearised around h0 (its fluctuation part replaced by
  the diagonal of S), which leaves, per coordinate mu, the 1-D density
  exp(-w^2/(2 sigma_w2) + l_mu phi(d w) - (s^2 |a|^2/2) S_mu,mu phi(d w)^2) with
  l_mu = s a·(S Y)_mu - s^2 |a|^2 [(S h0)_mu - S_mu,mu h0_mu]; it is tabulated on a grid of
  ``n_grid`` cells over [-h sigma_w, h sigma_w] (cell probability proportional to the density at
  the centre, uniform inside the cell). The readout is proposed from a Gaussian around a_k whose
  precision is the Laplace precision of the readout's marginal, (1/sigma_a2 + s^2 E[q]) I -
  s^2 sum_mu Var_q(h_mu) (S Y)_mu (S Y)_mu^T, inflated by 1.2^2. The component weights are the
  components' evidence lower bounds E_q[log p] + H(q), in closed form. Everything depends on the
  other neurons only (through S), as an independence proposal must;
* accept with min(1, r), r = p(w', a') q(w, a) / (p(w, a) q(w', a')), with the exact target
  density and the exact mixture density. So the move leaves the posterior invariant whatever the
  starts, iterations and grid; they only set the acceptance rate. A current w outside the grid
  has q = 0 and its proposals are rejected (the other moves of a sweep keep the chain
  irreducible).

Neurons are visited in turn (a deterministic scan of kernels that each leave p(W) invariant);
Sigma^{-1} follows each acceptance by two rank-one updates (O(P^2)), and is refactorised at the
start of every sweep. After the sweep the readout is drawn exactly from p(A | W), so the returned
state is a joint draw. Cost per neuron: about n_fixed_point + 3 tables of size
(E, K, P, n_grid) and O(K P^2). ReLU outliers, whose preactivations are of order sqrt(N), lie
outside the grid and are left to the other moves.
"""

from __future__ import annotations

import itertools
import math

import torch

from ..checks import check_count, check_generator, check_generator_on, check_pos_float
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
                        readouts=None, n_fixed_point: int = 8, n_grid: int = 128,
                        grid_halfwidth: float = 8.0):
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
    n_grid : cells of the histogram proposal of each incoming weight (>= 8).
    grid_halfwidth : the grid covers [-h sigma_w, h sigma_w] (> 0).

    Returns ``(theta_new, acceptance)``: a copy of ``theta`` after the sweep (hidden weights moved,
    readout drawn from p(A | W)) and the (E,) fraction of neurons whose proposal was accepted.
    Non-finite chains are left as they are. The move is exact for any settings (module doc);
    they only change the acceptance rate.
    """
    _check_move_posterior(posterior)
    check_generator(generator)
    n_fp = check_count("n_fixed_point", n_fixed_point, minimum=1)
    n_grid = check_count("n_grid", n_grid, minimum=8)
    h = check_pos_float("grid_halfwidth", grid_halfwidth, noun="number")
    theta = posterior._theta(theta)
    check_generator_on(generator, theta.device, what="theta")
    E = theta.shape[0]
    dt, dev, f64 = theta.dtype, theta.device, torch.float64
    b = check_beta(beta, E, dtype=f64, device=dev)
    b_all = torch.full((E,), posterior.beta if b is None else b, dtype=f64, device=dev) \
        if not torch.is_tensor(b) else b
    m, N, P = posterior.spec.m, posterior.spec.N, posterior.P
    start = _start_readouts(readouts, m, dev)
    s = posterior.spec.readout_scale
    sw = math.sqrt(posterior.sigma_w2)
    inv_sa2 = 1.0 / posterior.sigma_a2
    kappa = s * s * posterior.sigma_a2
    d = posterior._X1_diag.to(f64)
    phi = posterior.phi
    Y = posterior.Y.to(f64)
    new = theta.clone()
    W = posterior.unflatten(new)["W1"]                        # (E, N, P) view
    finite = torch.isfinite(new).all(1)
    W64 = torch.where(finite[:, None, None], W.to(f64), torch.zeros((), dtype=f64, device=dev))
    delta = 2.0 * h / n_grid
    zeta = -h + (torch.arange(n_grid, device=dev, dtype=f64) + 0.5) * delta
    Phi = phi(d[:, None] * (sw * zeta)[None, :])              # (P, G)
    Phi2 = Phi.square()
    log_prior_grid = -0.5 * zeta.square()
    log_cell = P * math.log(sw * delta)
    H = phi(W64 * d)                                          # (E, N, P)
    Sinv = torch.cholesky_inverse(torch.linalg.cholesky(
        kappa * H.transpose(1, 2) @ H + torch.eye(P, dtype=f64, device=dev) / b_all[:, None, None]))
    SinvY = Sinv @ Y                                          # (E, P, m)
    eye_m = torch.eye(m, dtype=f64, device=dev)
    ar = torch.arange(E, device=dev)
    accepted = torch.zeros(E, dtype=f64, device=dev)

    for i in range(N):
        w_old, h_old = W64[:, i].clone(), H[:, i].clone()
        # S = Sigma_{-i}^{-1} = Sigma^{-1} + kappa v v^T / den  (Sherman-Morrison downdate)
        v = (Sinv @ h_old[..., None])[..., 0]
        hv = (h_old * v).sum(1)
        den = (1.0 - kappa * hv).clamp_min(1e-12)
        SY = SinvY + kappa * v[..., None] * ((v[..., None] * Y).sum(1) / den[:, None])[:, None, :]
        Sdiag = torch.diagonal(Sinv, dim1=1, dim2=2) + kappa * v.square() / den[:, None]
        cav = _Cavity(Sinv, v, den, kappa, SY, Sdiag)
        # the auxiliary readout of neuron i, exactly from p(a | w, W_{-i})
        q_old = hv / den
        g_old = torch.einsum("ep,epm->em", h_old, SY)
        prec = inv_sa2 + s * s * q_old
        a_aux = (s * g_old / prec[:, None]
                 + torch.randn(E, m, generator=generator, device=dev, dtype=f64) / prec.sqrt()[:, None])
        comps = _components(cav, start, n_fp, s, inv_sa2, log_prior_grid, Phi, Phi2, sw, zeta, log_cell)
        a_k, h0, chol_p, log_pi = comps
        # draw a component, a' around its readout, then every coordinate's cell
        kk = torch.multinomial(torch.exp(log_pi), 1, generator=generator)[:, 0]
        chol_c = math.sqrt(_INFLATE) * torch.linalg.solve_triangular(
            chol_p[ar, kk].transpose(-1, -2), eye_m.expand(E, m, m), upper=True)
        xi = torch.randn(E, m, 1, generator=generator, device=dev, dtype=f64)
        a_new = a_k[ar, kk] + (chol_c @ xi)[..., 0]
        lf_new = cav.tables(a_new[:, None], h0[ar, kk][:, None], s, log_prior_grid, Phi, Phi2)[0][:, 0]
        w_new = _draw_cells(lf_new, zeta, delta, sw, generator)
        h_new = phi(w_new * d)
        un = cav.S_times(h_new)                                 # S h', reused by the update
        q_new = (h_new * un).sum(1)
        g_new = torch.einsum("ep,epm->em", h_new, SY)
        log_r = (_log_joint(a_new, w_new, g_new, q_new, s, sw, inv_sa2)
                 - _log_proposal(cav, comps, a_new, w_new, s, log_prior_grid, Phi, Phi2, sw, h, delta,
                                 n_grid, log_cell)
                 - _log_joint(a_aux, w_old, g_old, q_old, s, sw, inv_sa2)
                 + _log_proposal(cav, comps, a_aux, w_old, s, log_prior_grid, Phi, Phi2, sw, h, delta,
                                 n_grid, log_cell))
        r = torch.rand(E, generator=generator, device=dev, dtype=f64)
        acc = (torch.log(r) < log_r) & finite                  # NaN or -inf: rejected
        if bool(acc.any()):
            # Sigma'^{-1} = S - kappa u u^T / (1 + kappa h'^T S h'),  u = S h'
            S_new = (Sinv + kappa * v[:, :, None] * v[:, None, :] / den[:, None, None]
                     - kappa * un[:, :, None] * un[:, None, :] / (1.0 + kappa * q_new)[:, None, None])
            Sinv = torch.where(acc[:, None, None], S_new, Sinv)
            SY_new = SY - kappa * un[..., None] * (g_new / (1.0 + kappa * q_new)[:, None])[:, None, :]
            SinvY = torch.where(acc[:, None, None], SY_new, SinvY)
            W64[:, i] = torch.where(acc[:, None], w_new, w_old)
            H[:, i] = torch.where(acc[:, None], h_new, h_old)
        accepted += acc.to(f64)
    W.copy_(torch.where(finite[:, None, None], W64.to(dt), W))
    new = sample_readout(posterior, new, generator=generator,
                         beta=None if beta is None else (b if not torch.is_tensor(b) else b.to(dt)))
    return new, (accepted / N).to(dt)


class _Cavity:
    """The other neurons' view of neuron i: S = Sigma_{-i}^{-1} (through Sigma^{-1} and the
    downdate vector v), S Y and diag S."""

    def __init__(self, Sinv, v, den, kappa, SY, Sdiag):
        self.Sinv, self.v, self.den, self.kappa, self.SY, self.Sdiag = Sinv, v, den, kappa, SY, Sdiag

    def S_times(self, x):
        """S x for x of shape (E, ..., P)."""
        E, P = x.shape[0], x.shape[-1]
        xf = x.reshape(E, -1, P)
        out = xf @ self.Sinv + self.kappa * (
            (xf * self.v[:, None]).sum(-1) / self.den[:, None])[..., None] * self.v[:, None]
        return out.reshape(x.shape)

    def tables(self, a, h0, s, log_prior_grid, Phi, Phi2):
        """Normalised log densities (E, K, P, G) of the coordinates' proposals at readouts a
        (E, K, m), h^T S h linearised around h0 (E, K, P); and the mean and second moment of h."""
        c = s * s * a.square().sum(-1)                                  # (E, K)
        lin = (s * torch.einsum("ekm,epm->ekp", a, self.SY)
               - c[..., None] * (self.S_times(h0) - self.Sdiag[:, None] * h0))
        quad = 0.5 * c[..., None] * self.Sdiag[:, None]
        lf = log_prior_grid + lin[..., None] * Phi - quad[..., None] * Phi2
        lf = lf - lf.amax(-1, keepdim=True)
        pr = torch.exp(lf)
        z = pr.sum(-1, keepdim=True)
        pr = pr / z
        return lf - torch.log(z), (pr * Phi).sum(-1), (pr * Phi2).sum(-1)


def _log_joint(a, w, g, q, s, sw, inv_sa2):
    """log p(w, a | W_{-i}) up to a constant (module doc), given g = h^T S Y and q = h^T S h."""
    a2 = a.square().sum(1)
    return (-0.5 * w.square().sum(1) / sw ** 2 - 0.5 * a2 * inv_sa2 + s * (a * g).sum(1)
            - 0.5 * s * s * a2 * q)


def _components(cav, start, n_fp, s, inv_sa2, log_prior_grid, Phi, Phi2, sw, zeta, log_cell):
    """The proposal's components: self-consistent readouts a_k (E, K, m), mean activations h0
    (E, K, P), Cholesky factors of the readout precisions (E, K, m, m) and log weights (E, K)."""
    E, P = cav.SY.shape[0], cav.SY.shape[1]
    K, m = start.shape
    a_k = start[None].expand(E, K, m)
    h0 = torch.zeros(E, K, P, dtype=start.dtype, device=start.device)
    for _ in range(n_fp):
        _, h0, h2 = cav.tables(a_k, h0, s, log_prior_grid, Phi, Phi2)
        q = (h0 * cav.S_times(h0)).sum(-1) + (cav.Sdiag[:, None] * (h2 - h0.square())).sum(-1)
        pk = inv_sa2 + s * s * q
        a_k = s * torch.einsum("ekp,epm->ekm", h0, cav.SY) / pk[..., None]
    lf, m1, m2 = cav.tables(a_k, h0, s, log_prior_grid, Phi, Phi2)
    var_h = (m2 - m1.square()).clamp_min(0.0)
    e_q = (m1 * cav.S_times(m1)).sum(-1) + (cav.Sdiag[:, None] * var_h).sum(-1)
    # Laplace precision of the readout's marginal: the conditional precision minus the variance
    # of the linear term s h^T S Y under the coordinates' proposals
    eye_m = torch.eye(m, dtype=start.dtype, device=start.device)
    prec_a = ((inv_sa2 + s * s * e_q)[..., None, None] * eye_m
              - s * s * torch.einsum("ekp,epm,epn->ekmn", var_h, cav.SY, cav.SY))
    chol_p, info = torch.linalg.cholesky_ex(prec_a)
    bad = info != 0
    if bool(bad.any()):
        chol_p = torch.where(bad[..., None, None],
                             torch.linalg.cholesky((inv_sa2 + s * s * e_q)[..., None, None] * eye_m), chol_p)
    # weights: evidence lower bounds E_q[log p] + H(q) of the components, in closed form
    pr = torch.exp(lf)
    a2 = a_k.square().sum(-1)
    e_g = torch.einsum("ekp,epm->ekm", m1, cav.SY)
    e_logp0w = -0.5 * (pr * zeta.square()).sum((-1, -2))
    ent_w = -(pr * lf).sum((-1, -2)) + log_cell
    elbo = (-0.5 * a2 * inv_sa2 + s * (a_k * e_g).sum(-1) - 0.5 * s * s * a2 * e_q + e_logp0w + ent_w
            - torch.log(torch.diagonal(chol_p, dim1=-2, dim2=-1)).sum(-1))
    elbo = torch.where(torch.isfinite(elbo), elbo, torch.full_like(elbo, -math.inf))
    return a_k, h0, chol_p, torch.log_softmax(elbo, 1)


def _draw_cells(lf, zeta, delta, sw, generator):
    """A draw from the histogram densities lf (E, P, G): a cell by inverse CDF, uniform inside."""
    E, P, G = lf.shape
    cdf = torch.cumsum(torch.exp(lf), -1)
    cdf = cdf / cdf[..., -1:]
    u = torch.rand(E, P, 1, generator=generator, device=lf.device, dtype=lf.dtype)
    k = torch.searchsorted(cdf, u).clamp_(max=G - 1)
    lo = torch.where(k > 0, cdf.gather(-1, (k - 1).clamp_min(0)), torch.zeros_like(u))
    frac = ((u - lo) / (cdf.gather(-1, k) - lo).clamp_min(1e-300)).clamp_(0.0, 1.0)
    return sw * (zeta[k[..., 0]] - 0.5 * delta + delta * frac[..., 0])


def _log_proposal(cav, comps, a, w, s, log_prior_grid, Phi, Phi2, sw, h, delta, n_grid, log_cell):
    """log q(a, w) of the mixture proposal; -inf for w outside the grid."""
    a_k, h0, chol_p, log_pi = comps
    E, K, P = h0.shape
    m = a.shape[1]
    lf = cav.tables(a[:, None].expand(E, K, m), h0, s, log_prior_grid, Phi, Phi2)[0]
    k = torch.floor((w / sw + h) / delta)
    inside = ((k >= 0) & (k < n_grid)).all(1)
    k = k.clamp(0, n_grid - 1).long()
    lw = lf.gather(-1, k[:, None, :, None].expand(E, K, P, 1))[..., 0].sum(-1) - log_cell
    # N(a; a_k, _INFLATE prec^{-1}) with prec = chol_p chol_p^T
    r = ((chol_p.transpose(-1, -2) @ (a[:, None] - a_k)[..., None])[..., 0]).square().sum(-1)
    la = (-0.5 * r / _INFLATE + torch.log(torch.diagonal(chol_p, dim1=-2, dim2=-1)).sum(-1)
          - 0.5 * m * math.log(2 * math.pi * _INFLATE))
    out = torch.logsumexp(log_pi + la + lw, 1)
    return torch.where(inside, out, torch.full_like(out, -math.inf))
