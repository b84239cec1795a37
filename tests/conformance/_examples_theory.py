"""Example calls for the public names of richlazy.theory (see _examples.py)."""

from __future__ import annotations

import numpy as np

from ._common import (
    _X,
    _Y,
    RHO,
    Example,
    _chernoff_cgf,
    _lin_solution,
    _rng,
    _sd_pairs,
    _sig_toy,
    _spd,
    _toy_targets,
    ex,
)

THEORY: dict[str, Example] = {}
E = THEORY

# theory.kernels
E["theory.gauss_hermite_nodes"] = ex(lambda t: dict(n=8), "n")
E["theory.gaussian_expectation"] = ex(
    lambda t: dict(f=np.tanh, mean=0.2, var=0.5, n_nodes=16), "f mean var n_nodes"
)
E["theory.gaussian_pair_expectation"] = ex(
    lambda t: dict(f=np.tanh, g=np.sin, c11=1.0, c12=0.3, c22=0.8, m1=0.1, m2=-0.1, n_nodes=16),
    "f c11 c12 c22 n_nodes", g="callable", m1="real", m2="real",
)
E["theory.phi"] = ex(lambda t: dict(z=np.array([-1.0, 0.0, 2.0]), activation="erf"), "z activation")
E["theory.phi_prime"] = ex(lambda t: dict(z=np.array([-1.0, 0.0, 2.0]), activation="erf"), "z activation")
E["theory.deep_nngp_cross_kernel"] = ex(
    lambda t: dict(
        k0_diag_a=np.array([1.0, 0.9]), K0_ab=np.array([[0.3, 0.2], [0.1, 0.4]]),
        k0_diag_b=np.array([1.1, 0.8]), activation="erf", depth=2, sigma_w2=1.2, n_nodes=16,
    ),
    "activation depth n_nodes", k0_diag_a="nonneg_array", K0_ab="matrix", k0_diag_b="nonneg_array",
    sigma_w2="nonneg_float",
)
E["theory.deep_nngp_kernel"] = ex(
    lambda t: dict(K0=_spd(3), activation="erf", depth=2, sigma_w2=1.2, n_nodes=16),
    "K0 activation depth n_nodes", sigma_w2="nonneg_float",
)
E["theory.derivative_expectation"] = ex(
    lambda t: dict(c11=1.0, c12=0.3, c22=0.8, activation="erf"), "c11 c12 c22 activation"
)
E["theory.mean_activation"] = ex(
    lambda t: dict(mean=0.2, var=0.5, activation="erf", n_nodes=16), "mean var activation n_nodes"
)
E["theory.nngp_cross_kernel"] = ex(
    lambda t: dict(
        k_diag_a=np.array([1.0, 0.9]), K_ab=np.array([[0.3, 0.2], [0.1, 0.4]]), k_diag_b=np.array([1.1, 0.8]),
        activation="erf", sigma_w2=1.2, n_nodes=16,
    ),
    "activation n_nodes", k_diag_a="nonneg_array", K_ab="matrix", k_diag_b="nonneg_array",
    sigma_w2="nonneg_float",
)
E["theory.nngp_expectation"] = ex(
    lambda t: dict(c11=1.0, c12=0.3, c22=0.8, activation="erf", n_nodes=16), "c11 c12 c22 activation n_nodes"
)
E["theory.nngp_kernel"] = ex(
    lambda t: dict(K=_spd(3), activation="erf", sigma_w2=1.2, n_nodes=16),
    "K activation n_nodes", sigma_w2="nonneg_float",
)
E["theory.relu_ntk"] = ex(
    lambda t: dict(c11=1.0, c12=0.3, c22=0.8, sigma_w2=1.2, sigma_a2=0.7),
    "c11 c12 c22", sigma_w2="nonneg_float", sigma_a2="nonneg_float",
)
E["theory.relu_ntk_unit_sphere"] = ex(lambda t: dict(rho=np.array([-0.5, 0.1, 0.9])), rho="corr")
E["theory.two_layer_ntk"] = ex(
    lambda t: dict(c11=1.0, c12=0.3, c22=0.8, activation="erf", sigma_w2=1.2, sigma_a2=0.7),
    "c11 c12 c22 activation", sigma_w2="nonneg_float", sigma_a2="nonneg_float",
)
E["theory.saddle_moments"] = ex(lambda t: dict(h=np.array([0.1, -0.2]), activation="erf"), "h activation")
E["theory.tilted_density"] = ex(
    lambda t: dict(z=np.array([0.0, 0.5]), h=0.3, activation="erf", n_nodes=31),
    "z activation n_nodes", h="real",
)
E["theory.tilted_moments"] = ex(
    lambda t: dict(h=np.array([0.1, -0.2]), activation="erf", n_nodes=31), "h activation n_nodes"
)
E["theory.tilted_moments_quad"] = ex(
    lambda t: dict(h=np.array([0.1, -0.2]), activation="erf"), "h activation"
)

