"""``richlazy diff`` / diff_reports: z of the difference of two runs' simulations over the combined
standard error, matched by case and quantity name."""

import json
import math

import numpy as np
import pytest
from richlazy.validate.cli import main
from richlazy.validate.core._report_diff import diff_reports


def _q(name, sim, se, **kw):
    return {"name": name, "theory": 0.0, "simulation": sim, "stderr": se, "passed": True, **kw}


def _write(folder, cases, *, device="cpu"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(json.dumps({"suite": "quick", "device": device, "cases": [
        {"name": n, "seconds": 1.5, "device": device, "quantities": qs} for n, qs in cases.items()]}))
    return folder


def test_z_of_each_quantity_and_what_is_matched(tmp_path):
    a = _write(tmp_path / "a", {
        "x/one": [_q("U", 1.0, 0.03), _q("fit", 2.0, None), _q("only in a", 1.0, 0.1),
                  _q("frozen", 1.0, 0.0)],
        "x/two": [_q("K", 0.5, 0.01)]})
    b = _write(tmp_path / "b", {
        "x/one": [_q("U", 1.2, 0.04), _q("fit", 2.5, None), _q("only in b", 1.0, 0.1),
                  _q("frozen", 1.0, 0.0)],
        "x/three": [_q("K", 0.5, 0.01)]}, device="cuda")
    d = diff_reports(a, b / "report.json")
    assert [c.case for c in d.cases] == ["x/one"] and d.only_a == ("x/two",) and d.only_b == ("x/three",)
    c = d.cases[0]
    rows = {q.name: q for q in c.quantities}
    assert rows["U"].se == pytest.approx(0.05) and rows["U"].z == pytest.approx(-4.0)
    assert rows["fit"].z is None and rows["fit"].se is None
    assert rows["frozen"].z == 0.0
    assert c.only_a == ("only in a",) and c.only_b == ("only in b",)
    assert c.z == pytest.approx((-4.0, 0.0)) and c.n_beyond(3.0) == 1
    assert c.rms_z == pytest.approx(math.sqrt(8.0)) and c.max_abs_z == pytest.approx(4.0)
    assert (c.device_a, c.device_b) == ("cpu", "cuda")


def test_two_runs_of_one_law_give_unit_rms_z(tmp_path):
    # 4 000 quantities, each run draws its simulation from N(mu, se²) with its own se: z is standard
    # normal, so its rms is 1 within about 0.02 and |z| > 3 occurs about 0.27 % of the time
    rng = np.random.default_rng(7)
    mu = rng.uniform(-2, 2, 4000)
    sa, sb = rng.uniform(0.01, 0.1, 4000), rng.uniform(0.01, 0.1, 4000)
    xa, xb = rng.normal(mu, sa), rng.normal(mu, sb)
    a = _write(tmp_path / "a", {"c": [_q(f"q{i}", xa[i], sa[i]) for i in range(4000)]})
    b = _write(tmp_path / "b", {"c": [_q(f"q{i}", xb[i], sb[i]) for i in range(4000)]})
    d = diff_reports(a, b)
    assert abs(d.rms_z - 1.0) < 0.035
    assert d.expected_beyond(3.0) == pytest.approx(4000 * 0.0026998, rel=1e-4)
    assert d.n_beyond(3.0) <= 25
    # a shift of 2 combined SE in every quantity is seen
    b2 = _write(tmp_path / "b2", {"c": [_q(f"q{i}", xb[i] + 2 * math.hypot(sa[i], sb[i]), sb[i])
                                        for i in range(4000)]})
    assert diff_reports(a, b2).rms_z > 2.0


def test_a_folder_of_report_folders_is_read_and_duplicates_refused(tmp_path):
    _write(tmp_path / "runs" / "one", {"c/1": [_q("U", 1.0, 0.1)]})
    _write(tmp_path / "runs" / "two", {"c/2": [_q("U", 1.0, 0.1)]})
    _write(tmp_path / "ref", {"c/1": [_q("U", 1.1, 0.1)], "c/2": [_q("U", 0.9, 0.1)]})
    d = diff_reports(tmp_path / "ref", tmp_path / "runs")
    assert [c.case for c in d.cases] == ["c/1", "c/2"]
    _write(tmp_path / "runs" / "three", {"c/1": [_q("U", 1.0, 0.1)]})
    with pytest.raises(ValueError, match="case 'c/1' appears twice"):
        diff_reports(tmp_path / "ref", tmp_path / "runs")


def test_cli_prints_the_table_and_names_bad_arguments(tmp_path, capsys):
    a = _write(tmp_path / "a", {"c/1": [_q("U", 1.0, 0.03), _q("V", 1.0, 0.03)]})
    b = _write(tmp_path / "b", {"c/1": [_q("U", 1.2, 0.04), _q("V", 1.0, 0.04)]})
    assert main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "c/1: U: 1 vs 1.2 (SE 0.05, z -4.00)" in out
    assert "2 quantities with standard errors" in out and "1 with |z| > 3" in out
    assert main(["diff", str(a), str(b), "--z", "5"]) == 0
    assert "quantities with |z|" not in capsys.readouterr().out
    assert main(["diff", str(a), str(tmp_path / "nothing")]) == 2
    assert "REPORT_B must be a report.json" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert main(["diff", str(tmp_path / "bad.json"), str(b)]) == 2
    assert "REPORT_A: " in capsys.readouterr().err
    c = _write(tmp_path / "c", {"c/9": [_q("U", 1.0, 0.03)]})
    assert main(["diff", str(a), str(c)]) == 2
    assert "no case in common" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["diff", str(a), str(b), "--z", "-1"])
    assert e.value.code == 2
