"""The two GitHub Actions workflows, checked offline: each validates against the GitHub
workflow schema (vendored by check-jsonschema from SchemaStore, read from the installed
package, no network), and each does what the book needs — publish the static site on every
push to main with the project page's BASE_URL, run .ci/run on every pull request.

(actionlint is not used: its PyPI package ships no wheel, and its sdist downloads the binary
when it is built.)
"""

import inspect
import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from booktools import book

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def _schema() -> dict:
    import check_jsonschema

    path = Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / "github-workflows.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _load(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True; GitHub reads it as the string "on"
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


def _problems(workflow: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(_schema())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(workflow)]


@pytest.mark.parametrize("name", ["pages.yml", "pull-request.yml"])
def test_workflow_is_valid_against_the_github_workflow_schema(name):
    assert _problems(_load(name)) == []


def test_the_schema_check_catches_a_broken_workflow():
    broken = _load("pages.yml")
    del broken["jobs"]["deploy"]["runs-on"]
    broken["jobs"]["deploy"]["steps"][0]["uses"] = 3
    assert _problems(broken), "the schema check passed a job without runs-on"
    assert _problems({"on": {"push": {"branches": "main"}}, "jobs": {}}) != []


def _run_lines(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_pages_workflow_builds_the_html_site_and_deploys_it_on_every_push_to_main():
    workflow = _load("pages.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["env"]["BASE_URL"] == "/${{ github.event.repository.name }}"  # project page
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    (job,) = workflow["jobs"].values()
    uses = [step.get("uses", "").split("@")[0] for step in job["steps"]]
    runs = _run_lines(job)
    assert "python -m booktools build --site" in runs
    # the players' page bundles are build products: written before the site is built
    site = inspect.getsource(book.build_site)
    assert 0 <= site.find("players.pages(root)") < site.find('"build", "--html"')
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"].rstrip("/") in ("./_build/html", "_build/html")
    assert uses.index("actions/upload-pages-artifact") < uses.index("actions/deploy-pages")
    assert job["environment"]["name"] == "github-pages"


def test_pages_workflow_gives_the_launch_button_the_repository_it_builds():
    (job,) = _load("pages.yml")["jobs"].values()
    (step,) = [s for s in job["steps"] if "booktools build --site" in s.get("run", "")]
    assert step["run"].endswith('build --site --repository "$REPOSITORY"'), step["run"]
    assert step["env"] == {"REPOSITORY": "${{ github.repository }}"}  # GitHub's own variable


def test_pull_request_workflow_runs_the_ci_entry_point():
    workflow = _load("pull-request.yml")
    assert "pull_request" in workflow["on"]
    (job,) = workflow["jobs"].values()
    assert "bash .ci/run" in _run_lines(job)
    assert (REPO / ".ci" / "run").is_file()
    assert job["timeout-minutes"] <= 90


def test_ci_fails_when_a_step_leaves_the_tree_changed(tmp_path):
    """.ci/run takes `git status --porcelain` before its first step and fails, naming the file,
    when its last step leaves the tree otherwise."""
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 0 <= run.find("tracked_before=$(git status --porcelain") < run.find("make lint")
    final = run[run.rfind("make browser-test") :].split("\n", 1)[1]
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "page.md").write_text("a\n", encoding="utf-8")
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    script = "set -euo pipefail\ntracked_before=$(git status --porcelain)\n"

    def after(change: str):
        return subprocess.run(["bash", "-c", script + change + final], cwd=tmp_path, capture_output=True, text=True)

    assert after("").returncode == 0
    edited = after("echo b >> page.md\n")
    assert edited.returncode == 1 and "page.md" in edited.stderr
