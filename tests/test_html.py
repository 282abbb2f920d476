"""`--format html`: one self-contained page (the verdict first, an algorithm map, a batch-invariance chart, finding
cards, sortable tables) whose charts are inline SVG drawn when the page is built, checked as text here and in a
real browser: headless Chromium, driven over the Chrome DevTools Protocol on a pipe (stdlib only: no driver, no
download), opens pages built from the fixtures; the tests assert no console error, charts drawn with a size and
their cells with JavaScript off, hover boxes and the map's filters with it on, a finding click that scrolls to
its card, hostile names that run nothing, and save screenshots (under $BLASLOG_ARTIFACTS when set, else pytest's
tmp dir). Open times are measured, not tested: `python tests/test_html.py PAGE.html ...` prints them (see
bench/RESULTS.md).

Chromium comes from the system (Debian's `chromium`, which .ci/run installs where it can; $BLASLOG_CHROMIUM
names another); without it the browser tests skip, saying so, except under CI ($CI set), where they fail.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blaslog import api
from blaslog.cli import FORMATS, cli
from blaslog.report import FINDING_CLASSES, Finding, Location, Report
from blaslog.reporters import get_reporter

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed"
GENERATED = ROOT / "fixtures" / "generated"

if os.environ.get("CI"):  # the test extra installs jinja2: in CI these tests must run, never skip
    import jinja2  # noqa: F401
else:
    pytest.importorskip("jinja2", reason="the html extra is not installed: pip install 'blaslog[html]'")


def _html(report: Report) -> str:
    return get_reporter("html").render(report)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    """Reports of the fixtures: the seed's diff, a TP-4 diff, a batch-invariance check and a summary."""
    return {
        "seed-diff": api.diff(str(SEED / "sharded.log"), str(SEED / "unsharded.log"), caps=str(SEED / "caps.json")),
        "tp4-diff": api.diff(
            str(GENERATED / "lt_fp32_tp4"),
            str(GENERATED / "lt_fp32_unsharded.stdout.log"),
            caps=str(GENERATED / "caps.json"),
        ),
        "batch-check": api.check([str(GENERATED / "lt_fp32_tp4")], batch=True),
        "summary": api.summary([str(GENERATED / "lt_fp32_tp4")]),
    }


@pytest.fixture(scope="module")
def tp4_report(reports) -> Report:
    return reports["tp4-diff"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory, reports) -> dict[str, Path]:
    """The reports' HTML pages, as files."""
    folder = tmp_path_factory.mktemp("html")
    out = {}
    for name, report in reports.items():
        out[name] = folder / f"{name}.html"
        out[name].write_text(_html(report), encoding="utf-8")
    return out


# ---- the page as text ----------------------------------------------------------------------------------------------


def test_html_is_offered_where_a_report_has_findings_or_signatures():
    for command in ("diff", "check", "summary"):
        assert "html" in FORMATS[command]


def _script_hash(text: str) -> tuple[str, str]:
    """(the CSP's script-src, the sha256 source of the page's one script as written in it)."""
    policy = re.search(r"script-src ([^;\"]+)", text)
    script = re.search(r"<script>(.*?)</script>", text, re.S)
    assert policy and script
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode("utf-8")).digest()).decode()
    return policy.group(1).strip(), f"'sha256-{digest}'"


def test_the_page_is_self_contained(pages):
    text = pages["tp4-diff"].read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img|iframe|object|embed)[^>]+(src|href|data)=", text), "nothing loaded"
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert text.count("<script") == 1 and "Plotly" not in text and "plotly" not in text
    # the policy runs that one script, named by its hash, and nothing else: no 'unsafe-inline', no eval
    policy, script = _script_hash(text)
    assert policy == script


def test_the_script_is_left_as_it_is_by_the_command_defusing():
    from blaslog.reporters._base import defuse_commands

    source = (ROOT / "blaslog" / "reporters" / "templates" / "report.js").read_text()
    assert "</script" not in source.lower() and defuse_commands(source, "xml") == source


def test_the_seed_diff_page_is_small(tmp_path):
    """The README's example page: charts are SVG, no chart library is embedded (it was 4.8 MB with plotly.js)."""
    out = tmp_path / "report.html"
    args = ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "--caps", str(SEED / "caps.json")]
    result = CliRunner().invoke(cli, [*args, "-f", "html", "-o", str(out), "-q"])
    assert result.exit_code == 1, result.output  # a precision finding
    assert out.stat().st_size <= 500_000
    assert '<svg xmlns="http://www.w3.org/2000/svg" id="algorithm-map"' in out.read_text()


