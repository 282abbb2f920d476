"""One self-contained HTML page (`--format html`): the verdict first, an algorithm map, a batch-invariance chart,
a card per finding and sortable, filterable tables.

Built with Jinja2 (autoescaped: every log text is untrusted), from the optional extra ``pip install
'blaslog[html]'``. The charts are inline SVG drawn here when the page is built (blaslog/reporters/_svg.py), so
the page reads the same with JavaScript off; its one small script (templates/report.js, allowed by its hash in
the page's Content-Security-Policy) adds hover boxes, the map's filters, sortable and filterable tables. The
page loads nothing. It shows what the Report aggregated (signatures, not calls), so a large run gives a page of
about the size of a small one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from blaslog.errors import BlaslogError
from blaslog.report import FINDING_CLASSES, Finding, Report, finding_class, rank_span
from blaslog.reporters import _svg
from blaslog.reporters._base import Reporter, defuse_commands, printable, register
from blaslog.reporters.table import class_summary

#: What to install when the extra is missing (the error names it).
INSTALL_HINT = "pip install 'blaslog[html]'"

#: Occurrences listed on one finding card (the rest are counted).
MAX_OCCURRENCES = 200
#: Occurrences shown before the "more" fold of a card.
SHOWN_OCCURRENCES = 5
#: Rows of the main table (summary signatures, parse records) put in the page.
MAX_ROWS = 2000
#: Batch-invariance findings drawn.
MAX_BATCH_CHARTS = 24

#: Colours of algorithms in the map (qualitative, distinguishable; repeated past the end).
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#1f77b4",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
)


class MissingExtraError(BlaslogError):
    """The html extra (jinja2) is not installed."""


def _require() -> Any:
    """The jinja2 module, or MissingExtraError naming the extra."""
    try:
        import jinja2
    except ImportError as exc:
        raise MissingExtraError(
            f"--format html needs jinja2 ({exc.name or exc} is not installed): {INSTALL_HINT}"
        ) from None
    return jinja2


@cache
def _environment() -> Any:
    jinja2 = _require()
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("blaslog.reporters", "templates"),
        autoescape=True,  # every value from a log is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text"] = _text
    return env


@cache
def _script() -> tuple[Any, Any]:
    """The page's script (templates/report.js) and its CSP source (`'sha256-...'`): the page runs that script
    and no other, so not even markup that slipped past the escaping could run one."""
    # (tests/test_html.py checks that it holds no "</script" and that defuse_commands leaves it as it is)
    source = str(_environment().loader.get_source(_environment(), "report.js")[0])
    digest = base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")
    return _markup(source), _markup(f"'sha256-{digest}'")


def _markup(text: str) -> Any:
    """`text` as markup the template puts in as it is (markupsafe comes with jinja2: imported when needed)."""
    from markupsafe import Markup

    return Markup(text)


def _text(value: object, limit: int = 0) -> str:
    """Log text for the page: one line, control characters shown escaped (autoescaping does the rest)."""
    return printable("-" if value is None else str(value).replace("\n", " "), limit)


def card_id(index: int) -> str:
    """The element id of the card of the `index`-th finding (1-based)."""
    return f"finding-{index}"


def _color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


# ---- the page's parts, as plain data for the template ------------------------------------------------------------


def _verdict(report: Report) -> dict[str, Any]:
    failing = [f for f in report.findings if report.fails(f)]
    if report.failed:
        state, text = "trouble", f"{len(report.failed)} input(s) could not be read"
    elif report.command in ("diff", "check"):
        state = "fail" if failing else "pass"
        text = (
            f"{len(failing)} finding(s) at or above --fail-on {report.fail_on}"
            if failing
            else f"nothing at or above --fail-on {report.fail_on}"
        )
    else:
        state, text = "info", f"{len(report.findings)} finding(s)"
    classes = [dict(row, color=FINDING_CLASSES[str(row["class"])].color) for row in class_summary(report)]
    return {"state": state, "text": text, "classes": classes, "fail_on": report.fail_on}


def _comparisons(report: Report) -> list[dict[str, Any]]:
    out = []
    for row in report.document.get("comparisons", []) if report.command == "diff" else []:
        inference = row.get("tp_inference", {})
        out.append(
            {
                "sharded": row.get("sharded"),
                "unsharded": row.get("unsharded"),
                "tp": row.get("tp"),
                "how": row.get("tp_how"),
                "confidence": row.get("tp_confidence"),
                "text": inference.get("text", ""),
            }
        )
    return out


def _occurrences(report: Report, finding: Finding) -> list[dict[str, Any]]:
    """Every place of a finding as (where, rank, what): its location, related places, compared pairs, variants."""
    rank_file = {str(r.get("rank")): r.get("file") for r in report.document.get("ranks", [])}
    unsharded = next((loc.file for loc in finding.related if loc.role.startswith("unsharded")), "")
    out: list[dict[str, Any]] = []
    for occurrence in finding.occurrences:
        sharded = rank_file.get(occurrence.rank) or finding.location.file
        out.append(
            {
                "where": f"{sharded}:{occurrence.sharded_line}",
                "rank": occurrence.rank,
                "what": f"paired with {unsharded}:{occurrence.unsharded_line}"
                if unsharded
                else f"paired with line {occurrence.unsharded_line}",
            }
        )
    for variant in finding.data.get("variants", ()) if isinstance(finding.data.get("variants"), list) else ():
        out.extend(
            {
                "where": f"{finding.location.file}:{line}",
                "rank": "",
                "what": f"{variant.get('algo') or variant.get('flags') or ''}",
            }
            for line in variant.get("lines", ())[:MAX_OCCURRENCES]
        )
    out.extend(
        {
            "where": f"{finding.location.file}:{span.get('line')}",
            "rank": "",
            "what": f"{finding.data.get('dimension', '')} {span.get('from')}..{span.get('to')}: {span.get('algo')}",
        }
        for span in (finding.data.get("ranges", ()) if isinstance(finding.data.get("ranges"), list) else ())
    )
    if not out:
        out.append(
            {"where": f"{finding.location.file}:{finding.location.line}", "rank": "", "what": finding.location.role}
        )
        out.extend({"where": f"{loc.file}:{loc.line}", "rank": "", "what": loc.role} for loc in finding.related)
    return out


def _cards(report: Report) -> list[dict[str, Any]]:
    cards = []
    for index, finding in enumerate(report.findings, 1):
        row = finding.finding_class
        places = _occurrences(report, finding)
        cards.append(
            {
                "id": card_id(index),
                "index": index,
                "cls": finding.cls,
                "color": row.color,
                "count": finding.count,
                "level": report.level(finding),
                "fails": report.fails(finding),
                "title": finding.title,
                "kind": finding.kind,
                "explanation": finding.explanation,
                "remedy": row.help,
                "meaning": row.meaning,
                "ranks": rank_span(finding.ranks),
                "fields": [(name, list(values)) for name, values in finding.fields],
                "shown": places[:SHOWN_OCCURRENCES],
                "more": places[SHOWN_OCCURRENCES:MAX_OCCURRENCES],
                "left_out": max(len(places) - MAX_OCCURRENCES, 0),
                "fingerprint": finding.fingerprint(),
                "emulation": _emulation_chart(finding.data.get("emulation")),
            }
        )
    return cards


def _emulation_chart(emulation: Any) -> dict[str, Any] | None:
    """The bars of a finding's predicted-difference histogram (numbers only: drawn as inline SVG by the template)."""
    if not isinstance(emulation, dict) or "histogram" not in emulation:
        return None
    counts = [int(c) for c in emulation["histogram"]["counts"]]
    edges = [float(e) for e in emulation["histogram"]["log10_edges"]]
    top = max(counts) or 1
    width, height = 14, 60
    bars = [
        {
            "x": 30 + i * width,
            "y": 8 + height - round(height * c / top),
            "h": round(height * c / top),
            "w": width - 2,
            "label": f"{c} of {sum(counts)} samples with 1e{edges[i]:.1f} to 1e{edges[i + 1]:.1f} of Σ|a·b|",
        }
        for i, c in enumerate(counts)
    ]
    ticks = [{"x": 30 + i * width, "text": f"1e{edges[i]:.0f}"} for i in range(0, len(edges), 4)]
    difference = emulation["difference"]
    verdict = emulation.get("verdict") or {}
    return {
        "bars": bars,
        "ticks": ticks,
        "width": 30 + len(counts) * width + 30,
        "height": height + 30,
        "axis_y": 8 + height,
        "summary": f"max {difference['max']:.2g}, median {difference['median']:.2g} of Σ|a·b| over "
        f"{emulation['samples']} sampled outputs (k={emulation['k']})",
        "verdict": str(verdict.get("text", "")),
    }


