"""Symbolic scaling tables: pattern energies minimised with SymPy.

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), Sec. 5-6 (Table 1)
and App. E; spec note ``curse_of_detail.md`` section 5.  Every energy below is *assembled* from
the reconstructed building blocks of eq. (10) and the feature-propagation rules (Claims i-iii)
— alignment cost ``chi/<y,K,y>``, per-neuron costs (GFL ``D``, specialization
``mu^2 <Phi,K^{-1},Phi>``), lazy eigenvalues ``d^-m``, GFL amplification ``(D/d)^m`` and
specialization spikes ``M/N`` — and then minimised by solving the stationarity equations.
Scaling forms: all O(1) constants (including the 1/2 of eq. 68 and sigma's) are set to 1, so only
the exponents are meaningful ("∝"); ``P_* ∝ E_min`` (eq. 26, alpha = O(1) fixed).

Provenance of the rows: two-layer FCN, CNN, ReLU parity and attention [RECON, from the prose of
App. E]; three-layer FCN (Table 1) [SEC, re-derived]; mean-field rows [RECON].  The exact
two-layer LDT of :mod:`richlazy.theory.ldt._erf` reproduces the two-layer FCN exponents
(tests ``tests/theory/ldt/test_patterns_tables.py``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import sympy as sp

# the table symbols (all positive) and the safe parser live in _table_expr; re-exported here
from ._table_expr import (  # noqa: F401  (TABLE_SYMBOLS, parse_table_expression: re-exported)
    M1,
    M2,
    N1,
    N2,
    TABLE_SYMBOLS,
    D,
    H,
    L,
    M,
    N,
    S,
    beta,
    d,
    mu,
    parse_table_expression,
)

__all__ = [
    "TableRow",
    "Crossover",
    "scaling_tables",
    "pattern_crossovers",
    "minimize_energy",
    "MODELS",
    "TABLE_SYMBOLS",
    "parse_table_expression",
    "clear_table_cache",
]

# --------------------------------------------------------------------------------------------
# building blocks (scaling forms)
# --------------------------------------------------------------------------------------------
_ONE = sp.Integer(1)


def alignment_cost(yKy, chi=_ONE):
    """a_y ∝ chi / <y, K, y> (eq. 10 with alpha = O(1); MF scale chi multiplies it, App. E.1.1)."""
    return chi / yKy


def lazy_eigenvalue(m):
    """<He_m, K, He_m> ∝ d^-m for a lazy FCN dot-product kernel (sec. 4.4; Claim iii)."""
    return d ** (-m)


def gfl_eigenvalue(m, amp=D):
    """Claim (ii): amplifying the linear eigenvalue 1/d by D gives (D/d)^m for the m-th power."""
    return (amp / d) ** m


def spike(c):
    """Claim (i): a spike c psi psi^T with O(1) <psi, y> gives <y, K, y> ∝ c."""
    return c


def linear_rkhs_norm():
    """<w*.x, K^{-1}, w*.x> ∝ d under the input kernel sigma_w^2 x.x'/d (sec. 4.4)."""
    return d


def gfl_cost(n_neurons, amp=D):
    """GFL: Delta = D/2 per neuron (eq. 68) -> n_neurons * D."""
    return n_neurons * amp


def specialization_cost(count, rkhs, magnitude2=_ONE):
    """count neurons with mean mu Phi: count * mu^2 <Phi, K^{-1}, Phi> (eq. 12, 68)."""
    return count * magnitude2 * rkhs


# --------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Pattern:
    name: str
    energy: sp.Expr
    params: tuple[sp.Symbol, ...]
    constraints: tuple[sp.Basic, ...] = ()  # relations on the parameters, e.g. M >= 1
    provenance: str = "RECON"


@dataclass(frozen=True)
class _Model:
    name: str
    scaling: str
    description: str
    symbols: tuple[sp.Symbol, ...]  # order = preference for solving inequalities
    patterns: tuple[_Pattern, ...]
    limit_name: str = ""
    limit: dict = field(default_factory=dict)
    provenance: str = "RECON"


