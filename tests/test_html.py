"""`--format html`: one self-contained page (the verdict first, an algorithm map, a batch-invariance chart, finding
cards, sortable tables), checked as text here and in a real browser: headless Chromium, driven over the Chrome
DevTools Protocol on a pipe (stdlib only: no driver, no download), opens pages built from the fixtures; the
tests assert no console error, charts drawn with a size, a finding click that scrolls to its card, and save
screenshots (under $BLASLOG_ARTIFACTS when set, else pytest's tmp dir).

Chromium comes from the system (Debian's `chromium`, which .ci/run installs where it can; $BLASLOG_CHROMIUM
names another); without it the browser tests skip, saying so.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
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

pytest.importorskip("jinja2", reason="the html extra is not installed: pip install 'blaslog[html]'")
pytest.importorskip("plotly", reason="the html extra is not installed: pip install 'blaslog[html]'")


def _html(report: Report) -> str:
    return get_reporter("html").render(report)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """HTML reports of the fixtures: the seed's diff, a TP-4 diff, a batch-invariance check and a summary."""
    folder = tmp_path_factory.mktemp("html")
    reports = {
        "seed-diff": api.diff(str(SEED / "sharded.log"), str(SEED / "unsharded.log"), caps=str(SEED / "caps.json")),
        "tp4-diff": api.diff(
            str(GENERATED / "lt_fp32_tp4"),
            str(GENERATED / "lt_fp32_unsharded.stdout.log"),
            caps=str(GENERATED / "caps.json"),
        ),
        "batch-check": api.check([str(GENERATED / "lt_fp32_tp4")], batch=True),
        "summary": api.summary([str(GENERATED / "lt_fp32_tp4")]),
    }
    out = {}
    for name, report in reports.items():
        out[name] = folder / f"{name}.html"
        out[name].write_text(_html(report), encoding="utf-8")
    return out


# ---- the page as text ----------------------------------------------------------------------------------------------


def test_html_is_offered_where_a_report_has_findings_or_signatures():
    for command in ("diff", "check", "summary"):
        assert "html" in FORMATS[command]


def test_the_page_is_self_contained(pages):
    text = pages["tp4-diff"].read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text), "nothing is loaded from elsewhere"
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert text.count("<script>") == 2  # plotly.js and the page's own few lines


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


@pytest.mark.parametrize("evil", HOSTILE)
def test_log_text_is_escaped_everywhere(evil):
    """A hostile title, explanation, field value, file name and note come out as text: never as markup, never
    as a script end, never as a workflow command."""
    finding = Finding(
        "tp_algo_diff",
        "precision",
        f"t {evil}",
        f"e {evil}",
        Location(f"{evil}.log", 3, evil),
        fields=(("algoId", (evil, 2)),),
        key="k",
    )
    report = Report(
        "diff",
        findings=[finding],
        notes=[evil],
        sections=[(evil, [{evil: evil}])],
        gemm_map={
            "columns": [{"label": evil, "m": 1}],
            "algorithms": [evil],
            "rows": [
                {
                    "label": evil,
                    "file": evil,
                    "rank": evil,
                    "role": "sharded",
                    "cells": {
                        "0": {
                            "algo": evil,
                            "algos": [[evil, 1]],
                            "calls": 1,
                            "line": 3,
                            "shape": evil,
                            "finding": None,
                            "cls": None,
                        }
                    },
                }
            ],
        },
    )
    text = _html(report)
    assert "<script>alert" not in text and "<img src=x" not in text
    if "{{" in evil:
        assert "t {{ 7*7 }}" in text and "t 49" not in text  # shown, never evaluated
    assert text.count("</script>") == text.count("<script") == 3  # plotly.js, the page's own, the map's data
    assert "##[" not in text
    assert not any(line.lstrip().startswith("::") for line in re.split(r"\r\n|\r|\n", text))


def test_quotes_in_map_labels_and_hovers_are_not_entities():
    """Plotly decodes &lt; &gt; &amp; in its labels and hover boxes, but shows &quot; and &#x27; as written."""
    name = "a \"quoted\" <name> & 'more'"
    cell = {"algo": name, "algos": [[name, 1]], "calls": 1, "line": 3, "shape": name, "finding": None, "cls": None}
    report = Report(
        "summary",
        gemm_map={
            "columns": [{"label": name, "m": 1}],
            "algorithms": [name],
            "rows": [{"label": name, "file": name, "rank": 0, "role": "sharded", "cells": {"0": cell}}],
        },
    )
    scripts = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', _html(report), re.S)
    data = json.dumps([json.loads(script) for script in scripts], ensure_ascii=False)
    assert scripts and "&quot;" not in data and "&#x27;" not in data
    assert "a \\\"quoted\\\" &lt;name&gt; &amp; 'more'" in data  # quotes as they are; markup escaped