def _table(
    title: str, rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None, limit: int = MAX_ROWS
) -> dict[str, Any]:
    """A sortable, filterable table's data: header and cells as text (the template escapes them)."""
    columns = list(columns or (rows[0].keys() if rows else []))
    body = [[_cell_text(row.get(c)) for c in columns] for row in rows[:limit]]
    return {
        "title": title,
        "columns": columns,
        "rows": body,
        "left_out": max(len(rows) - limit, 0),
        "slug": "t-" + "".join(ch if ch.isalnum() else "-" for ch in title.lower()),
    }


def _cell_text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, dict)):
        value = json.dumps(value, default=str)
    return _text(value, 2000)


# ---- the charts (inline SVG, drawn by _svg) -----------------------------------------------------------------------


def _map_chart(report: Report, ids: dict[str, str]) -> Any:
    """The algorithm map: a grid of signatures (columns, in call order) by run or rank (rows), coloured by the
    algorithm that ran, with a ring in the class colour on every cell that showed a finding (a link to it)."""
    gemm_map = report.gemm_map
    columns, rows = gemm_map.get("columns") or [], gemm_map.get("rows") or []
    if not columns or not rows:
        return None
    colour_of = {algo: index for index, algo in enumerate(gemm_map.get("algorithms") or [])}
    cells = []
    for r_index, row in enumerate(rows):
        for c_index, cell in sorted((int(k), v) for k, v in row["cells"].items()):
            cls = cell.get("cls") or ""
            cells.append(
                _svg.Cell(
                    r_index,
                    c_index,
                    _color(colour_of.get(cell["algo"], 0)),
                    _hover(columns[c_index], row, cell),
                    ring=finding_class(cls).color if cls else "",
                    cls=cls,
                    href=ids.get(cell.get("finding") or "", ""),
                )
            )
    labels = [
        _svg.Label(_row_label(row, index), str(row.get("file") or row.get("label"))) for index, row in enumerate(rows)
    ]
    svg = _svg.grid(
        labels,
        [_svg.Label(str(index + 1), str(column["label"])) for index, column in enumerate(columns)],
        cells,
        x_title="GEMM signatures, in call order",
        label=f"Algorithm map: {len(columns)} GEMM signatures by {len(rows)} runs or ranks",
        svg_id="algorithm-map",
    )
    return _markup(svg)


