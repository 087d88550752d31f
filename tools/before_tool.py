"""The checks a validated call passes before it runs: safety policy, hooks, approval.

The order is fixed: the safety policy first, then the extra hooks in the order given, then
the approval gate. A hook's `Permit` can replace the input (validated and checked by the
safety policy again, so a rewrite cannot smuggle a refused path or command past it) and can
skip or force the approval prompt; it never skips the safety policy.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence

import structlog

from tools.hooks import ApprovalGate, BeforeToolHook, Permit, Refusal, SafetyPolicy, ToolInvocation
from tools.results import parse_arguments

log = structlog.get_logger("tools")


class BeforeToolChecks:
    """Runs the checks in order; the first refusal wins.

    Args:
        policy: The safety policy, run first and again after a hook rewrites the input.
        hooks: Extra ``before_tool`` hooks, between the policy and the gate.
        gate: Asks the person when the approval mode (or a hook's ``ask``) wants it.
        redact: Hides secrets in the text quoting a rejected rewrite.
    """

    def __init__(
        self,
        policy: SafetyPolicy,
        hooks: Sequence[BeforeToolHook],
        gate: ApprovalGate,
        redact: Callable[[str], str],
    ) -> None:
        self._policy = policy
        self._hooks = list(hooks)
        self._gate = gate
        self._redact = redact

    async def check(self, invocation: ToolInvocation) -> Refusal | ToolInvocation:
        """The refusal, or the invocation to run (its arguments perhaps rewritten by a hook)."""
        refusal = await _guarded(self._policy, invocation)
        if isinstance(refusal, Refusal):
            return refusal
        permit: Permit | None = None
        for hook in self._hooks:
            verdict = await _guarded(hook, invocation)
            if isinstance(verdict, Refusal):
                return verdict
            if not isinstance(verdict, Permit):
                continue
            if verdict.updated_input is not None:
                rewritten = await self._rewrite(invocation, verdict.updated_input)
                if isinstance(rewritten, Refusal):
                    return rewritten
                invocation = rewritten
            if verdict.decision == "ask" or (verdict.decision == "allow" and permit is None):
                permit = verdict
        try:
            refusal = await self._gate(invocation, permit=permit)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # fail closed, as for any other check
            log.exception("approval_gate_failed", tool=invocation.tool.name)
            refusal = Refusal(f"a safety check failed ({exc})", "try another approach")
        return refusal if refusal is not None else invocation

    async def _rewrite(
        self, invocation: ToolInvocation, updated: dict[str, object]
    ) -> Refusal | ToolInvocation:
        args = parse_arguments(invocation.tool, dict(updated), self._redact)
        if isinstance(args, str):
            return Refusal(
                f"a hook rewrote the input of {invocation.tool.name} into one the tool "
                f"rejects: {args}",
                "tell the person the hook's rewrite is invalid",
                by="hook",
            )
        rewritten = dataclasses.replace(invocation, args=args)
        refusal = await _guarded(self._policy, rewritten)
        return refusal if isinstance(refusal, Refusal) else rewritten


async def _guarded(hook: BeforeToolHook, invocation: ToolInvocation) -> Refusal | Permit | None:
    try:
        return await hook(invocation)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # fail closed: a broken guard must not let a call through
        log.exception("before_tool_hook_failed", tool=invocation.tool.name)
        return Refusal(f"a safety check failed ({exc})", "try another approach")