def _map_cells(report: Report) -> list[tuple[int, int, dict[str, Any]]]:
    return [(r, int(c), cell) for r, row in enumerate(report.gemm_map["rows"]) for c, cell in row["cells"].items()]


def test_the_map_is_svg_with_a_cell_per_signature_and_row_and_a_ring_linking_each_finding(tp4_report):
    text = _html(tp4_report)
    svg = text[text.index('<svg xmlns="http://www.w3.org/2000/svg" id="algorithm-map"') :]
    svg = svg[: svg.index("</svg>")]
    cells = _map_cells(tp4_report)
    assert svg.count('<rect class="cell tip"') == len(cells) > 20
    for r, c, _ in cells:
        assert f'data-row="{r}" data-column="{c}"' in svg
    ringed = [cell for _, _, cell in cells if cell["cls"]]
    assert svg.count('<rect class="ring"') == len(ringed) > 0
    for target in re.findall(r'<a class="finding-link" href="#(finding-\d+)"', svg):
        assert f'<article class="card" id="{target}"' in text
    assert f">{len(tp4_report.gemm_map['columns'])}<title>" in svg  # the last column is labelled


def test_the_verdict_comes_first_with_classes_coverage_and_tp(pages):
    text = pages["tp4-diff"].read_text()
    verdict = text.index('id="verdict"')
    assert verdict < text.index('id="map"') < text.index('id="findings"') < text.index('id="inputs"')
    head = text[verdict : text.index('id="map"')]
    for name in ("precision", "reduction", "schedule"):
        assert f'data-class="{name}"' in head
    assert "Coverage: GEMM calls paired" in head and "Tensor-parallel degree" in head and "100%" in head


def test_finding_cards_name_every_occurrence_and_fold_past_the_first(pages):
    text = pages["tp4-diff"].read_text()
    card = text[text.index('<article class="card" id="finding-1"') :]
    card = card[: card.index("</article>")]
    assert "What to do:" in card and FINDING_CLASSES["precision"].help in card
    assert "blaslt_321674.log:85" in card and "rank" in card
    assert "<details><summary>" in card  # 16 occurrences over 4 ranks: the first 5 shown, the rest folded


