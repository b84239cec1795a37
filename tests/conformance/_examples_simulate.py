"""Example calls for the public names of richlazy.simulate (see _examples.py)."""

from __future__ import annotations

import numpy as np
import torch

from ._common import (
    RHO,
    Example,
    _erf_post,
    _g,
    _gamma_setup,
    _idx_file,
    _mlp,
    _posterior,
    _spec,
    _task,
    ex,
)

SIMULATE: dict[str, Example] = {}
E = SIMULATE

# simulate
E["simulate.make_generator"] = ex(lambda t: dict(seed=3, device="cpu"), "seed device")
E["simulate.resolve_device"] = ex(lambda t: dict(device="cpu"), "device")
E["simulate.resolve_dtype"] = ex(lambda t: dict(dtype=torch.float64), "dtype")
E["simulate.activation_pair"] = ex(lambda t: dict(name="erf"), "name")
E["simulate.gamma_learning_rate"] = ex(
    lambda t: dict(gamma=torch.tensor([0.1, 1.0]), d_eff=4.0, alpha0=0.1),
    "d_eff alpha0", gamma="pos_tensor_grid",
)
E["simulate.gamma_mlp_output"] = ex(
    lambda t: (
        lambda W0a0: dict(
            x=torch.randn(2, 3, 4, generator=_g(5)),
            W0=W0a0[0],
            a0=W0a0[1],
            dW=torch.zeros_like(W0a0[0]),
            da=torch.zeros_like(W0a0[1]),
            gamma=torch.tensor([0.5, 1.0]),
            d_eff=2.0,
            chunk=16,
        )
    )(__import__("richlazy.simulate", fromlist=["x"]).init_gamma_mlp(2, 4, 5, generator=_g(4))),
    "gamma d_eff chunk", x="tensor",
)
E["simulate.init_gamma_mlp"] = ex(
    lambda t: dict(n_members=2, in_dim=4, width=5, generator=_g(4)), "n_members in_dim width generator dtype"
)
E["simulate.lazy_gamma"] = ex(lambda t: dict(d=4.0), d="pos_float")
E["simulate.train_gamma_mlp"] = ex(
    lambda t: (
        lambda s: dict(
            sample_batch=s[0],
            x_test=s[1],
            y_test=s[2],
            gamma=torch.tensor([0.5, 1.0]),
            d_eff=2.0,
            width=4,
            n_steps=3,
            eval_every=1,
            generator=_g(3),
        )
    )(_gamma_setup()),
    "x_test gamma d_eff width alpha0 n_steps eval_every generator dtype", sample_batch="callable",
)
E["simulate.truncated_normal_std"] = ex(lambda t: dict(bound=2.0), "bound")
E["simulate.truncated_normal"] = ex(
    lambda t: dict(size=(2, 3), generator=_g(0), bound=2.0, dtype=torch.float64), "generator bound dtype"
)
E["simulate.init_gamma_mlp_published"] = ex(
    lambda t: dict(n_members=2, in_dim=4, width=5, generator=_g(4)), "n_members in_dim width generator dtype"
)
E["simulate.train_gamma_mlp_sd"] = ex(
    lambda t: dict(
        symbols=__import__("richlazy.simulate", fromlist=["x"]).sd_symbols(2, 3, 2, generator=_g(1)),
        x_test=__import__("richlazy.simulate", fromlist=["x"]).sd_test_batch(2, 8, 2, generator=_g(2))[0],
        y_test=__import__("richlazy.simulate", fromlist=["x"]).sd_test_batch(2, 8, 2, generator=_g(2))[1],
        gamma=torch.tensor([0.5, 1.0]), batch_size=8, d_eff=2.0, width=4, n_steps=3, eval_every=1,
        generator=_g(3),
    ),
    "symbols x_test gamma batch_size d_eff width alpha0 n_steps eval_every sigma2 method generator dtype",
    protocol="choice", eval_chunk="pos_int",
)
# the same function under the published protocol (fresh test batches of n_test pairs)
E["simulate.train_gamma_mlp_sd.published"] = ex(
    lambda t: dict(
        symbols=__import__("richlazy.simulate", fromlist=["x"]).sd_symbols(2, 3, 2, generator=_g(1)),
        x_test=None,
        y_test=None,
        gamma=torch.tensor([0.5, 1.0]), batch_size=8, width=4, n_steps=4, eval_every=2, n_test=64, sigma2=0.0,
        protocol="published", method="auto", generator=_g(3),
    ),
    "symbols n_test sigma2 method generator",
    call=lambda **kw: __import__("richlazy.simulate", fromlist=["x"]).train_gamma_mlp_sd(**kw),
)
E["simulate.TwoLayerErfPosterior"] = ex(
    lambda t: (lambda Xy: dict(X=Xy[0], y=Xy[1], N=3, kappa=0.5, sigma_w2=1.0, sigma_a2=1.0, chi=1.0))(
        __import__("richlazy.simulate", fromlist=["x"]).hermite_target_data(10, 4, generator=_g(0))
    ),
    "X N kappa sigma_w2 sigma_a2 chi", y="tensor",
)
E["simulate.init_mlp_ensemble"] = ex(
    lambda t: dict(
        n_members=2, d_in=3, width=4, n_out=1, depth=2, generator=_g(1), gain=1.4, output_scale=1.0,
        dtype=torch.float64, device="cpu",
    ),
    "n_members width depth generator dtype device", d_in="pos_int", n_out="pos_int", gain="pos_float",
    output_scale="pos_float",
)
E["simulate.mlp_forward"] = ex(
    lambda t: dict(params=_mlp(), X=torch.randn(5, 3, generator=_g(2), dtype=torch.float64)), "X"
)
E["simulate.train_mlp_ensemble"] = ex(
    lambda t: dict(
        params=_mlp(),
        X=torch.randn(5, 3, generator=_g(2), dtype=torch.float64),
        Y=torch.randn(5, 1, generator=_g(3), dtype=torch.float64),
        lr=0.01, n_steps=3, batch_size=2, generator=_g(4), record_every=1, num_threads=1,
    ),
    "X lr n_steps alpha batch_size generator", Y="tensor", weight_decay="nonneg_float",
    record_every="pos_int", num_threads="pos_int",
    accepted={("n_steps", "zero"): "n_steps=0 (documented) trains nothing: the result holds the initial "
              "parameters and their loss (record_steps = [0])"},
)
E["simulate.NetworkPosterior"] = ex(
    lambda t: (
        lambda task: dict(
            spec=_spec(m=3),
            X=task.X,
            Y=task.Y,
            T=0.1,
            sigma_a2=1.0,
            sigma_w2=1.0,
            device="cpu",
            dtype=torch.float64,
        )
    )(_task()),
    "Y sigma_a2 sigma_w2 device dtype", X="matrix", T="pos_float",
)
E["simulate.NetworkSpec"] = ex(
    lambda t: dict(N0=8, N=5, L=1, m=3, activation="erf", regime="nonlazy"),
    "N0 N L m activation", regime="choice",
)
E["simulate.atomic_torch_save"] = ex(lambda t: dict(obj={"a": torch.zeros(2)}, path=t / "x.pt"))
E["simulate.atomic_write"] = ex(
    lambda t: dict(path=t / "x.txt", write=lambda f: f.write(b"x"), mode=0o644), write="callable"
)
E["simulate.clean_orphaned_temp_files"] = ex(lambda t: dict(folder=t, min_age_s=600.0),
                                              min_age_s="nonneg_float")
