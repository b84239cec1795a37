"""The worked example of docs/architecture.md (adding a case) runs as written and passes."""

import json
import pathlib
import re

from richlazy.validate import run_suite

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _example_source() -> str:
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (code,) = [b for b in blocks if "declare_case(" in b]
    return code


def test_worked_example_case_runs(tmp_path, scratch_registry):
    exec(compile(_example_source(), str(DOC), "exec"), {})
    report = run_suite("quick", only="richness/example-nngp", device="cpu", out_dir=tmp_path,
                       progress=False)
    (case,) = report.cases
    assert case.error is None, case.error
    assert [q.name for q in case.quantities] == ["K[0,1]", "K[0,2]"]
    for q in case.quantities:
        assert q.stderr > 0 and abs(q.z) < 4.0
    assert case.passed
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["cases"][0]["figures"] == ["figures/richness_example-nngp/kernel.png"]
    assert (tmp_path / "figures" / "richness_example-nngp" / "kernel.png").stat().st_size > 1000