def _two_layer_fcn(name, degree, chi, scaling, description, *, sqrt_m=False, prov="RECON"):
    pats = [
        _Pattern("GP", alignment_cost(lazy_eigenvalue(degree), chi), ()),
        _Pattern("GFL", gfl_cost(N) + alignment_cost(gfl_eigenvalue(degree), chi), (D,), (D >= 1,)),
        _Pattern(
            "M-specialization",
            specialization_cost(M, linear_rkhs_norm()) + alignment_cost(spike(M / N), chi),
            (M,),
            (M >= 1, M <= N),
        ),
    ]
    if sqrt_m:
        pats.append(
            _Pattern(
                "sqrt(M)-specialization",
                specialization_cost(1, linear_rkhs_norm(), mu**2)
                + alignment_cost(spike(mu**2 / N), chi),
                (mu,),
                (mu >= 1,),
            )
        )
    return _Model(name, scaling, description, (N, d), tuple(pats), "N ∝ d", {N: d}, prov)


def _two_layer_fcn_models() -> list[_Model]:
    """The two-layer FCN rows: erf with a He_3 target (standard and mean-field scaling, App.
    E.1.1) and ReLU with a k = 2 parity (App. E.2)."""
    return [
        _two_layer_fcn(
            "fcn2-erf-He3",
            3,
            sp.Integer(1),
            "standard",
            "two-layer erf FCN, target He_3(w*.x)/sqrt(6), Gaussian inputs (App. E.1.1)",
        ),
        _two_layer_fcn(
            "fcn2-erf-He3",
            3,
            N,
            "mean-field",
            "two-layer erf FCN, mean-field scaling chi = N (App. E.1.1, extension)",
        ),
        _two_layer_fcn(
            "fcn2-relu-parity2",
            2,
            sp.Integer(1),
            "standard",
            "two-layer ReLU FCN, k = 2 parity x1 x2 on the hypercube, cross-entropy "
            "(App. E.2; degree-2 target assumed)",
            sqrt_m=True,
        ),
    ]


def _cnn_model() -> _Model:
    """CNN with non-overlapping patches: n = d/S patches of size S, linear target (App. E.1.2)."""
    n_patches = d / S
    return _Model(
        "cnn2-erf-linear",
        "standard",
        "two-layer erf CNN, non-overlapping patches of size S (n = d/S), per-patch readout, "
        "linear target (App. E.1.2)",
        (N, S, d),
        (
            _Pattern("GP", alignment_cost(lazy_eigenvalue(1)), ()),
            _Pattern("GFL", gfl_cost(N) + alignment_cost(gfl_eigenvalue(1)), (D,), (D >= 1,)),
            _Pattern(
                "M-specialization",
                specialization_cost(M, S) + alignment_cost(spike(M / (N * n_patches))),
                (M,),
                (M >= 1, M <= N),
            ),
        ),
        "N ∝ S, S ∝ sqrt(d)",
        {N: S, S: sp.sqrt(d)},
    )


def _three_layer_fcn_model() -> _Model:
    """Three-layer erf FCN of Table 1 (Sec. 6.1): GP-GP, GP-specialization and
    specialization-magnitude patterns."""
    return _Model(
        "fcn3-erf-He3",
        "standard",
        "three-layer erf FCN, widths N1, N2, target He_3(w*.x)/sqrt(6) (Sec. 6.1, Table 1)",
        (N1, N2, d),
        (
            _Pattern("GP-GP", alignment_cost(lazy_eigenvalue(3)), (), (), "SEC+RECON"),
            _Pattern(
                "GP-Sp.",
                specialization_cost(M2, linear_rkhs_norm()) + alignment_cost(spike(M2 / N2)),
                (M2,),
                (M2 >= 1, M2 <= N2),
                "SEC+RECON",
            ),
            _Pattern(
                "Sp.-Mag.",
                specialization_cost(M1, linear_rkhs_norm())
                + specialization_cost(beta, 1 / spike(M1 / N1))
                + alignment_cost(spike(beta / N2)),
                (M1, beta),
                (M1 >= 1, M1 <= N1, beta <= N2),
                "SEC+RECON",
            ),
        ),
        "N1 ∝ N2 ∝ d",
        {N1: d, N2: d},
        "SEC+RECON",
    )


