"""Helpers shared by the simulate tests (on sys.path through pytest's ``pythonpath``)."""

import torch


def seeded_generator(seed=0, device="cpu"):
    """A fresh torch.Generator on ``device`` seeded with ``seed``."""
    return torch.Generator(device=device).manual_seed(seed)


def assert_resume_is_bit_exact(post, step, tmp_path, *, n_steps, checkpoint_every, case):
    """A chain of ``step`` on ``post`` (3 chains, burn-in 5, thin 5) checkpointed half way and resumed
    ends on the states and the samples of the uninterrupted chain, bit for bit."""
    from richlazy.simulate import langevin_init, make_generator, run_chain

    def go(path, n):
        g = make_generator(7)
        return run_chain(langevin_init(post.sample_prior(3, generator=g)), step, n_steps=n, burn_in=5,
                         thin=5, generator=g, checkpoint_path=path, checkpoint_every=checkpoint_every,
                         config={"case": case}, progress=False,
                         observe=lambda s: {"f": post.outputs(s.theta)})

    ref = go(None, n_steps)
    go(tmp_path / "ck.pt", n_steps // 2)
    resumed = go(tmp_path / "ck.pt", n_steps)
    assert resumed.resumed_from in (checkpoint_every, n_steps // 2)
    assert torch.equal(resumed.state.theta, ref.state.theta)
    assert torch.equal(resumed.samples["f"], ref.samples["f"])
