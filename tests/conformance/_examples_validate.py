"""Example calls for the public names of richlazy.validate (see _examples.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ._common import (
    _TINY_CASE,
    Example,
    _curves,
    _report,
    _rng,
    _spd,
    _sweep,
    _with_tiny_case,
    ex,
)

VALIDATE: dict[str, Example] = {}
E = VALIDATE

# validate
E["validate.alignment_by_readout_sign"] = ex(
    lambda t: (lambda Wa: dict(W=Wa[0][None], a=Wa[1][None]))(
        __import__("richlazy.theory", fromlist=["x"]).handcrafted_solution(3, 2.0)
    ),
    "W a",
)
E["validate.alignment_of_top_units"] = ex(
    lambda t: (lambda Wa: dict(W=Wa[0][None], a=Wa[1][None], fraction=0.5))(
        __import__("richlazy.theory", fromlist=["x"]).handcrafted_solution(3, 2.0)
    ),
    "W a", fraction="prob_pos",
)
E["validate.readout_ratio"] = ex(lambda t: dict(a=np.array([[0.5, -1.0, 0.3, -0.2]])), "a")
E["validate.relative_activation_change"] = ex(
    lambda t: dict(
        W0=_rng(1).standard_normal((2, 4, 3)),
        dW=0.1 * _rng(2).standard_normal((2, 4, 3)),
        x=_rng(3).standard_normal((2, 5, 3)),
    ),
    "W0 dW x",
)
E["validate.relative_weight_change"] = ex(
    lambda t: dict(W0=_rng(1).standard_normal((2, 4, 3)), dW=0.1 * _rng(2).standard_normal((2, 4, 3))),
    "W0 dW",
)
E["validate.weight_alignment"] = ex(lambda t: dict(W=_rng(1).standard_normal((2, 4, 6))), "W")
E["validate.cka"] = ex(lambda t: dict(K=_spd(5), L=_spd(5, 1), debiased=False), "K", L="psd_matrix")
E["validate.class_statistics"] = ex(
    lambda t: dict(features=_rng(1).standard_normal((9, 3)), labels=np.arange(9) % 3, n_classes=3),
    "features labels n_classes",
    accepted={("features", "zeros"): "zero features have well-defined (zero) class statistics"},
)
E["validate.dlr"] = ex(
    lambda t: dict(
        features=_rng(1).standard_normal((12, 4)), outputs=_rng(2).standard_normal((12, 2)), block_rows=4
    ),
    "features outputs block_rows",
)
E["validate.effective_dimension"] = ex(
    lambda t: dict(eigenvalues=np.array([5.0, 2.0, 1.0])), eigenvalues="nonneg_array"
)
E["validate.eigen_curves"] = ex(
    lambda t: (lambda F: dict(features=F, targets=F[:, :2], outputs=F[:, :2] + 0.1, block_rows=4))(
        _rng(3).standard_normal((12, 4))
    ),
    "features outputs block_rows", targets="features",
)
E["validate.linear_cka"] = ex(
    lambda t: dict(X=_rng(1).standard_normal((12, 4)), Y=_rng(2).standard_normal((12, 3)), block_rows=4),
    "block_rows", X="features", Y="features",
)
E["validate.nc1"] = ex(
    lambda t: dict(
        features=_rng(1).standard_normal((9, 3)), labels=np.arange(9) % 3, n_classes=3, ridge=1e-4
    ),
    "features labels n_classes ridge", rcond="prob",
)
E["validate.nc2_etf"] = ex(
    lambda t: dict(features=_rng(1).standard_normal((9, 3)), labels=np.arange(9) % 3, n_classes=3),
    "features labels n_classes",
)
E["validate.nystrom_eigen"] = ex(
    lambda t: dict(features=_rng(1).standard_normal((12, 4)), rtol=1e-10, block_rows=4),
    "features block_rows", rtol="prob",
    accepted={("features", "zeros"): "zero features have rank 0 (no eigenpairs)"},
)
E["validate.parameter_norm_sq"] = ex(
    lambda t: dict(params=np.ones((2, 3))),
    params="array",
    accepted={("params", "empty"): "an empty parameter array has squared norm 0"},
)
E["validate.plot_dlr_vs_knob"] = ex(lambda t: dict(sweep=_sweep(), path=t / "dlr.png"))
E["validate.plot_eigen_curves"] = ex(
    lambda t: dict(curves=_curves(), path=t / "eig.png", max_k=3), max_k="pos_int"
)
E["validate.s_init"] = ex(
    lambda t: dict(
        features_init=_rng(1).standard_normal((12, 4)),
        features_learned=_rng(2).standard_normal((12, 4)),
        block_rows=4,
    ),
    "block_rows", features_init="features", features_learned="features",
)
E["validate.all_cases"] = ex(lambda t: dict())
E["validate.compare"] = ex(
    lambda t: dict(name="x", theory=1.0, simulation=1.2, stderr=0.1, kind="z", tol=3.0),
    theory="real",
    simulation="real",
    stderr="pos_float",
    kind="choice",
    tol="pos_float",
    accepted={
        (arg, m): "documented: a failed (NaN/inf) estimate gives a quantity that does not pass"
        for arg in ("theory", "simulation")
        for m in ("nan", "inf")
    },
)
E["validate.get_cases"] = ex(lambda t: dict(suite="quick", only="coding/*"), "suite")
E["validate.register_case"] = ex(
    lambda t: dict(name="richness/zz-conformance-never-applied", description="x", suites=("quick",)),
    suites="suites",
)
@dataclasses.dataclass(frozen=True)
class _ExampleSize:
    n: int
    tol: float


def _example_row():
    from richlazy.validate import compare

    return dict(name="x_{0}", theory=lambda run, k: 1.0, estimate=lambda run, k: (1.0, 0.1),
                rule=lambda run, name, th, est: compare(name, th, est[0], stderr=est[1], tol=3.0),
                over=lambda run: range(2))


def _example_declaration():
    from richlazy.validate import Compared, Sizes

    return dict(name="richness/zz-conformance-declared", description="x",
                sizes=Sizes(quick=_ExampleSize(1, 0.1), full=_ExampleSize(2, 0.2)),
                theory=lambda ctx, cfg: None, simulation=lambda ctx, cfg, th: None,
                compared=(Compared(**_example_row()),), suites=("quick",))


def _declared_in_scratch(**kw):
    from richlazy.validate import declare_case
    from richlazy.validate.core import _registry

    with _registry._CASES.scratch():  # registered into a copy that is dropped afterwards
        return declare_case(**kw)


E["validate.Sizes"] = ex(lambda t: dict(quick=_ExampleSize(1, 0.1), full=_ExampleSize(2, 0.2)))
E["validate.Compared"] = ex(lambda t: _example_row())
E["validate.ChainBudget"] = ex(lambda t: dict(T=0.01, dt=0.02, n_chains=2, n_steps=10, burn_in=2, thin=1))
E["validate.CaseRun"] = ex(lambda t: dict(ctx=None, cfg=_ExampleSize(1, 0.1), theory=None, simulation=None))
E["validate.CaseDeclaration"] = ex(lambda t: _example_declaration())
E["validate.declare_case"] = ex(lambda t: _example_declaration(), call=_declared_in_scratch)
E["validate.render_markdown"] = ex(lambda t: dict(report=_report()))
E["validate.run_suite"] = ex(
    lambda t: dict(
        suite="quick", only=_TINY_CASE, device="cpu", out_dir=t / "r", seed=0, progress=False, threads=1
    ),
    "suite device seed threads",
    call=_with_tiny_case(lambda **kw: __import__("richlazy.validate", fromlist=["x"]).run_suite(**kw)),
)
for _pkg in ("validate", "validate.sweeps"):
    E[f"{_pkg}.sweep"] = ex(
        lambda t: dict(fn="selftest", grid={"n": [10, 20]}, seeds=2, out=t / "s", device="cpu",
                       seed=0, threads=1, figures=False),
        "fn seeds device seed threads",
    )
    E[f"{_pkg}.register_sweep"] = ex(
        lambda t: dict(name="zz-conformance-never-applied", description="x", params={})
    )
    E[f"{_pkg}.Param"] = ex(lambda t: dict(kind=int, default=3, help="x", minimum=1))
E["validate.sweeps.all_sweeps"] = ex(lambda t: dict())
E["validate.sweeps.get_sweep"] = ex(lambda t: dict(name="selftest"), "name")
E["validate.write_report"] = ex(lambda t: dict(report=_report(), out_dir=t / "r"))
E["validate.stats.batch_means"] = ex(
    lambda t: dict(samples=_rng(1).standard_normal((64, 2)), n_batches=4), "samples n_batches"
)
E["validate.stats.effective_sample_size"] = ex(
    lambda t: dict(samples=_rng(1).standard_normal((64, 2))), "samples"
)
E["validate.stats.estimate"] = ex(
    lambda t: dict(samples=_rng(1).standard_normal((64, 2)), n_batches=4), "samples n_batches"
)
E["validate.stats.chain_se"] = ex(lambda t: dict(x=_rng(1).standard_normal((64, 3))), "x")
E["validate.stats.chain_mean_se"] = ex(lambda t: dict(x=_rng(1).standard_normal((16, 4, 2))), "x")
E["validate.stats.fraction_se"] = ex(
    lambda t: dict(per_chain=np.array([0.2, 0.3, 0.25]), n_units=40), "n_units", per_chain="array"
)
E["validate.stats.binomial_se"] = ex(lambda t: dict(p=0.3, n=100), "n")
E["validate.stats.mean_se"] = ex(lambda t: dict(x=_rng(1).standard_normal((3, 5)), axis=-1), "x")

# multi-chain convergence diagnostics (split-R-hat, bulk/tail ESS) and the case verdict
for _pkg in ("validate", "validate.stats"):
    for _fn in ("chain_diagnostics", "ess_bulk", "ess_tail"):
        E[f"{_pkg}.{_fn}"] = ex(lambda t: dict(samples=_rng(1).standard_normal((64, 3)),
                                               layout="draw_chain"), "samples", layout="choice")
    E[f"{_pkg}.split_rhat"] = ex(lambda t: dict(samples=_rng(1).standard_normal((64, 3)),
                                                method="rank", layout="draw_chain"),
        "samples method", layout="choice",
    )
    E[f"{_pkg}.worst_mixing"] = ex(
        lambda t: dict(), call=lambda: __import__("richlazy.validate", fromlist=["x"]).worst_mixing(
            *(__import__("richlazy.validate", fromlist=["x"]).chain_diagnostics(
                _rng(s).standard_normal((32, 2)), layout="draw_chain") for s in (1, 2))))
    E[f"{_pkg}.Mixing"] = ex(lambda t: dict(rhat=1.0, ess_bulk=10.0, ess_tail=10.0, n_chains=2,
                                            n_draws=8))
E["validate.case_verdict"] = ex(
    lambda t: dict(quantities=[__import__("richlazy.validate", fromlist=["x"]).compare(
        "x", 1.0, 1.0, kind="rel", tol=0.1)], error=None))


def _written_report(t):
    from richlazy.validate import write_report

    write_report(_report(), t / "r")
    return t / "r"


E["validate.diff_reports"] = ex(lambda t: dict(a=_written_report(t), b=_written_report(t)))
E["validate.load_report_cases"] = ex(lambda t: dict(path=_written_report(t)))
