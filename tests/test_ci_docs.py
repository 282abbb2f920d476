"""The CI examples in ci/ run: every blaslog command in them runs, on the bundled logs laid out as their GPU job
leaves them, and exits as the step expects.

The GPU job's torchrun lines say where the per-rank logs go (CUBLASLT_LOG_FILE=.../rank${RANK}.log): the test
writes the bundled TP=4 and single-GPU logs there, puts the bundled caps file where the probe writes its own, hands
the CPU job only what the GPU job passes on as artifacts, and runs the CPU job's blaslog commands there with
`python -m blaslog`. The probe needs a GPU: its options are parsed and the configurations it would probe are read
from the logs. The workflows are read with PyYAML when it is installed, else with a small line-based reader (the
two are checked against each other where PyYAML is there).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from blaslog.api import probe_configs
from blaslog.cli import cli
from tests.conftest import GENERATED, ROOT, expected_findings

try:
    import yaml
except ImportError:  # not in the test extra yet: the line-based reader stands in
    yaml = None

GITHUB = ROOT / "ci" / "github-numerics.yml"
GITLAB = ROOT / "ci" / "gitlab-numerics.yml"
FILES = [GITHUB, GITLAB]
README = ROOT / "README.md"
GITLAB_RESERVED = {
    "variables",
    "stages",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
}
needs_yaml = pytest.mark.skipif(yaml is None, reason="PyYAML is not installed (pip install pyyaml)")


@dataclass
class Job:
    """What the test needs of one CI job."""

    name: str
    scripts: list[str] = field(default_factory=list)
    """Each `run:` (GitHub) or script item (GitLab), as the shell gets it."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables set for it (workflow, job and step level together)."""
    artifacts_out: list[str] = field(default_factory=list)
    """Paths it passes on to later jobs."""


# ---- reading the workflows: PyYAML ---------------------------------------------------------------------------


def _jobs_yaml(path: Path) -> dict[str, Job]:
    doc = yaml.safe_load(path.read_text())
    jobs: dict[str, Job] = {}
    if path == GITHUB:
        top = {k: str(v) for k, v in (doc.get("env") or {}).items()}
        for name, body in doc["jobs"].items():
            job = jobs[name] = Job(name, env=dict(top, **{k: str(v) for k, v in (body.get("env") or {}).items()}))
            for step in body.get("steps", []):
                job.env.update({k: str(v) for k, v in (step.get("env") or {}).items()})
                if "run" in step:
                    job.scripts.append(step["run"])
                if str(step.get("uses", "")).startswith("actions/upload-artifact") and name != _last_job(doc):
                    job.artifacts_out += step["with"]["path"].split()
    else:
        top = {k: str(v) for k, v in (doc.get("variables") or {}).items()}
        for name, body in doc.items():
            if name in GITLAB_RESERVED or not isinstance(body, dict) or "script" not in body:
                continue
            job = jobs[name] = Job(name, env=dict(top, **{k: str(v) for k, v in (body.get("variables") or {}).items()}))
            for key in ("before_script", "script", "after_script"):
                items = body.get(key) or []
                job.scripts += [items] if isinstance(items, str) else items
            job.artifacts_out = list((body.get("artifacts") or {}).get("paths") or [])
    return jobs


def _last_job(doc: dict) -> str:
    return list(doc["jobs"])[-1]


# ---- reading the workflows: a line-based reader for the subset of YAML they use -----------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _scalar(lines: list[str], i: int, column: int, value: str) -> tuple[str, int]:
    """The scalar `value` that starts on line i after a key or dash at `column`, and the line after it."""
    j = i + 1
    body: list[str] = []
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > column):
        body.append(lines[j])
        j += 1
    while body and not body[-1].strip():
        body.pop()
    if value[:1] in "|>":
        cut = min(_indent(b) for b in body if b.strip())
        parts = [b[cut:] for b in body]
        if value[0] == ">":
            return " ".join(p.strip() for p in parts) + "\n", j
        return "\n".join(parts) + ("" if value.endswith("-") else "\n"), j
    words = [value] + [b.strip() for b in body if not b.strip().startswith("#")]
    text = " ".join(w for w in words if w)
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text, j


