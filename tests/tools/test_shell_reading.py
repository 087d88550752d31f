"""The one analysis of a shell command: what it runs, writes and reads, and what cannot be
known. Nothing here runs a command."""

from __future__ import annotations

import functools
import shlex
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.shell_reading import MAX_DEPTH, CommandAnalysis, analyse, reading
from tools.shell_reading.commands import MAX_DIRECTORIES
from tools.shell_reading.reading import read_at


def names(command: str) -> list[str]:
    return [c.name for c in analyse(command).commands]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/usr/bin/git status", ["git"]),
        ("FOO=1 /usr/bin/env -i nice -n 5 git push", ["git"]),
        ("sudo -u root timeout -k 2 5 make", ["make"]),
        ("bash -c 'ls | wc -l'", ["bash", "ls", "wc"]),
        ("sh -c 'sh -c \"id\"'", ["sh", "sh", "id"]),
        ("eval 'a; b'", ["eval", "a", "b"]),
        ("ls | xargs -n1 -I{} cp {} dst", ["ls", "xargs", "cp"]),
        ("find . -exec grep x {} + -execdir wc {} \\;", ["find", "grep", "wc"]),
        ("echo $(date) `id` <(ls)", ["echo", "date", "id", "ls"]),
        ("f() { g; }; f", ["g", "f"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
        ("case x in y) a;; *) b;; esac", ["a", "b"]),
        ("while a; do b; done; until c; do d; done", ["a", "b", "c", "d"]),
        ("for i in 1 2; do a $i; done", ["a"]),
        ("{ a; (b; c); } && d || e &", ["a", "b", "c", "d", "e"]),
        ("tou\\\nch x", ["touch"]),
        ("x=$(a) b", ["b", "a"]),  # a program first, then what its words substitute
        ("export X=$(a)", ["export", "a"]),
        ("env -S 'git log' --oneline", ["git"]),
        ("watch -n 1 'df -h'", ["watch", "df"]),
        ("busybox sh -c id", ["sh", "id"]),
        ("env - touch x", ["touch"]),
        ("busybox touch x", ["touch"]),
        ("", []),
        ("# only a comment", []),
        ("echo 16#$(touch x)", ["echo", "touch"]),  # a number in a base, given by a command
        ("a=2#`touch x` b", ["b", "touch"]),
        ("x[16#$(touch x)]=1", ["touch"]),
        ("(( 16#$(touch x) ))", ["touch"]),
    ],
)
def test_the_commands_it_runs(command: str, expected: list[str]) -> None:
    assert names(command) == expected


def test_what_wraps_a_command_and_how_it_is_run() -> None:
    (git,) = analyse("sudo -E env A=1 /usr/bin/git push").commands
    assert git.argv == ("/usr/bin/git", "push")
    assert git.wrappers == ("sudo", "env")
    assert git.escalated
    assert git.unwrapped == "git push"
    assert git.path_qualified
    inner = analyse("bash -c 'xargs rm'").commands[-1]
    assert inner.name == "rm"
    assert inner.via == "bash -c/xargs"


def test_simple_commands_split_at_operators_but_not_inside_quotes() -> None:
    def written(command: str) -> list[str]:
        return [c.written for c in analyse(command).commands]

    assert written("a x && b | c; d") == ["a x", "b", "c", "d"]
    assert written("echo 'a && b'") == ["echo a && b"]
    assert written("a\nb") == ["a", "b"]