def _map_classes(report: Report) -> list[dict[str, str]]:
    """The finding classes ringed in the map (most severe first): its legend and its class filter."""
    present = {cell.get("cls") for row in report.gemm_map.get("rows") or [] for cell in row["cells"].values()}
    return [{"name": name, "color": row.color} for name, row in FINDING_CLASSES.items() if name in present]


def _row_label(row: dict[str, Any], index: int) -> str:
    base = os.path.basename(str(row.get("file") or "")) or str(row.get("label"))
    if row.get("role") == "sharded":
        base = f"rank {row.get('rank')} · {base}"
    elif row.get("role") == "unsharded":
        base = f"reference · {base}"
    return printable(f"{index + 1}. {base}", 60)


def _hover(column: dict[str, Any], row: dict[str, Any], cell: dict[str, Any]) -> list[str]:
    """A map cell's hover text, line by line (escaped where it is drawn)."""
    lines = [
        printable(column["label"], 120),
        f"{printable(row['label'], 120)}, here {cell['shape']}",
        f"{cell['calls']} call(s), first at line {cell['line']}",
    ]
    lines += [f"{printable(algo, 160)} x{count}" for algo, count in cell["algos"][:4]]
    if len(cell["algos"]) > 4:
        lines.append(f"... {len(cell['algos']) - 4} more algorithms")
    if cell.get("cls"):
        lines.append(f"{cell['cls']} finding: click to open it")
    return lines