# theory.coding
E["theory.nngp_posterior"] = ex(
    lambda t: dict(
        K0=_spd(4),
        k0_cross=_X(4, 2, 1) * 0.3,
        k0_test_diag=np.array([1.0, 1.2]),
        Y=_Y(4, 2),
        activation="erf",
        depth=1,
        sigma_a2=1.0,
        sigma_w2=1.0,
        noise=0.01,
    ),
    "K0 Y activation depth sigma_a2 sigma_w2 noise", k0_cross="matrix", k0_test_diag="nonneg_array",
)
E["theory.solve_nngp"] = ex(
    lambda t: dict(K0=_spd(4), Y=_Y(4, 2), activation="erf", depth=1, sigma_a2=1.0, sigma_w2=1.0, noise=0.01),
    "K0 Y activation depth sigma_a2 sigma_w2 noise",
)
E["theory.default_sigma_a2"] = ex(lambda t: dict(P=4, L=1, activation="linear"), "P L activation")
E["theory.input_kernel"] = ex(lambda t: dict(X=_X(), X2=_X(6, 2, 1)), "X2", X="matrix")
E["theory.linear_saddle_residuals"] = ex(
    lambda t: (lambda s: dict(K0=s.K0, Y=s.Y, t=s.t, U=s.U, kernels=s.kernels, sigma_a2=s.sigma_a2, T=0.0))(
        _lin_solution()
    ),
    "K0 Y t sigma_a2 T", U="psd_matrix",
)
E["theory.solve_linear_network"] = ex(
    lambda t: dict(K0=_spd(4), Y=_Y(4, 2), L=1, sigma_a2=0.5, T=0.01, rtol=1e-10, maxiter=50),
    "K0 Y L sigma_a2 T rtol maxiter",
)
E["theory.solve_U"] = ex(
    lambda t: dict(G=_spd(2), sigma_a2=0.5, L=1, rank_rtol=1e-10),
    "sigma_a2 L", G="psd_matrix", rank_rtol="nonneg_float",
)
E["theory.relu_stability_margin"] = ex(
    lambda t: dict(t=np.array([[1.0, 0.2], [-0.5, 0.4]]), ratios=np.array([0.5, 0.5])), "t ratios"
)
E["theory.relu_dual_margin"] = ex(
    lambda t: dict(K0=np.eye(6), t=_toy_targets()[np.arange(6) % 3], sigma_a2=1.0 / 6,
                   n_starts=20, seed=0),
    "K0 t sigma_a2 n_starts seed",
)
E["theory.solve_relu_outliers"] = ex(
    lambda t: dict(
        K0=np.eye(6),
        Y=_toy_targets()[np.arange(6) % 3],
        sigma_a2=1.0 / 6,
        T=0.0,
        n_restarts=1,
        seed=0,
        maxiter=2,
    ),
    "K0 Y sigma_a2 T seed maxiter", n_restarts="pos_int",
)
_BLOCK_LAB = np.repeat(np.arange(3), 4)
_BLOCK_K = 0.7 * np.eye(12) + 0.3 * (_BLOCK_LAB[:, None] == _BLOCK_LAB[None, :])
E["theory.class_block_kernel"] = ex(lambda t: dict(K=_BLOCK_K, labels=_BLOCK_LAB), "K labels")
E["theory.block_stability_margin"] = ex(
    lambda t: dict(t=0.1 * _toy_targets(), counts=np.array([4.0, 4.0, 4.0]),
                   s=np.array([0.7, 0.7, 0.7]), q=0.3 * np.eye(3), sigma_a2=1.0 / 12),
    "t sigma_a2", counts="pos_array", s="pos_array", q="psd_matrix",
)
E["theory.solve_relu_block"] = ex(
    lambda t: dict(K0=_BLOCK_K, Y=_toy_targets()[_BLOCK_LAB], sigma_a2=1.0 / 12, T=0.0,
                   bulk="none", atol=1e-9, maxiter=3, quad_nodes=4, readout_nodes=3),
    "K0 Y sigma_a2 T atol maxiter quad_nodes", bulk="choice", readout_nodes="pos_int",
)
E["theory.solve_relu_toy"] = ex(
    lambda t: dict(ratios=[0.5, 0.5], class_targets=[[1.0], [-1.0]], P=None), "ratios class_targets"
)
E["theory.code_transitions"] = ex(
    lambda t: (lambda s: dict(y_minus_values=[0.3, 0.4], solutions=[s, s], min_weight=1e-6))(_sig_toy()),
    "y_minus_values", min_weight="pos_float",
)
E["theory.locate_code_transition"] = ex(
    lambda t: dict(y_lo=0.45, y_hi=0.5, ratios=RHO, atol=5e-2, n_random=2),
    "ratios atol", y_lo="real", y_hi="real",
)
def _sig_general():
    from richlazy.theory import solve_sigmoid_general

    return solve_sigmoid_general(np.eye(6), _toy_targets()[np.arange(6) % 3], seed=0, throw=True)


