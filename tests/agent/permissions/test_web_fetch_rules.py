"""web_fetch's permission: ``WebFetch(domain:…)`` rules, the per-domain approval question,
plan mode."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from agent.permissions import PermissionCheck, RuleSet, Verdict
from agent.permissions.plan import plan_refusal
from agent.permissions.rules import Call
from agent.permissions.settings import PermissionSettings
from agent.terminal.approval import PromptApprover
from agent.terminal.ui import ConsoleUI
from tools import ApprovalRequest


def fetch(domain: str) -> Call:
    return Call(tool="web_fetch", kind="network", domain=domain)


def verdict(rules: RuleSet, domain: str) -> Verdict | None:
    found = rules.verdict(fetch(domain))
    return None if found is None else found[0]


@pytest.mark.parametrize(
    ("rule", "domain", "covered"),
    [
        ("WebFetch(domain:example.com)", "example.com", True),
        ("web_fetch(domain:example.com)", "example.com", True),
        ("WebFetch(domain:Example.COM)", "example.com", True),
        ("WebFetch(domain:example.com)", "docs.example.com", False),
        ("WebFetch(domain:example.com)", "example.com.evil.test", False),
        ("WebFetch(domain:*.example.com)", "docs.example.com", True),
        ("WebFetch(domain:*.example.com)", "example.com", True),
        ("WebFetch(domain:*.example.com)", "badexample.com", False),
        ("WebFetch", "anything.test", True),
        ("WebFetch(example.com)", "example.com", False),  # not a domain: specifier
        ("Read", "example.com", False),
    ],
)
def test_domain_rules_cover_the_urls_host(rule: str, domain: str, covered: bool) -> None:
    assert (verdict(RuleSet.of([], [], [rule]), domain) is Verdict.ALLOW) is covered


def test_deny_for_a_domain_beats_allowing_every_fetch() -> None:
    rules = RuleSet.of(["WebFetch(domain:evil.test)"], [], ["WebFetch"])
    assert verdict(rules, "evil.test") is Verdict.DENY
    assert verdict(rules, "docs.test") is Verdict.ALLOW


def test_plan_mode_lets_a_fetch_run() -> None:
    assert plan_refusal("web_fetch", "network", None) is None


async def test_always_at_the_question_allows_that_domain_only(tmp_path: Path) -> None:
    check = PermissionCheck(PermissionSettings(), None, workspace=tmp_path, home=tmp_path)
    shown = io.StringIO()
    asked: list[str] = []

    async def ask(question: str) -> str:
        asked.append(question)
        return "a"

    approver = PromptApprover(ConsoleUI(Console(file=shown, width=100)), ask, rules=lambda: check)
    request = ApprovalRequest(
        "web_fetch", "web_fetch https://docs.test/a", "https://docs.test/a", "network", "docs.test"
    )

    assert await approver.approve(request)

    assert asked == ["Allow? [y]es / [n]o / [a]lways for docs.test this session: "]
    assert "allowed for this session: web_fetch(domain:docs.test)" in shown.getvalue()
    assert verdict(check.rules, "docs.test") is Verdict.ALLOW
    assert verdict(check.rules, "other.test") is None