def _batch_charts(report: Report) -> list[dict[str, Any]]:
    """One chart per batch-invariance finding: the varying dimension on x, the algorithm (split-K included)
    on y, one range per stretch of that dimension that ran one algorithm (a link to the finding's card)."""
    charts: list[dict[str, Any]] = []
    colour_of = {algo: index for index, algo in enumerate(report.gemm_map.get("algorithms") or [])}
    seen: dict[str, dict[str, Any]] = {}
    for index, finding in enumerate(report.findings, 1):
        ranges = finding.data.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            continue
        same = seen.get(finding.fingerprint())
        if same is not None:  # the same cause in another input of the check: one chart, naming the inputs
            same["inputs"] += 1
            continue
        if len(charts) >= MAX_BATCH_CHARTS:
            continue
        dimension = str(finding.data.get("dimension", "size"))
        algos = [str(span.get("algo")) for span in ranges]
        labels = _short_labels(algos)
        lanes = list(dict.fromkeys(algos))
        spans = []
        for number, span in enumerate(ranges):
            algo, low, high = algos[number], span.get("from"), span.get("to")
            spans.append(
                _svg.Span(
                    float(low) if isinstance(low, (int, float)) else 0.0,
                    float(high) if isinstance(high, (int, float)) else 0.0,
                    lanes.index(algo),
                    _color(colour_of.get(algo, len(colour_of) + lanes.index(algo))),
                    [f"{dimension} {low}..{high}: {printable(algo, 300)} (line {span.get('line')})"],
                    href=card_id(index),
                )
            )
        entry = {
            "card": card_id(index),
            "title": finding.title,
            "cls": finding.cls,
            "color": finding_class(finding.cls).color,
            "svg": _markup(
                _svg.ranges(
                    [_svg.Label(printable(labels[algo], 60), algo) for algo in lanes],
                    spans,
                    x_title=dimension,
                    label=f"{dimension} against the algorithm that ran: {finding.title}",
                    svg_id=f"batch-{index}",
                )
            ),
            "inputs": 1,
        }
        seen[finding.fingerprint()] = entry
        charts.append(entry)
    return charts


def _short_labels(algorithms: Sequence[str]) -> dict[str, str]:
    """Each algorithm text by the `key=value` words that tell it from the others (the whole text on hover)."""
    words = [set(algo.split()) for algo in algorithms]
    common = set.intersection(*words) if words else set()
    out = {}
    for algo in algorithms:
        short = " ".join(w for w in algo.split() if w not in common) or algo
        out[algo] = short.replace("MATMUL_TILE_", "").replace("MATMUL_STAGES_", "").replace("REDUCTION_SCHEME_", "")
    return out


def _legend(report: Report) -> list[dict[str, Any]]:
    calls: dict[str, int] = {}
    for row in report.gemm_map.get("rows") or []:
        for cell in row["cells"].values():
            for algo, count in cell["algos"]:
                calls[algo] = calls.get(algo, 0) + count
    return [
        {"color": _color(i), "algo": algo, "calls": calls.get(algo, 0)}
        for i, algo in enumerate(report.gemm_map.get("algorithms") or [])
    ]