E["simulate.run_chain"] = ex(
    lambda t: (
        lambda post: dict(
            state=__import__("richlazy.simulate", fromlist=["x"]).langevin_init(
                post.sample_prior(2, generator=_g(0))
            ),
            step_fn=lambda s, g, post=post: __import__("richlazy.simulate", fromlist=["x"]).langevin_step(
                s, post, step_size=1e-3, generator=g
            ),
            n_steps=4,
            generator=_g(1),
            burn_in=1,
            thin=1,
            progress=False,
        )
    )(_posterior()),
    "n_steps generator", step_fn="callable", burn_in="nonneg_int", thin="pos_int", checkpoint_every="pos_int",
    divergence_check_every="pos_int",
)
E["simulate.langevin_init"] = ex(lambda t: dict(theta=torch.zeros(2, 3, dtype=torch.float64)), theta="tensor")
E["simulate.langevin_step"] = ex(
    lambda t: (
        lambda post: dict(
            state=__import__("richlazy.simulate", fromlist=["x"]).langevin_init(
                post.sample_prior(2, generator=_g(0))
            ),
            potential=post,
            step_size=1e-3,
            generator=_g(1),
            beta=0.5,
        )
    )(_posterior()),
    "step_size generator beta", noise_dtype="dtype", noise_rng="choice",
)
E["simulate.LangevinWorkspace"] = ex(lambda t: dict())
# out is written, not read (its values do not matter), so it has no kind of bad values
E["simulate.philox_normal_"] = ex(
    lambda t: dict(out=torch.empty(5, dtype=torch.float64), generator=_g(0)), "generator"
)
E["simulate.paper_step_size"] = ex(lambda t: dict(dt=0.01, T=0.1), dt="pos_float", T="pos_float")
E["simulate.load_image_classification"] = ex(
    lambda t: dict(name="digits", classes=(0, 1), n_train=6, n_test=4, seed=0),
    "name n_train n_test seed", downsample="pos_int",
    accepted={("n_test", "zero"): "n_test may be 0 (documented): a training set only, as the "
              "coding image cases load it"},
)
E["simulate.one_hot_targets"] = ex(
    lambda t: dict(labels=np.array([0, 2, 1]), n_classes=3, y_plus=1.0, y_minus=-0.5),
    "labels n_classes y_plus y_minus",
    accepted={("labels", "empty"): "no labels give an empty (0, n_classes) target"},
)
E["simulate.read_idx"] = ex(lambda t: dict(path=_idx_file(t)))
E["simulate.one_sided_pentominoes"] = ex(lambda t: dict())
E["simulate.pentomino_batch"] = ex(
    lambda t: dict(shape_ids=torch.tensor([[0, 1, 2], [3, 4, 5]]), batch_size=4, generator=_g(0)),
    "batch_size n_patches generator", blur_sigma="nonneg_float",
)
E["simulate.pentomino_canonical_id"] = ex(lambda t: dict(cells=[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]))
E["simulate.psvrt_batch"] = ex(
    lambda t: dict(
        patterns=__import__("richlazy.simulate", fromlist=["x"])
        .psvrt_patterns(4, 3, generator=_g(0))[None]
        .repeat(2, 1, 1, 1),
        batch_size=4,
        n_patches=3,
        generator=_g(1),
    ),
    "batch_size n_patches generator",
)
E["simulate.psvrt_patterns"] = ex(
    lambda t: dict(n=4, patch_size=3, generator=_g(0), device="cpu"), "n patch_size generator device"
)
E["simulate.psvrt_test_batch"] = ex(
    lambda t: dict(n_tasks=2, n=4, patch_size=3, n_patches=3, generator=_g(0), device="cpu"),
    "n_tasks n patch_size n_patches generator device",
)
E["simulate.sd_symbols"] = ex(
    lambda t: dict(n_tasks=2, L=3, d=2, generator=_g(0), device="cpu"),
    "n_tasks d generator device dtype", L="count2",
)
E["simulate.sd_test_batch"] = ex(
    lambda t: dict(n_tasks=2, n=4, d=2, sigma2=0.1, generator=_g(0), device="cpu"),
    "n_tasks n d sigma2 generator device dtype",
)
E["simulate.sd_train_batch"] = ex(
    lambda t: dict(
        symbols=__import__("richlazy.simulate", fromlist=["x"]).sd_symbols(2, 3, 2, generator=_g(0)),
        batch_size=4,
        sigma2=0.1,
        generator=_g(1),
    ),
    "symbols batch_size sigma2 generator",
)
E["simulate.split_pentominoes"] = ex(lambda t: dict(n_train=6, generator=_g(0)), "n_train generator")
E["simulate.class_correlated_toy_task"] = ex(
    lambda t: dict(P=6, N0=10, class_covariance=0.2 * np.eye(3), ratios=RHO, y_plus=1.0,
                   y_minus=-0.5, seed=0),
    "P N0 ratios y_plus y_minus seed", class_covariance="psd_matrix",
)
E["simulate.orthogonal_toy_task"] = ex(
    lambda t: dict(P=6, N0=8, ratios=RHO, y_plus=1.0, y_minus=-0.5, seed=0), "P N0 ratios y_plus y_minus seed"
)
E["simulate.hermite_target_data"] = ex(
    lambda t: dict(P=6, d=3, generator=_g(0), degree=3, n_sets=2, device="cpu", dtype=torch.float64),
    "P d generator degree device dtype", n_sets="pos_int",
)
E["simulate.TiltedProposal"] = ex(
    lambda t: dict(tau=0.5, d=4, eps=0.05, points_per_width=2.0), "tau eps points_per_width", d="count2"
)
E["simulate.direct_mc_log_z1"] = ex(
    lambda t: dict(taus=[0.1, 0.5], d=4, n=200, seed=0, chunk=100),
    "n seed chunk", taus="nonneg_grid", d="count2",
)
E["simulate.direct_mc_probability"] = ex(
    lambda t: dict(alpha=0.05, d=4, N=3, chi=1.0, n_net=200, seed=0, chunk=100),
    "alpha N chi n_net seed chunk", d="count2",
)
E["simulate.neuron_g2"] = ex(
    lambda t: dict(w_par=np.array([0.1, 0.5]), r=np.array([0.2, 1.0])), "w_par", r="nonneg_grid"
)
E["simulate.prior_log_density"] = ex(
    lambda t: dict(w_abs=np.array([0.1, 0.5]), u=np.array([0.2, 1.0]), d=4),
    w_abs="nonneg_grid",
    u="grid",
    d="count2",
)
E["simulate.prior_rare_event_is"] = ex(
    lambda t: dict(alpha=0.05, d=4, N=3, chi=1.0, tau_prop=0.5, n_net=200, seed=0, chunk=100),
    "alpha N chi n_net seed eps chunk", d="count2", tau_prop="nonneg_float",
)
E["simulate.weighted_mean_se"] = ex(
    lambda t: dict(x=np.array([1.0, 2.0, 3.0]), weight=np.array([0.2, 0.5, 0.3])), "weight", x="vector"
)
E["simulate.weighted_ratio_se"] = ex(
    lambda t: dict(
        num=np.array([1.0, 2.0, 3.0]), den=np.array([2.0, 1.0, 3.0]), weight=np.array([0.2, 0.5, 0.3])
    ),
    "weight", num="vector", den="vector",
)