E["theory.solve_sigmoid_general"] = ex(
    # the default strategy (continuation from the toy): "anneal" with n_random=2 missed the
    # global maximum of G with OpenBLAS's Haswell kernels (NaN certificate fields), so the
    # example depended on the BLAS's rounding
    lambda t: dict(K0=np.eye(6), Y=_toy_targets()[np.arange(6) % 3], strategy="auto", n_random=2, seed=0),
    "K0 Y n_random seed", strategy="choice",
)
_LAB6 = np.arange(6) % 3
E["theory.solve_sigmoid_first_layer"] = ex(
    lambda t: dict(K_tilde=0.3 * np.eye(6) + 0.1, labels=_LAB6, sigma_w2=1.0, grid_step=0.6, n_bins=64),
    "K_tilde labels sigma_w2 activation n_nodes n_bins",
)
E["theory.conjugate_kernel"] = ex(
    lambda t: dict(solution=_sig_general()),
)
E["theory.solve_sigmoid_two_layer"] = ex(
    lambda t: dict(labels=_LAB6, Y=_toy_targets()[_LAB6], K1_start=0.3 * np.eye(6) + 0.2, maxiter=1),
    "labels Y sigma_w2 rtol maxiter fd_step", K1_start="matrix",
)
E["theory.solve_sigmoid_middle_layer"] = ex(
    lambda t: dict(K_prev=0.3 * np.eye(6) + 0.2, K_tilde=0.3 * np.eye(6) + 0.1, labels=_LAB6, quad_nodes=4,
                   n_starts=4, n_bins=64, seed=0),
    "K_tilde labels sigma_w2 activation n_nodes quad_nodes n_starts n_bins seed", K_prev="matrix",
)
E["theory.solve_sigmoid_deep"] = ex(
    lambda t: dict(labels=_LAB6, Y=_toy_targets()[_LAB6], K_start=[0.3 * np.eye(6) + 0.2], maxiter=1),
    "labels Y sigma_w2 rtol maxiter fd_step quad_nodes",
)
E["theory.solve_sigmoid_toy"] = ex(
    lambda t: dict(ratios=RHO, class_targets=_toy_targets(), P=None, T=0.0, n_random=2, seed=0, maxiter=50),
    "ratios class_targets T activation n_random seed maxiter n_nodes",
)
E["theory.sweep_y_minus"] = ex(
    lambda t: dict(y_minus_values=[0.3], ratios=RHO, n_random=2), "y_minus_values ratios"
)
E["theory.sweep_temperature"] = ex(
    lambda t: dict(T_values=[0.2], ratios=RHO, class_targets=_toy_targets(), n_random=2),
    "ratios class_targets", T_values="nonneg_grid",
)
E["theory.locate_critical_temperature"] = ex(
    lambda t: dict(T_lo=0.0, T_hi=0.3, ratios=RHO, class_targets=_toy_targets(), atol=0.1, n_random=2),
    "ratios class_targets atol", T_lo="real", T_hi="real",
)
E["theory.ToyTask"] = ex(lambda t: dict(ratios=RHO, class_targets=_toy_targets()), "ratios class_targets")
E["theory.toy_class_targets"] = ex(lambda t: dict(m=3, y_plus=1.0, y_minus=-0.5), "m y_plus y_minus")
E["theory.solve_sigmoid_toy_populations"] = ex(
    lambda t: (
        lambda s: dict(
            ratios=RHO, class_targets=s.class_targets, populations=s.P_gamma, a_start=s.a_gamma, t0=s.t
        )
    )(_sig_toy()),
    "ratios class_targets", populations="nonneg_array", a_start="matrix", t0="matrix",
)