def _signatures(report: Report) -> dict[str, Any] | None:
    columns = report.gemm_map.get("columns") or []
    if not columns:
        return None
    rows = [{"#": i + 1, **{k: v for k, v in c.items() if k != "label"}} for i, c in enumerate(columns)]
    return _table("GEMM signatures of the map", rows)


def _sections(report: Report) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(settings tables for the verdict, every other section as a table)."""
    settings: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []
    for title, rows in report.sections:
        if title.lower() == "coverage" and report.document.get("coverage"):
            continue  # shown in the verdict
        (settings if "setting" in title.lower() else other).append(_table(title, rows))
    return settings, other


def _main_rows(report: Report) -> dict[str, Any] | None:
    if report.command in ("diff", "check") and not report.rows:
        return None
    if not report.rows:
        return None
    title = {"summary": "Signatures", "parse": "Records"}.get(report.command, "Rows")
    return _table(title, report.rows, report.columns or None)


def _inputs(report: Report) -> dict[str, Any]:
    rows = [
        {
            "file": s.path,
            "lines": s.lines,
            "gemm_records": s.gemm_records,
            "other_records": s.other_records,
            "record_lines": s.record_lines,
            "foreign_lines": s.foreign_lines,
            "unparsable_lines": s.unparsable_lines,
            "formats": ", ".join(f"{k}={v}" for k, v in sorted(s.formats.items())),
            "problems": len(s.problems) + s.more_problems,
        }
        for s in report.files
    ]
    return _table("Inputs", rows)


def context(report: Report) -> dict[str, Any]:
    """Everything the template shows, as plain data (escaped by the template) and SVG (escaped by _svg)."""
    _require()
    ids = {_finding_ref(f): card_id(i) for i, f in enumerate(report.findings, 1)}
    settings, sections = _sections(report)
    out = {
        "command": report.command,
        "verdict": _verdict(report),
        "coverage": report.document.get("coverage") or [],
        "comparisons": _comparisons(report),
        "settings": settings,
        "cards": _cards(report),
        "classes": [{"name": row.name, "color": row.color, "meaning": row.meaning} for row in FINDING_CLASSES.values()],
        "map": _map_chart(report, ids),
        "map_classes": _map_classes(report),
        "map_left_out": report.gemm_map.get("left_out", 0),
        "legend": _legend(report),
        "signatures": _signatures(report),
        "agreement": _table("Agreement with the reference per GEMM", report.document["agreement"])
        if report.document.get("agreement")
        else None,
        "batch": _batch_charts(report),
        "sections": sections,
        "main": _main_rows(report),
        "inputs": _inputs(report),
        "failed": report.failed,
        "notes": report.notes,
        "script": _script()[0],
        "script_source": _script()[1],
    }
    tables = [*settings, *sections, *(out[k] for k in ("signatures", "agreement", "main", "inputs") if out[k])]
    seen: set[str] = set()
    for table in tables:  # element ids unique in the page
        slug, n = table["slug"], 2
        while slug in seen:
            slug, n = f"{table['slug']}-{n}", n + 1
        seen.add(slug)
        table["slug"] = slug
    return out


def _finding_ref(finding: Finding) -> str:
    # the same spelling as blaslog.views.map_finding_ref (reporters do not import views: it is a floor below)
    return f"{finding.fingerprint()}|{finding.location.file}|{finding.location.line}"


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page."""
    page = _environment().get_template("report.html.j2").render(**context(report))
    return str(page)


@register
class HtmlReporter(Reporter):
    """A self-contained HTML page for people (needs the html extra)."""

    name = "html"
    commands = ("summary", "check", "diff")
    extra = "html"
    requires = ("jinja2",)
    description = f"one self-contained HTML page: verdict, algorithm map, finding cards ({INSTALL_HINT})"

    def render(self, report: Report) -> str:
        # log text never starts a line here (it sits inside elements, one line each); `##[` in markup is
        # written as an XML/HTML character reference, which the browser reads back as the text it was
        return defuse_commands(render_html(report), "xml")
