"""``agent setup``: show what this machine can use, test the choice, show and write the file.

The questions go through ``ask`` (None: there is no one to ask, so the first model that calls
tools is taken and an existing file is left alone), and everything is printed on
``console``, so a test drives the whole conversation with a list of answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.config import Config
from agent.setup.local_servers import KNOWN_SERVERS, FoundServer, ServerKind
from agent.setup.model_chain import embedded_default
from agent.setup.setup_wizard import Choice, check_choice, config_text, find_choices, write_config

Ask = Callable[[str], str]

NOTHING_FOUND = (
    "No model found. Either set an API key (export ANTHROPIC_API_KEY=... or "
    "OPENAI_API_KEY=...) or start a local server, e.g. `ollama serve` then "
    "`ollama pull qwen2.5-coder:7b`; then run `agent setup` again."
)
OFFLINE_ONLY = (
    "No API key and no local model server found, so `agent` runs the bundled offline model "
    "{model}: it can chat and answer about files it reads, but cannot do coding tasks. For a "
    "real model, set an API key (export ANTHROPIC_API_KEY=... or OPENAI_API_KEY=...) or start "
    "a local server, e.g. `ollama serve` then `ollama pull qwen2.5-coder:7b`; then run "
    "`agent setup` again."
)


def run_setup(
    environ: Mapping[str, str],
    path: Path,
    *,
    console: Console,
    ask: Ask | None,
    kinds: tuple[ServerKind, ...] = KNOWN_SERVERS,
) -> int:
    """The whole of ``agent setup``; the exit code (0 when a tested model is configured)."""
    console.print("Looking for API keys and local model servers...")
    choices, servers = find_choices(environ, kinds)
    _show_servers(console, kinds, servers)
    if not choices:
        offline = embedded_default(Config(), environ)
        found = NOTHING_FOUND if offline is None else OFFLINE_ONLY.format(model=offline.model)
        console.print(Text(found, style="yellow"))
        return ExitCode.FAILED
    choice = _pick(console, choices, ask)
    if choice is None:
        console.print("Nothing chosen; nothing written.")
        return ExitCode.FAILED
    console.print(f"Testing {choice.ref} with one short request...")
    problem = check_choice(choice, environ)
    if problem is not None:
        console.print(Text(f"✗ {choice.ref} did not answer: {problem}", style="red"))
        return ExitCode.FAILED
    console.print(Text(f"✓ {choice.ref} answered.", style="green"))
    return _save(console, path, config_text(choice), ask)


def _show_servers(
    console: Console, kinds: tuple[ServerKind, ...], servers: list[FoundServer]
) -> None:
    running = {server.kind: server for server in servers}
    for kind in kinds:
        server = running.get(kind)
        where = f"{kind.label} ({kind.host}:{kind.port})"
        if server is None:
            console.print(Text(f"  {where}: not running", style="dim"))
        else:
            count = len(server.models)
            console.print(f"  {where}: running, {count} model{'' if count == 1 else 's'}")


def _pick(console: Console, choices: list[Choice], ask: Ask | None) -> Choice | None:
    default = next((n for n, choice in enumerate(choices) if choice.calls_tools), 0)
    console.print("Models agent can use here (a coding agent needs one that calls tools):")
    for number, choice in enumerate(choices, 1):
        console.print(Text(f"  {number}. {choice.describe()}"))
    if ask is None:
        console.print(f"Taking {choices[default].ref}.")
        return choices[default]
    while True:
        answer = ask(f"Use which? [{default + 1}] ").strip()
        if not answer:
            return choices[default]
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        if answer.lower() in ("q", "quit"):
            return None
        console.print(f"Type a number from 1 to {len(choices)}, or q to stop.")


def _save(console: Console, path: Path, text: str, ask: Ask | None) -> int:
    console.print(f"The configuration for {path}:")
    console.print(Text(text.rstrip("\n"), style="cyan"))
    if path.exists():
        question = f"{path} exists. Replace it? [y/N] "
        if ask is None or ask(question).strip().lower() not in ("y", "yes"):
            console.print(
                Text(f"{path} left as it was; copy the lines above into it.", style="yellow")
            )
            return ExitCode.OK
    elif ask is not None and ask(f"Write {path}? [Y/n] ").strip().lower() in ("n", "no"):
        console.print("Nothing written.")
        return ExitCode.OK
    try:
        write_config(path, text)
    except OSError as error:
        console.print(Text(f"agent: cannot write {path}: {error.strerror or error}", style="red"))
        return ExitCode.USAGE
    console.print(Text(f"Written. Run `agent` to start with {_model_of(text)}.", style="green"))
    return ExitCode.OK


def _model_of(text: str) -> str:
    return next(
        line.removeprefix("model: ") for line in text.splitlines() if line.startswith("model")
    )


def local_server_line() -> Text:
    """The start banner's line on the offline model: a running local server, or setup."""
    from agent.setup.local_servers import find_servers

    hint = local_server_hint(find_servers(timeout=0.5))
    return Text(hint or "Run `agent setup` to find a real model.", style="bold")


def local_server_hint(servers: list[FoundServer]) -> str | None:
    """The start banner's line naming a running local server and a model to use there."""
    for server in servers:
        model = server.suggested()
        if model is not None:
            return (
                f"{server.kind.label} is running with {model}: "
                f"`agent --model {server.ref(model)}` (or `agent setup` to keep it)."
            )
    if servers:
        server = servers[0]
        return (
            f"{server.kind.label} is running, but none of its models is known to call tools; "
            "pull one (e.g. qwen2.5-coder:7b) and run `agent setup`."
        )
    return None


def setup_here(workspace: Path) -> int:
    """``agent setup`` from the shell: asks on the terminal, or takes the defaults without one."""
    import os
    import sys

    from prompt_toolkit import PromptSession

    from agent.setup.config import Config, user_config_path
    from agent.setup.startup import Options, SetupError, boot, secret_redactor, start_logging
    from agent.terminal.console import SafeConsole

    console = SafeConsole(highlight=False)
    options = Options(workspace=workspace)
    environ = dict(os.environ)
    try:
        environ = boot(options).environ
    except SetupError as error:  # setup is how a broken configuration gets replaced
        console.print(Text(f"Your configuration has a problem: {error}", style="yellow"))
        start_logging(options, environ, secret_redactor(Config(), environ))

    def ask(question: str) -> str:
        try:
            return PromptSession[str]().prompt(question)
        except (KeyboardInterrupt, EOFError):
            return "q"

    interactive = sys.stdin.isatty()
    return run_setup(
        environ, user_config_path(environ), console=console, ask=ask if interactive else None
    )