def _mapping(lines: list[str], i: int, column: int) -> dict[str, str]:
    """The `KEY: value` lines of the block after line i, whose key is at `column`."""
    out: dict[str, str] = {}
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > column):
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*):\s*(.*?)\s*(#.*)?$", lines[j])
        if m:
            out[m.group(1)] = m.group(2).strip("\"'")
        j += 1
    return out


def _jobs_lines(path: Path) -> dict[str, Job]:
    lines = path.read_text().splitlines()
    github = path == GITHUB
    jobs: dict[str, Job] = {}
    top: dict[str, str] = {}
    job: Job | None = None
    upload = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        indent = _indent(line)
        key = re.match(r"\s*(?:- )?([\w.:-]+?):(?:\s+(.*?))?\s*$", line)
        name = key.group(1) if key else ""
        value = (key.group(2) or "") if key else ""
        column = line.index(name) if key else indent
        if indent == 0 and name in ("env", "variables"):
            top.update(_mapping(lines, i, 0))
        elif github and indent == 2 and key and not value:
            job = jobs[name] = Job(name, env=dict(top))
            upload = False
        elif not github and indent == 0 and key and not value and name not in GITLAB_RESERVED:
            job = jobs[name] = Job(name, env=dict(top))
        elif job is None:
            pass
        elif name in ("env", "variables") and not value:
            job.env.update(_mapping(lines, i, column))
        elif github and name == "uses":
            upload = value.startswith("actions/upload-artifact")
        elif github and name == "path" and upload:
            text, i = _scalar(lines, i, column, value)
            job.artifacts_out += text.split()
            continue
        elif github and name == "run":
            text, i = _scalar(lines, i, column, value)
            job.scripts.append(text)
            continue
        elif not github and name in ("before_script", "script", "after_script"):
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > column):
                item = re.match(r"(\s*)- (.*)$", lines[i])
                if item and not lines[i].strip().startswith("#"):
                    text, i = _scalar(lines, i, len(item.group(1)), item.group(2))
                    job.scripts.append(text)
                else:
                    i += 1
            continue
        elif not github and name == "paths" and not value:
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > column):
                item = re.match(r"\s*- (.*?)\s*$", lines[i])
                if item:
                    job.artifacts_out.append(item.group(1).strip("\"'"))
                i += 1
            continue
        i += 1
    if github and jobs:  # the last job's uploads are its reports, not inputs of another job
        jobs[list(jobs)[-1]].artifacts_out = []
    return {name: job for name, job in jobs.items() if job.scripts}


def jobs_of(path: Path) -> dict[str, Job]:
    return _jobs_yaml(path) if yaml is not None else _jobs_lines(path)


# ---- commands -------------------------------------------------------------------------------------------------


def commands(script: str) -> list[list[str]]:
    """The simple commands of a script (continuation lines joined), as words; operators are words of their own."""
    out: list[list[str]] = []
    for line in re.sub(r"\\\n\s*", " ", script).splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        current: list[str] = []
        for word in words:
            if word in (";", "&&", "||", "|", "&"):
                if current:
                    out.append(current)
                out.append([word])
                current = []
            else:
                current.append(word)
        if current:
            out.append(current)
    return out