# methods of public classes (the calls a user makes on the objects)
E["simulate.NetworkPosterior.grad"] = ex(
    lambda t: (lambda post: dict(post=post, theta=post.sample_prior(2, generator=_g(0))))(_posterior()),
    "theta",
    call=lambda post, theta: post.grad(theta),
)
E["simulate.NetworkPosterior.sample_prior"] = ex(
    lambda t: dict(post=_posterior(), n_chains=2, generator=_g(0)),
    "generator", n_chains="pos_int",
    call=lambda post, n_chains, generator: post.sample_prior(n_chains, generator=generator),
)
E["simulate.TwoLayerErfPosterior.grad"] = ex(
    lambda t: (lambda post: dict(post=post, theta=post.sample_prior(2, generator=_g(0))))(_erf_post()),
    "theta",
    call=lambda post, theta: post.grad(theta),
)
E["simulate.TiltedProposal.sample"] = ex(
    lambda t: dict(
        prop=__import__("richlazy.simulate", fromlist=["x"]).TiltedProposal(0.5, 4, points_per_width=2.0),
        n=10,
        seed=0,
    ),
    "n seed",
    call=lambda prop, n, seed: prop.sample(n, seed),
    accepted={("n", "zero"): "n=0 draws no samples (an empty batch)"},
)

