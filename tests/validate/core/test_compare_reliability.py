"""compare(): non-finite or meaningless tolerances and standard errors are rejected (issue 12),
numpy scalars are accepted, and the documented tolerance kinds are exactly the supported ones."""

import math
import re

import numpy as np
import pytest
from import_helpers import ROOT
from richlazy.validate import compare

DOCS = ROOT / "docs" / "report_format.md"


@pytest.mark.parametrize("kind", ["z", "gt", "abs", "rel"])
@pytest.mark.parametrize("stderr", [math.inf, -math.inf, math.nan, np.float32(np.inf)])
def test_non_finite_stderr_is_rejected_not_passed(kind, stderr):
    # |diff| = 4 with stderr = inf used to give z = 0 and passed=True
    with pytest.raises(ValueError, match=r"stderr must be >= 0 and finite .* got (-?inf|nan)"):
        compare("q", 1.0, 5.0, stderr=stderr, kind=kind, tol=3)


@pytest.mark.parametrize("tol", [math.inf, math.nan, 0.0, -1.0, np.float64(-np.inf)])
def test_non_finite_or_non_positive_tol_is_rejected(tol):
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        compare("q", 1.0, 5.0, stderr=1.0, kind="z", tol=tol)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(tol=True), "tol must be a real number, got True"),
        (dict(tol="3"), "tol must be a real number, got '3'"),
        (dict(stderr="1"), "stderr must be a real number"),
        (dict(stderr=1j), "stderr must be a real number"),
        (dict(theory=1 + 2j), "theory must be a real number"),
        (dict(simulation="1.0"), "simulation must be a real number"),
    ],
)
def test_non_real_arguments_raise_type_error_naming_them(kwargs, match):
    base = dict(theory=1.0, simulation=1.0, stderr=1.0, kind="z", tol=3.0)
    base.update(kwargs)
    th, sim = base.pop("theory"), base.pop("simulation")
    with pytest.raises(TypeError, match=match):
        compare("q", th, sim, **base)


def test_numpy_scalars_are_numbers():
    q = compare("q", np.array(1.0), np.float32(1.1), stderr=np.float16(0.05), kind="z", tol=np.int64(3))
    assert q.passed and isinstance(q.tolerance, float) and q.z == pytest.approx(-2.0, rel=1e-3)
    assert compare("q", np.float64(2.0), 2.05, kind="rel", tol=np.float32(0.04)).passed


def test_zero_stderr_still_allowed_for_deterministic_kinds():
    assert compare("q", 0.0, 0.01, stderr=0.0, kind="abs", tol=0.02).passed


def test_non_finite_theory_or_simulation_fails_the_quantity():
    for th, sim in [(1.0, math.inf), (math.nan, 1.0), (1.0, -math.inf)]:
        assert not compare("q", th, sim, stderr=1.0, kind="z", tol=3).passed
        assert not compare("q", th, sim, kind="abs", tol=3).passed


def test_report_format_documents_every_tolerance_kind():
    from richlazy.validate.core import _compare  # the kinds compare accepts

    text = DOCS.read_text()
    m = re.search(r"`tolerance_kind` ∈ \{([^}]*)\}", text)
    assert m, "docs/report_format.md must list the tolerance kinds"
    documented = set(re.findall(r"`(\w+)`", m.group(1)))
    assert documented == set(_compare._KINDS)
    for kind in _compare._KINDS:
        compare("q", 0.0, 1.0, stderr=0.1, kind=kind if kind != "rel" else "abs", tol=1.0)
    assert "simulation − theory ≥ tol · stderr" in text  # the one-sided rule of "gt"


# --------------------------------------------------------------------------------------------
# an exploding standard error (issue 53): a tolerance that grows with the SE must not pass
# --------------------------------------------------------------------------------------------


def test_implausible_stderr_fails_instead_of_widening_the_tolerance():
    # U[0,0] = 25000 against theory 0.695 from a damaged checkpoint, SE 8000: the case's
    # tolerance 3/N + 4 SE/|theory| passed it
    th, sim, se, n = 0.695, 25000.0, 8000.0, 64
    q = compare("U[0,0]", th, sim, stderr=se, kind="rel", tol=3 / n + 4 * se / th)
    assert not q.passed and "implausible standard error" in q.note
    assert not compare("U[0,0]", th, sim, stderr=se, kind="abs", tol=4 * se + 3 / n).passed
    assert not compare("U[0,0]", th, sim, stderr=se, kind="z", tol=5).passed
    assert not compare("x", 0.0, 30.0, stderr=10.0, kind="abs", tol=4 * 10.0 + 0.05).passed


def test_plausible_stderr_keeps_its_verdict():
    from richlazy.validate.core._compare import SE_MAX_ABS, SE_MAX_REL

    th = 0.695
    se = SE_MAX_REL * th + SE_MAX_ABS  # the largest plausible SE
    q = compare("U[0,0]", th, th + se, stderr=se, kind="rel", tol=3 / 64 + 4 * se / th)
    assert q.passed and "implausible" not in q.note
    assert compare("x", 0.0, 0.02, stderr=0.027, kind="abs", tol=4 * 0.027 + 0.06).passed
    # a one-sided claim: a large SE only makes it harder to pass (the rule does not apply)
    assert compare("d > 0", 0.0, 10.0, stderr=2.0, kind="gt", tol=3).passed


def test_report_format_documents_the_stderr_plausibility_rule():
    from richlazy.validate.core import _compare
    from richlazy.validate.core._compare import SE_MAX_ABS, SE_MAX_REL

    for text in (DOCS.read_text(), _compare.compare.__doc__, _compare.__doc__):
        assert f"stderr > {SE_MAX_REL} · |theory| + {SE_MAX_ABS}" in text, text[:200]
