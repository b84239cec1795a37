"""Text rendering of :func:`richlazy.validate.diff_reports` (two runs of the same cases)."""

from __future__ import annotations

__all__ = ["render_report_diff"]


def _f(v, fmt: str = ".2f") -> str:
    return "—" if v is None else format(v, fmt)


def render_report_diff(d, *, label_a: str = "A", label_b: str = "B", z_flag: float = 3.0) -> str:
    """One line per case (quantities compared, rms z, max |z|, how many |z| > ``z_flag``, the two
    run times), then every quantity beyond ``z_flag``, then the totals with the number of
    |z| > ``z_flag`` expected by chance."""
    lines = [f"{'case':<40} {'n':>4} {'rms z':>6} {'max|z|':>7} {'|z|>' + format(z_flag, 'g'):>6} "
             f"{'s ' + label_a:>9} {'s ' + label_b:>9}"]
    for c in d.cases:
        lines.append(f"{c.case:<40} {len(c.z):>4} {_f(c.rms_z):>6} {_f(c.max_abs_z):>7} "
                     f"{c.n_beyond(z_flag):>6} {_f(c.seconds_a, '.0f'):>9} {_f(c.seconds_b, '.0f'):>9}")
    beyond = [(c.case, q) for c in d.cases for q in c.quantities
              if q.z is not None and abs(q.z) > z_flag]
    if beyond:
        lines.append(f"quantities with |z| > {z_flag:g} ({label_a} − {label_b} over the combined SE):")
        lines += [f"  {case}: {q.name}: {q.a:.6g} vs {q.b:.6g} (SE {q.se:.2g}, z {q.z:+.2f})"
                  for case, q in beyond]
    no_se = sum(q.z is None for c in d.cases for q in c.quantities)
    unmatched = sum(len(c.only_a) + len(c.only_b) for c in d.cases)
    lines.append(f"{len(d.cases)} cases, {len(d.z)} quantities with standard errors: rms z "
                 f"{_f(d.rms_z)}, {d.n_beyond(z_flag)} with |z| > {z_flag:g} "
                 f"({d.expected_beyond(z_flag):.2f} expected by chance); {no_se} without a standard "
                 f"error, {unmatched} named in one report only")
    if d.only_a or d.only_b:
        lines.append(f"cases only in {label_a}: {', '.join(d.only_a) or '—'}; only in {label_b}: "
                     f"{', '.join(d.only_b) or '—'}")
    return "\n".join(lines)
