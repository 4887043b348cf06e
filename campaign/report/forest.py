"""A forest plot of the paired differences, written as a standalone SVG by hand.

Two panels side by side (verified success, wall seconds): one row per task with
its mean coding-minus-baseline difference, and an overall row with the
estimate and its 95% interval (a t interval on the task means); for an experiment of
its own variants, one row per candidate instead, each with its adjusted interval. Rendered from the sanitized report
only, so the only text in it is code-authored labels, pattern-checked task ids
and numbers. No plotting library: a few hundred lines of SVG need none.
"""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import escape

from campaign.report import differences

ROW = 18
TOP = 70
LABEL_WIDTH = 200
PANEL_WIDTH = 330
GAP = 40
BOTTOM = 60


def _fmt(value: float, digits: int) -> str:
    text = f"{value:+.{digits}f}"
    return "0" if float(text) == 0 else text


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    return [low + (high - low) * i / (count - 1) for i in range(count)]


def _tick_digits(low: float, high: float, minimum: int = 0) -> int:
    """The fewest decimals (at least ``minimum``) that label every tick exactly.

    A fixed number would not do for wall seconds: their bound may be 0.5 or
    0.05, and ticks at +0.25 printed with no decimals all read "0".
    """
    tolerance = 1e-6 * (high - low)
    for digits in range(minimum, 10):
        if all(abs(float(f"{t:.{digits}f}") - t) <= tolerance for t in _ticks(low, high)):
            return digits
    return 9


class _Panel:
    def __init__(self, x0: float, low: float, high: float) -> None:
        self.x0, self.low, self.high = x0, low, high

    def x(self, value: float) -> float:
        clamped = min(max(value, self.low), self.high)
        return self.x0 + (clamped - self.low) / (self.high - self.low) * PANEL_WIDTH


def _wall_range(tasks: list[dict[str, Any]], overall: list[tuple[str, dict[str, Any]]]) -> tuple[float, float]:
    values = [t["wall_seconds_difference"] for t in tasks if t["wall_seconds_difference"] is not None]
    for _, view in overall:
        w = view["wall_seconds"]
        values += [v for v in (w["estimate"], w["ci_low"], w["ci_high"]) if v is not None]
    # 5% headroom so the extreme task is not drawn on the frame.
    extent = 1.05 * max((abs(v) for v in values), default=1.0) or 1.0
    # A round bound: 1, 2 or 5 times a power of ten.
    power = 10 ** math.floor(math.log10(extent))
    bound = next(m * power for m in (1, 2, 5, 10) if m * power >= extent)
    return -bound, bound


