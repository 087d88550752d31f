"""The ``agent`` command line (Typer).

Exit codes: see `agent.exit_codes.ExitCode`. Heavy modules (the app, vendor SDKs) are
imported only when needed so that ``agent --version`` stays fast, and ``-p`` ends the process
as soon as its output is flushed and its session closed (`agent.oneshot.exit_now`).
"""

from __future__ import annotations

import shlex
import sys
import traceback
from difflib import get_close_matches
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from agent import __version__
from agent.exit_codes import ExitCode
from agent.setup.choices import (
    Approval,
    InputFormat,
    OutputFormat,
    PermissionMode,
    SandboxMode,
)
from agent.setup.flags import (
    PERMISSION_MODES,
    choice,
    config_option,
    flag_overrides,
    group_options,
    named_option,
    with_empty_prompt,
)
from agent.terminal.mcp_commands import mcp_cli


class AgentGroup(TyperGroup):
    """The command group; a word that is no command reads as a prompt typed without ``-p``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        unknown = name and not name.startswith("-") and self.get_command(ctx, name) is None
        if unknown and not get_close_matches(name, list(self.commands)):
            prompt = shlex.quote(" ".join(args))
            ctx.fail(
                f"{name!r} is not a command. To send it as a prompt: agent -p {prompt}",
            )
        return super().resolve_command(ctx, args)


cli = typer.Typer(
    cls=AgentGroup,
    add_completion=False,
    help="A terminal coding agent that does not break. Run it in your repository.",
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agent {__version__}")
        raise typer.Exit(ExitCode.OK)


@cli.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    prompt: Annotated[
        str | None,
        typer.Option(
            "-p",
            "--print",
            metavar="PROMPT",
            help="Run one turn with this prompt, print, and exit ('-': read it from stdin). "
            "With --resume and no prompt, continue the turn the session stopped in.",
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--output-format",
            parser=choice(OutputFormat),
            metavar="FORMAT",
            help="Output of -p: text, json (one object) or stream-json (JSON lines).",
        ),
    ] = OutputFormat.text,
    input_format: Annotated[
        InputFormat,
        typer.Option(
            "--input-format",
            parser=choice(InputFormat),
            metavar="FORMAT",
            help="Input of -p: text, or stream-json (user messages as JSON lines on stdin; "
            "needs --output-format stream-json).",
        ),
    ] = InputFormat.text,
    include_partial: Annotated[
        bool,
        typer.Option(
            "--include-partial-messages",
            help="With stream-json output, also stream the answer's text as it is written.",
        ),
    ] = False,
    model: Annotated[
        str | None,
        config_option(
            "model", "--model", "-m", metavar="PROVIDER:MODEL", help="Model as provider:model."
        ),
    ] = None,
    fallback_model: Annotated[
        list[str] | None,
        config_option(
            "fallback_models",
            "--fallback-model",
            metavar="PROVIDER:MODEL",
            help="Fallback model (repeatable), tried in order.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE", help="Read this config file instead.")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option("--resume", "-r", metavar="ID", help="Resume the session with this id."),
    ] = None,
    continue_: Annotated[
        bool,
        typer.Option("--continue", "-c", help="Resume the latest session in this directory."),
    ] = False,
    yes: Annotated[
        bool,
        config_option(
            "approval",
            "--yes",
            "-y",
            constant="full-auto",
            help="Approve every tool call (same as --approval full-auto).",
        ),
    ] = False,
    approval: Annotated[
        Approval | None,
        config_option(
            "approval",
            "--approval",
            parser=choice(Approval),
            metavar="MODE",
            help="ask, auto-edit or full-auto.",
        ),
    ] = None,
    permission_mode: Annotated[
        PermissionMode | None,
        named_option(
            PERMISSION_MODES,
            "--permission-mode",
            parser=choice(PermissionMode),
            metavar="MODE",
            help="Claude Code's names: default, acceptEdits, plan (read-only until a plan is "
            "approved) or bypassPermissions.",
        ),
    ] = None,
    allowed_tools: Annotated[
        list[str] | None,
        config_option(
            "permissions.allowed_tools",
            "--allowedTools",
            "--allowed-tools",
            metavar="RULES",
            help="Permission rules that run without asking, e.g. 'Bash(npm test:*) Read' "
            "(repeatable; commas or spaces between rules).",
        ),
    ] = None,
    disallowed_tools: Annotated[
        list[str] | None,
        config_option(
            "permissions.disallowed_tools",
            "--disallowedTools",
            "--disallowed-tools",
            metavar="RULES",
            help="Permission rules that are refused, even with --yes, e.g. 'Bash(git push:*)'.",
        ),
    ] = None,
    sandbox: Annotated[
        SandboxMode | None,
        config_option(
            "sandbox.mode",
            "--sandbox",
            parser=choice(SandboxMode),
            metavar="MODE",
            help="Where commands may write: workspace-write, read-only or off.",
        ),
    ] = None,
    max_steps: Annotated[
        int | None,
        config_option(
            "max_steps", "--max-steps", min=1, metavar="N", help="Model calls allowed per turn."
        ),
    ] = None,
    chaos: Annotated[
        str | None,
        config_option(
            "recovery.chaos",
            "--chaos",
            metavar="PROFILE",
            help="Rehearse outages: inject faults (rate-limits, overload, flaky-network, "
            "truncation, overflow, outage, tools, all), seeded: --chaos all:seed=7:rate=0.3. "
            "Also AGENT_CHAOS.",
        ),
    ] = None,
    no_recovery: Annotated[
        bool,
        config_option(
            "recovery.enabled",
            "--no-recovery",
            constant="false",
            help="Send each model request once: no retry, fallback or escalation "
            "(for debugging a provider).",
        ),
    ] = False,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Set any configuration key for this run (repeatable), "
            "e.g. --set recovery.max_attempts=5.",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log more (each tool start), to stderr too.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Start the interactive agent, or run one prompt with -p."""
    # The options declared with config_option reach Options through ctx (flag_overrides).
    if ctx.invoked_subcommand is not None:
        return
    if resume is not None and continue_:
        raise typer.BadParameter("use either --resume or --continue, not both")
    from agent.setup.startup import Options

    options = Options(
        workspace=Path.cwd(),
        config_file=config,
        overrides=flag_overrides(ctx, list(settings or [])),
        resume=resume,
        continue_latest=continue_,
        verbose=verbose,
    )
    streaming_in = input_format is InputFormat.stream_json
    if streaming_in and output_format is not OutputFormat.stream_json:
        raise typer.BadParameter(
            "stream-json input needs --output-format stream-json", param_hint="--input-format"
        )
    if streaming_in and prompt is not None and prompt.strip() not in ("", "-"):
        raise typer.BadParameter(
            "with --input-format stream-json the prompts come as JSON lines on stdin, and this "
            "one would be ignored: send it as the first line, or drop --input-format",
            param_hint="-p",
        )
    if streaming_in:
        prompt = ""  # the prompts come on stdin
    if prompt == "-" and not streaming_in:
        prompt = sys.stdin.read()
    resuming = resume is not None or continue_
    if prompt is not None and not prompt.strip() and not resuming and not streaming_in:
        raise typer.BadParameter(
            "the prompt is empty (without a prompt, -p only continues a session given with "
            "--resume ID or --continue)",
            param_hint="-p",
        )
    if prompt is not None and prompt.strip() == "/doctor":
        from agent.terminal.doctor_view import run_doctor

        raise typer.Exit(run_doctor(options))
    if prompt is not None:
        from agent.oneshot import Output, exit_now, run_once

        output = Output(
            format=output_format.value, partial=include_partial, stream_input=streaming_in
        )
        code = run_once(options, prompt if prompt.strip() else None, output)
        exit_now(code)
    else:
        if not sys.stdin.isatty():
            hint = "use -p PROMPT to run non-interactively"
            if resuming:  # -p '' finishes the turn the session stopped in
                hint = "add -p PROMPT to go on without one (-p '' finishes an interrupted turn)"
            typer.echo(f"agent: stdin is not a terminal; {hint}.", err=True)
            raise typer.Exit(ExitCode.USAGE)
        from agent.terminal.repl import run_interactive

        code = run_interactive(options)
    raise typer.Exit(code)