def _attention_model() -> _Model:
    """Softmax attention head (Sec. 6.2, App. E.3): H heads, context length L."""
    return _Model(
        "attention-softmax",
        "standard",
        "softmax attention, H heads, context length L, cubic two-position target (Sec. 6.2, "
        "App. E.3)",
        (H, L, d),
        (
            _Pattern("GP", alignment_cost(1 / (L * d**3)), ()),
            _Pattern(
                "specialization",
                specialization_cost(M, d**2) + alignment_cost(M / (H * d * L)),
                (M,),
                (M >= 1, M <= H),
            ),
        ),
        "H fixed",
        {H: sp.Integer(1)},
        "RECON+SEC",
    )


def _build_models() -> tuple[_Model, ...]:
    """Every model of the scaling tables, in table order."""
    return (*_two_layer_fcn_models(), _cnn_model(), _three_layer_fcn_model(), _attention_model())


MODELS = _build_models()


# --------------------------------------------------------------------------------------------
# minimisation
# --------------------------------------------------------------------------------------------
def _log_exponents(expr) -> dict[sp.Symbol, sp.Expr]:
    """Exponent of each free symbol of a monomial, from the logarithmic derivative s dE/ds / E."""
    out = {}
    for s in sorted(expr.free_symbols, key=str):
        e = sp.simplify(s * sp.diff(expr, s) / expr)
        if e.free_symbols:
            raise ValueError(f"{expr} is not a monomial in {s} (log-derivative {e})")
        out[s] = sp.nsimplify(e)
    return out


def _monomial(expr) -> tuple[sp.Expr, sp.Expr]:
    """Split ``expr`` (a number times a product of powers) into (coefficient, monomial)."""
    expr = sp.simplify(expr)
    ex = _log_exponents(expr)
    mono = sp.Integer(1)
    for s, e in ex.items():
        mono *= s**e
    coeff = sp.simplify(expr / mono)
    if coeff.free_symbols:
        raise ValueError(f"{expr} is not a monomial")
    return coeff, mono


def _exponents(mono, symbols) -> dict[sp.Symbol, sp.Rational]:
    ex = _log_exponents(mono)
    out = {s: sp.Rational(0) for s in symbols}
    for s, e in ex.items():
        if s not in out:
            raise ValueError(f"unexpected symbol {s} in monomial {mono}")
        out[s] = e
    return out


def minimize_energy(energy, params) -> tuple[dict, sp.Expr]:
    """Minimise a positive power-law energy over positive ``params`` by solving the
    stationarity equations ``dE/dp = 0`` symbolically.

    Returns ``(solution, E_min)``.  The stationary point is the global minimum for sums of
    monomials in positive variables with a positive-definite Hessian there (checked).  For
    ``E = a x + b / x^p`` it gives ``x* = (p b / a)^{1/(p+1)}``.
    """
    params = tuple(params)
    if not params:
        return {}, sp.simplify(energy)
    eqs = [sp.diff(energy, p) for p in params]
    sols = sp.solve(eqs, params, dict=True)
    sols = [s for s in sols if all(s.get(p) is not None and s[p].is_positive for p in params)]
    if len(sols) != 1:
        raise RuntimeError(
            f"expected one positive stationary point of {energy} over {params}, got {sols}"
        )
    sol = sols[0]
    hess = sp.hessian(energy, params).subs(sol)
    probe = {
        s: sp.Rational(7, 3) + i
        for i, s in enumerate(sorted(energy.free_symbols - set(params), key=str))
    }
    hnum = hess.subs(probe).evalf()
    if not all(hnum[:k, :k].det() > 0 for k in range(1, len(params) + 1)):
        raise RuntimeError(f"stationary point of {energy} is not a minimum")
    return sol, sp.simplify(energy.subs(sol))


