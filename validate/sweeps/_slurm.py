"""Slurm job arrays for sweeps: ``--shard I/N`` parsing and the ``--print-sbatch N`` script.

Array task I runs ``richlazy sweep NAME ... --shard I/N`` (the tasks k with k mod N == I, see
:func:`richlazy.validate.sweeps._run.shard_tasks`) into one shared ``--out``; the same command
without ``--shard`` merges afterwards (runs what is missing, writes the table and figures).
"""

from __future__ import annotations

import math
import re
import shlex

__all__ = ["parse_shard", "sweep_command", "sbatch_script", "sbatch_for_args"]

_SHARD = re.compile(r"([0-9]+)/([0-9]+)")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with integers N >= 1 and 0 <= I < N (ValueError otherwise)."""
    m = _SHARD.fullmatch(text.strip())
    if m is None or not 0 <= int(m[1]) < int(m[2]):
        raise ValueError(f"must be I/N with integers N >= 1 and 0 <= I < N, e.g. 0/4, got {text!r}")
    return int(m[1]), int(m[2])


def sweep_command(name: str, grid_items, *, seeds: int, seed: int, out, device: str = "auto",
                  threads: int = 1, figures: bool = True, quiet: bool = False) -> list[str]:
    """``richlazy sweep NAME`` with ``--grid`` items as given, ``--seeds``, ``--seed``, ``--out``
    (and ``--device``, ``--threads``, ``--no-figures``, ``--quiet`` when not the defaults)."""
    argv = ["richlazy", "sweep", name]
    for item in grid_items:
        argv += ["--grid", item]
    argv += ["--seeds", str(seeds), "--seed", str(seed), "--out", str(out)]
    if device != "auto":
        argv += ["--device", device]
    if threads != 1:
        argv += ["--threads", str(threads)]
    return argv + ["--no-figures"] * (not figures) + ["--quiet"] * quiet


def sbatch_script(name: str, argv: list[str], shards: int, grid: dict, seeds: int,
                  threads: int = 1) -> str:
    """The job-array script running ``argv`` (:func:`sweep_command`) as ``shards`` shards of a
    checked ``grid`` x ``seeds`` replicates (ValueError when there are fewer tasks than shards)."""
    tasks = math.prod(len(v) for v in grid.values()) * seeds
    if shards > tasks:
        raise ValueError(f"--print-sbatch {shards}: the grid has only {tasks} tasks (grid points x "
                         f"--seeds); give at most {tasks} shards")
    cmd = shlex.join(argv)
    return "\n".join([
        "#!/bin/bash",
        f"#SBATCH --job-name=richlazy-{name}",
        f"#SBATCH --array=0-{shards - 1}",
        "#SBATCH --ntasks=1",
        f"#SBATCH --cpus-per-task={threads}",
        f"#SBATCH --output=richlazy-{name}-%A_%a.log",
        "# add --time, --mem, --partition (and --gres=gpu:1 for a GPU) as your cluster needs",
        f"# {tasks} tasks in {shards} shards; array task I runs shard I/{shards} (tasks k with "
        f"k mod {shards} == I)",
        "# into one --out folder (shared file system); the job runs in the folder sbatch was",
        "# called from, with richlazy on PATH (activate its environment here if needed).",
        "# When every array task has finished, merge (missing tasks run, table and figures):",
        f"#   {cmd}",
        "",
        f"{cmd} --shard ${{SLURM_ARRAY_TASK_ID}}/{shards}",
        "",
    ])


def sbatch_for_args(name: str, grid: dict, out, args) -> str:
    """:func:`sbatch_script` of parsed ``richlazy sweep`` arguments (``--print-sbatch N``)."""
    argv = sweep_command(name, args.grid, seeds=args.seeds, seed=args.seed, out=out,
                         device=args.device, threads=args.threads, figures=not args.no_figures,
                         quiet=args.quiet)
    return sbatch_script(name, argv, args.print_sbatch, grid, args.seeds, args.threads)
