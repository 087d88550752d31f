"""The ``before_tool`` hook that applies the permission rules to each call."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from agent.permissions.listing import ListedRule, listed_rules
from agent.permissions.modes import Modes
from agent.permissions.plan import plan_refusal
from agent.permissions.rules import Call, Rule, RuleSet, Verdict, parse_rule
from agent.permissions.settings import PermissionSettings
from agent.permissions.store import ProjectRules
from tools.hooks import Permit, Refusal, ToolInvocation
from tools.workspace import PathOutsideWorkspace, resolve_in_workspace, resolved_root

REMEMBERED = "always allowed at the approval prompt"
FOR_THIS_SESSION = "this session: [a]lways for this tool, at the approval prompt"


class PermissionCheck:
    """Deny → `Refusal`; ask → a `Permit` that forces the question; allow → one that skips it.

    Runs after the other hooks, so a hook's rewritten input is checked too. A deny holds in
    every approval mode; an allow skips only the approval mode's question (never the safety
    policy, the sandbox, or the question about a protected path).

    Args:
        settings: The ``permissions:`` configuration.
        remembered: The workspace's rules added from the approval prompt, if any.
        workspace: The project (``./`` in a path rule).
        home: The person's home directory (``~/`` in a path rule).
        modes: The session's permission mode (plan mode refuses what is not read-only);
            by default the approval mode ``ask``, not planning.
        granted: Tools allowed for the session at the approval prompt (``[a]lways``), carried
            over from the agent this one replaces.
    """

    def __init__(
        self,
        settings: PermissionSettings,
        remembered: ProjectRules | None,
        *,
        workspace: Path,
        home: Path,
        modes: Modes | None = None,
        granted: Sequence[str] = (),
    ) -> None:
        self._remembered = remembered
        self._workspace = resolved_root(workspace)
        self._home = home
        self._settings = settings
        kept = remembered.load() if remembered else []
        self._kept = set(kept)
        self.rules: RuleSet = settings.rules(kept)
        self._typed: set[str] = set()
        self._modes = modes or Modes()
        self._granted: list[str] = []
        for tool in granted:
            self.allow_for_session(tool)

    @property
    def modes(self) -> Modes:
        """The session's permission mode, read per call; changed only through `Modes.switch`."""
        return self._modes

    def remember(self, text: str) -> None:
        """Allow what ``text`` covers from now on, in this workspace (saved, 0600).

        Raises:
            OSError: the rule could not be saved (it still holds for this session).
            RuleError: ``text`` is not a rule.
        """
        rule = parse_rule(text)
        if rule not in self.rules.allow:
            self.rules.allow.append(rule)
        self._kept.add(rule.text)
        if self._remembered is not None:
            self._remembered.add(text)

    def allow_for_session(self, tool: str) -> None:
        """``[a]lways for this tool``: its calls run without the approval mode's question
        until the session ends (an allow rule naming the tool, listed by `listing`)."""
        rule = parse_rule(tool)
        if rule.text in self._granted:
            return
        self._granted.append(rule.text)
        if rule not in self.rules.allow:
            self.rules.allow.append(rule)

    @property
    def granted(self) -> list[str]:
        """The tools allowed for this session at the approval prompt."""
        return list(self._granted)

    def forget(self, text: str) -> str:
        """Take back an allow rule given at the approval prompt; says what changed.

        Raises:
            OSError: a saved rule could not be removed from its file (it holds no more in
                this session all the same).
            ValueError: ``text`` was not given at the approval prompt (the message says
                where it was written, to remove it there).
        """
        given = text in self._granted or text in self._kept
        if not given:
            origin = self.origin("allow", text) or self._origin_of_any(text)
            if origin:
                raise ValueError(f"{text} comes from {origin}: remove it there")
            raise ValueError(f"{text} is not a rule in force")
        still = self._settings.origin("allow", text)
        if text in self._granted:
            self._granted.remove(text)
        saved = text in self._kept
        self._kept.discard(text)
        if not still:
            self.rules.allow[:] = [rule for rule in self.rules.allow if rule.text != text]
        if saved and self._remembered is not None:
            self._remembered.remove(text)
        said = f"Removed allow {text}" + (" (and from this project's saved rules)" if saved else "")
        return f"{said}; still allowed by {still}." if still else f"{said}."

    def _origin_of_any(self, text: str) -> str:
        return next((found for kind in ("deny", "ask") if (found := self.origin(kind, text))), "")

    @property
    def warnings(self) -> list[str]:
        """What could not be read in Claude Code's settings files (the rest holds), and the
        rules that name no tool."""
        return self._settings.warnings

    @property
    def mode_note(self) -> str | None:
        """Which Claude Code ``defaultMode`` set the approval or plan mode, if one did."""
        return self._settings.mode_note

    @property
    def read_only_tools(self) -> list[str]:
        """The MCP tools the person marked read-only: they run in plan mode."""
        return list(self._settings.read_only_tools)

    @property
    def waiting(self) -> list[str]:
        """The project's allow rules that wait for its trust (not in force)."""
        return self._settings.waiting

    def origin(self, kind: str, text: str) -> str:
        """Where the ``kind`` rule ``text`` came from: a file, a flag, or the approval prompt."""
        if kind == "allow" and text in self._granted:
            return FOR_THIS_SESSION
        if kind == "allow" and text in self._kept:
            return REMEMBERED
        return self._settings.origin(kind, text)

    def listing(self, offered: Collection[str] | None = None) -> list[ListedRule]:
        """The rules in force, deny first, each with where it came from; those given at the
        approval prompt can be taken back (`forget`). A rule for one of our tools that is
        not in ``offered`` (the session's tool names, when given) is noted as ignored."""
        return [
            replace(rule, removable=True)
            if rule.kind == "allow" and rule.origin in (REMEMBERED, FOR_THIS_SESSION)
            else rule
            for rule in listed_rules(self.rules, self.origin, offered)
        ]

    def refuses_read(self, path: Path) -> str | None:
        """Why a deny rule refuses reading ``path`` (an ``@`` mention), or None."""
        call = Call("read_file", "read", paths=(path,), workspace=self._workspace, home=self._home)
        found = self.rules.verdict(call)
        if found is None or found[0] is not Verdict.DENY:
            return None
        return f"refused by the permission rule deny: {self._named(found[1])}"

    @contextmanager
    def allowing(self, texts: list[str]) -> Iterator[None]:
        """While inside, the rules ``texts`` allow too (a command's ``allowed-tools``)."""
        added = [parse_rule(text) for text in texts]
        self.rules.allow.extend(added)
        try:
            yield
        finally:
            for rule in added:
                self.rules.allow.remove(rule)

    @contextmanager
    def typed_by_person(self, command: str) -> Iterator[None]:
        """While inside, ``command`` needs no approval: the person typed it (``!command``).

        Deny and ask rules still hold, and so do the safety policy and the sandbox.
        """
        self._typed.add(command)
        try:
            yield
        finally:
            self._typed.discard(command)

    async def __call__(self, invocation: ToolInvocation) -> Refusal | Permit | None:
        call = self._call(invocation)
        vouched = self.read_only_tools
        if self._modes.plan_mode and (
            why := plan_refusal(call.tool, call.kind, call.command, vouched)
        ):
            return Refusal(why, "finish investigating and present the plan", by="policy")
        found = self.rules.verdict(call)
        if call.command in self._typed and (found is None or found[0] is Verdict.ALLOW):
            return Permit(decision="allow", reason="typed by the person")
        if found is None:
            return None
        verdict, rule = found
        return _outcome(verdict, self._named(rule, verdict))

    def _call(self, invocation: ToolInvocation) -> Call:
        tool, args = invocation.tool, invocation.args
        root = resolved_root(invocation.context.workspace)
        paths: list[Path] = []
        for raw in tool.paths(args):
            try:
                paths.append(resolve_in_workspace(root, raw))
            except PathOutsideWorkspace:
                continue  # the safety policy refuses it
        return Call(
            tool=tool.name,
            kind=tool.kind,
            command=tool.command(args),
            paths=tuple(paths),
            workspace=root,
            home=self._home,
            domain=tool.domain(args),
        )

    def _named(self, rule: Rule, verdict: Verdict = Verdict.DENY) -> str:
        origin = self.origin(verdict.value, rule.text)
        return f"{rule.text} (from {origin})" if origin else rule.text


def _outcome(verdict: Verdict, named: str) -> Refusal | Permit:
    if verdict is Verdict.DENY:
        return Refusal(
            f"refused by the permission rule deny: {named}",
            "do not retry it or work around it; tell the person what you needed and why",
            by="policy",
        )
    if verdict is Verdict.ASK:
        return Permit(decision="ask", reason=f"rule ask: {named}")
    return Permit(decision="allow", reason=f"rule allow: {named}")
