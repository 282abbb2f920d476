"""The HTML report's charts as inline SVG, drawn in Python when the page is built: readable with JavaScript off,
nothing to load. Two drawings: a grid of coloured cells (the algorithm map) and ranges on a numeric axis (the
batch-invariance charts).

Every text that reaches the SVG (labels, hover texts, ids) goes through :func:`escape`: log text, file names and
kernel names are untrusted. A hover text is the element's ``<title>`` (the browser's own tooltip, and what the
page's script shows in its tooltip); its lines are joined by ``&#10;``, so log text never starts a line of the
page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from blaslog.reporters._base import printable

#: A map cell's width and height (px), gaps included.
CELL_W, CELL_H = 22, 26
#: Room for one character of an 11 px label (a generous guess for a proportional font).
CHAR_W = 6.6
#: Width of a range chart's plot area (px).
PLOT_W = 440
#: Height of one lane of a range chart (px).
LANE_H = 30


def escape(value: object, limit: int = 0) -> str:
    """Untrusted text for SVG/HTML content or a double-quoted attribute: printable, one line (control
    characters shown escaped), cut to `limit`, every markup character (& < > " ') escaped."""
    return html.escape(printable(value, limit), quote=True)


def _tip(lines: Sequence[str]) -> str:
    """A hover text as a <title>: each line escaped, lines joined by a character reference."""
    return "<title>" + "&#10;".join(escape(line) for line in lines) + "</title>"


def _link(href: str, inner: str) -> str:
    """`inner` as a link to the element `href` (a finding's card; the page's script scrolls to it), or as it is."""
    if not href:
        return inner
    return f'<a class="finding-link" href="#{escape(href)}" data-target="{escape(href)}">{inner}</a>'


def _label(x: float, y: float, label: Label) -> str:
    """A label (its whole text on hover)."""
    return f'<text class="tip" x="{_num(x)}" y="{_num(y)}">{escape(label.text)}{_tip([label.tip])}</text>'


def _num(value: float) -> str:
    """A coordinate: at most one decimal."""
    return f"{value:.1f}".removesuffix(".0")


@dataclass(frozen=True, slots=True)
class Label:
    """A row or column label: the text shown and the text on hover."""

    text: str
    """What the chart shows (cut to fit)."""
    tip: str
    """The whole text, on hover."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of a grid."""

    row: int
    """Its row (0 at the top)."""
    column: int
    """Its column (0 at the left)."""
    color: str
    """Its fill (CSS colour)."""
    tip: Sequence[str]
    """Its hover text, line by line."""
    ring: str = ""
    """The colour of a ring around it (a finding seen there), or empty for none."""
    cls: str = ""
    """The finding class of its ring (data-cls, read by the page's filter)."""
    href: str = ""
    """The element id it links to (the finding's card), or empty."""


def grid(
    rows: Sequence[Label], columns: Sequence[Label], cells: Sequence[Cell], *, x_title: str, label: str, svg_id: str
) -> str:
    """A grid of cells (rows top to bottom, columns left to right) on a grey ground, row labels on the left,
    column labels on top (every one, or every 5th or 10th when there are many), `x_title` below. A ringed cell
    is a link to its `href`."""
    left = round(12 + CHAR_W * max((len(row.text) for row in rows), default=4))
    top, bottom = 22, 34
    width = left + max(CELL_W * len(columns), 8 * len(x_title)) + 12  # room for the axis title under a few columns
    height = top + CELL_H * len(rows) + bottom
    step = 1 if len(columns) <= 40 else 5 if len(columns) <= 120 else 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(svg_id)}" class="chart grid-chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" aria-label="{escape(label)}">',
        f'<rect class="ground" x="{left}" y="{top}" width="{CELL_W * len(columns)}" height="{CELL_H * len(rows)}"/>',
        '<g class="column-labels" text-anchor="middle">',
    ]
    for index, column in enumerate(columns):
        if index % step == 0 or index == len(columns) - 1:
            out.append(_label(left + CELL_W * index + CELL_W / 2, top - 7, column))
    out.append('</g>\n<g class="row-labels" text-anchor="end">')
    out += [_label(left - 6, top + CELL_H * index + CELL_H / 2 + 4, row) for index, row in enumerate(rows)]
    out.append('</g>\n<g class="cells">')
    for cell in cells:
        x, y = left + CELL_W * cell.column + 1, top + CELL_H * cell.row + 1
        rect = (
            f'<rect class="cell tip" x="{x}" y="{y}" width="{CELL_W - 2}" height="{CELL_H - 2}" '
            f'fill="{escape(cell.color)}" data-row="{cell.row}" data-column="{cell.column}"'
            + (f' data-cls="{escape(cell.cls)}"' if cell.cls else "")
            + f">{_tip(cell.tip)}</rect>"
        )
        if cell.ring:  # the cell and its ring, as one link (or group)
            rect += (
                f'<rect class="ring" x="{x + 1.5}" y="{y + 1.5}" width="{CELL_W - 5}" height="{CELL_H - 5}" '
                f'stroke="{escape(cell.ring)}"/>'
            )
            rect = _link(cell.href, rect) if cell.href else f"<g>{rect}</g>"
        out.append(rect)
    out.append("</g>")
    out.append(f'<text class="axis-title" x="{left}" y="{height - 10}">{escape(x_title)}</text>')
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class Span:
    """One range of a range chart: from `low` to `high` on the axis, in lane `lane`."""

    low: float
    """Where it starts on the axis."""
    high: float
    """Where it ends on the axis."""
    lane: int
    """Its lane (0 at the top)."""
    color: str
    """Its colour (CSS)."""
    tip: Sequence[str]
    """Its hover text, line by line."""
    href: str = ""
    """The element id it links to (the finding's card), or empty."""


