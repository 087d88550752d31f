"""The sub-agent kinds of one workspace, and the person's trust in the project's files.

A project's definition file is the repository's content. Its ``permissionMode:
acceptEdits`` or ``bypassPermissions`` (ask less) holds only once the person allowed that
exact file (``/agents allow NAME`` in the REPL; remembered per workspace, 0600, under
AGENT_HOME; a changed file needs allowing again); until then the child asks as its parent
does, and the start of a session says so. The person's own files are theirs: they hold.
``plan`` only narrows, and holds from any file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.hooks.settings import CLAUDE_TOOL_NAMES
from agent.setup.doctor import Finding
from agent.subagents.definitions import Definitions, agent_dirs, load_definitions
from agent.subagents.kinds import LOOSER_MODES, SubagentType
from tools.hooks import ApprovalMode
from tools.mcp import ProjectApprovals

APPROVALS_FILE = "project-subagents.json"
_LOOSENESS = [ApprovalMode.ASK, ApprovalMode.AUTO_EDIT, ApprovalMode.FULL_AUTO]


class AgentCatalog:
    """The kinds found for ``workspace`` (built in, the project's, the person's).

    Args:
        workspace: The project.
        agent_home: ``AGENT_HOME`` (its ``agents/``, and where approvals are kept).
        person_home: The person's home directory (its ``.claude/agents/``).
    """

    def __init__(self, workspace: Path, agent_home: Path, person_home: Path) -> None:
        self.found: Definitions = load_definitions(
            agent_dirs(workspace, agent_home, person_home), CLAUDE_TOOL_NAMES
        )
        self._approvals = ProjectApprovals(agent_home, workspace, file_name=APPROVALS_FILE)

    @property
    def kinds(self) -> dict[str, SubagentType]:
        return self.found.kinds

    def needs_trust(self, kind: SubagentType) -> bool:
        """A project's kind that asks less, not (yet) allowed as its file is now."""
        return (
            kind.scope == "project"
            and kind.loosens
            and not self._approvals.allowed_digest(kind.name, kind.digest)
        )

    def trust(self, kind: SubagentType) -> None:
        """Remember that the person allowed ``kind``'s file as it is. Raises `OSError`."""
        self._approvals.allow_digest(kind.name, kind.digest)

    def notices(self) -> list[str]:
        """What the start of a session says: files skipped, modes not in force."""
        said = [f"Sub-agent definition skipped: {problem}" for problem in self.found.problems]
        said += [
            f"Sub-agent {kind.name} ({kind.source}) asks for permissionMode: "
            f"{kind.permission_mode}, which waits until you allow it (/agents allow "
            f"{kind.name} in the REPL); until then it asks as usual"
            for kind in self.kinds.values()
            if self.needs_trust(kind)
        ]
        return said

    def findings(self) -> list[Finding]:
        """``/doctor``'s lines: each file skipped and each mode waiting, or that all is well."""
        found = [
            Finding("warning", "sub-agent definition", problem, "fix the file or remove it")
            for problem in self.found.problems
        ]
        found += [
            Finding(
                "warning",
                f"sub-agent {kind.name}",
                f"{kind.source}: permissionMode {kind.permission_mode} waits for your approval",
                f"/agents allow {kind.name} in the REPL",
            )
            for kind in self.kinds.values()
            if self.needs_trust(kind)
        ]
        if not found:
            names = ", ".join(self.kinds)
            found.append(Finding("ok", "sub-agent definitions", f"{len(self.kinds)}: {names}"))
        return found

    def approval(
        self, kind: SubagentType, parent: Callable[[], ApprovalMode]
    ) -> Callable[[], ApprovalMode]:
        """What gives the approval mode of a child of ``kind``: its parent's, or the
        looser one its file asks for when that holds."""
        if not kind.loosens or self.needs_trust(kind):
            return parent
        wanted = ApprovalMode(LOOSER_MODES[kind.permission_mode or ""])
        return lambda: max(parent(), wanted, key=_LOOSENESS.index)
