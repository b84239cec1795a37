"""Ergodicity classes of compared quantities (issue 55, item 1): a quantity the theory says is
frozen never makes a case "not mixed" (R-hat cannot certify it); without population annealing's
diagnostics it makes it "not equilibrated", naming what failed; a mixing one still needs R-hat."""

import json

import numpy as np
import pytest
from import_helpers import ROOT
from richlazy.validate import (
    ERGODICITY,
    VERDICTS,
    CaseResult,
    Equilibration,
    Quantity,
    Report,
    case_verdict,
    compare,
    render_markdown,
)

DOCS = ROOT / "docs" / "report_format.md"
_GEN = np.random.default_rng(0)
MIXED = _GEN.standard_normal((200, 4))  # four chains drawn from one law: R-hat ~ 1
STUCK = MIXED + np.array([0.0, 0.0, 5.0, 5.0])  # two chains in another state: R-hat >> 1.01
FROZEN = "which code a neuron holds below T_c (barrier O(P))"
MIXES = "the readout's Gaussian conditional"


def _frozen(sim=1.0, equilibration=None, series=STUCK):
    return compare("code fraction", 1.0, sim, stderr=0.05, kind="z", tol=3, mixing=series,
                   ergodicity="frozen", reason=FROZEN, equilibration=equilibration)


def _mixing(sim=1.0, series=MIXED):
    return compare("U[0,0]", 1.0, sim, stderr=0.05, kind="z", tol=3, mixing=series,
                   ergodicity="mixing", reason=MIXES)


def test_a_frozen_quantity_with_stuck_chains_is_not_equilibrated_not_unmixed():
    q = _frozen()
    assert q.mixed is False and q.frozen and q.equilibrated is False
    assert "population-annealing" in q.equilibration_note
    assert case_verdict([q, _mixing()]) == "not equilibrated"
    # undeclared, the same chains make the case "not mixed" (the rule before classes)
    old = compare("code fraction", 1.0, 1.0, stderr=0.05, kind="z", tol=3, mixing=STUCK)
    assert case_verdict([old, _mixing()]) == "not mixed"


def test_an_equilibrated_frozen_quantity_gets_a_verdict_whatever_its_r_hat():
    ok = Equilibration(True, "weight ESS >= 0.5 R at every stage; 40 families; populations agree")
    assert case_verdict([_frozen(equilibration=ok), _mixing()]) == "agrees"
    assert case_verdict([_frozen(sim=2.0, equilibration=ok), _mixing()]) == "disagrees"


def test_not_equilibrated_names_the_failing_diagnostic():
    bad = Equilibration(False, "family entropy: 3 effective families of 400 at the last stage")
    q = _frozen(equilibration=bad)
    assert case_verdict([q]) == "not equilibrated"
    assert q.equilibration_note.startswith("family entropy")
    # a failing frozen quantity is not a disagreement while it is not equilibrated
    assert case_verdict([_frozen(sim=2.0, equilibration=bad)]) == "not equilibrated"


def test_a_mixing_quantity_that_has_not_mixed_still_makes_the_case_not_mixed():
    ok = Equilibration(True, "all diagnostics hold")
    assert case_verdict([_frozen(equilibration=ok), _mixing(series=STUCK)]) == "not mixed"
    assert case_verdict([_frozen(), _mixing(series=STUCK)]) == "not mixed"  # checked first


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        (dict(ergodicity="slow", reason="x", mixing=MIXED), ValueError, "ergodicity must be one of"),
        (dict(ergodicity="mixing", reason="", mixing=MIXED), ValueError, "reason must say"),
        (dict(ergodicity="frozen", reason="  ", mixing=MIXED), ValueError, "reason must say"),
        (dict(ergodicity="mixing", reason="x"), ValueError, "needs the chains' diagnostics"),
        (dict(equilibration=Equilibration(True)), ValueError, "declare ergodicity='frozen'"),
        (dict(ergodicity="mixing", reason="x", mixing=MIXED, equilibration=Equilibration(True)),
         ValueError, "equilibration is for frozen quantities"),
        (dict(ergodicity="frozen", reason="x", equilibration=True), TypeError,
         "equilibration must be an Equilibration"),
    ],
)
def test_bad_ergodicity_arguments_are_named(kwargs, err, match):
    with pytest.raises(err, match=match):
        compare("q", 1.0, 1.0, stderr=0.1, kind="z", tol=3, **kwargs)


def test_equilibration_checks_its_fields():
    with pytest.raises(ValueError, match="must name the failing diagnostic"):
        Equilibration(False)
    with pytest.raises(TypeError, match="equilibrated must be True or False"):
        Equilibration("yes", "x")


def _case(quantities):
    return CaseResult(name="coding/x", paper="000", description="d", passed=False, seconds=1.0,
                      device="cpu", quantities=quantities, figures=[], params={}, notes="",
                      error=None, verdict=case_verdict(quantities), suite="quick", seed=0)


def test_report_round_trips_and_shows_the_classes():
    qs = [_frozen(), _mixing()]
    for q in qs:
        assert Quantity.from_dict(json.loads(json.dumps(q.to_dict()))) == q
    rep = Report(suite="quick", created="now", device="cpu", seed=0, version="0", cases=[_case(qs)])
    assert rep.ok and not rep.passed  # inconclusive, not a failure
    md = render_markdown(rep)
    assert "**NOT EQUILIBRATED**" in md and "**frozen, not equilibrated**" in md
    assert f"*frozen*: {FROZEN}" in md and f"*mixing*: {MIXES}" in md
    # a report written before classes existed reads with no class
    d = _mixing().to_dict()
    for k in ("ergodicity", "ergodicity_reason", "equilibrated", "equilibration_note"):
        d.pop(k)
    assert Quantity.from_dict(d).ergodicity is None


def test_report_format_documents_the_classes_and_the_new_verdict():
    text = DOCS.read_text()
    assert set(VERDICTS) == {"agrees", "disagrees", "not mixed", "not equilibrated", "error"}
    for word in (*ERGODICITY, "not equilibrated", "population annealing"):
        assert word in text, word