# --------------------------------------------------------------------------------------------
# table rows and crossovers
# --------------------------------------------------------------------------------------------
def _solve_monomial_inequality(ratio_mono, symbols, strict=True) -> str:
    """Condition ``ratio_mono < 1`` written as ``v < f(others)`` for the first symbol v of
    ``symbols`` that appears (a non-constant monomial always depends on one of them)."""
    ex = _exponents(ratio_mono, symbols)
    for v in symbols:
        ev = ex[v]
        if ev != 0:
            rhs = sp.Integer(1)
            for s in symbols:
                if s != v and ex[s] != 0:
                    rhs *= s ** (-ex[s] / ev)
            rhs = sp.powsimp(rhs, force=True)
            if ev > 0:
                rel = sp.StrictLessThan(v, rhs) if strict else sp.LessThan(v, rhs)
            else:
                rel = sp.StrictGreaterThan(v, rhs) if strict else sp.GreaterThan(v, rhs)
            return str(rel)
    return "tie (same scaling)"


def _constraint_condition(rel, sol, symbols) -> str:
    """Translate a parameter constraint (e.g. M >= 1) at the optimum into a condition on the
    problem symbols (e.g. N >= d)."""
    lhs = rel.lhs.subs(sol)
    rhs = rel.rhs.subs(sol)
    if isinstance(rel, sp.GreaterThan | sp.StrictGreaterThan):
        ratio = rhs / lhs  # lhs >= rhs  <=>  rhs/lhs <= 1
    else:
        ratio = lhs / rhs
    _, mono = _monomial(ratio)
    c, _ = _monomial(ratio)
    if mono == 1:
        return "always" if c <= 1 else "never"
    return _solve_monomial_inequality(mono, symbols, strict=False)


@dataclass(frozen=True)
class TableRow:
    """One row of a scaling table: the minimised energy of one pattern of one model.

    model, scaling, pattern : identifiers ("standard" / "mean-field").
    energy : the scaling-form energy minimised (SymPy string).
    parameters : minimising parameters, scaling monomials (coefficients dropped).
    P_star : P_* ∝ E_min, coefficient dropped (SymPy-parsable string).
    exponents : exponent of each problem symbol in P_star (strings of rationals).
    E_min : minimised energy with the O(1) coefficients of the scaling form.
    wins_when : conditions under which this pattern has the lowest energy of its model.
    validity : conditions for the optimum to respect the parameter constraints (M >= 1, ...).
    limit, P_star_limit : a named proportional limit and P_star in it.
    description, provenance : model description and provenance tags.
    """

    model: str
    scaling: str
    pattern: str
    energy: str
    parameters: dict
    P_star: str
    exponents: dict
    E_min: str
    wins_when: list
    validity: list
    limit: str
    P_star_limit: str
    description: str
    provenance: str

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "scaling": self.scaling,
            "pattern": self.pattern,
            "energy": self.energy,
            "parameters": dict(self.parameters),
            "P_star": self.P_star,
            "exponents": dict(self.exponents),
            "E_min": self.E_min,
            "wins_when": list(self.wins_when),
            "validity": list(self.validity),
            "limit": self.limit,
            "P_star_limit": self.P_star_limit,
            "description": self.description,
            "provenance": self.provenance,
        }


@dataclass(frozen=True)
class Crossover:
    """``pattern_a`` has lower energy than ``pattern_b`` iff ``condition``."""

    model: str
    scaling: str
    pattern_a: str
    pattern_b: str
    condition: str

    def to_dict(self) -> dict:
        return dict(
            model=self.model,
            scaling=self.scaling,
            pattern_a=self.pattern_a,
            pattern_b=self.pattern_b,
            condition=self.condition,
        )


def _check_glob(model):
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a glob string or None, got {type(model).__name__}")


def _selected(model) -> list[_Model]:
    _check_glob(model)
    out = [m for m in MODELS if model is None or fnmatch.fnmatchcase(m.name, model)]
    if not out:
        names = sorted({m.name for m in MODELS})
        raise ValueError(f"model glob {model!r} matches no model; known models: {names}")
    return out


_CACHE: dict[tuple[str, str], list] = {}


