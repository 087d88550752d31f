"""A known secret is redacted encoded, reversed or in slices too (issue 27): a model or a
command that prints it base64-encoded, in hex, backwards or a piece at a time carried it into
the session file."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions import Redactor
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

KEY = "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUa"
"""A deploy token: no known key shape, so it is found only as a known environment value."""
REDACTOR = Redactor({"DEPLOY_TOKEN": KEY})


def b64_inside(prefix: bytes, suffix: bytes = b"", alphabet: bytes | None = None) -> str:
    """The base64 characters that come from the key alone, wherever it sits."""
    encoded = base64.b64encode(prefix + KEY.encode() + suffix, altchars=alphabet).decode()
    return encoded[-(-len(prefix) * 4 // 3) : (len(prefix) + len(KEY)) * 4 // 3]


def b64(prefix: bytes, suffix: bytes, alphabet: bytes | None = None) -> tuple[str, str]:
    encoded = base64.b64encode(prefix + KEY.encode() + suffix, altchars=alphabet).decode()
    return encoded, b64_inside(prefix, suffix, alphabet)


FORMS = {
    **{f"base64+{n}": b64(b"\xff" * n, b"tail") for n in range(3)},
    **{f"base64url+{n}": b64(b"\xfb" * n, b"\xff", b"-_") for n in range(3)},
    "hex": (KEY.encode().hex(),) * 2,
    "HEX": (KEY.encode().hex().upper(),) * 2,
    "reversed": (KEY[::-1],) * 2,
}
"""What an attacker prints, and the part of it that must not remain."""


@pytest.mark.parametrize("form", FORMS)
def test_each_encoded_form_is_redacted_inside_other_text(form: str) -> None:
    printed, inside = FORMS[form]
    text = f"output: {printed} done"
    assert REDACTOR.contains_secret(text)
    redacted = REDACTOR.text(text)
    assert inside not in redacted
    assert "[redacted:DEPLOY_TOKEN]" in redacted


def test_slices_of_8_or_more_are_redacted_and_shorter_ones_stay() -> None:
    long_cuts = f"{KEY[:12]}\n{KEY[12:20]}\n{KEY[20:]}"
    assert REDACTOR.text(long_cuts) == "\n".join(["[redacted:DEPLOY_TOKEN]"] * 3)
    short_cuts = " ".join(KEY[i : i + 7] for i in range(0, len(KEY), 7))
    assert REDACTOR.text(short_cuts) == short_cuts
    assert not REDACTOR.contains_secret(short_cuts)


def test_a_slice_is_redacted_as_far_as_it_goes() -> None:
    assert REDACTOR.text(f"a{KEY[3:30]}b") == "a[redacted:DEPLOY_TOKEN]b"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=5), st.binary(max_size=5), st.booleans())
def test_base64_in_any_alignment_is_redacted(prefix: bytes, suffix: bytes, url: bool) -> None:
    encode = base64.urlsafe_b64encode if url else base64.b64encode
    encoded = encode(prefix + KEY.encode() + suffix).decode()
    inside = b64_inside(prefix, suffix, b"-_" if url else None)
    assert inside in encoded
    assert inside not in REDACTOR.text(f"blob {encoded}")


def test_structured_values_are_redacted_in_one_pass() -> None:
    event = {"a": [f"x {KEY[::-1]}", {"k": KEY.encode().hex()}], "n": 3}
    redacted = REDACTOR.value(event)
    assert redacted == {
        "a": ["x [redacted:DEPLOY_TOKEN]", {"k": "[redacted:DEPLOY_TOKEN]"}],
        "n": 3,
    }
    clean = {"a": ["nothing", {"k": "here"}]}
    assert REDACTOR.value(clean) == clean
    assert REDACTOR(None, "info", {"event": "x", "out": f"{KEY[:9]}"}) == {
        "event": "x",
        "out": "[redacted:DEPLOY_TOKEN]",
    }


def test_a_command_printing_the_key_encoded_leaves_no_form_in_agent_home(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # As an attacker would: read the key from a file, so it is not in the call, and print it
    # in every form; then have the model repeat it in its answer.
    (workspace / ".env").write_text(KEY)
    script = (
        "import base64 as b;k=open('.env').read().encode();"
        "[print(b.b64encode(p+k+b'tail').decode()) for p in (b'', b'\\xff', b'\\xff\\xff')];"
        "u=b.urlsafe_b64encode;"
        "[print(u(p+k+b'\\xff').decode()) for p in (b'', b'\\xfb', b'\\xfb\\xfb')];"
        "print(k.hex(), k.hex().upper(), k.decode()[::-1]);"
        "s=k.decode();print(s[:12]);print(s[12:20]);print(s[20:])"
    )
    fake_llm.script(
        Reply.tool_call("run_command", {"command": f'python3 -c "{script}"'}),
        Reply.text("Here: " + " ".join(printed for printed, _ in FORMS.values()) + KEY[5:20]),
    )

    run = run_agent(
        *("-p", "print the token", "--yes", "--model", MODELS["anthropic"]),
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env={"DEPLOY_TOKEN": KEY},
    )

    assert run.code == 0, run.stderr
    agent_home = decoy_home / ".agent"
    [session] = list((agent_home / "sessions").glob("*.jsonl"))
    assert "[redacted:DEPLOY_TOKEN]" in session.read_text()
    assert "tail" in json.dumps(fake_llm.requests[-1].body)  # the command did run
    for path in agent_home.rglob("*"):
        if not path.is_file() or "/checkpoints/" in str(path):
            continue  # undo's private copies of the workspace's own files (.env among them)
        data = path.read_text(errors="replace")
        leaks = [name for name, (_, inside) in FORMS.items() if inside in data]
        leaks += [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in data]
        assert not leaks, (path, leaks)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for _, inside in FORMS.values():
        assert inside not in run.stdout + run.stderr