@cli.command("sessions")
def sessions(
    all_dirs: Annotated[
        bool, typer.Option("--all", "-a", help="Show sessions from every directory.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many to show.")] = 20,
) -> None:
    """List saved sessions (newest first)."""
    from agent.terminal.sessions_view import list_sessions

    raise typer.Exit(list_sessions(Path.cwd(), all_dirs=all_dirs, limit=limit))


@cli.command("trust")
def trust(
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow without asking (for scripts).")
    ] = False,
) -> None:
    """Show what this directory's agent.yaml and .claude settings set that is looser than
    your own config (approval, sandbox, plan mode, tools, providers, MCP servers, hooks), ask,
    and allow it as it is now."""
    from agent.terminal.trust_view import trust_project

    raise typer.Exit(trust_project(Path.cwd(), yes=yes))


@cli.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """Run /doctor's checks (keys, each model, sandbox, MCP servers, offline model, shared
    state); exit 1 if one failed. The flags before ``doctor`` (--model, --set ...) apply."""
    from agent.terminal.doctor_view import run_doctor

    raise typer.Exit(run_doctor(group_options(ctx, Path.cwd())))


@cli.command("setup")
def setup() -> None:
    """Find a model this machine can use (API keys, local Ollama, LM Studio, llama.cpp or
    vLLM servers), test it with one short request, and write ~/.config/agent/config.yaml
    (shown first; an existing file is replaced only if you say so)."""
    from agent.terminal.setup_view import setup_here

    raise typer.Exit(setup_here(Path.cwd()))


@cli.command("acp")
def acp(ctx: typer.Context) -> None:
    """Serve the Agent Client Protocol on stdin/stdout, for an editor (Zed, JetBrains, Neovim).

    The flags before ``acp`` (--model, --approval, --set ...) apply to every session.
    """
    from agent.acp import serve

    raise typer.Exit(serve(group_options(ctx, Path.cwd())))


cli.add_typer(mcp_cli, name="mcp")


def _option_names() -> set[str]:
    command = typer.main.get_command(cli)
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    try:
        cli(args=with_empty_prompt(args, _option_names()))
    except KeyboardInterrupt:
        sys.stderr.write("\nInterrupted.\n")
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as error:  # the last resort: a bug must not greet a person as a traceback
        if "--verbose" in args or "-v" in args:
            traceback.print_exc()
        sys.stderr.write(
            f"agent: internal error: {error!r}. Run again with --verbose for the details, "
            "and please report it.\n"
        )
        sys.exit(ExitCode.FAILED)
