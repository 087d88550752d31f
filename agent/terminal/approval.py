"""The approval prompt of the ``ask`` mode, shown inside a running REPL turn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from prompt_toolkit import PromptSession
from rich.console import Group, RenderableType
from rich.text import Text

from agent.permissions import PermissionCheck, command_prefix
from agent.terminal.console import hidden_characters, visible
from agent.terminal.renderables import diff_view
from agent.terminal.ui import ConsoleUI
from tools import ApprovalRequest

QUESTION = "Allow? [y]es / [n]o / [a]lways for this tool: "
DOMAIN_QUESTION = "Allow? [y]es / [n]o / [a]lways for {} this session: "
PREFIX_CHOICE = "[p] always `{prefix} …` in this project"

Ask = Callable[[str], Awaitable[str]]


async def _ask_with_prompt_toolkit(question: str) -> str:
    # The terminal is in raw mode while prompting, so Ctrl-C arrives as a key, not a signal;
    # leaving SIGINT alone keeps the REPL's own handler (which cancels the turn) in place.
    return await PromptSession[str]().prompt_async(question, handle_sigint=False)


def approval_view(request: ApprovalRequest) -> RenderableType:
    """The call to approve: a summary line, then a diff or the full command.

    What is shown is what would run: control, bidirectional and invisible characters are
    shown by name (`visible`), never drawn, with a warning when there are any, and long diff
    lines fold instead of ending in "…".
    """
    summary, details = visible(request.summary), visible(request.details)
    head = Text.assemble(("? ", "bold magenta"), (summary, "bold"))
    # The summary repeats (the start of) the details: count the longer telling once.
    hidden = max(hidden_characters(request.summary), hidden_characters(request.details))
    if hidden:
        warning = Text(
            f"  ! {hidden} invisible or text-reordering character(s), shown as <U+…>: "
            "what runs may not be what it seems",
            style="bold red",
        )
        head = Text.assemble(head, "\n", warning)
    if not details:
        return head
    if details.startswith(("---", "@@")):
        diff = diff_view(details, max_lines=60)
        if isinstance(diff, Text):
            diff.no_wrap, diff.overflow = False, "fold"
        return Group(head, diff) if diff is not None else head
    return Group(head, Text("  " + details.replace("\n", "\n  "), style="cyan"))


class PromptApprover:
    """Asks the person before a tool call that needs approval (`tools.Approver`).

    Ctrl-C at the question interrupts the whole turn; Ctrl-D or an empty answer says no;
    anything else it does not know is asked again (a typo must not decide).

    Args:
        ui: Paused while asking, so the status line does not draw over the question.
        ask: Reads one answer; prompt-toolkit by default.
        rules: The session's permission check, read at each question. With one,
            ``[a]lways for this tool`` becomes a rule for the session, which ``/permissions``
            lists and can remove, and a command's question also offers to always allow the
            command's prefix in this project (``run_command(git push *)``, saved). Without
            one, ``[a]lways`` is kept here. A network tool's ``[a]lways`` is for its
            domain only (``web_fetch(domain:example.com)``).
    """

    def __init__(
        self,
        ui: ConsoleUI,
        ask: Ask | None = None,
        rules: Callable[[], PermissionCheck | None] = lambda: None,
    ) -> None:
        self.ui = ui
        self.ask = ask or _ask_with_prompt_toolkit
        self.always: set[str] = set()
        self.rules = rules

    async def approve(self, request: ApprovalRequest) -> bool:
        """True if the person allows the call."""
        # A network tool is allowed per host: ``web_fetch(domain:example.com)``.
        key = f"{request.tool}(domain:{request.domain})" if request.domain else request.tool
        if key in self.always:
            return True
        rules = self.rules()
        prefix = None
        if rules is not None and request.tool == "run_command":
            prefix = command_prefix(request.details)
        question = QUESTION if not request.domain else DOMAIN_QUESTION.format(request.domain)
        if prefix is not None:
            question = f"{QUESTION[:-2]} / {PREFIX_CHOICE.format(prefix=prefix)}: "
        choices = {"y", "yes", "n", "no", "", "a", "always"} | ({"p"} if prefix else set())
        with self.ui.paused():
            self.ui.show(approval_view(request))
            while True:
                try:
                    choice = (await self.ask(question)).strip().lower()
                except KeyboardInterrupt:
                    raise asyncio.CancelledError from None
                except EOFError:
                    choice = "n"
                if choice in choices:
                    break
                keys = "y, n, a" + (" or p" if prefix else "")
                self.ui.show(Text(f"  {choice!r} is not an answer: type {keys}", style="yellow"))
        if choice in {"a", "always"}:
            if rules is None or not self._allow_for_session(rules, key):
                self.always.add(key)
            return True
        if prefix is not None and rules is not None and choice == "p":
            self._remember(rules, f"run_command({prefix} *)")
            return True
        allowed = choice in {"y", "yes"}
        if not allowed:
            self.ui.show(Text("  denied", style="red"))
        return allowed

    def _allow_for_session(self, rules: PermissionCheck, tool: str) -> bool:
        """``[a]lways`` as a rule ``/permissions`` lists; False when no rule can name it."""
        try:
            rules.allow_for_session(tool)
        except ValueError:
            return False
        said = f"  allowed for this session: {tool} (/permissions lists it)"
        self.ui.show(Text(said, style="green"))
        return True

    def _remember(self, rules: PermissionCheck, rule: str) -> None:
        try:
            rules.remember(rule)
        except OSError as error:
            self.ui.show(Text(f"  allowed once; the rule was not saved ({error})", style="red"))
            return
        self.ui.show(Text(f"  saved: permissions allow {rule}", style="green"))
