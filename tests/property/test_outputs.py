"""Second hypothesis pass, over the paths the first did not reach: every command x every output format on mutated
real lines (outputs well-formed, no workflow command, no exception but BlaslogError), pipes against files, and -o
targets. CI runs a small scale; BLASLOG_FUZZ_SCALE multiplies the examples."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blaslog import api
from blaslog.api import _parse as api_parse
from blaslog.cli import FORMATS, cli
from blaslog.errors import BlaslogError
from blaslog.reporters import get_reporter
from tests.conftest import GENERATED, SEED
from tests.test_injection import runner_commands

pytestmark = pytest.mark.property
SCALE = int(os.environ.get("BLASLOG_FUZZ_SCALE", "1"))

LINES = [
    line
    for path in (
        SEED / "sharded_joined.log",
        GENERATED / "rocblas_fp16_trace.log",
        GENERATED / "hipblaslt_bf16_tp2_rank0.bench.log",
        GENERATED / "cublas_classic_fp16.log",
    )
    for line in path.read_text().splitlines()[:30]
]
NOISE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def logs(draw) -> str:
    """Real lines, some cut, some with noise (control characters, workflow commands, brackets) spliced in."""
    chosen = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=8))
    out = []
    for line in chosen:
        at = draw(st.integers(0, len(line)))
        kind = draw(st.sampled_from(["keep", "cut", "splice", "command"]))
        if kind == "cut":
            line = line[:at]
        elif kind == "splice":
            line = line[:at] + draw(NOISE) + line[at:]
        elif kind == "command":
            line = (
                line[:at]
                + draw(st.sampled_from(["##[set-output name=a]b", "\r::error::x", "\n::warning::y"]))
                + line[at:]
            )
        out.append(line)
    return "\n".join(out) + draw(st.sampled_from(["\n", "", "\r\n"]))


def _well_formed(fmt: str, text: str) -> None:
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    elif fmt == "jsonl":
        for line in text.splitlines():
            json.loads(line)
    elif fmt == "junit":
        ET.fromstring(text.encode("utf-8"))


@settings(max_examples=25 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=logs())
def test_every_command_and_format_on_mutated_logs(tmp_path, text):
    path = tmp_path / "fuzz.log"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    calls = {
        "parse": lambda: api_parse.parse_report([str(path)], kind="all"),
        "summary": lambda: api.summary([str(path)]),
        "check": lambda: api.check([str(path)]),
    }
    for command, call in calls.items():
        try:
            report = call()
        except BlaslogError:
            continue
        for fmt in FORMATS[command]:
            if fmt in ("parquet", "html"):
                continue
            out = get_reporter(fmt).render(report)
            _well_formed(fmt, out)
            forged = [line for line in runner_commands(out) if not (fmt == "github" and line.startswith("::"))]
            assert not forged, (command, fmt, forged)


@settings(max_examples=10 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=logs())
def test_standard_input_gives_what_the_file_gives(tmp_path, text):
    path = tmp_path / "fuzz.log"
    path.write_bytes(text.encode("utf-8"))
    runner = CliRunner()
    from_file = runner.invoke(cli, ["parse", "--kind", "all", str(path), "-f", "jsonl", "-q"])
    from_pipe = runner.invoke(cli, ["parse", "--kind", "all", "-", "-f", "jsonl", "-q"], input=text.encode("utf-8"))
    assert from_file.exit_code == from_pipe.exit_code
    assert from_file.stdout.replace(json.dumps(str(path))[1:-1], "-") == from_pipe.stdout


TARGETS = st.sampled_from(["new", "existing", "folder", "input", "symlink-to-input", "missing-folder"])


@settings(max_examples=12 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=TARGETS, fmt=st.sampled_from(["json", "jsonl", "table", "csv"]))
def test_output_targets(tmp_path_factory, target, fmt):
    root = tmp_path_factory.mktemp("out")
    log = root / "in.log"
    log.write_bytes((SEED / "sharded.log").read_bytes())
    out = {
        "new": root / "r.out",
        "existing": root / "old.out",
        "folder": root / "dir",
        "input": log,
        "symlink-to-input": root / "link.log",
        "missing-folder": root / "no" / "r.out",
    }[target]
    if target == "existing":
        out.write_text("old\n")
    elif target == "folder":
        out.mkdir()
    elif target == "symlink-to-input":
        out.symlink_to(log)
    result = CliRunner().invoke(cli, ["parse", str(log), "-f", fmt, "-o", str(out)])
    assert log.read_bytes() == (SEED / "sharded.log").read_bytes()  # an input is never destroyed
    if target in ("new", "existing"):
        assert result.exit_code == 0 and out.read_text() != "old\n"
    else:
        assert result.exit_code == 2 and "Traceback" not in result.output
    assert not list(root.rglob("*.part"))
