"""Rerun the numerically sensitive tests (tests/theory) under a second OpenBLAS kernel.

Which KKT point a search reaches, or how many Newton steps converge, can depend on the BLAS's
rounding, which depends on the kernels OpenBLAS picks for the CPU. CI runs on one machine, so a
test that passes only with that machine's kernels would pass here and fail on a user's. This
step picks another kernel family the CPU can run (``OPENBLAS_CORETYPE``), checks with
threadpoolctl that every OpenBLAS numpy and scipy load reports it, and reruns tests/theory.
Extra arguments go to pytest.
"""

import json
import os
import platform
import subprocess
import sys

# a second kernel family for each one OpenBLAS may pick by default (all run on the first's CPU)
_SECOND = {"skylakex": "Haswell", "cooperlake": "Haswell", "sapphirerapids": "Haswell",
           "zen": "Haswell", "haswell": "SandyBridge", "sandybridge": "Nehalem",
           "neoversen1": "ARMV8", "neoversev1": "ARMV8", "neoversen2": "ARMV8",
           "armv8": "CortexA57"}
# otherwise, by machine: the baseline families every CPU of that machine type runs
_FALLBACK = {"x86_64": "Haswell", "aarch64": "ARMV8"}
_PROBE = ("import json, numpy, scipy.linalg, threadpoolctl; print(json.dumps(["
          "d['architecture'] for d in threadpoolctl.threadpool_info() "
          "if d['internal_api'] == 'openblas']))")


def _architectures(env):
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    default = _architectures(env)
    if not default:
        sys.exit("second_blas: numpy/scipy do not use OpenBLAS here; nothing to switch")
    second = _SECOND.get(default[0].lower()) or _FALLBACK.get(platform.machine())
    if second is None or second.lower() == default[0].lower():
        sys.exit(f"second_blas: no second kernel known for {default[0]} ({platform.machine()})")
    env["OPENBLAS_CORETYPE"] = second
    got = _architectures(env)
    if any(a.lower() != second.lower() for a in got):
        sys.exit(f"second_blas: asked OpenBLAS for {second}, threadpoolctl reports {got}")
    print(f"second_blas: default kernels {default}, rerunning tests/theory with {got}", flush=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "", "tests/theory", *argv]
    sys.exit(subprocess.run(cmd, env=env).returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
