"""Registered sweep experiments, one private module per group of experiments (a paper's, or the
machinery's self-test).

Each module registers its experiments with ``register_sweep`` when imported; the sweep registry
imports the modules listed in its ``_SWEEP_MODULES`` lazily, so this package imports nothing.
"""