# exact readout block (blocked Gibbs)
E["simulate.sample_readout"] = ex(
    lambda t: (lambda post: dict(posterior=post, theta=post.sample_prior(2, generator=_g(0)),
                                 generator=_g(1), beta=0.5, method="auto"))(_posterior()),
    # theta: a NaN chain is not an error: it gets a NaN readout (diverged)
    "theta generator beta method",
)
E["simulate.readout_conditional"] = ex(
    lambda t: (lambda post: dict(posterior=post, theta=post.sample_prior(2, generator=_g(0)),
                                 beta=0.5, method="weight"))(_posterior()),
    # theta: a NaN chain is not an error: it gets a NaN readout (diverged)
    "theta beta method",
)
E["simulate.gibbs_readout_step"] = ex(
    lambda t: (lambda post: dict(
        posterior=post,
        hidden_step=lambda s, g, post=post: __import__("richlazy.simulate", fromlist=["x"]).langevin_step(
            s, post, step_size=1e-3, generator=g),
        beta=0.5, method="function"))(_posterior()),
    "beta method", hidden_step="callable",
)
def _linear_posterior(activation="linear"):
    from richlazy.simulate import NetworkPosterior

    t = _task()
    return NetworkPosterior(_spec(m=3, activation=activation), t.X, t.Y, T=0.1, sigma_a2=1.0)