def program(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """The VAR=value assignments before a command, and the command."""
    assignments: dict[str, str] = {}
    while words and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        name, _, value = words[0].partition("=")
        assignments[name] = value
        words = words[1:]
    return assignments, words


def blaslog_args(words: list[str]) -> list[str] | None:
    """The arguments of a blaslog command (`blaslog ...` or `python -m blaslog ...`), else None."""
    _, words = program(words)
    if words[:1] == ["blaslog"]:
        return words[1:]
    if len(words) >= 3 and words[1:3] == ["-m", "blaslog"] and re.fullmatch(r"python3?", words[0]):
        return words[3:]
    return None


def all_blaslog(job: Job) -> list[list[str]]:
    return [args for script in job.scripts for words in commands(script) if (args := blaslog_args(words)) is not None]


def option(args: list[str], *names: str) -> str | None:
    for i, word in enumerate(args):
        for name in names:
            if word == name and i + 1 < len(args):
                return args[i + 1]
            if name.startswith("--") and word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def substitute(text: str, env: dict[str, str]) -> str:
    """$VAR, ${VAR} and ${{ env.VAR }} replaced from `env`; one left over fails the test."""
    text = re.sub(r"\$\{\{\s*env\.(\w+)\s*\}\}", lambda m: env[m.group(1)], text)
    text = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env[m.group(1) or m.group(2)], text)
    assert "$" not in text, text
    return text


def parse_options(args: list[str]):
    """click's parse of a blaslog command line (option names, choices and ranges checked; nothing run)."""
    name, *rest = args
    assert name in cli.commands, args
    return cli.commands[name].make_context(name, list(rest))


@dataclass
class Torchrun:
    nproc: int
    log_file: str
    """CUBLASLT_LOG_FILE as the launched command sets it (with ${RANK})."""
    log_level: str | None


def torchruns(job: Job) -> list[Torchrun]:
    out = []
    for script in job.scripts:
        for words in commands(script):
            outer, words = program(words)
            if words[:1] != ["torchrun"]:
                continue
            nproc = int(option(words, "--nproc-per-node", "--nproc_per_node") or 0)
            inner_env: dict[str, str] = {}
            if "-c" in words:
                inner_env, _ = program(shlex.split(words[words.index("-c") + 1]))
            log_file = (
                inner_env.get("CUBLASLT_LOG_FILE")
                or outer.get("CUBLASLT_LOG_FILE")
                or job.env.get("CUBLASLT_LOG_FILE", "")
            )
            level = (
                inner_env.get("CUBLASLT_LOG_LEVEL")
                or outer.get("CUBLASLT_LOG_LEVEL")
                or job.env.get("CUBLASLT_LOG_LEVEL")
            )
            out.append(Torchrun(nproc, log_file, level))
    return out


def gpu_and_cpu_jobs(path: Path) -> tuple[Job, Job]:
    jobs = jobs_of(path)
    gpu = [job for job in jobs.values() if torchruns(job)]
    cpu = [job for job in jobs.values() if not torchruns(job) and any(a[0] == "diff" for a in all_blaslog(job))]
    assert len(gpu) == 1 and len(cpu) == 1, (path.name, list(jobs))
    return gpu[0], cpu[0]


def expected_status(args: list[str]) -> int:
    """0 for a report-only step; else 1: the bundled TP=4 logs hold a precision difference (EXPECTED.jsonl)."""
    if "--exit-zero" in args or option(args, "--fail-on") == "never":
        return 0
    return 1


# ---- the tests ------------------------------------------------------------------------------------------------


