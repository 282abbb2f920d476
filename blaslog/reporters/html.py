"""One self-contained HTML page (`--format html`): the verdict first, an algorithm map, a batch-invariance chart,
a card per finding and sortable, filterable tables.

Built with Jinja2 (autoescaped: every log text is untrusted) and Plotly (its plotly.js embedded in the page,
so the file works offline and asks the network for nothing), both from the optional extra
``pip install 'blaslog[html]'``. The page shows what the Report aggregated (signatures, not calls), so a large
run gives a page of the same size as a small one, plus the embedded plotly.js.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from blaslog.errors import BlaslogError
from blaslog.report import FINDING_CLASSES, Finding, Report, finding_class, rank_span
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
    """The html extra (jinja2, plotly) is not installed."""


def _require() -> tuple[Any, Any]:
    """(jinja2, plotly.graph_objects), or MissingExtraError naming the extra."""
    try:
        import jinja2
        import plotly.graph_objects as go
    except ImportError as exc:
        raise MissingExtraError(
            f"--format html needs jinja2 and plotly ({exc.name or exc} is not installed): {INSTALL_HINT}"
        ) from None
    return jinja2, go


@cache
def _environment() -> Any:
    jinja2, _ = _require()
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("blaslog.reporters", "templates"),
        autoescape=True,  # every value from a log is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text"] = _text
    env.filters["json"] = lambda value: markupsafe_markup()(_json_for_script(value))
    return env


def markupsafe_markup() -> Any:
    """markupsafe.Markup (installed with jinja2)."""
    from markupsafe import Markup

    return Markup


def _text(value: object, limit: int = 0) -> str:
    """Log text for the page: one line, control characters shown escaped (autoescaping does the rest)."""
    return printable("-" if value is None else str(value).replace("\n", " "), limit)


def _json_for_script(value: object) -> str:
    """JSON to put inside a <script type="application/json"> element: nothing in it can end the element or
    read as markup, and `##[` is spelled with a JSON escape (see defuse_commands)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("'", "\\u0027"),
        ("##[", "##\\u005b"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    # a script element ends at the first "</script": plotly.js holds none today; make sure it never can
    return str(get_plotlyjs()).replace("</script", "<\\/script")


def card_id(index: int) -> str:
    """The element id of the card of the `index`-th finding (1-based)."""
    return f"finding-{index}"


def _e(value: object, limit: int = 0) -> str:
    """Text for Plotly's labels and hover boxes, which read a subset of HTML: escaped, printable."""
    # quote=False: Plotly decodes &lt; &gt; &amp; but shows &quot; and &#x27; as they are written
    return html.escape(printable(value, limit), quote=False)


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


# ---- the figures (Plotly), as JSON for Plotly.newPlot -------------------------------------------------------------


def _figure_json(figure: Any) -> dict[str, Any]:
    return json.loads(figure.to_json())  # type: ignore[no-any-return]


def _map_figure(report: Report, go: Any, ids: dict[str, str]) -> dict[str, Any] | None:
    """The algorithm map: a heatmap of signatures (x, in call order) by run or rank (y), coloured by the
    algorithm that ran, with a ring in the class colour on every cell that showed a finding."""
    gemm_map = report.gemm_map
    columns, rows = gemm_map.get("columns") or [], gemm_map.get("rows") or []
    if not columns or not rows:
        return None
    algorithms = gemm_map.get("algorithms") or []
    colour_of = {algo: index for index, algo in enumerate(algorithms)}
    x = [f"#{i + 1}" for i in range(len(columns))]
    y = [_row_label(row, index) for index, row in enumerate(rows)]
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    custom: list[list[str]] = []
    marks: dict[str, dict[str, list[Any]]] = {}
    for r_index, row in enumerate(rows):
        cells = {int(k): v for k, v in row["cells"].items()}
        z_row: list[float | None] = []
        t_row: list[str] = []
        c_row: list[str] = []
        for c_index, column in enumerate(columns):
            cell = cells.get(c_index)
            if cell is None:
                z_row.append(None)
                t_row.append(f"{_e(column['label'])}<br>{_e(row['label'])}: not called")
                c_row.append("")
                continue
            z_row.append(colour_of.get(cell["algo"], 0))
            target = ids.get(cell.get("finding") or "", "")
            c_row.append(target)
            t_row.append(_hover(column, row, cell))
            if cell.get("cls"):
                mark = marks.setdefault(cell["cls"], {"x": [], "y": [], "id": [], "text": []})
                mark["x"].append(x[c_index])
                mark["y"].append(y[r_index])
                mark["id"].append(target)
                mark["text"].append(t_row[-1])
        z.append(z_row)
        text.append(t_row)
        custom.append(c_row)
    n = max(len(algorithms), 1)
    scale = []
    for index in range(n):
        scale += [[index / n, _color(index)], [(index + 1) / n, _color(index)]]
    figure = go.Figure()
    figure.add_trace(
        go.Heatmap(
            x=x,
            y=y,
            z=z,
            customdata=custom,
            hovertext=text,
            hoverinfo="text",
            colorscale=scale,
            zmin=-0.5,
            zmax=n - 0.5,
            showscale=False,
            xgap=1,
            ygap=1,
            name="algorithm",
            hoverongaps=False,
        )
    )
    for name, row in FINDING_CLASSES.items():  # most severe first, so the legend reads like the verdict
        if name not in marks:
            continue
        mark = marks[name]
        figure.add_trace(
            go.Scatter(
                x=mark["x"],
                y=mark["y"],
                customdata=mark["id"],
                hovertext=mark["text"],
                hoverinfo="text",
                mode="markers",
                name=_e(name),
                marker={
                    "symbol": "square-open",
                    "size": 16,
                    "color": row.color,
                    "line": {"width": 3, "color": row.color},
                },
            )
        )
    height = 120 + 34 * len(rows)
    figure.update_layout(
        height=height,
        width=max(560, 260 + 24 * len(columns)),
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        showlegend=bool(marks),
        xaxis={"type": "category", "title": {"text": "GEMM signatures, in call order"}, "side": "bottom"},
        yaxis={"type": "category", "autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        plot_bgcolor="#f3f4f6",
        paper_bgcolor="#ffffff",
        hovermode="closest",
        clickmode="event",
    )
    return _figure_json(figure)


def _row_label(row: dict[str, Any], index: int) -> str:
    base = os.path.basename(str(row.get("file") or "")) or str(row.get("label"))
    if row.get("role") == "sharded":
        base = f"rank {row.get('rank')} · {base}"
    elif row.get("role") == "unsharded":
        base = f"reference · {base}"
    return _e(f"{index + 1}. {base}", 60)


def _hover(column: dict[str, Any], row: dict[str, Any], cell: dict[str, Any]) -> str:
    lines = [
        f"<b>{_e(column['label'], 120)}</b>",
        f"{_e(row['label'], 120)}, here {_e(cell['shape'])}",
        f"{cell['calls']} call(s), first at line {cell['line']}",
    ]
    for algo, count in cell["algos"][:4]:
        lines.append(f"{_e(algo, 160)} x{count}")
    if len(cell["algos"]) > 4:
        lines.append(f"... {len(cell['algos']) - 4} more algorithms")
    if cell.get("cls"):
        lines.append(f"<b>{_e(cell['cls'])}</b> finding: click to open it")
    return "<br>".join(lines)


def _batch_figures(report: Report, go: Any, ids: dict[str, str]) -> list[dict[str, Any]]:
    """One chart per batch-invariance finding: the varying dimension on x, the algorithm (split-K included)
    on y, one segment per range of that dimension that ran one algorithm."""
    figures: list[dict[str, Any]] = []
    algorithms = report.gemm_map.get("algorithms") or []
    colour_of = {algo: index for index, algo in enumerate(algorithms)}
    seen: dict[str, dict[str, Any]] = {}
    for index, finding in enumerate(report.findings, 1):
        ranges = finding.data.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            continue
        same = seen.get(finding.fingerprint())
        if same is not None:  # the same cause in another input of the check: one chart, naming the inputs
            same["inputs"] += 1
            continue
        if len(figures) >= MAX_BATCH_CHARTS:
            continue
        dimension = str(finding.data.get("dimension", "size"))
        labels = _short_labels([str(span.get("algo")) for span in ranges])
        figure = go.Figure()
        values = []
        for span in ranges:
            algo = str(span.get("algo"))
            low, high = span.get("from"), span.get("to")
            values += [v for v in (low, high) if isinstance(v, (int, float)) and v > 0]
            colour = _color(colour_of.get(algo, len(colour_of) + len(figure.data)))
            figure.add_trace(
                go.Scatter(
                    x=[low, high],
                    y=[_e(labels[algo], 60)] * 2,
                    mode="lines+markers",
                    showlegend=False,
                    line={"width": 10, "color": colour},
                    marker={"size": 12, "color": colour},
                    hovertext=[_e(f"{dimension} {low}..{high}: {algo} (line {span.get('line')})")] * 2,
                    hoverinfo="text",
                    customdata=[card_id(index)] * 2,
                )
            )
        xaxis: dict[str, Any] = {"title": {"text": _e(dimension)}}
        if values:
            low_v, high_v = min(values), max(values)
            if high_v / max(low_v, 1) > 8:
                xaxis.update(type="log", range=[math.log10(low_v) - 0.25, math.log10(high_v) + 0.25])
            else:
                pad = max((high_v - low_v) * 0.1, 1)
                xaxis.update(type="linear", range=[low_v - pad, high_v + pad])
        figure.update_layout(
            height=110 + 40 * len(labels),
            margin={"l": 10, "r": 20, "t": 10, "b": 40},
            xaxis=xaxis,
            yaxis={"type": "category", "automargin": True},
            plot_bgcolor="#f3f4f6",
            clickmode="event",
        )
        entry = {
            "id": f"batch-{index}",
            "card": card_id(index),
            "title": finding.title,
            "cls": finding.cls,
            "color": finding_class(finding.cls).color,
            "figure": _figure_json(figure),
            "inputs": 1,
        }
        seen[finding.fingerprint()] = entry
        figures.append(entry)
    return figures


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
    """Everything the template shows, as plain data (escaped by the template, or for Plotly here)."""
    _, go = _require()
    ids = {_finding_ref(f): card_id(i) for i, f in enumerate(report.findings, 1)}
    settings, sections = _sections(report)
    figure = _map_figure(report, go, ids)
    out = {
        "command": report.command,
        "verdict": _verdict(report),
        "coverage": report.document.get("coverage") or [],
        "comparisons": _comparisons(report),
        "settings": settings,
        "cards": _cards(report),
        "classes": [{"name": row.name, "color": row.color, "meaning": row.meaning} for row in FINDING_CLASSES.values()],
        "map": figure,
        "map_left_out": report.gemm_map.get("left_out", 0),
        "legend": _legend(report),
        "signatures": _signatures(report),
        "agreement": _table("Agreement with the reference per GEMM", report.document["agreement"])
        if report.document.get("agreement")
        else None,
        "batch": _batch_figures(report, go, ids),
        "sections": sections,
        "main": _main_rows(report),
        "inputs": _inputs(report),
        "failed": report.failed,
        "notes": report.notes,
        "plotly_js": _plotly_js(),
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
    requires = ("jinja2", "plotly")
    description = f"one self-contained HTML page: verdict, algorithm map, finding cards ({INSTALL_HINT})"

    def render(self, report: Report) -> str:
        # log text never starts a line here (it sits inside elements, one line each); `##[` in markup is
        # written as an XML/HTML character reference, which the browser reads back as the text it was
        return defuse_commands(render_html(report), "xml")