def test_large_runs_are_aggregated_not_embedded_call_by_call(tmp_path):
    """A log 40 times as long gives a page of (nearly) the same size: the map holds signatures, not calls."""
    log = (GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").read_text()
    (tmp_path / "long.log").write_text(log * 40)
    short = _html(api.summary([str(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")]))
    long = _html(api.summary([str(tmp_path / "long.log")]))
    assert len(long) < len(short) + 20_000


HOSTILE = [
    "<script>alert(1)</script>",
    "</script><script>alert(2)</script>",
    "\"'><img src=x onerror=alert(3)>",
    "##[set-output name=x]y",
    "line\n::warning::forged",
    "{{ 7*7 }}",
    "\u2028x",
]


@pytest.mark.parametrize(
    ("values", "log"), [((1, 2, 3), False), ((256, 1024), False), ((1, 64, 128, 32768), True), ((5, 5), False)]
)
def test_range_charts_place_values_in_order_inside_the_plot(values, log):
    from blaslog.reporters import _svg

    spans = [_svg.Span(v, v, 0, "#000", [str(v)]) for v in values]
    svg = _svg.ranges([_svg.Label("a", "a")], spans, x_title="m", label="m", svg_id="c")
    ground = re.search(r'<rect class="ground" x="(\d+)" y="\d+" width="(\d+)"', svg)
    assert ground
    left, width = int(ground.group(1)), int(ground.group(2))
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert len(xs) == len(values) and xs == sorted(xs) and left < xs[0] and xs[-1] < left + width
    if len(set(values)) > 1:
        assert len(set(xs)) == len(set(values))
    ticks = [float(x) for x in re.findall(r'<line class="grid-line" x1="([\d.]+)"', svg)]
    assert len(ticks) >= 2 and all(left <= x <= left + width for x in ticks)
    assert svg.endswith("</svg>") and ("(log scale)" in svg) == log


def _hostile_report(evil: str) -> Report:
    """A report with `evil` in every text a log or a file name can bring: finding title, explanation, field
    values, file names, a note, a section, the map's signature, row, shape and algorithm (in a ringed cell that
    links to its finding), and a batch-invariance chart's dimension and algorithms."""
    finding = Finding(
        "tp_algo_diff",
        "precision",
        f"t {evil}",
        f"e {evil}",
        Location(f"{evil}.log", 3, evil),
        fields=(("algoId", (evil, 2)),),
        key="k",
    )
    batch = Finding(
        "batch_dependent_algo",
        "schedule",
        f"b {evil}",
        f"e {evil}",
        Location(f"{evil}.log", 5),
        key="b",
        data={
            "dimension": evil,
            "ranges": [
                {"from": 1, "to": 64, "algo": f"algoId=1 {evil}", "line": 5},
                {"from": 128, "to": 4096, "algo": f"algoId=2 {evil}", "line": 9},
            ],
        },
    )
    from blaslog.reporters.html import _finding_ref

    cell = {"algos": [[evil, 1]], "calls": 1, "line": 3, "shape": evil}
    return Report(
        "diff",
        findings=[finding, batch],
        notes=[evil],
        sections=[(evil, [{evil: evil}])],
        gemm_map={
            "columns": [{"label": evil, "m": 1}, {"label": f"second {evil}", "m": 2}],
            "algorithms": [evil],
            "rows": [
                {
                    "label": evil,
                    "file": evil,
                    "rank": evil,
                    "role": "sharded",
                    "cells": {
                        "0": dict(cell, algo=evil, finding=_finding_ref(finding), cls="precision"),
                        "1": dict(cell, algo=evil, finding=None, cls=None),
                    },
                }
            ],
        },
    )


@pytest.mark.parametrize("evil", HOSTILE)
def test_log_text_is_escaped_everywhere(evil):
    """Hostile text comes out as text: never as markup, never as a script end, never as a workflow command."""
    text = _html(_hostile_report(evil))
    assert "<script>alert" not in text and "<img src=x" not in text
    if "{{" in evil:
        assert "t {{ 7*7 }}" in text and "t 49" not in text  # shown, never evaluated
    assert text.count("</script>") == text.count("<script") == 1  # the page's own
    assert text.count("<svg") == 2  # the map and the batch chart, and nothing from the text
    assert "##[" not in text
    assert not any(line.lstrip().startswith("::") for line in re.split(r"\r\n|\r|\n", text))


def _without(monkeypatch, *modules: str) -> None:
    """Make `import` of `modules` (and their submodules) fail, as where they are not installed."""
    import builtins

    real = builtins.__import__

    def importer(name, *args, **kwargs):
        if name.split(".")[0] in modules:
            raise ImportError(f"No module named {name!r}", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", importer)
    for name in modules:  # importlib.import_module (how the CLI checks an extra) does not call __import__
        monkeypatch.setitem(sys.modules, name, None)


def test_a_missing_extra_is_a_clear_exit_2_before_any_input_is_read(monkeypatch, tmp_path):
    """Without jinja2 (the whole html extra) the CLI says what to install, exit 2, and reads no input: an input
    that does not exist is not what it complains about."""
    import blaslog.reporters.html as html

    _without(monkeypatch, "jinja2", "markupsafe")
    html._environment.cache_clear()
    try:
        missing = str(tmp_path / "no-such.log")
        for args in (
            ["diff", missing, missing, "-f", "html"],
            ["check", missing, "--report", f"html={tmp_path}/r.html"],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 2, result.output
            assert "--format html needs jinja2 (jinja2 is not installed): pip install 'blaslog[html]'" in result.stderr
            assert "no-such.log" not in result.stderr and not result.stdout
    finally:
        html._environment.cache_clear()


def test_the_page_needs_jinja2_only(monkeypatch):
    """plotly (the chart library the page once embedded) is not needed: the page builds without it."""
    import blaslog.reporters.html as html

    _without(monkeypatch, "plotly")
    html._environment.cache_clear()
    try:
        text = _html(api.diff(str(SEED / "sharded.log"), str(SEED / "unsharded.log"), caps=str(SEED / "caps.json")))
    finally:
        html._environment.cache_clear()
    assert 'id="algorithm-map"' in text


def test_the_cli_writes_the_page(tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli, ["check", "--batch-invariance", str(GENERATED / "lt_fp32_tp4"), "-f", "html", "-o", str(out), "-q"]
    )
    assert result.exit_code == 1, result.output
    text = out.read_text()
    assert 'id="batch"' in text and 'class="chart range-chart"' in text


# ---- the page in a browser -------------------------------------------------------------------------------------------


def _chromium() -> str | None:
    """$BLASLOG_CHROMIUM when set (and only it), else the first Chromium on PATH."""
    named = os.environ.get("BLASLOG_CHROMIUM")
    for candidate in (named,) if named else ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(candidate):
            return shutil.which(candidate)
    return None


class Browser:
    """Headless Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages separated
    by NUL, commands on the child's fd 3, answers and events on its fd 4)."""

    FLAGS = (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--mute-audio",
        "--remote-debugging-pipe",
    )

    def __init__(self, executable: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # above 4, so that moving them onto fds 3 and 4 in the child cannot overwrite one with the other
        high_r, high_w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        # bash moves them onto fds 3 and 4 (a preexec_fn could not: close_fds runs after it; dash knows fds
        # 0-9 only)
        shell = f'exec "$@" 3<&{high_r} 4>&{high_w} {high_r}<&- {high_w}>&-'
        self.process = subprocess.Popen(
            [
                shutil.which("bash") or "bash",
                "-c",
                shell,
                "sh",
                executable,
                *self.FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(high_r, high_w),
        )
        os.close(high_r)
        os.close(high_w)
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=1400,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._lock:
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._lock.notify_all()
        with self._lock:
            self._lock.notify_all()

    def call(self, method: str, session: bool = False, timeout: float = 20, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer; AssertionError on a protocol error."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._next not in self._answers:
                left = deadline - time.monotonic()
                assert left > 0 and self.process.poll() is None, f"no answer to {method}"
                self._lock.wait(left)
            answer = self._answers.pop(self._next)
        assert "error" not in answer, (method, answer["error"])
        return answer.get("result", {})  # type: ignore[no-any-return]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {expression}")

    def open(self, path: Path) -> None:
        """Load a page and wait for its load event."""
        with self._lock:
            self.events.clear()
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        self.wait_for("document.readyState === 'complete'")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (a blocked load, a CSP violation ...)."""
        out = []
        with self._lock:
            events = list(self.events)
        for event in events:
            params = event.get("params", {})
            if event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif event.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif event.get("method") == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def click(self, x: float, y: float) -> None:
        """A real mouse click (move, press, release) at viewport coordinates."""
        self.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path, full: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full:
            height = self.evaluate("document.documentElement.scrollHeight")
            params.update(
                captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": 1400, "height": height, "scale": 1}
            )
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"]))

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_child)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable = _chromium()
    if executable is None:
        message = (
            f"no Chromium at $BLASLOG_CHROMIUM ({os.environ['BLASLOG_CHROMIUM']})"
            if os.environ.get("BLASLOG_CHROMIUM")
            else "no Chromium to run the browser tests with (apt-get install chromium, or set BLASLOG_CHROMIUM)"
        )
        if os.environ.get("CI"):  # .ci/run installs Chromium: in CI these tests must run, never skip
            pytest.fail(message)
        pytest.skip(message)
    if not sys.platform.startswith("linux"):
        pytest.skip("the browser tests drive Chromium over a pipe set up for Linux")
    try:
        instance = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    except (OSError, AssertionError) as exc:  # a Chromium that is there but does not start is a failure
        pytest.fail(f"Chromium ({executable}) did not start: {exc}")
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    """Where screenshots go: $BLASLOG_ARTIFACTS (a CI artifact folder), else pytest's tmp dir."""
    folder = (
        Path(os.environ["BLASLOG_ARTIFACTS"])
        if os.environ.get("BLASLOG_ARTIFACTS")
        else tmp_path_factory.mktemp("screenshots")
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


CHARTS = """Array.from(document.querySelectorAll('svg.chart')).map(svg => {
    const r = svg.getBoundingClientRect();
    return {id: svg.id, width: r.width, height: r.height,
            shapes: svg.querySelectorAll('.cell, .span').length,
            drawn: Array.from(svg.querySelectorAll('.cell, .span')).filter(e => {
                const b = e.getBoundingClientRect(), style = getComputedStyle(e);
                return (b.width > 0 || b.height > 0) && style.visibility !== 'hidden' && style.display !== 'none';
            }).length};
})"""

IN_VIEW = """(() => { const r = document.getElementById(%s).getBoundingClientRect();
    return r.top >= -2 && r.top < window.innerHeight / 2; })()"""

CENTER = """(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'center'});
    const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"""


@contextlib.contextmanager
def no_javascript(browser: Browser):
    """The page's scripts off (DevTools `Emulation.setScriptExecutionDisabled`; the tests' own evaluations still run)."""
    browser.call("Emulation.setScriptExecutionDisabled", session=True, value=True)
    try:
        yield
    finally:
        browser.call("Emulation.setScriptExecutionDisabled", session=True, value=False)


@pytest.mark.parametrize("name", ["seed-diff", "tp4-diff", "batch-check", "summary"])
def test_the_page_renders_without_errors(browser, pages, artifacts, name):
    browser.open(pages[name])
    charts = browser.evaluate(CHARTS)
    assert charts, "no chart on the page"
    for chart in charts:
        assert chart["width"] > 100 and chart["height"] > 50, chart
        assert chart["shapes"] > 0 and chart["drawn"] == chart["shapes"], chart
    if name == "batch-check":
        assert any(chart["id"].startswith("batch-") for chart in charts)
    assert browser.evaluate("document.querySelector('.verdict').getBoundingClientRect().top") < 200
    assert browser.evaluate(
        "document.querySelector('.chart-tools') === null || !document.querySelector('.chart-tools').hidden"
    )
    browser.screenshot(artifacts / f"{name}.png")
    assert not browser.errors(), browser.errors()


@pytest.mark.parametrize("name", ["seed-diff", "tp4-diff", "batch-check"])
def test_the_charts_are_drawn_with_javascript_off(browser, pages, reports, artifacts, name):
    """The map (every cell of it, ringed ones too) and the batch charts are in the page as SVG: nothing needs the
    script; the controls that do stay hidden, and a ring is a plain link to its finding."""
    with no_javascript(browser):
        browser.open(pages[name])
        assert browser.evaluate("document.querySelector('.tipbox') === null")  # the script did not run
        charts = browser.evaluate(CHARTS)
        assert {chart["id"] for chart in charts} >= {"algorithm-map"}
        for chart in charts:
            assert chart["width"] > 100 and chart["height"] > 50, chart
            assert chart["shapes"] > 0 and chart["drawn"] == chart["shapes"], chart
        cells = browser.evaluate("document.querySelectorAll('#algorithm-map .cell').length")
        assert cells == len(_map_cells(reports[name]))
        fills = browser.evaluate(
            "Array.from(document.querySelectorAll('#algorithm-map .cell')).map(e => getComputedStyle(e).fill)"
        )
        assert all(fill.startswith("rgb(") for fill in fills)
        assert browser.evaluate(
            "Array.from(document.querySelectorAll('input.filter, .chart-tools')).every(e => e.hidden)"
        )
        browser.screenshot(artifacts / f"{name}-no-javascript.png")
        ring = "#algorithm-map a.finding-link .cell"
        if browser.evaluate(f"document.querySelector('{ring}') !== null"):
            target = browser.evaluate(f"document.querySelector('{ring}').parentNode.dataset.target")
            browser.click(*browser.evaluate(CENTER % json.dumps(ring)))
            browser.wait_for(f"location.hash === {json.dumps('#' + target)}", timeout=3)
            browser.wait_for(IN_VIEW % json.dumps(target), timeout=3)
        assert not browser.errors(), browser.errors()


def test_hovering_a_cell_shows_its_details(browser, pages, tp4_report):
    browser.open(pages["tp4-diff"])
    row, column, cell = next(c for c in _map_cells(tp4_report) if c[2]["cls"])
    selector = f'#algorithm-map .cell[data-row="{row}"][data-column="{column}"]'
    browser.evaluate("window.scrollTo(0, 0)")
    x, y = browser.evaluate(CENTER % json.dumps(selector))
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)
    browser.wait_for("document.querySelector('.tipbox') && !document.querySelector('.tipbox').hidden", timeout=3)
    tip = browser.evaluate("document.querySelector('.tipbox').innerText")
    label = tp4_report.gemm_map["columns"][column]["label"]
    assert tip.splitlines()[0] == label and cell["shape"] in tip and cell["algo"] in tip
    assert f"{cell['cls']} finding: click to open it" in tip
    box = browser.evaluate(
        "(() => { const r = document.querySelector('.tipbox').getBoundingClientRect(); "
        "return [r.left, r.top, r.right, r.bottom]; })()"
    )
    left, top, right, bottom = box
    assert left >= 0 and top >= 0 and right <= 1400 and bottom <= 900, box  # inside the window
    assert browser.evaluate(f"document.querySelector('{selector} > title') === null")  # no second, native tooltip
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=5, y=5)
    browser.wait_for("document.querySelector('.tipbox').hidden", timeout=3)
    assert not browser.errors(), browser.errors()


MAP_SHOWN = """Array.from(document.querySelectorAll('#algorithm-map .cell'))
    .filter(c => !(c.classList.contains('dim') || c.parentNode.classList.contains('dim')))
    .map(c => [Number(c.dataset.row), Number(c.dataset.column)]).sort((a, b) => a[0] - b[0] || a[1] - b[1])"""


def _filter_map(browser: Browser, words: str, cls: str) -> list[list[int]]:
    browser.evaluate(f"""(() => {{ const tools = document.querySelector('.chart-tools');
        const input = tools.querySelector('input'), select = tools.querySelector('select');
        input.value = {json.dumps(words)}; input.dispatchEvent(new Event('input'));
        select.value = {json.dumps(cls)}; select.dispatchEvent(new Event('change')); }})()""")
    return browser.evaluate(MAP_SHOWN)  # type: ignore[no-any-return]


def test_the_map_filters_cells_by_words_and_by_finding_class(browser, pages, tp4_report):
    from blaslog.reporters.html import _hover

    browser.open(pages["tp4-diff"])
    cells = _map_cells(tp4_report)
    rows = tp4_report.gemm_map["rows"]
    columns = tp4_report.gemm_map["columns"]

    def expect(words: str = "", cls: str = "") -> list[list[int]]:
        return sorted(
            [r, c]
            for r, c, cell in cells
            if words.lower() in "\n".join(_hover(columns[c], rows[r], cell)).lower()
            and (not cls or (cell["cls"] if cls == "*" else cell["cls"] == cls))
        )

    assert _filter_map(browser, "", "") == expect() and len(expect()) == len(cells)
    shape = cells[-1][2]["shape"]
    assert _filter_map(browser, shape, "") == expect(shape) and 0 < len(expect(shape)) < len(cells)
    assert _filter_map(browser, "", "*") == expect(cls="*") and 0 < len(expect(cls="*")) < len(cells)
    assert _filter_map(browser, "", "precision") == expect(cls="precision") != expect(cls="*")
    assert _filter_map(browser, "rank 2", "*") == expect("rank 2", "*") and expect("rank 2", "*")
    assert browser.evaluate("document.querySelector('.chart-tools output').textContent") == (
        f"{len(expect('rank 2', '*'))} of {len(cells)} cells"
    )
    assert _filter_map(browser, "no such text at all", "") == []
    ring = browser.evaluate("document.querySelector('#algorithm-map a.finding-link').classList.contains('dim')")
    assert ring  # a ringed cell is dimmed with its ring
    assert not browser.errors(), browser.errors()


def test_a_finding_click_scrolls_to_its_card(browser, pages):
    browser.open(pages["tp4-diff"])
    browser.evaluate("window.scrollTo(0, 0)")
    links = browser.evaluate("Array.from(document.querySelectorAll('.findings-index a')).map(a => a.dataset.target)")
    target = links[-1]
    link = f"document.querySelector('.findings-index a[data-target=\"{target}\"]')"
    browser.evaluate(f"{link}.scrollIntoView({{block: 'nearest'}})")  # long paths can push the index below the fold
    assert not browser.evaluate(IN_VIEW % json.dumps(target))
    box = browser.evaluate(
        f"(() => {{ const r = {link}.getBoundingClientRect(); return [r.left + 30, r.top + r.height / 2]; }})()"
    )
    browser.click(*box)
    browser.wait_for(IN_VIEW % json.dumps(target), timeout=3)
    assert browser.evaluate("location.hash") == f"#{target}"
    assert not browser.errors(), browser.errors()


@pytest.mark.parametrize("chart", ["#algorithm-map a.finding-link .cell", "svg.range-chart .span line"])
def test_clicking_a_ringed_cell_or_a_range_opens_its_finding(browser, pages, chart):
    browser.open(pages["tp4-diff" if "map" in chart else "batch-check"])
    browser.evaluate("window.scrollTo(0, 0)")
    expected = browser.evaluate(f"document.querySelector('{chart}').closest('a').dataset.target")
    assert expected.startswith("finding-")
    browser.click(*browser.evaluate(CENTER % json.dumps(chart)))
    browser.wait_for(IN_VIEW % json.dumps(expected), timeout=3)
    assert browser.evaluate("location.hash") == f"#{expected}"
    assert not browser.errors(), browser.errors()


#: Payloads that would set window.pwned if the page let them run: script ends, event handlers, CDATA ends and
#: quotes that try to leave an attribute or a <title>.
PAYLOADS = [
    "</script><script>window.pwned=1</script>",
    "<svg onload=window.pwned=1>",
    '"><svg/onload="window.pwned=1">',
    "' onmouseover='window.pwned=1' x='",
    "]]><script>window.pwned=1</script>",
    "<![CDATA[</title><img src=x onerror=window.pwned=1>]]>",
    "</title></rect></g></svg><img src=x onerror=window.pwned=1>",
    "</textarea></style><iframe srcdoc='<script>parent.pwned=1</script>'>",
]


@pytest.mark.parametrize("evil", PAYLOADS)
@pytest.mark.parametrize("policy", ["as written", "without its CSP"])
def test_hostile_names_run_nothing_and_read_back_as_written(browser, tmp_path, evil, policy):
    """Hostile file, signature, shape, algorithm and finding text: nothing runs, on load, on hover or on a click,
    even with the page's Content-Security-Policy taken out (so that the escaping is what is tested); the page has
    its own one script and no element from the text; the text reads back exactly as written."""
    text = _html(_hostile_report(evil))
    if policy != "as written":
        text, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
        assert n == 1
    page = tmp_path / "hostile.html"
    page.write_text(text, encoding="utf-8")
    browser.open(page)
    cell = '#algorithm-map .cell[data-column="0"]'
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=2, y=2)
    x, y = browser.evaluate(CENTER % json.dumps(cell))
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)
    browser.wait_for("!document.querySelector('.tipbox').hidden", timeout=3)
    tip = browser.evaluate("document.querySelector('.tipbox').textContent")
    lane = browser.evaluate(CENTER % json.dumps("svg.range-chart .span line"))
    browser.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=lane[0], y=lane[1])
    browser.click(*lane)
    time.sleep(0.2)
    assert browser.evaluate("typeof window.pwned") == "undefined"
    dom = browser.evaluate("""({
        scripts: document.scripts.length, svgs: document.querySelectorAll('svg').length,
        foreign: document.querySelectorAll('img, iframe, textarea, object, embed, svg svg').length,
        handlers: Array.from(document.querySelectorAll('*')).filter(e =>
            Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,
        file: document.querySelector('#algorithm-map .row-labels text > title').textContent,
        column: document.querySelector('#algorithm-map .cell[data-column="1"]').dataset.tip
            || document.querySelector('#algorithm-map .cell[data-column="1"] > title').textContent,
        title: document.querySelector('#finding-1 h3').textContent,
    })""")
    assert (dom["scripts"], dom["svgs"], dom["foreign"], dom["handlers"]) == (1, 2, 0, 0), dom
    assert dom["file"] == evil
    assert tip.startswith(evil) and f"{evil} x1" in tip
    assert dom["column"].startswith(f"second {evil}\n")
    assert f"t {evil}" in dom["title"]
    assert not browser.errors(), browser.errors()


def test_tables_sort_and_filter(browser, pages):
    browser.open(pages["summary"])
    table = "document.querySelector('table.sortable')"
    first = browser.evaluate(f"{table}.tBodies[0].rows[0].cells[0].textContent")
    browser.evaluate(f"{table}.querySelector('th').click()")
    browser.evaluate(f"{table}.querySelector('th').click()")
    cells = browser.evaluate(f"Array.from({table}.tBodies[0].rows).map(r => r.cells[0].textContent)")
    assert cells == sorted(cells, key=lambda c: float(c) if c.replace(".", "", 1).isdigit() else 0, reverse=True)
    assert first in cells
    shown = browser.evaluate("""(() => { const input = document.querySelector('input.filter');
        input.value = 'no such text at all'; input.dispatchEvent(new Event('input'));
        return Array.from(document.getElementById(input.dataset.table).tBodies[0].rows)
            .filter(r => r.style.display !== 'none').length; })()""")
    assert shown == 0
    assert not browser.errors(), browser.errors()


@pytest.mark.parametrize("ci", ["", "true"])
def test_without_chromium_the_browser_tests_skip_except_under_ci(tmp_path, ci):
    """What .ci/run says: without Chromium the browser tests skip, saying so, but fail where $CI is set."""
    env = dict(os.environ, BLASLOG_CHROMIUM=str(tmp_path / "no-chromium"), CI=ci, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-k", "renders and seed", __file__],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = f"no Chromium at $BLASLOG_CHROMIUM ({tmp_path / 'no-chromium'})"
    assert said in result.stdout, result.stdout
    if ci:
        assert result.returncode == 1 and "1 error" in result.stdout, result.stdout
    else:
        assert result.returncode == 0 and "1 skipped" in result.stdout, result.stdout


# ---- notebooks: short reprs, HTML reprs, frames ----------------------------------------------------------------------


def test_reports_and_parse_results_have_short_reprs(tmp_path):
    import blaslog

    log = (GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").read_text()
    (tmp_path / "long.log").write_text(log * 20)
    result = blaslog.parse(str(tmp_path / "long.log"))
    assert len(result.records) > 10_000
    assert repr(result).startswith("<ParseResult ") and len(repr(result)) < 200
    report = api.check([str(tmp_path / "long.log")], batch=True)
    assert repr(report).startswith("<Report check: ") and len(repr(report)) < 300 and "exit status 1" in repr(report)
    assert len(report._repr_html_()) < 20_000 and len(result._repr_html_()) < 5_000


def test_html_reprs_escape_log_text():
    import blaslog

    evil = "<script>alert(1)</script>"
    finding = Finding("tp_algo_diff", "precision", evil, evil, Location(evil, 1))
    assert "<script>" not in Report("diff", findings=[finding])._repr_html_()
    assert "&lt;script&gt;" in Report("diff", findings=[finding])._repr_html_()
    result = blaslog.parse_text((SEED / "sharded.log").read_text(), name=evil)
    assert "<script>" not in result._repr_html_()


def test_findings_frame_has_one_row_per_finding():
    report = api.diff(
        str(GENERATED / "lt_fp32_tp4"),
        str(GENERATED / "lt_fp32_unsharded.stdout.log"),
        caps=str(GENERATED / "caps.json"),
    )
    frame = report.findings_frame()
    assert list(frame.columns) == [
        "class",
        "level",
        "kind",
        "title",
        "signature",
        "fields",
        "count",
        "ranks",
        "file",
        "line",
        "fingerprint",
    ]
    assert len(frame) == len(report.findings)
    first = frame.iloc[0]
    assert (first["class"], first["count"], first["ranks"]) == ("precision", 16, "0,1,2,3")
    assert (
        first["signature"] == "cublasLtMatmul TN 1024x2048x256 R_32F/COMPUTE_32F_FAST_TF32 vs "
        "cublasLtMatmul TN 1024x2048x1024 R_32F/COMPUTE_32F_FAST_TF32"
    )
    assert first["fields"].startswith("algoId: 0 vs 21; tile: MATMUL_TILE_128x32 vs MATMUL_TILE_64x64")
    assert len(Report("check").findings_frame()) == 0


def test_the_gemm_frame_takes_rank_and_run_when_known():
    import blaslog

    result = blaslog.parse(str(GENERATED / "lt_fp32_tp4" / "*.log"))
    files = sorted({g.file for g in result.gemms})
    frame = blaslog.to_frame(result, rank={file: rank for rank, file in enumerate(files)}, run="tp4")
    assert str(frame["rank"].dtype) == "Int64" and str(frame["run"].dtype) == "category"
    assert frame.groupby("file", observed=True)["rank"].first().tolist() == [0, 1, 2, 3]
    assert set(frame["run"]) == {"tp4"}
    assert "rank" not in blaslog.to_frame(result).columns  # only when asked


# ---- open times (measured, never asserted: `python tests/test_html.py PAGE.html ...`) ------------------------------

OPENED = """new Promise(resolve => {
    const ready = () => document.readyState === 'complete'
        && Array.from(document.querySelectorAll('div.plot')).every(d => d.dataset.rendered === '1');
    const check = () => ready() ? requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())))
                                : setTimeout(check, 2);
    check();
})"""


def open_time(browser: Browser, page: Path) -> float:
    """Milliseconds from the start of the navigation (the page's own clock) to the first frame after its load
    event, charts drawn (a page that draws them in script marks each `div.plot` with data-rendered="1" when done,
    as the Plotly pages before SVG did)."""
    with browser._lock:
        browser.events.clear()
    browser.call("Page.navigate", session=True, url=page.resolve().as_uri())
    deadline = time.monotonic() + 60
    while not any(event.get("method") == "Page.loadEventFired" for event in list(browser.events)):
        assert time.monotonic() < deadline, f"{page} did not load"
        time.sleep(0.002)
    return float(browser.evaluate(OPENED))


def main(paths: list[str], runs: int = 5, reloads: int = 5) -> None:
    """Print each page's size and open times: cold (the first load in a freshly started Chromium with a new
    profile, `runs` times) and warm (`reloads` loads more in each of those browsers), median and range."""
    import statistics
    import tempfile

    executable = _chromium()
    if executable is None:
        sys.exit("no Chromium (apt-get install chromium, or set BLASLOG_CHROMIUM)")
    for page in map(Path, paths):
        cold, warm = [], []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as profile:
                browser = Browser(executable, Path(profile))
                try:
                    cold.append(open_time(browser, page))
                    warm += [open_time(browser, page) for _ in range(reloads)]
                finally:
                    browser.close()
        print(
            f"{page}: {page.stat().st_size} bytes; open cold {statistics.median(cold):.0f} ms "
            f"({min(cold):.0f}-{max(cold):.0f}, {runs} browsers), warm {statistics.median(warm):.0f} ms "
            f"({min(warm):.0f}-{max(warm):.0f}, {len(warm)} loads)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