def test_there_is_a_github_workflow_and_a_gitlab_job():
    assert GITHUB.is_file() and GITLAB.is_file()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_gpu_job_records_per_rank_logs_and_probes(path):
    gpu, _ = gpu_and_cpu_jobs(path)
    runs = torchruns(gpu)
    assert sorted(run.nproc for run in runs) == [1, 4]
    mkdirs = {
        w.rstrip("/")
        for s in gpu.scripts
        for c in commands(s)
        if program(c)[1][:2] == ["mkdir", "-p"]
        for w in program(c)[1][2:]
    }
    for run in runs:
        assert run.log_level == "2", run
        # named by rank, not by process id (%i), in a folder made before the run (cuBLASLt makes none)
        assert "%i" not in run.log_file and re.search(r"\$\{?RANK\}?", run.log_file), run
        assert str(Path(run.log_file).parent) in mkdirs, (run.log_file, mkdirs)
    probes = [args for args in all_blaslog(gpu) if args[0] == "probe"]
    assert len(probes) == 1 and option(probes[0], "-o", "--output", "--out")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_step_hides_a_failure(path):
    text = path.read_text()
    assert "|| true" not in text and "||true" not in text
    assert "continue-on-error" not in text and "allow_failure" not in text and "set +e" not in text
    for job in jobs_of(path).values():
        for script in job.scripts:
            assert ["||"] not in commands(script), script


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_blaslog_is_installed_the_way_a_user_of_this_repository_can(path):
    """blaslog is not on PyPI: a git URL pinned to a commit, a local path or a wheel, never a bare name."""
    for job in jobs_of(path).values():
        installs = [program(c)[1] for s in job.scripts for c in commands(s) if "pip" in c and "install" in c]
        blaslog_installs = [words for words in installs if any("blaslog" in substitute(w, job.env) for w in words)]
        if all_blaslog(job):
            assert blaslog_installs, job.name
        for words in blaslog_installs:
            targets = [substitute(w, job.env) for w in words[words.index("install") + 1 :] if not w.startswith("-")]
            for target in targets:
                assert (
                    re.fullmatch(r"blaslog @ git\+https://\S+@\S+", target)
                    or target.startswith((".", "/"))
                    or target.endswith(".whl")
                ), target


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_blaslog_command_runs_on_the_bundled_logs(path, tmp_path):
    assert any(f["scenario"] == "lt_fp32_tp4_vs_unsharded" and f["class"] == "precision" for f in expected_findings())
    gpu, cpu = gpu_and_cpu_jobs(path)

    # the GPU job's outputs: the logs where its torchrun lines put them, the caps file where its probe writes it
    gpu_dir = tmp_path / "gpu"
    gpu_dir.mkdir()
    for run in torchruns(gpu):
        sources = {
            1: [GENERATED / "lt_fp32_unsharded.stdout.log"],
            4: sorted((GENERATED / "lt_fp32_tp4").glob("*.log")),
        }[run.nproc]
        for rank, source in enumerate(sources):
            target = gpu_dir / substitute(run.log_file, {"RANK": str(rank)})
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    for args in all_blaslog(gpu):
        assert args[0] == "probe", args  # needs the GPU: options parsed, configurations read from the logs
        ctx = parse_options([substitute(a, gpu.env) for a in args])
        assert probe_configs([str(gpu_dir / log) for log in ctx.params["from_logs"]])
        out = ctx.params["output"] or ctx.params["out_alias"]
        shutil.copy(GENERATED / "caps.json", gpu_dir / out)

    # the CPU job gets only the GPU job's artifacts
    cpu_dir = tmp_path / "cpu"
    cpu_dir.mkdir()
    assert gpu.artifacts_out
    for artifact in gpu.artifacts_out:
        source = gpu_dir / artifact
        assert source.exists(), artifact
        if source.is_dir():
            shutil.copytree(source, cpu_dir / artifact)
        else:
            shutil.copy(source, cpu_dir / artifact)

    summary = tmp_path / "step-summary.md"
    variables = dict(
        cpu.env,
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_WORKSPACE=str(cpu_dir),
        CI_PROJECT_DIR=str(cpu_dir),
        RUNNER_TEMP=str(tmp_path),
    )
    env = dict(os.environ, **variables)
    env.pop("BLASLOG_CUBLASLT", None)
    ran = 0
    for args in all_blaslog(cpu):
        args = [substitute(a, variables) for a in args]
        parse_options(args)
        result = subprocess.run(
            [sys.executable, "-m", "blaslog", *args], cwd=cpu_dir, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == expected_status(args), (args, result.returncode, result.stderr[-2000:])
        ran += 1
        fmt, out = option(args, "-f", "--format"), option(args, "-o", "--output")
        assert not out or "--exit-zero" in args, args  # a step that writes a report is report-only
        report = (cpu_dir / out).read_text() if out else result.stdout
        assert report.strip(), args
        if fmt == "sarif":
            assert json.loads(report)["version"] == "2.1.0"
        elif fmt == "gitlab":
            assert isinstance(json.loads(report), list) and json.loads(report)
        elif fmt == "junit":
            assert ET.fromstring(report).tag in ("testsuites", "testsuite")
        elif fmt == "github":
            assert "::error " in report
            assert summary.read_text().startswith("## blaslog diff")
    assert ran >= 3


def test_github_uploads_the_sarif_and_junit_it_writes():
    text = GITHUB.read_text()
    _, cpu = gpu_and_cpu_jobs(GITHUB)
    written = {option(a, "-f", "--format"): option(a, "-o", "--output") for a in all_blaslog(cpu)}
    assert re.search(rf"sarif_file:\s*{re.escape(written['sarif'])}\s*$", text, re.M)
    assert re.search(rf"^\s+{re.escape(written['junit'])}\s*$", text, re.M)
    assert "github" in written and "security-events: write" in text


def test_gitlab_declares_the_reports_it_writes():
    text = GITLAB.read_text()
    _, cpu = gpu_and_cpu_jobs(GITLAB)
    written = {option(a, "-f", "--format"): option(a, "-o", "--output") for a in all_blaslog(cpu)}
    assert re.search(rf"codequality:\s*{re.escape(written['gitlab'])}\s*$", text, re.M)
    assert re.search(rf"junit:\s*{re.escape(written['junit'])}\s*$", text, re.M)


@needs_yaml
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_line_based_reader_reads_what_yaml_reads(path):
    by_yaml, by_lines = _jobs_yaml(path), _jobs_lines(path)
    assert list(by_yaml) == list(by_lines)
    for name, job in by_yaml.items():
        assert job.scripts == by_lines[name].scripts, name
        assert job.artifacts_out == by_lines[name].artifacts_out, name
        assert job.env.items() <= by_lines[name].env.items(), name  # the reader merges every step's env


@needs_yaml
def test_github_jobs_gpu_records_cpu_analyses_in_a_python_image():
    doc = yaml.safe_load(GITHUB.read_text())
    gpu, cpu = gpu_and_cpu_jobs(GITHUB)
    record, analyse = doc["jobs"][gpu.name], doc["jobs"][cpu.name]
    assert "self-hosted" in record["runs-on"] and "gpu" in record["runs-on"]
    assert analyse["needs"] in (gpu.name, [gpu.name])
    assert str(analyse["container"]).startswith("python:")
    uploads = [s["with"]["name"] for s in record["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    downloads = [
        s["with"]["name"] for s in analyse["steps"] if s.get("uses", "").startswith("actions/download-artifact")
    ]
    assert uploads == downloads
    assert analyse["permissions"]["security-events"] == "write"
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in analyse["steps"])
    assert all("if" not in step for job in doc["jobs"].values() for step in job["steps"])  # gate is the last step
    assert "--fail-on" in analyse["steps"][-1]["run"] and "-f github" in analyse["steps"][-1]["run"]


@needs_yaml
def test_gitlab_jobs_gpu_records_cpu_analyses_in_a_python_image():
    doc = yaml.safe_load(GITLAB.read_text())
    gpu, cpu = gpu_and_cpu_jobs(GITLAB)
    record, analyse = doc[gpu.name], doc[cpu.name]
    assert "gpu" in record["tags"] and record["artifacts"]["when"] == "always"
    assert analyse["needs"] == [gpu.name] and str(analyse["image"]).startswith("python:")
    assert analyse["artifacts"]["when"] == "always"
    assert set(analyse["artifacts"]["reports"]) == {"codequality", "junit"}


# ---- README: Troubleshooting ----------------------------------------------------------------------------------


def _troubleshooting() -> str:
    text = README.read_text()
    if "\n## Troubleshooting\n" not in text:
        pytest.skip("README has no Troubleshooting section")
    return text.split("\n## Troubleshooting\n", 1)[1].split("\n## ", 1)[0]


def test_every_blaslog_command_in_troubleshooting_parses():
    section = _troubleshooting()
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", section, re.S)
    found = [args for block in blocks for words in commands(block) if (args := blaslog_args(words)) is not None]
    assert len(found) >= 5
    for args in found:
        parse_options(args)