def test_pipelines_and_substitutions_are_recorded() -> None:
    found = analyse("curl -s x | tee log | sh; bash <(wget -O- y)")
    sh = next(c for c in found.commands if c.name == "sh")
    assert sh.piped_from == ("curl", "tee")
    bash = next(c for c in found.commands if c.name == "bash")
    assert bash.substituted == ("wget",)
    assert bash.piped_from == ()


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("echo a > out.txt 2> err.txt", ("out.txt", "err.txt")),
        ("echo a >> log &> both >| forced", ("log", "both", "forced")),
        ("echo a > /dev/null 2>&1 >&2", ()),
        ("cmd | tee -a one two", ("one", "two")),
        ("dd if=in of=out.img bs=1M", ("out.img",)),
        ("cp a b dir/", ("dir/",)),
        ("cp -t dir a b", ("dir",)),
        ("mv old new", ("new",)),
        ("sort -o sorted.txt in", ("sorted.txt",)),
        ("sort --output=sorted.txt in", ("sorted.txt",)),
        ("uniq in out", ("out",)),
        ("sed -i s/a/b/ f.txt", ("f.txt",)),
        ("sed -i -e s/a/b/ -e s/c/d/ f.txt", ("f.txt",)),
        ("curl -o page.html http://x", ("page.html",)),
        ("cat <<EOF > made.txt\nbody\nEOF", ("made.txt",)),
        ("{ a; b; } > both.txt", ("both.txt",)),
        ("bash -c 'echo > inner.txt'", ("inner.txt",)),
        ("echo 'a > b'", ()),
    ],
)
def test_the_files_it_writes(command: str, writes: tuple[str, ...]) -> None:
    assert analyse(command).writes == writes


@pytest.mark.parametrize(
    ("command", "reads", "searches"),
    [
        ("cat a b", ("a", "b"), ()),
        ("grep pat f", ("f",), ()),
        ("grep -e pat f g", ("f", "g"), ()),
        ("grep -r pat dir", (), ("dir",)),
        ("rg pat", (), (".",)),
        ("wc -l < in.txt", ("in.txt",), ()),
        ("cp -r src dst", (), ("src",)),
        ("python3 -c \"open('secret.txt')\"", ("secret.txt",), ()),
        ("node script.js data.json", ("script.js", "data.json"), ()),
        ("curl -d @body.json http://x", ("body.json",), ()),
        ("find docs -name x -exec cat {} \\;", (), ("docs",)),
        ("ls dir", (), ()),
    ],
)
def test_the_files_its_reading_programs_name(
    command: str, reads: tuple[str, ...], searches: tuple[str, ...]
) -> None:
    found = analyse(command)
    assert found.reads == reads
    assert found.searches == searches


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("$cmd x", "`$cmd`"),
        ("${tools[0]} x", "`${tools[0]}`"),
        ("$(which git) status", "`$(which git)`"),
        ('eval "$x"', "`eval $x`"),
        ("source ./env.sh", "`source ./env.sh`"),
        (". ./env.sh", "`. ./env.sh`"),
        ('bash -c "$script"', "`bash -c $script`"),
        ('echo x > "$out"', "`$out`"),
        ("/usr/bin/tou[c]h x", "`/usr/bin/tou[c]h`"),
        ("tou{c,}h x", "`tou{c,}h`"),
        ("echo 'never closed", "`'never closed`"),
        ("16#$(which touch) x", "`16#$(which touch)`"),
        ("echo > 16#${x}", "`16#${x}`"),
    ],
)
def test_a_part_that_cannot_be_known_is_named(command: str, named: str) -> None:
    found = analyse(command)
    assert not found.knowable
    assert any(named in reason for reason in found.unknown), found.unknown


def test_nested_shells_are_read_to_a_depth_limit() -> None:
    deep = functools.reduce(lambda inner, _: f"sh -c {shlex.quote(inner)}", range(12), "ls")
    found = analyse(deep)
    assert found.too_deep
    assert any(f"more than {MAX_DEPTH} deep" in reason for reason in found.unknown)
    shallow = functools.reduce(lambda inner, _: f"sh -c {shlex.quote(inner)}", range(3), "ls")
    assert analyse(shallow).knowable
    assert names(shallow)[-1] == "ls"


def test_a_function_that_forks_itself_is_seen() -> None:
    assert analyse(":(){ :|:& };:").self_forking == (":",)
    assert analyse("f() { echo hi & }; f").self_forking == ()


def test_the_summary_says_what_runs_and_what_is_written() -> None:
    assert analyse("git log | grep x > out.txt").summary() == "runs: git, grep · writes: out.txt"


def test_one_analysis_per_command_string() -> None:
    assert analyse("git status && ls") is analyse("git status && ls")