# theory.ldt
E["theory.ak_sample_complexity"] = ex(
    lambda t: dict(alpha=0.1, d=8, N=4, kappa=1.0, sigma_w2=1.0, sigma_a2=1.0, chi=1.0, degree=3),
    "alpha d N kappa sigma_w2 sigma_a2 chi degree",
)
E["theory.ak_two_layer_erf"] = ex(
    lambda t: dict(P=[10.0, 100.0], d=8, N=4, kappa=1.0, maxiter=50),
    "d N kappa sigma_w2 maxiter", P="pos_grid",
)
E["theory.alignment"] = ex(
    lambda t: dict(
        f_values=np.array([[0.1, 0.5, -0.2]]),
        y_values=np.array([0.2, 0.4, -0.1]),
        weights=np.array([0.2, 0.5, 0.3]),
    ),
    "y_values", f_values="array", weights="nonneg_array",
    accepted={("f_values", "empty"): "zero candidate functions give an empty result"},
)
E["theory.binary_kl"] = ex(lambda t: dict(q=0.3, p=0.5), q="prob", p="prob")
E["theory.chernoff_energy"] = ex(
    lambda t: dict(alpha=np.array([0.5, 1.2]), cgf=_chernoff_cgf, t_scale=1.0, rtol=1e-10, maxiter=50),
    "rtol maxiter", alpha="grid", cgf="callable", t_scale="pos_float", t_max="pos_float",
)
E["theory.classification_rate"] = ex(lambda t: dict(K_diag=np.array([0.8, 1.0]), C=3), "K_diag C")
E["theory.k_factor"] = ex(
    lambda t: dict(K_diag=np.array([0.8, 1.0, 0.9]), y_values=np.array([0.2, -0.4, 0.3])), "K_diag y_values"
)
E["theory.k_factor_two_layer_erf"] = ex(
    lambda t: dict(sigma_w2=1.0, sigma_a2=1.0, chi=1.0, y_norm2=1.0), "sigma_w2 sigma_a2 chi y_norm2"
)
E["theory.log_partition_classes_asymptotic"] = ex(
    lambda t: dict(K=np.array([0.5, 1.0]), C=3), "C", K="nonneg_grid"
)
E["theory.log_partition_classes_exact"] = ex(
    lambda t: dict(K=np.array([0.5, 1.0]), C=3), "C", K="nonneg_grid"
)
E["theory.log_posterior_bound"] = ex(
    lambda t: dict(P=np.array([10.0, 20.0]), log_prior_prob=-3.0, kappa=1.0, k=0.5),
    "log_prior_prob kappa k", P="nonneg_grid",
)
E["theory.mse_lower_bound"] = ex(
    lambda t: dict(alignment_value=0.3, y_norm2=1.0),
    "y_norm2", alignment_value="corr",
    accepted={("alignment_value", "above_one"): "A_f = <f, y>/<y, y> is any real number (f = 2y has "
              "A_f = 2) and the bound <y, y>(A_f - 1)^2 holds for every real A_f"},
)
E["theory.sample_complexity"] = ex(
    lambda t: dict(log_prior_prob=-3.0, kappa=1.0, k=0.5), "log_prior_prob kappa k"
)
E["theory.sample_complexity_classification"] = ex(
    lambda t: dict(energy=3.0, kappa=1.0, K_diag=np.array([0.8, 1.0]), C=3), "energy kappa K_diag C"
)
E["theory.sample_complexity_from_energy"] = ex(lambda t: dict(energy=3.0, kappa=1.0, k=0.5), "energy kappa k")
E["theory.ErfModel"] = ex(
    lambda t: dict(
        d=8, N=4, sigma_w2=1.0, sigma_a2=1.0, chi=1.0, degree=3, points_per_width=4.0, perp="frozen"
    ),
    "d N sigma_w2 sigma_a2 chi degree points_per_width perp",
)
E["theory.erf_derivative_gaussian_mean"] = ex(
    lambda t: dict(n=2, s2=np.array([0.5, 1.0])), n="nonneg_int", s2="nonneg_grid"
)
E["theory.erf_hermite_coefficient_sq"] = ex(lambda t: dict(m=3), m="nonneg_int")
E["theory.erf_hermite_overlap"] = ex(
    lambda t: dict(n=3, w_par=np.array([0.1, 0.3]), w_norm2=np.array([0.5, 0.6])),
    "w_par", n="nonneg_int", w_norm2="nonneg_grid",
)
E["theory.ldt_log_mgf"] = ex(
    lambda t: dict(t=np.array([0.5, 1.0]), d=8, N=4, points_per_width=4.0),
    "d N sigma_w2 points_per_width", t="grid",
)
E["theory.ldt_two_layer_erf"] = ex(
    lambda t: dict(alpha=[0.2, 0.5], d=8, N=4, points_per_width=4.0, maxiter=50),
    "d N sigma_w2 kappa points_per_width perp maxiter", alpha="pos_grid",
)
E["theory.log_z1_reference"] = ex(lambda t: dict(tau=0.5, d=4, dps=15), "tau d sigma_w2", dps="pos_int")
E["theory.outlier_threshold"] = ex(
    lambda t: dict(d=8, sigma_w2=1.0, n_sigma=3.0), "d sigma_w2", n_sigma="pos_float"
)
E["theory.overlap_potential"] = ex(lambda t: dict(w_par=np.array([0.1, 0.5]), d=8), "w_par d sigma_w2 degree")
E["theory.tilted_overlap_density"] = ex(
    lambda t: dict(w_par=np.array([0.1, 0.5]), t=0.5, d=8, N=4, points_per_width=4.0),
    "w_par d N sigma_w2", t="nonneg_float",
)
E["theory.alignment_cost"] = ex(
    lambda t: dict(alpha=np.array([0.5, 2.0]), yKy=3.0, y_norm2=1.0),
    "y_norm2", alpha="nonneg_grid", yKy="pos_float",
)
E["theory.feature_propagation_rkhs"] = ex(
    lambda t: dict(D_values=[0.0, 2.0], d=3, N=20, n=12, seed=0, rcond=1e-6),
    "d N n seed", D_values="nonneg_grid", rcond="pos_float",
)
E["theory.gaussian_pattern_cost"] = ex(
    lambda t: dict(mu=np.array([0.1, -0.2, 0.3]), Q=0.1 * _spd(3, 1), K=_spd(3)),
    "K", mu="vector", Q="psd_matrix",
)
E["theory.gfl_cost"] = ex(lambda t: dict(D=np.array([0.5, 2.0])), "D")
E["theory.gfl_energy"] = ex(
    lambda t: dict(D=np.array([1.0, 2.0]), n_neurons=10.0, lam_target=0.1, degree=3),
    "D n_neurons lam_target degree",
)
E["theory.gfl_log_partition_ratio"] = ex(lambda t: dict(D=np.array([0.5, 2.0])), "D")
E["theory.gp_energy"] = ex(
    lambda t: dict(alpha=np.array([0.5, 2.0]), lam_target=0.1), "lam_target", alpha="nonneg_grid"
)
E["theory.m_specialization_energy"] = ex(
    lambda t: dict(M=np.array([1.0, 2.0]), n_neurons=10.0, rkhs_norm_value=3.0, overlap2=0.5),
    "n_neurons rkhs_norm_value overlap2", M="pos_grid",
)
E["theory.magnetization_energy"] = ex(
    lambda t: dict(beta=np.array([1.0, 2.0]), n_neurons=10.0, rkhs_norm_value=3.0, overlap2=0.5),
    "n_neurons rkhs_norm_value overlap2", beta="pos_grid",
)
E["theory.mehler_coefficients"] = ex(
    lambda t: dict(activation="erf", q=0.6, n_max=5, n_nodes=40), "activation q n_max n_nodes"
)
E["theory.mehler_kernel"] = ex(
    lambda t: dict(Q=np.array([[0.6, 0.2], [0.2, 0.6]]), q=0.6, activation="erf", n_max=5),
    "q activation n_max", Q="grid",
)
E["theory.rkhs_norm"] = ex(lambda t: dict(K=_spd(4), f=np.array([0.1, 0.4, -0.2, 0.3])), "K", f="vector")
E["theory.sherman_morrison_quadratic_form"] = ex(
    lambda t: dict(K0=_spd(3), psi=np.array([0.1, 0.4, -0.2]), c=0.5, phi=np.array([0.3, 0.1, 0.2])),
    "K0", psi="vector", c="nonneg_float", phi="vector",
)
E["theory.specialization_cost"] = ex(
    lambda t: dict(mu=np.array([1.0, 2.0]), rkhs_norm_value=3.0), "rkhs_norm_value", mu="nonneg_grid"
)
E["theory.spiked_rkhs_norm"] = ex(
    lambda t: dict(base_norm=3.0, c=np.array([0.5, 2.0])), base_norm="pos_float", c="nonneg_grid"
)
E["theory.sqrt_m_specialization_energy"] = ex(
    lambda t: dict(mu=np.array([1.0, 2.0]), n_neurons=10.0, rkhs_norm_value=3.0, overlap2=0.5),
    "n_neurons rkhs_norm_value overlap2", mu="pos_grid",
)
E["theory.two_layer_erf_pattern_energies"] = ex(
    lambda t: dict(alpha=0.5, d=8, N=4), "alpha d N sigma_w2 degree"
)
E["theory.clear_table_cache"] = ex(lambda t: dict())
E["theory.minimize_energy"] = ex(
    lambda t: (lambda x: dict(energy=2 * x + 3 / x**2, params=(x,)))(
        __import__("sympy").Symbol("x", positive=True)
    )
)
E["theory.parse_table_expression"] = ex(lambda t: dict(text="N*d**2 + 1/D"), text="expr")
E["theory.pattern_crossovers"] = ex(lambda t: dict(model="fcn2-erf-He3"), "model")
E["theory.scaling_tables"] = ex(lambda t: dict(model="fcn2-erf-He3"), "model")