def test_a_missing_extra_is_a_clear_exit_2(monkeypatch):
    import blaslog.reporters.html as html

    def missing():
        raise html.MissingExtraError(
            f"--format html needs jinja2 and plotly (plotly is not installed): {html.INSTALL_HINT}"
        )

    monkeypatch.setattr(html, "_require", missing)
    html._environment.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["diff", str(SEED / "sharded.log"), str(SEED / "unsharded.log"), "-f", "html"])
    finally:
        html._environment.cache_clear()
    assert result.exit_code == 2
    assert "pip install 'blaslog[html]'" in result.stderr and not result.stdout


def test_the_missing_extra_is_detected_by_import(monkeypatch):
    import builtins

    import blaslog.reporters.html as html

    real = builtins.__import__

    def no_plotly(name, *args, **kwargs):
        if name.startswith("plotly"):
            raise ImportError("No module named 'plotly'", name="plotly")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_plotly)
    with pytest.raises(html.MissingExtraError, match=r"plotly is not installed\): pip install 'blaslog\[html\]'"):
        html._require()


def test_the_cli_writes_the_page(tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli, ["check", "--batch-invariance", str(GENERATED / "lt_fp32_tp4"), "-f", "html", "-o", str(out), "-q"]
    )
    assert result.exit_code == 1, result.output
    text = out.read_text()
    assert 'id="batch"' in text and "batch-plot" in text


# ---- the page in a browser -------------------------------------------------------------------------------------------


def _chromium() -> str | None:
    for candidate in (os.environ.get("BLASLOG_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and shutil.which(candidate):
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
        message = "no Chromium to run the browser tests with (apt-get install chromium, or set BLASLOG_CHROMIUM)"
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


SIZES = """Array.from(document.querySelectorAll('div.plot')).map(div => {
    const svg = div.querySelector('svg.main-svg'); const r = (svg || div).getBoundingClientRect();
    return {id: div.id, drawn: div.dataset.rendered === '1', width: r.width, height: r.height,
            cells: div.querySelectorAll('.heatmaplayer image, .scatterlayer .point').length};
})"""

IN_VIEW = """(() => { const r = document.getElementById(%s).getBoundingClientRect();
    return r.top >= -2 && r.top < window.innerHeight / 2; })()"""


@pytest.mark.parametrize("name", ["seed-diff", "tp4-diff", "batch-check", "summary"])
def test_the_page_renders_without_errors(browser, pages, artifacts, name):
    browser.open(pages[name])
    browser.wait_for(
        "document.querySelectorAll('div.plot').length === "
        "document.querySelectorAll('div.plot[data-rendered=\"1\"]').length"
    )
    plots = browser.evaluate(SIZES)
    assert plots, "no chart on the page"
    for plot in plots:
        assert plot["drawn"] and plot["width"] > 100 and plot["height"] > 50, plot
        assert plot["cells"] > 0, plot
    assert browser.evaluate("document.querySelector('.verdict').getBoundingClientRect().top") < 200
    browser.screenshot(artifacts / f"{name}.png")
    assert not browser.errors(), browser.errors()


def test_a_finding_click_scrolls_to_its_card(browser, pages):
    browser.open(pages["tp4-diff"])
    browser.wait_for("document.querySelector('#algorithm-map').dataset.rendered === '1'")
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


def test_clicking_a_marked_cell_of_the_map_opens_its_finding(browser, pages):
    browser.open(pages["tp4-diff"])
    browser.wait_for("document.querySelector('#algorithm-map').dataset.rendered === '1'")
    browser.evaluate("window.scrollTo(0, 0)")
    browser.evaluate("document.getElementById('algorithm-map').scrollIntoView({block: 'center'})")
    point = browser.evaluate("""(() => {
        const p = document.querySelector('#algorithm-map .scatterlayer .point');
        const r = p.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()""")
    expected = browser.evaluate("""(() => { const div = document.getElementById('algorithm-map');
        return div.data[1].customdata[0]; })()""")
    assert expected.startswith("finding-")
    browser.click(*point)
    browser.wait_for(IN_VIEW % json.dumps(expected), timeout=3)
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
