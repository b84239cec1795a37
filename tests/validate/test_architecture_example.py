"""The worked example of docs/architecture.md (adding a case) runs as written and passes."""

import json
import pathlib
import re

from richlazy.validate import run_suite
from richlazy.validate.core import _registry

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _example_source() -> str:
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (code,) = [b for b in blocks if "register_case" in b]
    return code


def test_worked_example_case_runs(tmp_path, monkeypatch):
    # load every case module first: a module first imported inside the patch would register
    # into the throw-away copy and be missing from the registry for later tests
    _registry.all_cases()
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    exec(compile(_example_source(), str(DOC), "exec"), {})
    report = run_suite("quick", only="richness/example-nngp", device="cpu", out_dir=tmp_path,
                       progress=False)
    (case,) = report.cases
    assert case.error is None, case.error
    (q,) = case.quantities
    assert q.stderr > 0 and abs(q.z) < 4.0 and case.passed
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["cases"][0]["figures"] == ["figures/richness_example-nngp/kernel.png"]
    assert (tmp_path / "figures" / "richness_example-nngp" / "kernel.png").stat().st_size > 1000