def render_svg(report: dict[str, Any]) -> str:
    pd = report["paired_differences"]
    if "comparisons" in pd:
        # An experiment of its own variants: one row per candidate, its estimate and interval.
        tasks: list[dict[str, Any]] = []
        overall = [(f"{label} ({differences.level(pd)} CI)", view) for label, view in differences.views(pd)]
        what, who = f"each candidate minus {pd['baseline']}", "candidate"
        exploratory = any(view["exploratory"] for _, view in overall)
    else:
        tasks, overall = pd["per_task"], [("Overall (95% CI)", pd)]
        what, who, exploratory = "coding minus baseline", "coding", pd["exploratory"]
    height = TOP + ROW * (len(tasks) + len(overall) + 1) + BOTTOM
    width = LABEL_WIDTH + 2 * PANEL_WIDTH + GAP + 20
    success = _Panel(LABEL_WIDTH, -1.0, 1.0)
    wall = _Panel(LABEL_WIDTH + PANEL_WIDTH + GAP, *_wall_range(tasks, overall))
    plot_bottom = TOP + ROW * (len(tasks) + len(overall) + 0.5)
    title = f"Paired differences, {what} (campaign {int(report['campaign']['id'])})"
    if report["synthetic"]:
        title += ": synthetic figures"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" viewBox="0 0 {width} {height:.0f}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height:.0f}" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    if exploratory:
        out.append('<text x="10" y="38" fill="#a33">Exploratory: few task clusters; not a global ranking.</text>')
    panels = (
        (success, "Verified success difference", 2, f"&lt; baseline better | {who} better &gt;"),
        (wall, "Wall seconds difference", _tick_digits(wall.low, wall.high), f"&lt; {who} faster | {who} slower &gt;"),
    )
    for panel, label, digits, direction in panels:
        middle = panel.x0 + PANEL_WIDTH / 2
        out.append(f'<text x="{middle:.1f}" y="{TOP - 12}" text-anchor="middle" font-weight="bold">{label}</text>')
        out.append(f'<rect x="{panel.x0}" y="{TOP - 4}" width="{PANEL_WIDTH}" height="{plot_bottom - TOP + 4:.1f}" fill="none" stroke="#ccc"/>')
        zero = panel.x(0.0)
        out.append(f'<line x1="{zero:.1f}" y1="{TOP - 4}" x2="{zero:.1f}" y2="{plot_bottom:.1f}" stroke="#888" stroke-dasharray="4 3"/>')
        for tick in _ticks(panel.low, panel.high):
            tx = panel.x(tick)
            out.append(f'<line x1="{tx:.1f}" y1="{plot_bottom:.1f}" x2="{tx:.1f}" y2="{plot_bottom + 4:.1f}" stroke="#333"/>')
            out.append(f'<text x="{tx:.1f}" y="{plot_bottom + 16:.1f}" text-anchor="middle">{_fmt(tick, digits)}</text>')
        out.append(f'<text x="{middle:.1f}" y="{plot_bottom + 32:.1f}" text-anchor="middle" fill="#555">{direction}</text>')
    for i, t in enumerate(tasks):
        y = TOP + ROW * (i + 0.5)
        out.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">{escape(str(t["task"]))} (n={int(t["pairs"])})</text>')
        if t["success_difference"] is not None:
            out.append(f'<circle cx="{success.x(t["success_difference"]):.1f}" cy="{y:.1f}" r="3.5" fill="#2b6cb0"/>')
        if t["wall_seconds_difference"] is not None:
            out.append(f'<circle cx="{wall.x(t["wall_seconds_difference"]):.1f}" cy="{y:.1f}" r="3.5" fill="#2b6cb0"/>')
    for i, (label, view) in enumerate(overall):
        _overall_row(out, TOP + ROW * (len(tasks) + 0.75 + i), label, view, success, wall)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _overall_row(out: list[str], y: float, label: str, pd: dict[str, Any], success: _Panel, wall: _Panel) -> None:
    """A comparison's estimate and interval in both panels, on one row."""
    out.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end" font-weight="bold">{escape(label)}</text>')
    for panel, key in ((success, "verified_success"), (wall, "wall_seconds")):
        d = pd[key]
        if d["ci_low"] is not None and d["ci_high"] is not None:
            lo, hi = panel.x(d["ci_low"]), panel.x(d["ci_high"])
            out.append(f'<line x1="{lo:.1f}" y1="{y:.1f}" x2="{hi:.1f}" y2="{y:.1f}" stroke="#c05621" stroke-width="2"/>')
            for end in (lo, hi):
                out.append(f'<line x1="{end:.1f}" y1="{y - 5:.1f}" x2="{end:.1f}" y2="{y + 5:.1f}" stroke="#c05621" stroke-width="2"/>')
        if d["estimate"] is not None:
            cx = panel.x(d["estimate"])
            out.append(f'<polygon points="{cx - 6:.1f},{y:.1f} {cx:.1f},{y - 6:.1f} {cx + 6:.1f},{y:.1f} {cx:.1f},{y + 6:.1f}" fill="#c05621"/>')
        else:
            out.append(f'<text x="{panel.x0 + 6:.1f}" y="{y + 4:.1f}" fill="#555">no estimate</text>')
        if d["ci_low"] is None and d["estimate"] is not None:
            out.append(f'<text x="{panel.x0 + PANEL_WIDTH - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="#555">no interval</text>')