def clear_table_cache() -> None:
    """Forget the symbolic minimisations memoised by :func:`scaling_tables` and
    :func:`pattern_crossovers` (per model and scaling, for the lifetime of the process), e.g. to
    time a cold derivation. Equivalent per call: ``scaling_tables(cache=False)``."""
    _CACHE.clear()


def _check_cache(cache) -> bool:
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {cache!r}")
    return cache


def _solve_model(m: _Model, cache: bool = True) -> list[tuple]:
    """``(pattern, solution, E_min, coefficient, monomial)`` per pattern of ``m``."""
    key = (m.name, m.scaling)
    if cache and key in _CACHE:
        return _CACHE[key]
    res = []
    for p in m.patterns:
        sol, emin = minimize_energy(p.energy, p.params)
        coeff, mono = _monomial(emin)
        res.append((p, sol, emin, coeff, mono))
    if cache:
        _CACHE[key] = res
    return res


def _fmt(expr) -> str:
    return str(sp.powsimp(expr, force=True))


def pattern_crossovers(*, model: str | None = None, cache: bool = True) -> list[Crossover]:
    """Pairwise comparisons of the minimised pattern energies of each selected model:
    ``pattern_a`` beats ``pattern_b`` iff ``condition`` (derived from the monomial ratio).
    ``cache=False`` re-derives (and does not store) the minimisations; see
    :func:`clear_table_cache`."""
    cache = _check_cache(cache)
    out = []
    for m in _selected(model):
        solved = _solve_model(m, cache)
        for pa, _, _, _, ma in solved:
            for pb, _, _, _, mb in solved:
                if pa is pb:
                    continue
                _, ratio = _monomial(ma / mb)
                cond = (
                    "tie (same scaling)"
                    if ratio == 1
                    else _solve_monomial_inequality(ratio, m.symbols)
                )
                out.append(Crossover(m.name, m.scaling, pa.name, pb.name, cond))
    return out


def scaling_tables(*, model: str | None = None, cache: bool = True) -> list[TableRow]:
    """Scaling-table rows for every model whose name matches the fnmatch glob ``model``
    (all when None).  Models: ``fcn2-erf-He3`` (standard and mean-field), ``cnn2-erf-linear``,
    ``fcn3-erf-He3`` (Table 1), ``fcn2-relu-parity2``, ``attention-softmax``.

    Each row's parameters and ``P_star`` are obtained by symbolic minimisation of the assembled
    energy (:func:`minimize_energy`), never typed in.  The minimisations are memoised per
    model for the process; ``cache=False`` re-derives them without reading or storing the memo
    (e.g. to time a cold derivation), :func:`clear_table_cache` empties it.
    """
    cache = _check_cache(cache)
    rows = []
    for m in _selected(model):
        solved = _solve_model(m, cache)
        for pa, sol, emin, _coeff, mono in solved:
            wins = []
            for pb, _, _, _, mb in solved:
                if pb is pa:
                    continue
                _, ratio = _monomial(mono / mb)
                cond = (
                    "tie (same scaling)"
                    if ratio == 1
                    else _solve_monomial_inequality(ratio, m.symbols)
                )
                wins.append(f"vs {pb.name}: {cond}")
            params = {}
            for p, val in sol.items():
                _, pm = _monomial(val)
                params[str(p)] = _fmt(pm)
            validity = [
                f"{rel}: {_constraint_condition(rel, sol, m.symbols)}" for rel in pa.constraints
            ]
            ex = _exponents(mono, m.symbols)
            lim = sp.powsimp(sp.expand_power_base(mono.subs(m.limit), force=True), force=True)
            rows.append(
                TableRow(
                    model=m.name,
                    scaling=m.scaling,
                    pattern=pa.name,
                    energy=str(pa.energy),
                    parameters=params,
                    P_star=_fmt(mono),
                    exponents={str(s): str(v) for s, v in ex.items()},
                    E_min=_fmt(emin),
                    wins_when=wins,
                    validity=validity,
                    limit=m.limit_name,
                    P_star_limit=_fmt(lim),
                    description=m.description,
                    provenance=pa.provenance,
                )
            )
    return rows
