"""The CI examples in ci/ run: every blaslog command of their jobs runs on the bundled logs, laid out as the GPU
job leaves them, and exits as the job expects.

The GPU job's `blaslog record` lines run for real, with the recorded command (torchrun and a training script, which
need GPUs) replaced by tests/record/launcher.py starting as many workers, each copying the bundled TP=4 or
single-GPU log of its rank to where blaslog's start-up hook points cuBLASLt; no GPU answers the probe here, so the
bundled caps file goes where --probe writes it. The report job gets only what the GPU job's artifacts carry, and
its blaslog runs are the Action's (action.yml, GitHub) or the CI/CD component's (templates/blaslog.yml, GitLab):
their scripts run as the runner runs them, with `blaslog` this checkout's (their install steps need a network).
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
from pathlib import Path
from typing import Any

import pytest

from blaslog.cli import cli
from tests.conftest import GENERATED, ROOT, expected_findings

yaml = pytest.importorskip("yaml")  # PyYAML is in the test extra

GITHUB = ROOT / "ci" / "github-numerics.yml"
GITLAB = ROOT / "ci" / "gitlab-numerics.yml"
ACTION = ROOT / "action.yml"
FILES = [GITHUB, GITLAB]
README = ROOT / "README.md"
LAUNCHER = ROOT / "tests" / "record" / "launcher.py"
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
HAS_REPORT = any("--report" in param.opts for param in cli.commands["diff"].params)
needs_report = pytest.mark.skipif(
    not HAS_REPORT,
    reason="blaslog diff has no --report FORMAT=PATH yet (issue 37, requirement 3): the Action and the component "
    "are written for it",
)
# a worker of the stand-in for torchrun: the bundled log of its rank where the start-up hook points cuBLASLt
WORKER = (
    "import os, shutil, sys; "
    "shutil.copyfile(sys.argv[1 + int(os.environ['RANK'])], "
    "os.environ['CUBLASLT_LOG_FILE'].replace('%i', str(os.getpid())))"
)
SOURCES = {1: [GENERATED / "lt_fp32_unsharded.stdout.log"], 4: sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))}


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


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


# ---- GitHub: the workflow's jobs and the Action's steps ---------------------------------------------------------


def github_jobs() -> tuple[dict, dict]:
    """The recording job and the report job of ci/github-numerics.yml."""
    jobs = load(GITHUB)["jobs"]
    record = [body for body in jobs.values() if record_commands(run_scripts(body))]
    report = [body for body in jobs.values() if any(_is_self(step) for step in body["steps"])]
    assert len(record) == 1 and len(report) == 1, list(jobs)
    return record[0], report[0]


def _is_self(step: dict) -> bool:
    return str(step.get("uses", "")) in ("./", "$/", ".")


def run_scripts(job: dict) -> list[str]:
    return [step["run"] for step in job.get("steps", []) if "run" in step]


def step_using(job: dict, prefix: str) -> list[dict]:
    return [step for step in job["steps"] if str(step.get("uses", "")).startswith(prefix)]


EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


class Context:
    """What `${{ ... }}` and `if:` of the Action's steps read: inputs, step outputs, github.action_path."""

    def __init__(self, inputs: dict[str, str]) -> None:
        self.inputs = inputs
        self.outputs: dict[str, dict[str, str]] = {}

    def value(self, name: str) -> str:
        parts = name.split(".")
        if parts[0] == "inputs":
            return self.inputs[parts[1]]
        if parts[0] == "steps" and parts[2] == "outputs":
            return self.outputs.get(parts[1], {}).get(parts[3], "")
        if name == "github.action_path":
            return str(ROOT)
        raise AssertionError(f"an expression the test does not know: {name}")

    def expand(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(text))

    def condition(self, text: str | None) -> bool:
        """`a == 'x' && b != ''`: the only form the Action's `if:` use (another fails the test)."""
        if text is None:
            return True
        result = True
        for clause in str(text).split("&&"):
            m = re.fullmatch(r"\s*([\w.-]+)\s*(==|!=)\s*'([^']*)'\s*", clause)
            assert m, f"an if: the test cannot read: {text}"
            equal = self.value(m.group(1)) == m.group(3)
            result = result and (equal if m.group(2) == "==" else not equal)
        return result