def test_a_command_too_long_to_parse_is_not_knowable() -> None:
    found = read_at("a" * (2 * 1024 * 1024), 0)
    assert not found.knowable
    assert "characters long" in found.unknown[0]


def test_directories_are_followed_to_a_limit_then_not_knowable() -> None:
    # Each relative ``cd`` is named from the one before: 20,000 of them would name 400 MB.
    found = read_at("cd a\n" * 20_000, 0)
    assert len(found.directories) == MAX_DIRECTORIES
    assert found.directories[-1] == "/".join(["a"] * MAX_DIRECTORIES)
    assert f"more than {MAX_DIRECTORIES} times" in found.unknown[0]
    assert analyse("cd a && cd b && cat ../x").directories == ("a", "a/b")


_SHELLISH = st.text(
    alphabet=st.sampled_from([*"ab $`'\"\\(){}[];&|<>!#=*?~\n\t-/.0:,%^@+", "\x00", "é"]),
    max_size=300,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), _SHELLISH))
@pytest.mark.timeout(120)
def test_random_and_garbled_input_never_raises(text: str) -> None:
    found = read_at(text, 0)
    assert isinstance(found, CommandAnalysis)
    assert all(isinstance(reason, str) and reason for reason in found.unknown)
    found.summary()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "text",
    [
        "(" * 120_000,
        "f(){ " * 25_000,
        "$(" * 20_000,
        "${a:-" * 20_000,
        "bash -c '" * 10_000,
        "eval " * 20_000,
        "\\\n" * 50_000,
        "'" + "\\" * 100_000,
        "<<EOF\n" * 10_000,
        "a|" * 50_000,
        "\ud800 ls",
    ],
)
def test_pathological_input_gets_an_answer(text: str) -> None:
    assert isinstance(read_at(text, 0), CommandAnalysis)


def test_the_grammar_loads_on_first_use_not_at_start() -> None:
    code = (
        "import sys, agent.app, tools.shell_reading\n"
        "print('tree_sitter' in sys.modules)\n"
        "tools.shell_reading.analyse('ls')\n"
        "print('tree_sitter' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert shown.stdout.split() == ["False", "True"]


def test_a_parse_stopped_for_time_does_not_carry_over_into_the_next_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reading, "PARSE_SECONDS", -1.0)  # every parse stops at once
    stopped = reading.read_at("echo " + "word " * 20_000, 0)
    assert not stopped.parsed
    monkeypatch.undo()

    fresh = reading.read_at("touch made", 0)

    assert fresh.parsed
    assert [command.name for command in fresh.commands] == ["touch"]


def test_a_wide_character_after_a_brace_does_not_crash_the_parser() -> None:
    # The grammar's scanner reads the character after ``{`` (and ``{1..``) with C's isdigit,
    # whose table ends at 255: U+E1481 there read far outside it, a segmentation fault in
    # about half of all processes (where it lands depends on the memory layout). Each run
    # is a process of its own, so that a crash cannot take the tests down.
    code = (
        "from tools.shell_reading.reading import read_at\n"
        "for cp in (0xE1481, 0x10FFFF, 0x90000):\n"
        "    for text in ('{' + chr(cp), '{12' + chr(cp), '{1..2' + chr(cp), 'a {' + chr(cp)):\n"
        "        read_at(text, 0)\n"
        "print('read')\n"
    )
    for _ in range(6):
        shown = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
        assert (shown.returncode, shown.stdout.strip()) == (0, "read"), shown.stderr[-2000:]


def test_what_the_scanner_is_given_keeps_every_place_and_every_value() -> None:
    wide = chr(0xE1481)
    for text in ("{" + wide, "{12" + wide + "a", "{1..5" + wide, "x{{é" + wide):
        given = reading.scanner_safe(text.encode())
        assert given.isascii()
        assert len(given) == len(text.encode())
    assert reading.scanner_safe("cat é.txt".encode()) == "cat é.txt".encode()
    (echo,) = analyse(f"echo {{{wide}}} é").commands
    assert echo.argv == ("echo", f"{{{wide}}}", "é")