E["simulate.sample_linear_layer"] = ex(
    lambda t: (lambda post: dict(posterior=post, theta=post.sample_prior(2, generator=_g(0)),
                                 layer=1, generator=_g(1), beta=0.5))(_linear_posterior()),
    # theta: a NaN chain is not an error: it stays NaN (diverged)
    "theta generator beta", layer="pos_int",
)
E["simulate.gibbs_linear_step"] = ex(
    lambda t: dict(posterior=_linear_posterior(), beta=0.5, method="auto", scale_moves=True), "beta method"
)
def _toy_code_posterior():
    from richlazy.simulate import NetworkPosterior, NetworkSpec, orthogonal_toy_task

    t = orthogonal_toy_task(6, 8, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=0.5, seed=0)
    return NetworkPosterior(NetworkSpec(N0=8, N=3, L=1, m=3, activation="sigmoid_erf"), t.X, t.Y,
                            T=0.1, sigma_a2=1.0, project_inputs=True)


E["simulate.sample_neuron_codes"] = ex(
    lambda t: (lambda post: dict(posterior=post, theta=post.sample_prior(2, generator=_g(0)),
                                 generator=_g(1), beta=0.5, n_fixed_point=2, n_grid=16,
                                 grid_halfwidth=6.0))(_toy_code_posterior()),
    # theta: a NaN chain is not an error: it stays NaN (diverged)
    "theta generator beta", n_fixed_point="pos_int", grid_halfwidth="pos_float",
)
E["simulate.sample_neuron_scales"] = ex(
    lambda t: (lambda post: dict(posterior=post, theta=post.sample_prior(2, generator=_g(0)),
                                 generator=_g(1)))(_linear_posterior("relu")),
    "theta generator",
)


E["simulate.ReadoutConditional"] = ex(
    lambda t: dict(mean=torch.zeros(2, 3, 1, dtype=torch.float64), cov=None,
                   trace=torch.zeros(2, dtype=torch.float64), method="weight"),
)

