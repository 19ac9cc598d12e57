"""A kill at every page write of a commit, then the ``-journal`` lost: refused or one event, never two.

``harness.torn`` records every commit of one approved invocation's execution (the journal's
and the calendar's) and rebuilds the file each subset of the commit's page writes leaves behind, without
the ``-journal`` that would roll it back.  A restart on each must refuse the store by name, or recover to
exactly one event; without the stores' open-time checks 8 of these cases booked twice and 8 ended
COMMITTED with no event.
"""

import pytest

from harness import torn
from harness.crashes import CrashSchedule, prepare

# Slow tier (a torture run, in-process): out of `make test-fast`, in `make test`.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def execution(tmp_path_factory):
    root = tmp_path_factory.mktemp("torn")
    prepare(CrashSchedule(0, 1, 0, 2, (), ((),), ((),)), root / "run")
    (root / "restart").mkdir()
    return root, torn.commits(root / "run")


def test_the_execution_commits_both_stores_and_each_commit_writes_pages(execution):
    _, commits = execution
    assert [c.file for c in commits].count("calendar.sqlite") >= 2 and len(commits) >= 4, commits
    for commit in commits:
        written = torn.pages(commit.before[commit.file], commit.after, 4096)
        assert written, f"commit {commit.number} ({commit.file}, {commit.sql}) changed no page"
        assert len(list(torn.torn(commit))) == 2 ** len(written) - 1, "every subset but the whole commit"


def test_every_torn_commit_is_refused_by_name_or_recovered_to_one_event(execution):
    root, commits = execution
    refused, recovered = 0, 0
    for commit in commits:
        for written, image in torn.torn(commit):
            ended = torn.restart(root / "restart", {**commit.before, commit.file: image})
            where = f"commit {commit.number} of {commit.file} ({commit.sql}) torn after pages {written}"
            if isinstance(ended, str):
                assert str(root / "restart") in ended and "restore" in ended, (where, ended)
                refused += 1
            else:
                assert ended == {"s0i0": ["COMMITTED", "evt_6K2"]}, (where, ended)
                recovered += 1
    assert refused and recovered, (refused, recovered)
