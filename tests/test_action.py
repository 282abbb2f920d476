"""The Action, the release workflow and the CI examples are safe to run: every third-party action pinned to a
commit, no credentials kept, least permissions, no `${{ }}` inside a script, zizmor without findings; the Action
refuses what its inputs could smuggle in."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_ci_docs import ACTION, load, make_action_runner, needs_report

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
GITHUB_FILES = [ACTION, *WORKFLOWS, ROOT / "ci" / "github-numerics.yml"]
COMPONENT = ROOT / "templates" / "blaslog.yml"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)\s*(?:#\s*(.*?))?\s*$")


@pytest.fixture
def action_runner(tmp_path):
    return make_action_runner(tmp_path)


def _steps(path: Path) -> list[dict]:
    doc = load(path)
    if path == ACTION:
        return doc["runs"]["steps"]
    return [step for job in doc["jobs"].values() for step in job.get("steps", [])]


def test_there_is_a_release_workflow():
    assert [p.name for p in WORKFLOWS] == ["release.yml"]
    assert load(ACTION)["runs"]["using"] == "composite"


@pytest.mark.parametrize("path", GITHUB_FILES, ids=lambda p: p.name)
def test_every_third_party_action_is_pinned_to_a_commit(path):
    found = 0
    for line in path.read_text().splitlines():
        m = USES.match(line)
        if not m or m.group(1).startswith(("./", "$/")):
            continue
        found += 1
        action, _, ref = m.group(1).partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), line  # a tag or branch can be moved; a commit cannot
        assert m.group(2) and re.fullmatch(r"v\d+(\.\d+){0,2}", m.group(2)), f"{line}: say which release (# vX.Y.Z)"
        if action.startswith(("actions/upload-artifact", "actions/download-artifact")):
            assert int(m.group(2)[1:].split(".")[0]) >= 4, line  # v3 and older are shut down
    assert found or path.name == "github-numerics.yml"
    # the same action at the same commit everywhere
    pins = {}
    for other in GITHUB_FILES:
        for line in other.read_text().splitlines():
            if (m := USES.match(line)) and "@" in m.group(1):
                action, _, ref = m.group(1).partition("@")
                assert pins.setdefault(action, ref) == ref, f"{action}: two commits pinned"


@pytest.mark.parametrize("path", GITHUB_FILES, ids=lambda p: p.name)
def test_no_checkout_keeps_its_credentials(path):
    checkouts = [s for s in _steps(path) if str(s.get("uses", "")).startswith("actions/checkout@")]
    for step in checkouts:
        assert (step.get("with") or {}).get("persist-credentials") is False, step


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "ci" / "github-numerics.yml"], ids=lambda p: p.name)
def test_permissions_are_least_at_workflow_and_job_level(path):
    doc = load(path)
    assert doc["permissions"] == {}, "the workflow grants nothing; each job asks for what it needs"
    assert "pull_request_target" not in path.read_text() and "workflow_run" not in path.read_text()
    for name, job in doc["jobs"].items():
        granted = job.get("permissions")
        assert isinstance(granted, dict), name
        assert set(granted.values()) <= {"read", "write"}
        writes = {k for k, v in granted.items() if v == "write"}
        assert writes <= {"security-events", "id-token"}, (name, writes)
        if "id-token" in writes:  # trusted publishing: that alone, in the environment the publisher names
            assert granted == {"id-token": "write"} and job["environment"]["name"] == "pypi"


def test_the_release_publishes_with_trusted_publishing_only_for_tags():
    doc = load(ROOT / ".github" / "workflows" / "release.yml")
    publish = doc["jobs"]["publish"]
    assert set(publish["needs"]) == {"wheels", "sdist"}
    assert "refs/tags/v" in publish["if"] and "github.event_name == 'push'" in publish["if"]
    (step,) = [s for s in publish["steps"] if s["uses"].startswith("pypa/gh-action-pypi-publish@")]
    assert not {"password", "user"} & set(step.get("with") or {})  # no API token
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "secrets." not in text
    runners = doc["jobs"]["wheels"]["strategy"]["matrix"]["os"]
    assert {"ubuntu-24.04", "ubuntu-24.04-arm"} <= set(runners)  # x86_64 and aarch64
    assert sum(r.startswith("macos") for r in runners) == 2  # x86_64 and arm64


@pytest.mark.parametrize("path", GITHUB_FILES, ids=lambda p: p.name)
def test_no_expression_is_pasted_into_a_script(path):
    """`${{ }}` in a `run:` is template injection waiting to happen: values go in through `env:`."""
    for step in _steps(path):
        assert "${{" not in str(step.get("run", "")), step.get("name")


def test_the_component_pastes_inputs_into_no_script():
    header, body = COMPONENT.read_text().split("\n---\n", 1)
    assert header.lstrip().startswith(("spec:", "#")) and "spec:\n  inputs:" in header
    for job in load_all_jobs(body).values():
        for line in job["script"]:
            assert "$[[" not in line, line
        for value in (job.get("variables") or {}).values():
            assert value["expand"] is False  # GitLab leaves a `$` in an input as it is


def load_all_jobs(body: str) -> dict:
    import yaml

    return yaml.safe_load(body)


def _zizmor() -> str:
    found = shutil.which("zizmor", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("zizmor is in the test extra: CI must run it")
        pytest.skip("zizmor is not installed (pip install zizmor)")
    return found


@pytest.mark.slow
def test_zizmor_finds_nothing():
    result = subprocess.run(
        [_zizmor(), "--offline", "--strict-collection", "--format", "json", "--no-progress"]
        + [str(p.relative_to(ROOT)) for p in GITHUB_FILES],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0 and json.loads(result.stdout) == [], result.stdout[-4000:] + result.stderr[-2000:]
    for path in GITHUB_FILES:  # every file audited, none skipped as unreadable
        assert f"completed {path.relative_to(ROOT)}" in result.stderr, result.stderr[-2000:]


# ---- the Action refuses what its inputs could smuggle in --------------------------------------------------------


def test_a_path_with_a_line_break_is_refused(action_runner, tmp_path):
    results, context = action_runner(
        {"sharded": "runs/tp4\n::error ::forged", "unsharded": "runs/tp1", "upload-sarif": "false"}, tmp_path
    )
    diff = results["diff"]
    assert diff.returncode == 2 and "a path input holds a line break" in diff.stdout
    assert "forged" not in diff.stdout and context.outputs["diff"] == {}


@needs_report
def test_inputs_are_words_never_shell(action_runner, tmp_path):
    """A run named like shell or like an option stays a run: blaslog says it is not there, nothing else runs."""
    results, context = action_runner(
        {"sharded": "$(touch pwned); `touch pwned2`", "unsharded": "--exit-zero", "upload-sarif": "false"}, tmp_path
    )
    assert context.outputs["diff"]["exit-code"] == "2", results["diff"].stderr
    assert "no such file" in results["diff"].stderr  # a run that is not there, not an option
    assert "sarif" not in context.outputs["diff"]
    assert not list(tmp_path.rglob("pwned*"))
    assert results[list(results)[-1]].returncode == 2  # the job fails, saying why
