"""Reliability of richlazy.simulate's public surface (issue 12): bad inputs get a ValueError or
TypeError that names the public argument, numpy scalars count as numbers, and nothing touches
torch's or numpy's global random state.

The device, dtype, theta and randomness tables are checked against the public surface
(``richlazy.simulate.__all__``): a new public function with a ``generator``/``seed``, ``device``,
``dtype`` or ``theta`` argument fails the coverage tests until it is added here.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import richlazy.simulate as S
import torch
from richlazy.simulate import checks
from sim_helpers import seeded_generator as _gen

# -- helpers ---------------------------------------------------------------------------------


def _posterior(**kw):
    spec = S.NetworkSpec(N0=3, N=4)
    X = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(3, 2)
    Y = torch.tensor([[0.5], [-0.5]], dtype=torch.float64)
    return S.NetworkPosterior(spec, X, Y, **{"T": 0.1, "sigma_a2": 1.0, **kw})


def _projected_posterior():
    spec = S.NetworkSpec(N0=4, N=3)
    X = torch.eye(4, dtype=torch.float64)[:, :2] * 2.0
    Y = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
    return S.NetworkPosterior(spec, X, Y, T=0.1, sigma_a2=1.0, project_inputs=True)


def _erf_posterior():
    X, y = S.hermite_target_data(5, 3, generator=_gen(1))
    return S.TwoLayerErfPosterior(X, y, N=4, kappa=0.5)


def _surface():
    """(qualified name, callable) for every public function, class constructor and public method."""
    out = []
    for name in S.__all__:
        obj = getattr(S, name)
        if inspect.isclass(obj):
            if obj.__module__.startswith("richlazy") and not issubclass(obj, BaseException):
                out.append((f"{name}.__init__", obj))
                for m, f in vars(obj).items():
                    if callable(f) and not m.startswith("_"):
                        out.append((f"{name}.{m}", f))
        elif callable(obj):
            out.append((name, obj))
    return out


def _names_with(param):
    found = set()
    for qual, f in _surface():
        try:
            sig = inspect.signature(f)
        except (TypeError, ValueError):
            continue
        if param in sig.parameters:
            found.add(qual)
    return found


# -- item 1: step sizes ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 0.0, -1e-300])
def test_langevin_step_rejects_bad_step_size(bad):
    post = _posterior()
    state = S.langevin_init(post.sample_prior(2, generator=_gen()))
    with pytest.raises(ValueError, match=r"step_size must be a finite real number > 0"):
        S.langevin_step(state, post, step_size=bad, generator=_gen())


def test_langevin_step_takes_numpy_and_0d_step_sizes():
    post = _posterior()
    state = S.langevin_init(post.sample_prior(2, generator=_gen()))
    ref, _ = S.langevin_step(state, post, step_size=0.25, generator=_gen(3))
    for eps in (np.float64(0.25), np.float32(0.25), torch.tensor(0.25), np.array(0.25)):
        new, _ = S.langevin_step(state, post, step_size=eps, generator=_gen(3))
        assert torch.equal(new.theta, ref.theta)
    with pytest.raises(TypeError, match="step_size must be a finite real number > 0"):
        S.langevin_step(state, post, step_size="0.1", generator=_gen())
    with pytest.raises(ValueError, match="noise_dtype must be torch.float32 or torch.float64"):
        S.langevin_step(state, post, step_size=0.1, generator=_gen(), noise_dtype=torch.int64)
    with pytest.raises(ValueError, match="beta must be"):
        S.langevin_step(state, post, step_size=0.1, generator=_gen(), beta=float("nan"))


@pytest.mark.parametrize(
    ("dt", "T", "exc", "match"),
    [
        (float("nan"), 1.0, ValueError, "dt must be a finite number > 0"),
        (0.1, float("inf"), ValueError, "T must be a finite number > 0"),
        (0.1, -2.0, ValueError, "T must be a finite number > 0"),
        ("0.1", 1.0, TypeError, "dt must be a finite number > 0"),
        (1e-200, 1e-200, ValueError, "T \\* dt"),
    ],
)
def test_paper_step_size_rejects(dt, T, exc, match):
    with pytest.raises(exc, match=match):
        S.paper_step_size(dt, T)


def test_paper_step_size_takes_numpy_scalars():
    assert S.paper_step_size(np.float32(0.5), np.float64(0.25)) == 0.125
    assert S.paper_step_size(torch.tensor(0.5), np.int64(2)) == 1.0


@pytest.mark.parametrize(
    ("theta", "match"),
    [
        (torch.full((2, 3), float("nan")), "theta must be finite"),
        (torch.tensor([[0.0, float("inf")]]), "theta must be finite"),
        (torch.zeros((2, 3), dtype=torch.int64), "theta must be a floating-point tensor"),
        (torch.zeros((0, 3)), "at least one chain"),
        (torch.zeros((2, 0)), "at least one chain and one parameter"),
        (np.zeros((2, 3)), "theta must be a 2-D tensor"),
    ],
)
def test_langevin_init_rejects(theta, match):
    with pytest.raises(ValueError, match=match):
        S.langevin_init(theta)


# -- item 2: randomness is explicit ------------------------------------------------------------


def _stochastic_calls():
    """name -> (call with valid randomness, call that would need the global stream or None)."""
    post = _posterior()
    ppost = _projected_posterior()
    epost = _erf_posterior()
    th = post.sample_prior(2, generator=_gen())
    pth = ppost.sample_prior(2, generator=_gen())
    x_off = torch.ones(4, 1, dtype=torch.float64)
    p = S.init_mlp_ensemble(2, 3, 4, 1, generator=_gen())
    Xm, Ym = torch.randn(5, 3, generator=_gen(2)), torch.randn(5, 1, generator=_gen(3))
    sym = S.sd_symbols(2, 3, 4, generator=_gen())
    pats = S.psvrt_patterns(6, 3, generator=_gen()).reshape(2, 3, 3, 3)
    ids = torch.tensor([[0, 1, 2], [3, 4, 5]])
    xt, yt = S.sd_test_batch(2, 4, 3, generator=_gen())
    state = S.langevin_init(th)
    step = lambda s, g: S.langevin_step(s, post, step_size=1e-3, generator=g)  # noqa: E731
    mst = S.mala_init(th, post, step_size=1e-3)
    hst = S.hmc_init(th, post, step_size=1e-3)
    lad = S.ladder_betas(S.temperature_ladder(post.beta, post.beta / 4, 2), 1)
    rst = S.mala_init(th, post, step_size=1e-3, beta=lad)
    lpost = S.NetworkPosterior(S.NetworkSpec(N0=post.spec.N0, N=3, m=post.spec.m), post.X, post.Y,
                               T=0.1, sigma_a2=0.5)
    lth = lpost.sample_prior(2, generator=_gen())
    return {
        "mala_step": (lambda: S.mala_step(mst, post, generator=_gen()),
                      lambda: S.mala_step(mst, post, generator=None)),
        "hmc_step": (lambda: S.hmc_step(hst, post, generator=_gen(), n_leapfrog=2),
                     lambda: S.hmc_step(hst, post, generator=None, n_leapfrog=2)),
        "replica_exchange_swap": (
            lambda: S.replica_exchange_swap(rst, post, n_ladders=1, generator=_gen(), parity=0),
            lambda: S.replica_exchange_swap(rst, post, n_ladders=1, generator=None, parity=0)),
        "sample_readout": (lambda: S.sample_readout(post, th, generator=_gen()),
                           lambda: S.sample_readout(post, th, generator=None)),
        "sample_linear_layer": (lambda: S.sample_linear_layer(lpost, lth, 1, generator=_gen()),
                                lambda: S.sample_linear_layer(lpost, lth, 1, generator=None)),
        "sample_neuron_scales": (lambda: S.sample_neuron_scales(lpost, lth, generator=_gen()),
                                 lambda: S.sample_neuron_scales(lpost, lth, generator=None)),
        "sample_neuron_codes": (lambda: S.sample_neuron_codes(ppost, pth, generator=_gen()),
                                lambda: S.sample_neuron_codes(ppost, pth, generator=None)),
        "make_generator": (lambda: S.make_generator(1, "cpu"), lambda: S.make_generator(None, "cpu")),
        "population_annealing": (
            lambda: S.population_annealing(post.sample_prior(4, generator=_gen(4)), post,
                                           generator=_gen(), beta_target=0.5, n_moves=1,
                                           step_size=1e-3, n_leapfrog=2, max_stages=2),
            lambda: S.population_annealing(post.sample_prior(4, generator=_gen(4)), post,
                                           generator=None, beta_target=0.5, n_moves=1,
                                           step_size=1e-3, n_leapfrog=2, max_stages=2)),
        "init_gamma_mlp": (lambda: S.init_gamma_mlp(2, 3, 4, generator=_gen()),
                           lambda: S.init_gamma_mlp(2, 3, 4, generator=None)),
        "init_gamma_mlp_published": (lambda: S.init_gamma_mlp_published(2, 3, 4, generator=_gen()),
                                     lambda: S.init_gamma_mlp_published(2, 3, 4, generator=None)),
        "truncated_normal": (lambda: S.truncated_normal((2, 3), generator=_gen()),
                             lambda: S.truncated_normal((2, 3), generator=None)),
        "train_gamma_mlp_sd": (
            lambda: S.train_gamma_mlp_sd(sym, *S.sd_test_batch(2, 4, 4, generator=_gen()), 0.5, width=4,
                                         n_steps=2, eval_every=1, generator=_gen()),
            lambda: S.train_gamma_mlp_sd(sym, None, None, 0.5, width=4, n_steps=2, protocol="published",
                                         n_test=8, generator=None)),
        "train_gamma_mlp": (
            lambda: S.train_gamma_mlp(lambda g: S.sd_test_batch(2, 4, 3, generator=g), xt, yt, 0.5,
                                      d_eff=3, width=4, n_steps=2, eval_every=1, generator=_gen()),
            lambda: S.train_gamma_mlp(lambda g: S.sd_test_batch(2, 4, 3, generator=g), xt, yt, 0.5,
                                      d_eff=3, width=4, n_steps=2, eval_every=1, generator=None)),
        "TwoLayerErfPosterior.sample_prior": (lambda: epost.sample_prior(2, generator=_gen()),
                                              lambda: epost.sample_prior(2, generator=None)),
        "init_mlp_ensemble": (lambda: S.init_mlp_ensemble(2, 3, 4, 1, generator=_gen()),
                              lambda: S.init_mlp_ensemble(2, 3, 4, 1, generator=None)),
        "train_mlp_ensemble": (
            lambda: S.train_mlp_ensemble(p, Xm, Ym, lr=0.1, n_steps=3, batch_size=2, generator=_gen()),
            lambda: S.train_mlp_ensemble(p, Xm, Ym, lr=0.1, n_steps=3, batch_size=2)),
        "NetworkPosterior.sample_prior": (lambda: post.sample_prior(2, generator=_gen()),
                                          lambda: post.sample_prior(2, generator=None)),
        "NetworkPosterior.preactivations": (
            lambda: ppost.preactivations(pth, x_off, generator=_gen()),
            lambda: ppost.preactivations(pth, x_off)),
        "NetworkPosterior.outputs": (lambda: ppost.outputs(pth, x_off, generator=_gen()),
                                     lambda: ppost.outputs(pth, x_off)),
        "run_chain": (lambda: S.run_chain(state, step, n_steps=3, generator=_gen(), progress=False),
                      lambda: S.run_chain(state, step, n_steps=3, generator=None, progress=False)),
        "philox_normal_": (lambda: S.philox_normal_(torch.empty(5, dtype=torch.float64), _gen()),
                           lambda: S.philox_normal_(torch.empty(5, dtype=torch.float64), None)),
        "langevin_step": (lambda: S.langevin_step(state, post, step_size=1e-3, generator=_gen()),
                          lambda: S.langevin_step(state, post, step_size=1e-3, generator=None)),
        "load_image_classification": (
            lambda: S.load_image_classification("digits", n_train=6, n_test=3, seed=1),
            lambda: S.load_image_classification("digits", n_train=6, n_test=3, seed=None)),
        "pentomino_batch": (lambda: S.pentomino_batch(ids, 4, blur_sigma=0.5, generator=_gen()),
                            lambda: S.pentomino_batch(ids, 4, generator=None)),
        "psvrt_batch": (lambda: S.psvrt_batch(pats, 4, n_patches=2, generator=_gen()),
                        lambda: S.psvrt_batch(pats, 4, n_patches=2, generator=None)),
        "psvrt_patterns": (lambda: S.psvrt_patterns(3, 3, generator=_gen()),
                           lambda: S.psvrt_patterns(3, 3, generator=None)),
        "psvrt_test_batch": (lambda: S.psvrt_test_batch(2, 4, patch_size=3, n_patches=2, generator=_gen()),
                             lambda: S.psvrt_test_batch(2, 4, patch_size=3, n_patches=2, generator=None)),
        "sd_symbols": (lambda: S.sd_symbols(2, 3, 4, generator=_gen()),
                       lambda: S.sd_symbols(2, 3, 4, generator=None)),
        "sd_test_batch": (lambda: S.sd_test_batch(2, 4, 3, sigma2=0.1, generator=_gen()),
                          lambda: S.sd_test_batch(2, 4, 3, generator=None)),
        "sd_train_batch": (lambda: S.sd_train_batch(sym, 4, sigma2=0.1, generator=_gen()),
                           lambda: S.sd_train_batch(sym, 4, generator=None)),
        "split_pentominoes": (lambda: S.split_pentominoes(10, generator=_gen()),
                              lambda: S.split_pentominoes(10, generator=None)),
        "orthogonal_toy_task": (lambda: S.orthogonal_toy_task(4, 6, seed=3),
                                lambda: S.orthogonal_toy_task(4, 6, seed=None)),
        "class_correlated_toy_task": (
            lambda: S.class_correlated_toy_task(4, 8, 0.1 * np.eye(3), seed=3),
            lambda: S.class_correlated_toy_task(4, 8, 0.1 * np.eye(3), seed=None)),
        "hermite_target_data": (lambda: S.hermite_target_data(4, 3, generator=_gen()),
                                lambda: S.hermite_target_data(4, 3, generator=None)),
        "TiltedProposal.sample": (lambda: S.TiltedProposal(1.0, 4).sample(10, seed=2),
                                  lambda: S.TiltedProposal(1.0, 4).sample(10, seed=None)),
        "direct_mc_log_z1": (lambda: S.direct_mc_log_z1([0.5], 4, n=100, seed=1),
                             lambda: S.direct_mc_log_z1([0.5], 4, n=100, seed=None)),
        "direct_mc_probability": (lambda: S.direct_mc_probability(0.1, 4, 2, chi=1.0, n_net=50, seed=1),
                                  lambda: S.direct_mc_probability(0.1, 4, 2, chi=1.0, n_net=50, seed=None)),
        "prior_rare_event_is": (
            lambda: S.prior_rare_event_is(0.1, 4, 2, chi=1.0, tau_prop=1.0, n_net=20, seed=1),
            lambda: S.prior_rare_event_is(0.1, 4, 2, chi=1.0, tau_prop=1.0, n_net=20, seed=None)),
    }


def test_randomness_table_covers_every_stochastic_public_name():
    stochastic = _names_with("generator") | _names_with("seed")
    missing = stochastic - set(_stochastic_calls())
    assert not missing, f"add these stochastic public names to _stochastic_calls: {sorted(missing)}"


def test_no_public_function_touches_global_rng_state():
    calls = _stochastic_calls()
    torch.manual_seed(1234)
    np.random.seed(1234)
    for name, (good, needs_global) in calls.items():
        t_before, n_before = torch.random.get_rng_state(), np.random.get_state()
        good()
        with pytest.raises((TypeError, ValueError), match="generator|seed") as info:
            needs_global()
        assert "NoneType" in str(info.value) or "None" in str(info.value) or "generator" in str(info.value)
        assert torch.equal(torch.random.get_rng_state(), t_before), f"{name} advanced torch's global RNG"
        n_after = np.random.get_state()
        assert n_after[0] == n_before[0] and np.array_equal(n_after[1], n_before[1]) \
            and n_after[2:] == n_before[2:], f"{name} advanced numpy's global RNG"


# -- item 3: numpy scalars and 0-d tensors are numbers ----------------------------------------


@pytest.mark.parametrize("T", [np.float32(0.02), np.float64(0.02), torch.tensor(0.02), np.array(0.02)])
def test_network_posterior_takes_numpy_and_tensor_scalars(T):
    post = _posterior(T=T, sigma_a2=np.float32(0.5), sigma_w2=np.int64(1))
    ref = _posterior(T=float(T), sigma_a2=float(np.float32(0.5)))
    assert post.T == ref.T and post.beta == ref.beta and isinstance(post.T, float)


def test_numpy_integers_are_ints():
    spec = S.NetworkSpec(N0=np.int64(3), N=np.int32(4), L=np.int64(1))
    assert spec == S.NetworkSpec(N0=3, N=4) and type(spec.N0) is int
    p = S.init_mlp_ensemble(np.int64(2), np.int64(3), np.int64(4), np.int64(1), depth=np.int64(2),
                            generator=_gen())
    assert p.weights[0].shape == (2, 3, 4)
    X, Y = torch.randn(5, 3, generator=_gen(1)), torch.randn(5, 1, generator=_gen(2))
    r = S.train_mlp_ensemble(p, X, Y, lr=np.float32(0.1), n_steps=np.int64(2), batch_size=np.int64(2),
                             num_threads=np.int64(1), generator=_gen())
    assert r.steps == 2
    epost = S.TwoLayerErfPosterior(*S.hermite_target_data(np.int64(4), 3, generator=_gen()),
                                   N=np.int64(3), kappa=np.float32(0.5), chi=torch.tensor(2.0))
    assert epost.kappa == 0.5 and epost.chi == 2.0
    assert checks.check_int("n", torch.tensor(3)) == 3
    assert checks.check_real("x", np.array(1.5)) == 1.5
    with pytest.raises(TypeError, match="x must be a real number"):
        checks.check_real("x", torch.tensor(1 + 2j))
    with pytest.raises(TypeError, match="n must be an integer"):
        checks.check_int("n", torch.tensor(True))


# -- item 4: unavailable devices -----------------------------------------------------------------


def _option_calls(option):
    """{public name: call(value)} for every public callable taking the keyword ``option``
    ("device" or "dtype"): the call passes ``value`` as that option."""
    g = _gen()
    X = torch.ones(3, 2, dtype=torch.float64)
    Y = torch.ones(2, 1, dtype=torch.float64)
    xt, yt = S.sd_test_batch(2, 4, 3, generator=_gen())
    both = {  # the callables with both options
        "temperature_ladder": lambda **kw: S.temperature_ladder(1.0, 0.1, 3, **kw),
        "init_mlp_ensemble": lambda **kw: S.init_mlp_ensemble(2, 3, 4, 1, generator=g, **kw),
        "NetworkPosterior.__init__": lambda **kw: S.NetworkPosterior(S.NetworkSpec(N0=3, N=4), X, Y, T=0.1,
                                                                     sigma_a2=1.0, **kw),
        "sd_symbols": lambda **kw: S.sd_symbols(2, 3, 4, generator=g, **kw),
        "sd_test_batch": lambda **kw: S.sd_test_batch(2, 4, 3, generator=g, **kw),
        "hermite_target_data": lambda **kw: S.hermite_target_data(4, 3, generator=g, **kw),
    }
    only = {
        "device": {
            "make_generator": lambda device: S.make_generator(0, device),
            "resolve_device": lambda device: S.resolve_device(device),
            "psvrt_patterns": lambda **kw: S.psvrt_patterns(3, 3, generator=g, **kw),
            "psvrt_test_batch": lambda **kw: S.psvrt_test_batch(2, 4, patch_size=3, generator=g, **kw),
        },
        "dtype": {
            "resolve_dtype": lambda dtype: S.resolve_dtype(dtype),
            "init_gamma_mlp": lambda **kw: S.init_gamma_mlp(2, 3, 4, generator=g, **kw),
            "init_gamma_mlp_published": lambda **kw: S.init_gamma_mlp_published(2, 3, 4, generator=g, **kw),
            "truncated_normal": lambda **kw: S.truncated_normal(3, generator=g, **kw),
            "train_gamma_mlp_sd": lambda **kw: S.train_gamma_mlp_sd(
                S.sd_symbols(2, 3, 3, generator=g), xt, yt, 0.5, width=4, n_steps=1, generator=g, **kw),
            "train_gamma_mlp": lambda **kw: S.train_gamma_mlp(
                lambda gg: S.sd_test_batch(2, 4, 3, generator=gg), xt, yt, 0.5, d_eff=3, width=4, n_steps=1,
                generator=g, **kw),
        },
    }[option]
    calls = {**both, **only}
    return {name: (lambda value, call=call: call(**{option: value})) for name, call in calls.items()}


@pytest.mark.parametrize("option", ["device", "dtype"])
def test_option_tables_cover_every_public_device_and_dtype_argument(option):
    missing = _names_with(option) - set(_option_calls(option))
    assert not missing, f"add these public names to _option_calls: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(_option_calls("device")))
def test_unavailable_device_is_a_value_error_naming_device(name):
    call = _option_calls("device")[name]
    # cuda:99 is unavailable with or without CUDA; plain 'cuda' only on a CPU-only machine
    bad = ["cuda:99", "tpu", "nonsense"]
    if not torch.cuda.is_available():
        bad += ["cuda", torch.device("cuda")]
    for dev in bad:
        with pytest.raises(ValueError, match=r"device"):
            call(dev)
    with pytest.raises(TypeError, match=r"device must be a str or torch.device"):
        call(3)


def test_generator_and_device_must_agree():
    if not torch.cuda.is_available():
        # a generator on a device other than theta's needs a second device; CI has no GPU, so
        # this runs only on a CUDA machine
        pytest.skip("needs CUDA to build a generator on another device")
    g = torch.Generator(device="cuda")
    with pytest.raises(ValueError, match="device='cpu' but the generator lives on 'cuda'"):
        S.sd_symbols(2, 3, 4, generator=g, device="cpu")


# -- item 5: dtypes --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(_option_calls("dtype")))
def test_bad_dtype_is_a_value_error_naming_dtype(name):
    call = _option_calls("dtype")[name]
    for dt in (torch.int64, torch.float16, torch.complex64, torch.bool, "int64", np.float64):
        with pytest.raises(ValueError, match=r"dtype must be torch.float32 or torch.float64"):
            call(dt)
    call("float32")  # the string spellings are accepted everywhere
    call(torch.float64)


# -- item 6: theta shapes --------------------------------------------------------------------


def _theta_calls():
    post = _posterior()
    epost = _erf_posterior()
    return {
        "NetworkPosterior": (post, post.D, torch.float64,
                             {"grad": post.grad, "unflatten": post.unflatten, "outputs": post.outputs,
                              "preactivations": post.preactivations, "energy": post.energy,
                              "prior_energy": post.prior_energy}),
        "TwoLayerErfPosterior": (epost, epost.dim, torch.float64,
                                 {"grad": epost.grad, "unpack": epost.unpack, "outputs": epost.outputs,
                                  "overlaps": epost.overlaps, "energy": epost.energy}),
    }


def test_theta_table_covers_every_public_theta_method():
    covered = {f"{cls}.{m}" for cls, (_, _, _, methods) in _theta_calls().items() for m in methods}
    # the sampler's own state, protocol and initialiser are checked elsewhere
    # (their theta checks are in tests/simulate/samplers/test_mcmc_exact.py and samplers/test_gibbs.py)
    exempt = {"LangevinState.__init__", "Potential.grad", "langevin_init", "MCMCState.__init__",
              "ExactPotential.grad", "ExactPotential.energy", "mala_init", "hmc_init",
              "sample_readout", "readout_conditional",
              "sample_linear_layer", "sample_neuron_scales",  # tests/simulate/samplers/test_gibbs_linear.py
              "sample_neuron_codes",  # theta="theta" in tests/conformance/_examples_simulate.py
              "population_annealing",  # its theta checks: tests/simulate/samplers/test_annealing.py
              "AnnealingRun.__init__"}  # a result container built by population_annealing
    missing = _names_with("theta") - covered - exempt
    assert not missing, f"add these public names to _theta_calls: {sorted(missing)}"


@pytest.mark.parametrize("cls", sorted(_theta_calls()))
def test_wrongly_shaped_theta_names_theta_and_the_expected_shape(cls):
    model, D, dtype, methods = _theta_calls()[cls]
    for name, method in methods.items():
        for bad in (torch.zeros(2, D + 1, dtype=dtype), torch.zeros(D, dtype=dtype),
                    torch.zeros(1, 2, D, dtype=dtype), torch.zeros(0, D, dtype=dtype)):
            with pytest.raises(ValueError, match=rf"theta must have shape \(E, D\) = \(E, {D}\)"):
                method(bad)
        with pytest.raises(ValueError, match="theta must be a floating-point tensor"):
            method(torch.zeros(2, D, dtype=torch.int64))
        with pytest.raises(TypeError, match="theta must be a torch.Tensor"):
            method(np.zeros((2, D)))
        if name not in ("unflatten",):
            with pytest.raises(ValueError, match="theta must have dtype torch.float64"):
                method(torch.zeros(2, D, dtype=torch.float32))
        method(torch.zeros(2, D, dtype=dtype))  # the right shape still works


def test_erf_posterior_per_chain_sets_need_one_row_each():
    X, y = S.hermite_target_data(4, 3, generator=_gen(), n_sets=3)
    post = S.TwoLayerErfPosterior(X, y, N=2, kappa=1.0)
    with pytest.raises(ValueError, match=r"theta must have one row per training set \(3\)"):
        post.grad(torch.zeros(2, post.dim, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"one row per input set \(3\)"):
        post.outputs(torch.zeros(2, post.dim, dtype=torch.float64))
    # shared test inputs work for any number of chains
    assert post.outputs(torch.zeros(2, post.dim, dtype=torch.float64), X[0]).shape == (2, 4)


# -- item 7: other bad inputs ------------------------------------------------------------------


def _bad_calls():
    g = _gen()
    X64 = torch.ones(3, 2, dtype=torch.float64)
    Y64 = torch.ones(2, 1, dtype=torch.float64)
    spec = S.NetworkSpec(N0=3, N=4)
    p = S.init_mlp_ensemble(2, 3, 4, 1, generator=_gen())
    Xm, Ym = torch.randn(5, 3, generator=_gen(2)), torch.randn(5, 1, generator=_gen(3))
    Xh, yh = S.hermite_target_data(5, 3, generator=_gen())
    xt, yt = S.sd_test_batch(2, 4, 3, generator=_gen())
    W0, a0 = S.init_gamma_mlp(2, 6, 4, generator=_gen())
    post = _posterior()
    state = S.langevin_init(post.sample_prior(2, generator=_gen()))
    sample = lambda gg: S.sd_test_batch(2, 4, 3, generator=gg)  # noqa: E731
    step = lambda s, gg: S.langevin_step(s, post, step_size=1e-3, generator=gg)  # noqa: E731
    nan = float("nan")
    return [
        # posteriors
        (lambda: S.NetworkPosterior(spec, torch.ones(3, 0), torch.ones(0, 1), T=0.1, sigma_a2=1.0),
         ValueError, "X must hold at least one training input"),
        (lambda: S.NetworkPosterior(spec, X64 * (1 + 1j), Y64, T=0.1, sigma_a2=1.0),
         TypeError, "X must hold real numbers"),
        (lambda: S.NetworkPosterior(spec, X64, Y64, T=0.1, sigma_a2=float("inf")),
         ValueError, "sigma_a2 must be a finite number > 0"),
        (lambda: S.NetworkPosterior(spec, X64, Y64, T="0.1", sigma_a2=1.0),
         TypeError, "T must be a finite number > 0"),
        (lambda: post.grad(state.theta, beta=-1.0), ValueError, "beta must be a finite real number > 0"),
        (lambda: S.TwoLayerErfPosterior(Xh * nan, yh, N=2, kappa=1.0), ValueError, "X and y must be finite"),
        (lambda: S.TwoLayerErfPosterior(Xh, yh.float(), N=2, kappa=1.0), ValueError, "of one dtype"),
        (lambda: S.TwoLayerErfPosterior(Xh.long(), yh.long(), N=2, kappa=1.0), ValueError,
         "float32 or float64"),
        (lambda: S.TwoLayerErfPosterior(Xh[:0], yh[:0], N=2, kappa=1.0), ValueError, "at least one input"),
        (lambda: S.TwoLayerErfPosterior(Xh, yh, N=2, kappa=0.0), ValueError, "kappa must be"),
        (lambda: _erf_posterior().outputs(torch.zeros(1, 16, dtype=torch.float64), torch.ones(2, 5)),
         ValueError, r"X must be a tensor of shape \(n, 3\)"),
        (lambda: _erf_posterior().outputs(torch.zeros(1, 16, dtype=torch.float64),
                                          torch.full((2, 3), nan, dtype=torch.float64)),
         ValueError, "X must be a finite"),
        # driver
        (lambda: S.run_chain(object(), lambda s, gg: (s, {}), n_steps=2, generator=g, progress=False),
         TypeError, "state must be a sampler state"),
        (lambda: S.run_chain(state, None, n_steps=2, generator=g, progress=False),
         TypeError, "step_fn must be callable"),
        (lambda: S.run_chain(state, step, n_steps=2, generator=g, observe=3, progress=False),
         TypeError, "observe must be callable"),
        # a step function that does not advance the step counter would loop forever
        (lambda: S.run_chain(state, lambda s, gg: (s, {}), n_steps=2, generator=g, progress=False),
         ValueError, "step_fn must advance state.step by one"),
        # MLP trainer
        (lambda: S.train_mlp_ensemble(p, Xm, Ym, lr=float("inf"), n_steps=1), ValueError,
         "lr must be finite"),
        (lambda: S.train_mlp_ensemble(p, Xm, Ym, lr=0.1, alpha=nan, n_steps=1), ValueError,
         "alpha must be finite"),
        (lambda: S.train_mlp_ensemble(p, Xm, Ym, lr="fast", n_steps=1), TypeError,
         "lr must be a real number"),
        (lambda: S.train_mlp_ensemble(p, Xm, Ym, lr=0.1, n_steps=1, last_layer_only=0.5), ValueError,
         "last_layer_only must be a bool"),
        (lambda: S.train_mlp_ensemble(p, Xm * nan, Ym, lr=0.1, n_steps=1), ValueError, "X must be finite"),
        (lambda: S.train_mlp_ensemble(p, Xm[:0], Ym[:0], lr=0.1, n_steps=1), ValueError,
         "X must hold at least one input"),
        (lambda: S.mlp_forward(p, Xm * nan), ValueError, "X must be finite"),
        (lambda: S.mlp_forward(p, "abc"), TypeError, "X must be a real number, array or tensor"),
        (lambda: S.init_mlp_ensemble(2, 3, 4, 1, generator=g, depth=2.0), ValueError, "depth must be 2 or 3"),
        (lambda: S.init_mlp_ensemble(2, 3, 4, 1, generator=g, gain=nan), ValueError, "gain must be"),
        # gamma MLP
        (lambda: S.gamma_mlp_output(xt, W0, a0, W0 * 0, a0 * 0, 0.5, d_eff=0.0), ValueError,
         "d_eff must be a finite real number > 0"),
        (lambda: S.gamma_mlp_output(xt, W0, a0, W0 * 0, a0 * 0, nan, d_eff=3.0), ValueError,
         "gamma must be finite and > 0"),
        (lambda: S.gamma_mlp_output(xt[0], W0, a0, W0 * 0, a0 * 0, 0.5, d_eff=3.0), ValueError,
         r"x must be a tensor of shape \(E, n, D\)"),
        (lambda: S.gamma_mlp_output(xt, W0, a0, W0 * 0, a0 * 0, 0.5, d_eff=3.0, chunk=0), ValueError,
         "chunk must be >= 1"),
        (lambda: S.train_gamma_mlp(sample, xt * nan, yt, 0.5, d_eff=3, width=4, n_steps=1, generator=g),
         ValueError, "x_test must be finite"),
        (lambda: S.train_gamma_mlp(sample, xt, yt * 2, 0.5, d_eff=3, width=4, n_steps=1, generator=g),
         ValueError, r"y_test must hold labels in \{0, 1\}"),
        (lambda: S.train_gamma_mlp(sample, xt[:, :0], yt[:, :0], 0.5, d_eff=3, width=4, n_steps=1,
                                   generator=g), ValueError, "x_test must have at least one"),
        (lambda: S.lazy_gamma(-1.0), ValueError, "d must be a finite real number > 0"),
        # task generators: a member with fewer than two objects cannot form "different" pairs
        (lambda: S.sd_train_batch(torch.ones(2, 1, 3), 4, generator=g), ValueError,
         "symbols must hold >= 1 member with >= 2 symbols"),
        (lambda: S.sd_train_batch(torch.full((2, 3, 3), nan), 4, generator=g), ValueError,
         "symbols must be a finite"),
        (lambda: S.psvrt_batch(torch.ones(2, 1, 3, 3), 4, generator=g), ValueError,
         "patterns must hold >= 1 member with >= 2"),
        (lambda: S.pentomino_batch(torch.tensor([[3]]), 4, generator=g), ValueError,
         "shape_ids must hold >= 1 member with >= 2 shapes"),
        (lambda: S.pentomino_batch(torch.zeros(0, 3, dtype=torch.long), 4, generator=g), ValueError,
         "shape_ids must hold >= 1 member"),
        # data
        (lambda: S.one_hot_targets([0, 1], 2, y_plus=nan), ValueError, "y_plus must be finite"),
        (lambda: S.one_hot_targets([0, 1], 2, y_minus="a"), TypeError, "y_minus must be a real number"),
        (lambda: S.load_image_classification("digits", n_train=6, n_test=3, seed=-1), ValueError,
         "seed must be an int >= 0"),
        (lambda: S.load_image_classification("digits", classes=(0, 1.5), n_train=6, n_test=3, seed=0),
         ValueError, "classes must be >= 2 distinct ids"),
        # prior sampler (numpy)
        (lambda: S.neuron_g2(nan, 1.0), ValueError, "w_par must be finite"),
        (lambda: S.neuron_g2(0.5, [1.0, float("inf")]), ValueError, "r must be finite"),
        (lambda: S.neuron_g2(0.5, 1j), TypeError, "r must be a real number"),
        (lambda: S.prior_log_density(0.1, nan, 4), ValueError, "u must be finite"),
        (lambda: S.weighted_mean_se([1.0, nan], [0.5, 0.5]), ValueError, "x must be finite"),
        (lambda: S.weighted_mean_se([1.0, 2.0], [nan, 0.5]), ValueError, "weight must be finite"),
        (lambda: S.weighted_ratio_se([1.0, 2.0], [1.0, nan], [0.5, 0.5]), ValueError, "den must be finite"),
        (lambda: S.weighted_mean_se([], []), ValueError, "x and weight must be non-empty"),
        (lambda: S.prior_log_density(-0.5, 1.0, 4), ValueError, r"w_abs must be >= 0"),
        (lambda: S.neuron_g2(np.zeros(0), np.ones(2)), ValueError, "w_par and r must broadcast"),
        (lambda: S.prior_rare_event_is(0.1, 4, 2, chi=1.0, tau_prop=nan, n_net=20, seed=1), ValueError,
         "tau_prop must be a finite number >= 0"),
        (lambda: S.direct_mc_log_z1([nan, 0.5], 4, n=10, seed=1), ValueError, "taus must be finite"),
        (lambda: S.direct_mc_log_z1([0.5 + 1j], 4, n=10, seed=1), TypeError, "taus must be a real"),
        (lambda: S.direct_mc_log_z1([-1.0], 4, n=10, seed=1), ValueError, "taus must be a non-empty"),
        (lambda: S.orthogonal_toy_task(4, 6, ratios=("a", "b")), TypeError, "ratios must be a sequence"),
        (lambda: S.activation_pair("tanh"), ValueError, "name must be one of the activations"),
        (lambda: S.atomic_write("unused.bin", 3.0), TypeError, "write must be callable"),
        # complex and empty inputs of the trainers
        (lambda: S.mlp_forward(p, Xm * (1 + 1j)), TypeError, "X must hold real numbers"),
        (lambda: S.train_mlp_ensemble(p, Xm, Ym * (1 + 1j), lr=0.1, n_steps=1), TypeError,
         "Y must hold real numbers"),
        (lambda: S.gamma_learning_rate(torch.tensor([0.5 + 1j]), 3.0, 0.1), TypeError,
         "gamma must hold real numbers"),
        (lambda: S.gamma_learning_rate(torch.tensor([]), 3.0, 0.1), ValueError, "gamma must not be empty"),
        (lambda: S.gamma_mlp_output(xt * nan, W0, a0, W0 * 0, a0 * 0, 0.5, d_eff=3.0), ValueError,
         "x must be finite"),
        (lambda: S.train_gamma_mlp(sample, xt * (1 + 1j), yt, 0.5, d_eff=3, width=4, n_steps=1, generator=g),
         TypeError, "x_test must hold real numbers"),
        (lambda: S.train_gamma_mlp(3.0, xt, yt, 0.5, d_eff=3, width=4, n_steps=1, generator=g), TypeError,
         "sample_batch must be callable"),
        (lambda: S.train_gamma_mlp(sample, xt, yt, torch.tensor([0.5 + 1j, 1.0]), d_eff=3, width=4, n_steps=1,
                                   generator=g), TypeError, "gamma must hold real numbers"),
        (lambda: S.TwoLayerErfPosterior(Xh[:0], yh, N=2, kappa=1.0), ValueError, "X must hold at least one"),
    ]


@pytest.mark.parametrize("i", range(len(_bad_calls())))
def test_bad_input_is_named(i):
    call, exc, match = _bad_calls()[i]
    with pytest.raises(exc, match=match):
        call()


def test_good_inputs_still_work_after_the_checks():
    # the checks are not stricter than the documented contract
    post = _posterior(dtype="float32")
    th = post.sample_prior(3, generator=_gen())
    g, info = post.grad(th)
    assert g.dtype == torch.float32 and torch.isfinite(g).all() and info["loss"].shape == (3,)
    X_int = np.array([[1, 0], [0, 1], [1, 1]])  # integer inputs are numbers too
    assert _posterior().X.dtype == S.NetworkPosterior(S.NetworkSpec(N0=3, N=4), X_int, np.ones((2, 1)),
                                                      T=0.1, sigma_a2=1.0).X.dtype
    mu, se = S.weighted_mean_se([1.0, 3.0], [0.5, 0.5])
    assert mu == 2.0 and math.isclose(se, math.sqrt(0.5))
    assert S.resolve_device("auto").type in ("cpu", "cuda")


# -- issue 53: upper bounds on counts and sizes ----------------------------------------------


def test_hmc_n_leapfrog_has_an_upper_bound():
    post = _posterior()
    th = post.sample_prior(2, generator=_gen())
    st = S.hmc_init(th, post, step_size=1e-3)
    with pytest.raises(ValueError, match=r"n_leapfrog must be an int in \[1, 10000\], got 10001"):
        S.hmc_step(st, post, generator=_gen(), n_leapfrog=10_001)
    with pytest.raises(ValueError, match=r"n_leapfrog must be an int in \[1, 10000\]"):
        S.make_replica_exchange_step(post, n_ladders=1, method="hmc", n_leapfrog=10**6)
    S.hmc_step(st, post, generator=_gen(), n_leapfrog=2)


def _sd_symbols():
    return S.sd_symbols(2, 3, 2, generator=_gen(1))


def _sd_test():
    return S.sd_test_batch(2, 8, 2, generator=_gen(2))


def _code_posterior():
    t = S.orthogonal_toy_task(6, 8, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=0.5, seed=0)
    return S.NetworkPosterior(S.NetworkSpec(N0=8, N=3, L=1, m=3, activation="sigmoid_erf"), t.X, t.Y,
                              T=0.1, sigma_a2=1.0, project_inputs=True)


# (call, message): size arguments that used to end in MemoryError or torch's allocator error
# (issue 53), each refused up front naming the argument, the value and the 16 GiB limit
_SIZE_CASES = {
    "TiltedProposal.sample": (lambda: S.TiltedProposal(1.0, 4).sample(10**12, 0),
                              r"n is too large: .* GiB, above the 16 GiB limit"),
    "direct_mc_probability": (lambda: S.direct_mc_probability(1.0, 4, 10**8, chi=1.0, n_net=100, seed=0),
                              r"N=100000000 with d=4 is too large"),
    "prior_rare_event_is": (
        lambda: S.prior_rare_event_is(1.0, 4, 10**8, chi=1.0, tau_prop=1.0, n_net=1000, seed=0),
        r"n_net=1000 with N=100000000 is too large"),
    "direct_mc_log_z1": (lambda: S.direct_mc_log_z1([0.5], 4, n=10**12, seed=0),
                         r"n=1000000000000 with d=4 is too large"),
    "one_hot_targets": (lambda: S.one_hot_targets(np.array([0, 1, 2]), 10**10), r"n_classes is too large"),
    "hermite_target_data": (lambda: S.hermite_target_data(10**9, 8, generator=_gen()),
                            r"P=1000000000 with d=8 is too large"),
    "orthogonal_toy_task.N0": (lambda: S.orthogonal_toy_task(6, 10**9, seed=0),
                               r"N0=1000000000 is too large: .* above the 16 GiB limit"),
    "class_correlated_toy_task.N0": (
        lambda: S.class_correlated_toy_task(6, 10**12, 0.2 * np.eye(3), seed=0),
        r"N0=1000000000000 is too large"),
    "init_mlp_ensemble.width": (
        lambda: S.init_mlp_ensemble(2, 3, 10**9, 1, depth=3, generator=_gen()),
        r"n_members=2, d_in=3, width=1000000000, n_out=1 is too large"),
    "init_gamma_mlp.n_members": (lambda: S.init_gamma_mlp(10**12, 4, 5, generator=_gen()),
                                 r"width=5 with n_members=1000000000000 and in_dim=4 is too large"),
    "init_gamma_mlp_published.width": (lambda: S.init_gamma_mlp_published(2, 4, 10**9, generator=_gen()),
                                       r"width=1000000000 with n_members=2 and in_dim=4 is too large"),
    "train_gamma_mlp.width": (
        lambda: S.train_gamma_mlp(lambda g: S.sd_train_batch(_sd_symbols(), 8, generator=g), *_sd_test(),
                                  torch.tensor([0.5, 1.0]), d_eff=2.0, width=10**9, generator=_gen()),
        r"width=1000000000 with n_members=2 and in_dim=4 is too large"),
    "train_gamma_mlp_sd.width": (
        lambda: S.train_gamma_mlp_sd(_sd_symbols(), *_sd_test(), torch.tensor([0.5, 1.0]), batch_size=8,
                                     width=10**9, generator=_gen()),
        r"width=1000000000 with n_members=2 and in_dim=4 is too large"),
    "train_gamma_mlp_sd.batch_size": (
        lambda: S.train_gamma_mlp_sd(_sd_symbols(), *_sd_test(), torch.tensor([0.5, 1.0]), batch_size=10**9,
                                     width=5, generator=_gen()),
        r"batch_size=1000000000 with n_members=2 and width=5 is too large"),
    "sd_symbols.n_tasks": (lambda: S.sd_symbols(10**12, 3, 2, generator=_gen()),
                           r"n_tasks=1000000000000, L=3, d=2 is too large"),
    "sd_test_batch.n": (lambda: S.sd_test_batch(2, 10**9, 2, generator=_gen()),
                        r"n_tasks=2, n=1000000000, d=2 is too large"),
    "sd_train_batch.batch_size": (lambda: S.sd_train_batch(_sd_symbols(), 10**9, generator=_gen()),
                                  r"batch_size=1000000000 with E=2, d=2 is too large"),
    "psvrt_batch.batch_size": (
        lambda: S.psvrt_batch(S.psvrt_patterns(4, 3, generator=_gen())[None].repeat(2, 1, 1, 1), 10**9,
                              n_patches=3, generator=_gen()),
        r"batch_size=1000000000 with E=2 and n_patches=3 is too large"),
    "psvrt_test_batch.n_tasks": (
        lambda: S.psvrt_test_batch(10**12, 4, patch_size=3, n_patches=3, generator=_gen()),
        r"n_tasks=1000000000000, n=4, n_patches=3 is too large"),
    "pentomino_batch.batch_size": (
        lambda: S.pentomino_batch(torch.tensor([[0, 1, 2], [3, 4, 5]]), 10**9, generator=_gen()),
        r"batch_size=1000000000 with E=2 and n_patches=2 is too large"),
    "NetworkPosterior.sample_prior": (lambda: _posterior().sample_prior(10**12, generator=_gen()),
                                      r"n_chains=1000000000000 with D=\d+ is too large"),
    "TwoLayerErfPosterior.sample_prior": (
        lambda: S.TwoLayerErfPosterior(*S.hermite_target_data(10, 4, generator=_gen()), N=3, kappa=0.5)
        .sample_prior(10**12, generator=_gen()),
        r"n_chains=1000000000000 with dim=\d+ is too large"),
    "atomic_write.mode": (lambda: S.atomic_write("never-written.txt", lambda f: None, mode=10**12),
                          r"mode must be an int in \[0, 4095\], got 1000000000000"),
    "temperature_ladder.K": (lambda: S.temperature_ladder(1.0, 0.1, 10**9), r"K=1000000000 is too large"),
    "sample_neuron_codes.n_grid": (
        lambda: (lambda post: S.sample_neuron_codes(post, post.sample_prior(2, generator=_gen()),
                                                    generator=_gen(1), n_grid=10**9))(_code_posterior()),
        r"n_grid=1000000000 \(n_grid_fixed_point=16\) with E=2 chains, P=6 inputs is too large"),
    "ladder_betas": (lambda: S.ladder_betas(S.temperature_ladder(1.0, 0.1, 4), 10**12),
                     r"n_ladders=1000000000000 with K=4 is too large"),
}


@pytest.mark.parametrize("case", sorted(_SIZE_CASES))
def test_size_arguments_are_refused_before_allocating(case):
    call, message = _SIZE_CASES[case]
    with pytest.raises(ValueError, match=message):
        call()
    assert checks.MAX_ALLOC_BYTES == 2**34