def ranges(lanes: Sequence[Label], spans: Sequence[Span], *, x_title: str, label: str, svg_id: str) -> str:
    """Ranges of a numeric axis (x, logarithmic when the values span more than a factor 8) by lane (y): a thick
    line from low to high with a dot at each end, a lane per label."""
    values = [v for span in spans for v in (span.low, span.high) if v > 0]
    log = bool(values) and max(values) / min(values) > 8
    low, high = _domain(values, log)
    left = round(12 + CHAR_W * max((len(lane.text) for lane in lanes), default=4))
    top, bottom = 10, 42
    width, height = left + PLOT_W + 20, top + LANE_H * len(lanes) + bottom

    def x_of(value: float) -> float:
        if log:
            value = math.log10(max(value, 10**low))
        return left + PLOT_W * (min(max(value, low), high) - low) / (high - low)

    axis_y = top + LANE_H * len(lanes)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(svg_id)}" class="chart range-chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" aria-label="{escape(label)}">',
        f'<rect class="ground" x="{left}" y="{top}" width="{PLOT_W}" height="{LANE_H * len(lanes)}"/>',
        '<g class="ticks" text-anchor="middle">',
    ]
    for value in _ticks(low, high, log):
        x = _num(x_of(value))
        out.append(f'<line class="grid-line" x1="{x}" y1="{top}" x2="{x}" y2="{axis_y}"/>')
        out.append(f'<text x="{x}" y="{axis_y + 14}">{escape(_tick_text(value))}</text>')
    out.append('</g>\n<g class="row-labels" text-anchor="end">')
    out += [_label(left - 6, top + LANE_H * index + LANE_H / 2 + 4, lane) for index, lane in enumerate(lanes)]
    out.append('</g>\n<g class="spans">')
    for span in spans:
        x1, x2, y = _num(x_of(span.low)), _num(x_of(span.high)), _num(top + LANE_H * span.lane + LANE_H / 2)
        colour = escape(span.color)
        shape = (
            f'<g class="span tip">{_tip(span.tip)}'
            f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="{colour}"/>'
            + "".join(f'<circle cx="{x}" cy="{y}" r="6" fill="{colour}"/>' for x in dict.fromkeys((x1, x2)))
            + "</g>"
        )
        out.append(_link(span.href, shape))
    out.append("</g>")
    out.append(
        f'<text class="axis-title" x="{_num(left + PLOT_W / 2)}" y="{height - 8}" text-anchor="middle">'
        f"{escape(x_title)}{' (log scale)' if log else ''}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def _domain(values: Sequence[float], log: bool) -> tuple[float, float]:
    """The axis range (in log10 units on a log axis), padded so that the ends of a range are not on the frame."""
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if log:
        return math.log10(low) - 0.25, math.log10(high) + 0.25
    pad = max((high - low) * 0.1, 1)
    return low - pad, high + pad


def _ticks(low: float, high: float, log: bool) -> list[float]:
    """Tick values inside the axis range: powers of ten on a log axis (with 2 and 5 times them when it spans
    fewer than three), else 1, 2 or 5 times a power of ten apart, about six of them."""
    if log:
        decades = range(math.floor(low), math.ceil(high) + 1)
        factors = (1, 2, 5) if high - low < 3 else (1,)
        return [f * 10.0**d for d in decades for f in factors if low <= math.log10(f * 10.0**d) <= high]
    raw = (high - low) / 6
    power = 10 ** math.floor(math.log10(raw))
    step = next(f * power for f in (1, 2, 5, 10) if f * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def _tick_text(value: float) -> str:
    """A tick's label: an integer without decimals, thousands as k and millions as M when round."""
    if value >= 1e6 and value % 1e6 == 0:
        return f"{value / 1e6:g}M"
    if value >= 1e4 and value % 1e3 == 0:
        return f"{value / 1e3:g}k"
    return f"{value:g}"