# theory.equality
E["theory.bayes_accuracy"] = ex(
    lambda t: (lambda xy: dict(z1=xy[0][:, :3], z2=xy[0][:, 3:], y=xy[1], prior="generalising", sigma2=0.1))(
        _sd_pairs()
    ),
    "z1 z2 y", prior="choice", sigma2="pos_float",
)
E["theory.bayes_generalising_accuracy"] = ex(
    lambda t: dict(d=3, sigma2=0.1, epsabs=1e-8), "d epsabs", sigma2="pos_float"
)
E["theory.llr_generalising"] = ex(
    lambda t: (lambda x: dict(z1=x[:, :3], z2=x[:, 3:], sigma2=0.1))(_sd_pairs()[0]),
    "z1 z2", sigma2="pos_float",
)
E["theory.llr_memorising"] = ex(
    lambda t: (lambda x: dict(z1=x[:, :3], z2=x[:, 3:], symbols=_rng(1).standard_normal((3, 3)), sigma2=0.1))(
        _sd_pairs()[0]
    ),
    "z1 z2", symbols="matrix", sigma2="pos_float",
)
E["theory.circulant_eigenpairs"] = ex(lambda t: dict(d=4), "d")
E["theory.eq3_accuracy"] = ex(lambda t: dict(n_symbols=4), "n_symbols")
E["theory.handcrafted_accuracy"] = ex(lambda t: dict(rho=1.5), "rho")
E["theory.handcrafted_different_accuracy"] = ex(lambda t: dict(rho=1.5), "rho")
E["theory.handcrafted_solution"] = ex(lambda t: dict(d=3, rho=1.5), "d rho")
E["theory.ideal_max_margin_matrix"] = ex(lambda t: dict(d=3), "d")
E["theory.max_margin_matrix"] = ex(
    lambda t: (lambda xy: dict(x=xy[0], y=xy[1]))(_sd_pairs(8, 2, 3)), "y", x="matrix"
)
E["theory.max_margin_solution"] = ex(
    lambda t: (lambda xy: dict(x=xy[0], y=xy[1]))(_sd_pairs(8, 2, 3)), "y", x="matrix"
)
E["theory.readout_drift_ratio"] = ex(
    lambda t: dict(
        omega1_plus=_rng(1).standard_normal((5, 3)),
        omega2_plus=_rng(2).standard_normal((5, 3)),
        omega1_minus=_rng(3).standard_normal((5, 3)),
        omega2_minus=_rng(4).standard_normal((5, 3)),
    ),
    omega1_plus="matrix",
    omega2_plus="matrix",
    omega1_minus="matrix",
    omega2_minus="matrix",
)
E["theory.readout_ratio_heuristic"] = ex(lambda t: dict(n_symbols=4), "n_symbols")
E["theory.rich_accuracy"] = ex(lambda t: dict(n_symbols=4, rho=1.5), "n_symbols rho")
E["theory.rich_different_accuracy"] = ex(lambda t: dict(n_symbols=4, rho=1.5), "n_symbols rho")
E["theory.self_consistent_mu"] = ex(lambda t: dict(n_plus=3, n=8, readout_sign=1), "n_plus n readout_sign")
E["theory.simulate_markov_walkers"] = ex(
    lambda t: dict(n_symbols=4, readout_sign=1, n_units=3, batch_size=8, n_steps=3, seed=0),
    "n_symbols readout_sign n_units batch_size n_steps seed",
    nan_ok="residual is NaN by design (a simulation, not an iterative solve)",
)
E["theory.walker_drifts"] = ex(
    lambda t: dict(n_plus=3, n=8, mu=0.5, readout_sign=1), "n_plus n readout_sign", mu="real"
)
E["theory.kernel_gradient_descent"] = ex(
    lambda t: (
        lambda xy: dict(train_x=xy[0], train_y=xy[1], test_x=xy[0][:3], kernel="ntk", lr=0.5, n_steps=5)
    )(_sd_pairs(8, 2, 3)),
    "train_x train_y test_x kernel lr n_steps", loss="choice",
)
E["theory.kernel_regression_predict"] = ex(
    lambda t: (lambda xy: dict(train_x=xy[0], train_y=xy[1], test_x=xy[0][:3], kernel="ntk", ridge=1e-3))(
        _sd_pairs(8, 2, 3)
    ),
    "train_x train_y test_x kernel ridge",
)
E["theory.relu_nngp_gram"] = ex(lambda t: dict(X1=_X(4, 3), X2=_X(2, 3, 1)), "X1 X2")
E["theory.relu_ntk_gram"] = ex(lambda t: dict(X1=_X(4, 3), X2=_X(2, 3, 1)), "X1 X2")
E["theory.sd_kernel_accuracy"] = ex(
    lambda t: dict(n_symbols=3, d=2, kernel="ntk", n_test=20, n_seeds=2, ridge=1e-3, seed=0),
    "n_symbols d kernel n_test n_seeds ridge seed",
)
E["theory.sd_kernel_accuracy_grid"] = ex(
    lambda t: dict(Ls=[3, 4], ds=[2], kernel="ntk", n_test=20, n_seeds=2, seed=0),
    "kernel n_test n_seeds seed", Ls="int_list2", ds="int_list",
)
E["theory.sd_test_pairs"] = ex(lambda t: dict(n=6, d=3, sigma2=0.1, seed=0), "n d sigma2 seed")
E["theory.sd_training_pairs"] = ex(
    lambda t: dict(symbols=_rng(0).standard_normal((3, 2)), sigma2=0.1, seed=0),
    "sigma2 seed", symbols="matrix",
)
E["theory.sphere_cosine_mean"] = ex(
    lambda t: dict(func=lambda u: u * u, n=5, epsabs=1e-8), "epsabs", func="callable", n="count2"
)
E["theory.theorem2_bound"] = ex(lambda t: dict(n_symbols=3, d=4), "n_symbols d")
E["theory.sd_max_margin_accuracy"] = ex(
    lambda t: dict(n_symbols=3, n_test=50, seed=0, chunk=20),
    "n_symbols n_test seed chunk", max_perms="pos_int",
)
E["theory.sd_symmetric_max_margin"] = ex(lambda t: dict(n_symbols=3), "n_symbols")
