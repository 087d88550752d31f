"""Deny rules' paths in a command's namespace: a denied read sees nothing, whatever the program
is written in; a denied edit is refused by a read-only mount.

Runs in the decoy workspace and HOME; needs the namespace layer (skipped, with the reason,
where the kernel refuses unprivileged user namespaces).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.tools.conftest import NAMESPACES_MISSING, MakeHarness
from tools.guard.landlock import abi_version
from tools.guard.sandbox import DeniedPatterns, Sandbox, SandboxMode

pytestmark = [
    pytest.mark.skipif(abi_version() < 1, reason="the kernel has no Landlock"),
    pytest.mark.skipif(bool(NAMESPACES_MISSING), reason=f"no namespaces: {NAMESPACES_MISSING}"),
    # Landlock alone cannot hide a file: there commands are checked by name only.
    pytest.mark.parametrize("layer", ["namespaces"], indirect=True),
]
SECRET = "sk-live-hunter2"
READERS = [
    f"{sys.executable} -c \"print(open('.env').read())\"",
    "cat .env; x=.e; cat ${x}nv",
    "cp .env copy && cat copy",
    "perl -ne print .env 2>/dev/null || awk 1 .env",
    "grep -r hunter2 . ; tar cf - .env | tar xOf -",
    "cat secrets/deep/key.pem; cat nested/id.pem; ls secrets",
]


@pytest.fixture
def masked(sandbox: Sandbox, workspace: Path) -> Sandbox:
    (workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (workspace / "secrets" / "deep").mkdir(parents=True)
    (workspace / "secrets" / "deep" / "key.pem").write_text(SECRET)
    (workspace / "nested").mkdir()
    (workspace / "nested" / "id.pem").write_text(SECRET)
    (workspace / "locked.txt").write_text("as it was\n")
    (workspace / "src.py").write_text("print('ok')\n")
    patterns = DeniedPatterns(
        read=(r"\.env(?:/.*)?", r"secrets(?:/.*)?", r"(?:.*/)?[^/]*\.pem(?:/.*)?"),
        edit=(r"locked\.txt(?:/.*)?",),
    )
    return replace(sandbox, denied=lambda: patterns)


@pytest.mark.parametrize("command", READERS)
async def test_a_denied_file_reads_as_empty_in_any_program(
    make_harness: MakeHarness, masked: Sandbox, command: str
) -> None:
    harness = make_harness(sandbox=masked)

    result = await harness.run("run_command", command=command)

    assert SECRET not in result.content
    assert "hunter2" not in result.content


async def test_a_mask_cannot_be_removed_linked_or_replaced(
    make_harness: MakeHarness, masked: Sandbox, workspace: Path
) -> None:
    harness = make_harness(sandbox=masked)

    result = await harness.run(
        "run_command",
        command="ln .env alias; mv .env moved; rm -rf secrets; echo x > .env; "
        "cat alias moved .env secrets/deep/key.pem 2>&1",
    )

    assert SECRET not in result.content
    assert (workspace / ".env").read_text() == f"TOKEN={SECRET}\n"  # outside: untouched
    assert (workspace / "secrets" / "deep" / "key.pem").read_text() == SECRET


async def test_a_denied_edit_is_read_only_and_the_rest_works(
    make_harness: MakeHarness, masked: Sandbox, workspace: Path
) -> None:
    harness = make_harness(sandbox=masked)

    refused = await harness.run(
        "run_command", command=f"{sys.executable} -c \"open('locked.txt', 'w').write('x')\""
    )
    ok = await harness.run("run_command", command="cat locked.txt && echo more >> src.py")

    assert refused.is_error
    assert "Read-only file system" in refused.content
    assert (workspace / "locked.txt").read_text() == "as it was\n"
    assert not ok.is_error, ok.content
    assert "as it was" in ok.content
    assert (workspace / "src.py").read_text().endswith("more\n")


async def test_masks_hold_in_the_read_only_sandbox_too(
    make_harness: MakeHarness, masked: Sandbox
) -> None:
    harness = make_harness(sandbox=replace(masked, mode=SandboxMode.READ_ONLY))

    result = await harness.run("run_command", command="cat .env nested/id.pem")

    assert SECRET not in result.content


async def test_a_symlink_out_of_the_workspace_is_not_masked(
    make_harness: MakeHarness, sandbox: Sandbox, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".env").symlink_to(tmp_path / "OUTSIDE_CANARY")
    harness = make_harness(
        sandbox=replace(sandbox, denied=lambda: DeniedPatterns(read=(r"\.env",)))
    )

    result = await harness.run("run_command", command="cat ../OUTSIDE_CANARY")

    assert "outside the workspace" in result.content  # the target itself is not hidden