# Metropolis-adjusted samplers and replica exchange
def _mcmc(kind="mala", beta=None):
    import richlazy.simulate as S

    post = _posterior()
    th = post.sample_prior(2, generator=_g(0))
    init = S.mala_init if kind == "mala" else S.hmc_init
    return post, init(th, post, step_size=1e-3, beta=beta)


E["simulate.mala_init"] = ex(
    lambda t: (lambda post: dict(theta=post.sample_prior(2, generator=_g(0)), potential=post,
                                 step_size=1e-3, beta=0.5))(_posterior()),
    "step_size beta", theta="tensor",
)
E["simulate.hmc_init"] = ex(
    lambda t: (lambda post: dict(theta=post.sample_prior(2, generator=_g(0)), potential=post,
                                 step_size=1e-3, beta=0.5))(_posterior()),
    "step_size beta", theta="tensor",
)
E["simulate.mala_step"] = ex(
    lambda t: (lambda ps: dict(state=ps[1], potential=ps[0], generator=_g(1), adapt=True,
                               target_accept=0.5))(_mcmc("mala")),
    "generator target_accept",
)
E["simulate.hmc_step"] = ex(
    lambda t: (lambda ps: dict(state=ps[1], potential=ps[0], generator=_g(1), n_leapfrog=2,
                               target_accept=0.8))(_mcmc("hmc")),
    "generator n_leapfrog target_accept",
)
E["simulate.mcmc_refresh"] = ex(lambda t: (lambda ps: dict(state=ps[1], potential=ps[0]))(_mcmc()))
E["simulate.mcmc_end_adaptation"] = ex(lambda t: dict(state=_mcmc()[1]))
E["simulate.temperature_ladder"] = ex(
    lambda t: dict(beta_target=2.0, beta_min=0.5, K=3, dtype=torch.float64, device="cpu"),
    "beta_target dtype device", beta_min="pos_float", K="pos_int",
)
E["simulate.ladder_betas"] = ex(
    lambda t: dict(ladder=torch.tensor([2.0, 1.0], dtype=torch.float64), n_ladders=2), "n_ladders"
)
E["simulate.target_rows"] = ex(lambda t: dict(x=torch.zeros(4, 3), n_ladders=2), "n_ladders")
E["simulate.replica_exchange_swap"] = ex(
    lambda t: (lambda ps: dict(state=ps[1], potential=ps[0], n_ladders=1, generator=_g(1),
                               parity=0))(_mcmc("mala", torch.tensor([2.0, 1.0], dtype=torch.float64))),
    "n_ladders generator",
)
E["simulate.make_replica_exchange_step"] = ex(
    lambda t: dict(potential=_posterior(), n_ladders=1, method="mala", swap_every=1),
    "n_ladders method", swap_every="pos_int",
)


# population annealing
def _annealing_kwargs():
    post = _posterior()
    return dict(theta=post.sample_prior(4, generator=_g(0)), potential=post, generator=_g(1),
                beta_target=0.5, beta_start=0.0, n_populations=2, ess_min=0.5, n_moves=1,
                method="hmc", step_size=1e-3, n_leapfrog=2, max_stages=3)


def _annealing_run():
    import richlazy.simulate as S

    return S.population_annealing(**_annealing_kwargs())


E["simulate.population_annealing"] = ex(
    lambda t: _annealing_kwargs(),
    "generator beta_target method step_size n_leapfrog", theta="tensor", beta_start="nonneg_float",
    n_populations="pos_int", ess_min="prob_pos", n_moves="pos_int", max_stages="pos_int",
)
E["simulate.annealed_mean"] = ex(
    lambda t: (lambda run: dict(run=run, values=run.loss))(_annealing_run()), "values"
)
E["simulate.annealing_diagnostics"] = ex(
    lambda t: (lambda run: dict(run=run, values=run.loss, min_ess_fraction=0.3, min_families=2.0,
                                max_spread_z=4.0, max_logz_spread=1.0))(_annealing_run()),
    "values", min_ess_fraction="prob_pos", min_families="pos_float", max_spread_z="pos_float",
    max_logz_spread="pos_float",
)