def action_inputs(given: dict[str, Any]) -> dict[str, str]:
    """The Action's inputs as a step gives them (`with:`), its defaults for the rest."""
    declared = load(ACTION)["inputs"]
    assert set(given) <= set(declared), set(given) - set(declared)
    values = {}
    for name, spec in declared.items():
        if name in given:
            values[name] = str(given[name])
        else:
            assert not spec.get("required"), f"the Action's required input {name} is not given"
            values[name] = str(spec.get("default", ""))
    return values


def blaslog_shim(folder: Path) -> Path:
    """A `blaslog` command that is this checkout's (what the install steps would have installed)."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "blaslog"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m blaslog "$@"\n')
    shim.chmod(0o755)
    return shim


def base_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUBLAS", "ROCBLAS_", "HIPBLASLT_", "NVIDIA_TF32", "BLASLOG_", "PYTHONPATH", "GITHUB_"))
        or k == "BLASLOG_CACHE_DIR"
    }
    env.update(extra)
    return env


@pytest.fixture
def action_runner(tmp_path):
    return make_action_runner(tmp_path)


def make_action_runner(tmp_path: Path):
    """Runs the Action's steps as the runner would, in a workspace: each step's result, and what the steps said
    (their outputs). The step summary goes to tmp_path/step-summary.md."""

    def run(given: dict[str, Any], workspace: Path) -> tuple[dict[str, subprocess.CompletedProcess[str]], Context]:
        context = Context(action_inputs(given))
        runner_temp = tmp_path / "runner-temp"
        blaslog_shim(runner_temp / "blaslog-action" / "bin")
        results: dict[str, subprocess.CompletedProcess[str]] = {}
        for index, step in enumerate(load(ACTION)["runs"]["steps"]):
            name = step.get("id") or step.get("name") or str(index)
            if not context.condition(step.get("if")):
                continue
            if "uses" in step:
                results[name] = subprocess.CompletedProcess(step["uses"], 0, "", "")  # checked by the callers
                continue
            if "pip install" in step["run"]:  # the install: the shim stands in for it
                continue
            output = tmp_path / f"output-{index}"
            output.write_text("")
            env = base_env(
                GITHUB_OUTPUT=str(output),
                GITHUB_STEP_SUMMARY=str(tmp_path / "step-summary.md"),
                GITHUB_WORKSPACE=str(workspace),
                RUNNER_TEMP=str(runner_temp),
            )
            env.update({k: context.expand(v) for k, v in (step.get("env") or {}).items()})
            assert step["shell"] == "bash"
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            results[name] = result
            context.outputs[name] = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            if result.returncode != 0:
                break
        return results, context

    return run


# ---- GitLab: the configuration with the component included --------------------------------------------------


def _interpolate(node: Any, values: dict[str, str]) -> Any:
    """`$[[ inputs.NAME ]]` replaced in every string of the parsed template, keys too."""
    if isinstance(node, dict):
        return {_interpolate(k, values): _interpolate(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, values) for v in node]
    if isinstance(node, str):
        return re.sub(r"\$\[\[\s*inputs\.([\w-]+)\s*\]\]", lambda m: values[m.group(1)], node)
    return node


def component_jobs(path: Path, inputs: dict[str, Any]) -> dict[str, dict]:
    """The jobs of a CI/CD component as `include:` with `inputs:` gives them (GitLab checks the inputs)."""
    header, body = list(yaml.safe_load_all(path.read_text()))
    declared = header["spec"]["inputs"]
    assert set(inputs) <= set(declared), set(inputs) - set(declared)
    values = {}
    for name, spec in declared.items():
        assert name in inputs or "default" in spec, f"the component's input {name} is required"
        values[name] = str(inputs.get(name, spec.get("default")))
        if "options" in spec:
            assert values[name] in spec["options"], (name, values[name])
    return _interpolate(body, values)


def gitlab_jobs() -> dict[str, dict]:
    doc = load(GITLAB)
    jobs: dict[str, dict] = {}
    for item in doc.get("include") or []:
        assert set(item) <= {"local", "inputs"}, item
        jobs.update(component_jobs(ROOT / item["local"], item.get("inputs") or {}))
    for name, body in doc.items():
        if name not in GITLAB_RESERVED:
            jobs[name] = {**jobs.get(name, {}), **body}  # a job of the same name is merged into the included one
    return jobs


def gitlab_record_and_report() -> tuple[dict, dict]:
    jobs = gitlab_jobs()
    record = [job for job in jobs.values() if record_commands(job.get("script", []))]
    report = [job for job in jobs.values() if any(a[0] == "diff" for a in all_blaslog(job.get("script", [])))]
    assert len(record) == 1 and len(report) == 1, list(jobs)
    return record[0], report[0]


def variables_of(job: dict, top: dict | None = None) -> dict[str, str]:
    out = {}
    for source in (top or {}, job.get("variables") or {}):
        for name, value in source.items():
            out[name] = str(value["value"] if isinstance(value, dict) else value)
    return out


def all_blaslog(scripts: list[str]) -> list[list[str]]:
    return [args for script in scripts for words in commands(script) if (args := blaslog_args(words)) is not None]


def record_commands(scripts: list[str]) -> list[tuple[list[str], list[str]]]:
    """Each `blaslog record` as (its options, the command it records)."""
    out = []
    for args in all_blaslog(scripts):
        if args[0] == "record":
            assert "--" in args, args  # the recorded command's options are its own
            cut = args.index("--")
            out.append((args[1:cut], args[cut + 1 :]))
    return out


def run_records(scripts: list[str], workspace: Path) -> None:
    """The GPU job's `blaslog record` lines, run with launcher.py and the bundled logs in place of torchrun."""
    for options, command in record_commands(scripts):
        assert command[0] == "torchrun", command
        nproc = int(option(command, "--nproc-per-node", "--nproc_per_node") or 0)
        stand_in = [sys.executable, str(LAUNCHER), "--nproc", str(nproc), sys.executable, "-c", WORKER]
        stand_in += [str(p) for p in SOURCES[nproc]]
        result = subprocess.run(
            [sys.executable, "-m", "blaslog", "record", *options, "--", *stand_in],
            cwd=workspace,
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        ctx = parse_options(["record", *options, "--", *command])
        folder = workspace / (ctx.params["output"] or ctx.params["out_alias"])
        assert sorted(p.name for p in folder.glob("rank*.cublaslt.log*")) == [
            f"rank{rank}.cublaslt.log.gz" for rank in range(nproc)
        ]
        if ctx.params["probe"]:  # no GPU here: what the probe writes on one
            shutil.copy(GENERATED / "caps.json", folder / "caps.json")


def carry(paths: list[str], source: Path, target: Path, *, github: bool) -> None:
    """Artifact paths from one job's workspace into another's (GitHub: relative to their least common ancestor,
    as upload-artifact stores them; GitLab: as they are)."""
    roots = [source / p for p in paths]
    for root in roots:
        assert root.exists(), root
    base = Path(os.path.commonpath([r if r.is_dir() else r.parent for r in roots])) if github else source
    for root in roots:
        destination = target / root.relative_to(base)
        if root.is_dir():
            shutil.copytree(root, destination, dirs_exist_ok=True)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(root, destination)


# ---- the tests ------------------------------------------------------------------------------------------------


def test_there_is_a_github_workflow_and_a_gitlab_job():
    assert GITHUB.is_file() and GITLAB.is_file() and ACTION.is_file()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_gpu_job_records_both_runs_and_probes(path):
    record = github_jobs()[0] if path == GITHUB else gitlab_record_and_report()[0]
    scripts = run_scripts(record) if path == GITHUB else record["script"]
    runs = record_commands(scripts)
    assert sorted(int(option(command, "--nproc-per-node") or 0) for _, command in runs) == [1, 4]
    outs = []
    for options, command in runs:
        ctx = parse_options(["record", *options, "--", *command])
        assert ctx.params["probe"], options  # caps.json in the folder: diff reads it by itself
        outs.append(ctx.params["output"] or ctx.params["out_alias"])
    assert len(set(outs)) == 2
    # no hand-made logging: record turns it on and names the logs by rank
    assert "CUBLASLT_LOG_FILE" not in path.read_text() and "CUBLASLT_LOG_LEVEL" not in path.read_text()


def test_the_github_report_is_the_action_and_no_other_blaslog_run():
    _, report = github_jobs()
    assert not all_blaslog(run_scripts(report))
    (step,) = [step for step in report["steps"] if _is_self(step)]
    given = step["with"]
    assert {"sharded", "unsharded", "fail-on"} <= set(given)
    assert report["permissions"]["security-events"] == "write"  # the Action's SARIF upload
    runs = "\n".join(str(step.get("run", "")) for step in load(ACTION)["runs"]["steps"])
    assert len(re.findall(r'/bin/blaslog" (?!--version)', runs)) == 1  # one read of the logs


def test_the_gitlab_report_is_the_component():
    record, report = gitlab_record_and_report()
    assert report["needs"] == [name for name, job in gitlab_jobs().items() if job == record]
    assert str(report["image"]).startswith("python:")
    assert report["artifacts"]["when"] == "always" and record["artifacts"]["when"] == "always"
    assert len([a for a in all_blaslog(report["script"]) if a[0] == "diff"]) == 1


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_step_hides_a_failure(path):
    text = path.read_text()
    assert "|| true" not in text and "||true" not in text
    assert "continue-on-error" not in text and "allow_failure" not in text and "set +e" not in text
    scripts = (
        [s for job in load(GITHUB)["jobs"].values() for s in run_scripts(job)]
        if path == GITHUB
        else [s for job in gitlab_jobs().values() for s in job.get("script", [])]
    )
    for script in scripts:
        assert ["||"] not in commands(script), script


def _pinned_blaslog(target: str) -> bool:
    return bool(re.fullmatch(r"blaslog(\[[\w,]+\])? @ git\+https://\S+@\S+", target)) or target.endswith(".whl")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_blaslog_is_installed_the_way_a_user_of_this_repository_can(path):
    """blaslog is not on PyPI: a git URL pinned to a commit or a wheel, never a bare name."""
    if path == GITHUB:
        doc = load(GITHUB)
        env = {k: str(v) for k, v in (doc.get("env") or {}).items()}
        scripts = [s for job in doc["jobs"].values() for s in run_scripts(job)]
        _, report = github_jobs()
        (step,) = [step for step in report["steps"] if _is_self(step)]
        specs = [re.sub(r"\$\{\{\s*env\.(\w+)\s*\}\}", lambda m: env[m.group(1)], step["with"]["blaslog-spec"])]
    else:
        env = variables_of({}, load(GITLAB).get("variables"))
        scripts = load(GITLAB)["numerics:record"]["script"]
        specs = [item["inputs"]["blaslog-spec"] for item in load(GITLAB)["include"]]
    installs = [program(c)[1] for s in scripts for c in commands(s) if "pip" in c and "install" in c]
    assert installs
    for words in installs:
        targets = [substitute(w, env) for w in words[words.index("install") + 1 :] if not w.startswith("-")]
        assert targets and all(_pinned_blaslog(t) for t in targets), targets
    assert specs and all(_pinned_blaslog(spec) for spec in specs), specs


def test_a_forks_code_never_runs_on_the_gpu_runners():
    doc = load(GITHUB)
    assert "pull_request_target" not in GITHUB.read_text()
    record, _ = github_jobs()
    assert "self-hosted" in record["runs-on"] and "gpu" in record["runs-on"]
    guard = record["if"].replace(" ", "")
    assert "github.event.pull_request.head.repo.full_name==github.repository" in guard
    assert "github.event_name!='pull_request'" in guard
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) <= {"pull_request", "push", "workflow_dispatch"}
    gitlab_record, gitlab_report = gitlab_record_and_report()
    for job in (gitlab_record, gitlab_report):
        never = [r for r in job["rules"] if r.get("when") == "never"]
        assert any("$CI_MERGE_REQUEST_SOURCE_PROJECT_ID != $CI_PROJECT_ID" in r["if"] for r in never), job["rules"]
        assert job["rules"][0] in never  # first: no later rule lets a fork's merge request in


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_reports_are_kept(path):
    if path == GITHUB:
        steps = load(ACTION)["runs"]["steps"]
        (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
        assert upload["with"]["sarif_file"] == "${{ steps.diff.outputs.sarif }}"
        assert "steps.diff.outputs.sarif != ''" in upload["if"]
    else:
        _, report = gitlab_record_and_report()
        written = dict(a.split("=", 1) for args in all_blaslog(report["script"]) for a in _report_values(args))
        assert report["artifacts"]["reports"] == {"codequality": written["gitlab"], "junit": written["junit"]}
        assert set(written.values()) <= set(report["artifacts"]["paths"]) and "sarif" in written


def _report_values(args: list[str]) -> list[str]:
    return [args[i + 1] for i, word in enumerate(args[:-1]) if word == "--report"]


@needs_report
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_blaslog_command_runs_on_the_bundled_logs(path, tmp_path, action_runner):
    assert any(f["scenario"] == "lt_fp32_tp4_vs_unsharded" and f["class"] == "precision" for f in expected_findings())
    gpu_dir, cpu_dir = tmp_path / "gpu", tmp_path / "cpu"
    gpu_dir.mkdir()
    cpu_dir.mkdir()
    if path == GITHUB:
        record, report = github_jobs()
        run_records(run_scripts(record), gpu_dir)
        (upload,) = step_using(record, "actions/upload-artifact@")
        (download,) = step_using(report, "actions/download-artifact@")
        assert upload["with"]["name"] == download["with"]["name"]
        carry(upload["with"]["path"].split(), gpu_dir, cpu_dir / download["with"].get("path", "."), github=True)
        (step,) = [step for step in report["steps"] if _is_self(step)]
        results, context = action_runner(step["with"], cpu_dir)
        diff = results["diff"]
        assert context.outputs["diff"]["exit-code"] == "1", diff.stderr[-2000:]
        assert "::error " in diff.stdout
        assert (tmp_path / "step-summary.md").read_text().startswith("## blaslog diff")
        sarif = cpu_dir / context.outputs["diff"]["sarif"]
        assert json.loads(sarif.read_text())["version"] == "2.1.0"
        assert any(str(r.args).startswith("github/codeql-action/upload-sarif@") for r in results.values())
        assert list(results.values())[-1].returncode == 1  # the job fails, after the upload
        for step in step_using(report, "actions/upload-artifact@"):  # the reports kept: each one written
            assert step["if"] == "always()"
            for name in step["with"]["path"].split():
                assert (cpu_dir / name).stat().st_size, name
        assert ET.fromstring((cpu_dir / "blaslog-junit.xml").read_text()).tag in ("testsuites", "testsuite")
        return
    record, report = gitlab_record_and_report()
    run_records(record["script"], gpu_dir)
    carry(record["artifacts"]["paths"], gpu_dir, cpu_dir, github=False)
    shims = blaslog_shim(tmp_path / "shims").parent
    lines = [line for line in report["script"] if "pip install" not in line and "-m venv" not in line]
    env = base_env(**variables_of(report, load(GITLAB).get("variables")), CI_PROJECT_DIR=str(cpu_dir))
    env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "\n".join(lines)],
        cwd=cpu_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-2000:]  # the precision finding fails the job
    assert "precision" in result.stdout
    reports = report["artifacts"]["reports"]
    assert isinstance(json.loads((cpu_dir / reports["codequality"]).read_text()), list)
    assert json.loads((cpu_dir / reports["codequality"]).read_text())
    assert ET.fromstring((cpu_dir / reports["junit"]).read_text()).tag in ("testsuites", "testsuite")
    sarif = next(p for p in report["artifacts"]["paths"] if p.endswith(".sarif"))
    assert json.loads((cpu_dir / sarif).read_text())["version"] == "2.1.0"


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
