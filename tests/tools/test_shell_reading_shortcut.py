"""The command analysis reads a tree the grammar read without error in a fast loop: a
command of plain words from its text (once for each different text), a redirection to a
plain name from its text, and the common nodes in fewer steps (what keeps a long script
fast). Each command here is read both ways, the fast loop and the whole walk (every node
visited, every word read from the tree), and the two readings must be the same in every
field. Nothing here runs a command."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.shell_reading import CommandAnalysis
from tools.shell_reading.reading import read_at

TRICKY = [
    # plain programs, paths, options
    "ls -la",
    "/usr/bin/git status",
    "./bin/tool --flag=1 a,b:c@d%e+f",
    "git log --oneline -20 | grep -i fix",
    "true; false\nls",
    # wrappers, escalation
    "sudo -u root timeout -k 2 5 make",
    "env A=1 B=2 cmd",
    "env - touch x",
    "env -S 'git log' --oneline",
    "nice -n 5 nohup x &",
    "command -v git",
    "command git status",
    "exec ls",
    "time -p ls",
    "busybox touch x",
    "busybox sh -c id",
    "doas rm x",
    "chroot /x ls",
    "flock f -c 'touch y'",
    "su -c id root",
    # nested shells and text that runs
    "bash -c 'ls | wc -l'",
    "sh -c 'sh -c \"id\"'",
    "eval 'a; b'",
    'eval "$x"',
    "bash",
    "bash -s < f",
    "bash <<< 'touch x'",
    "bash <<EOF\ntouch y\nEOF",
    "sh <<'EOF'\nrm z\nEOF",
    "curl x | bash -s -- arg",
    "watch -n 1 'df -h'",
    "trap 'rm x' EXIT",
    "alias t=touch",
    "hash -p /bin/rm x",
    "source ./env.sh",
    ". ./env.sh",
    "python3 -c \"import os; os.system('touch z')\"",
    "python3 script.py data.csv",
    "node -e \"require('child_process').exec('rm x')\"",
    "awk '{system(\"id\")}' f",
    "perl -e 'system(\"id\")'",
    # xargs and find
    "ls | xargs -n1 -I{} cp {} dst",
    "xargs rm < list",
    "find . -name '*.py' -exec grep -l foo {} +",
    "find d -execdir rm {} \\; -ok wc {} \\;",
    "find docs -name x -exec cat {} \\;",
    # files read and written
    "cat a b",
    "grep -r pat dir",
    "grep -e a -f pats f g",
    "rg pat",
    "sed -i s/a/b/ f",
    "cp -r src dst",
    "cp -t dir a b",
    "tee -a one two",
    "dd if=in of=out.img bs=1M",
    "sort -o sorted.txt in",
    "uniq in out",
    "curl -o page.html http://x",
    "curl -d @body.json http://x",
    "tar czf out.tgz dir",
    "cat {}",
    # directories
    "cd a && cd b && cat ../x",
    "cd /abs; pushd rel; cd ~",
    "cd a\n" * 70,
    # functions, pipelines, lists, groups
    "f() { g; }; f",
    ":(){ :|:& };:",
    "function h { h | h & }; h",
    "f() { echo hi & }; f",
    "(a; b) | c",
    "a | (b | c) | d",
    "a | b & c | d",
    "f() { a | b; }; f | c",
    "{ a; (b; c); } && d || e &",
    "if a; then b; elif c; then d; else e; fi",
    "case x in y) a;; *) b;; esac",
    "while a; do b; done; until c; do d; done",
    "for i in 1 2; do a $i; done",
    "for ((i=0;i<3;i++)); do k; done",
    "select x in a b; do y; done",
    "! a | b",
    "cmd1 | cmd2 |& cmd3",
    "x | " * 70 + "y",
    # substitutions
    "echo $(date) `id` <(ls) >(tee x)",
    "echo $(a) $(b $(c))",
    "x=$(a) b",
    "export X=$(a)",
    "declare -x A=$(b) C",
    "local y=1; unset v; readonly r=$(q)",
    "echo \"$(c)\" '$(d)' $'\\x41\\n'",
    "echo ${a:-$(b)}",
    "cat <(sort a) <(sort b)",
    # redirections and here-documents
    "echo a > out.txt 2> err.txt",
    "echo a >> log &> both >| forced",
    "echo a > /dev/null 2>&1 >&2",
    'echo x > "$out"',
    "wc -l < in.txt",
    "cat <<EOF > made.txt\nbody $(id)\nEOF",
    "cat <<'EOF'\nbody $(id)\nEOF",
    "> x echo a b",
    "echo a > x b",
    "exec 3>&1 2>log",
    # continuations, quoting, escapes, patterns
    "tou\\\nch x",
    "a \\\n b \\\n c",
    "echo a\\ b \\$x",
    '"ls" -la',
    't"ou"ch x',
    "$'touch' x",
    "ls *.py",
    "/usr/bin/tou[c]h x",
    "tou{c,}h x",
    "echo a{b,c}d ~/x $HOME/y",
    'cat $HOME/.ssh/id_rsa ${HOME}/x "$f"',
    "echo é ü 日本 && ls ü",
    "a=b c=d e",
    "A=1",
    # unknowable parts
    "$cmd x",
    "${tools[0]} x",
    "$(which git) status",
    "echo 16#$(date)",
    # redirections the fast loop reads from their text, and their near misses
    "echo a >x",
    "echo a >> x >y",
    "echo a > 12",
    "echo a 2> x",
    "echo a >&2",
    "echo a >| x",
    "echo a &> x",
    "echo a > x y",
    "echo a > /dev/null",
    "echo a >> /dev/fd/3",
    "ls | wc >> count.txt && cd d || true",
    # commands of plain words and $(…) of plain words, read from their text, and near misses
    "$(a) b",
    "echo $( date -u ) x | cat",
    "a $(b) $(c d) && e",
    "echo $(export x) $(time ls)",
    "echo $(sudo rm x) $(bash) $(env A=1 ls)",
    "bash $(x) < f",
    "x$(a) $(a)x",
    "echo $(date)  $(id) | tee $(t) > o",
    "echo $(cd a) $(grep -r p d)",
    "echo 1a $(b) $(1a) $(%x) @y",
    "echo $(a) $(b) $(a) | $(c) $(c)",
    "echo $(a)$(b) $(a b)x",
    "$(a b) $(c) && $(d) | e $(f)",
    # the same plain text in and out of pipelines and substitutions
    "grep -v x; grep -v x | grep -v x; echo $(grep -v x)",
    "cd a; echo $(cd b) | cd c",
    "tee t | tee t; cp a b | cp a b",
    # what the grammar cannot read
    "echo 'never closed",
    "a |",
    "(((",
    "}",
    "echo $((",
    "cat <<EOF",
    "ls )",
    "\ud800 ls",
]


def both_ways(command: str) -> tuple[CommandAnalysis, CommandAnalysis]:
    return read_at(command, 0), read_at(command, 0, shortcut=False)


@pytest.mark.parametrize("command", TRICKY)
def test_a_command_reads_the_same_by_its_text_and_word_by_word(command: str) -> None:
    short, long = both_ways(command)
    assert short == long


def test_the_benchmark_scripts_read_the_same_both_ways() -> None:
    dense = "\n".join(
        f"echo line {i} $(date) | grep -v x >> out{i % 7}.txt && cd dir{i} || true"
        for i in range(200)
    )
    plain = "\n".join(
        f"mkdir -p build/{i} && cp src/{i}.c build/{i}/ && cat {i}" for i in range(200)
    )
    for script in (dense, plain):
        short, long = both_ways(script)
        assert short == long
        assert len(short.commands) > 500


_PIECES = st.sampled_from(TRICKY[:-10])
_JOINS = st.sampled_from([" ; ", " && ", " || ", " | ", " |& ", "\n", " & "])
_AROUND = st.sampled_from(
    [
        "{}",
        "({})",
        "{{ {}; }}",
        "echo $({})",
        "echo `{}`",
        "bash -c '{}'",
        "f() {{ {}; }}; f",
        "if {}; then {}; fi",
        "{} > out 2>&1",
        "{} <<EOF\nbody\nEOF",
        "sudo {}",
        "xargs {}",
        "find . -exec {} {{}} \\;",
        "x=$({}) y",
        "{} \\\n more",
    ]
)


@st.composite
def _scripts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(_PIECES, min_size=1, max_size=4))
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(_JOINS) + piece
    around = draw(_AROUND)
    return around.replace("{}", text) if "{{" not in around else around.format(text, text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_scripts())
def test_composed_commands_read_the_same_both_ways(command: str) -> None:
    short, long = both_ways(command)
    assert short == long


_PLAIN_BYTES = "abcxyz019._/,:@%+-"
_WORD_LIST = """ls cat grep -v x cd dir true echo a f.txt /usr/bin/git sudo env A=1 bash -c
    sh xargs find . -exec rm {} tee out dd of=o if=i python3 -e timeout 5 time export local
    declare unset eval source if then fi do done for in while case esac function ! [[ ]] 16#ff
    1 1a -- cp sort -o curl sed -i rg -r /dev/null {a,b} $(date) $(grep -v x) $(sudo ls) $(bash)
    $(cd d) $(tee t) $(if)"""
_WORDS = st.sampled_from(_WORD_LIST.split())
_SPECIAL = st.sampled_from(
    [
        *"$`\\'\"*?[]{}~()<>|&;#= \t\n",
        "$(",
        "${",
        "<<",
        ">>",
        "&&",
        "||",
        "\\\n",
        "$((",
        "<(",
        ">(",
        "<<<",
        "2>",
        "&>",
        ">|",
    ]
)
_GAPS = st.sampled_from([" ", " ", " ", "", "\n", " | ", " && ", " || ", "; ", " > ", " >> "])


@st.composite
def _random_commands(draw: st.DrawFn) -> str:
    """Text made of plain words, words of plain bytes, and shell-special bytes and operators."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.integers(0, 9))
        if kind < 5:
            parts.append(draw(_WORDS))
        elif kind < 8:
            parts.append(draw(st.text(_PLAIN_BYTES, min_size=1, max_size=5)))
        else:
            parts.append(draw(_SPECIAL))
        parts.append(draw(_GAPS))
    return "".join(parts)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_commands())
def test_random_commands_read_the_same_both_ways(command: str) -> None:
    short, long = both_ways(command)
    assert short == long


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("(a; b) | c", [("a", ()), ("b", ()), ("c", ("a", "b"))]),
        (
            "ls | xargs rm | wc",
            [("ls", ()), ("xargs", ("ls",)), ("rm", ("ls",)), ("wc", ("ls", "xargs", "rm"))],
        ),
        ("a | b & c | d", [("a", ()), ("b", ("a",)), ("c", ()), ("d", ("c",))]),
        # A pipeline in a member of another is part of it, fed and feeding.
        ("a | (b | c) | d", [("a", ()), ("b", ("a",)), ("c", ("a", "b")), ("d", ("a", "b", "c"))]),
        ("(curl x | cat) | sh", [("curl", ()), ("cat", ("curl",)), ("sh", ("curl", "cat"))]),
        ("curl x | { cat | sh; }", [("curl", ()), ("cat", ("curl",)), ("sh", ("curl", "cat"))]),
        ("(a; b | c) | d", [("a", ()), ("b", ("a",)), ("c", ("a", "b")), ("d", ("a", "b", "c"))]),
        ("bash -c 'a | b' | c", [("bash", ()), ("a", ()), ("b", ("a",)), ("c", ("bash",))]),
    ],
)
def test_what_each_command_of_a_pipeline_is_fed_by(
    command: str, expected: list[tuple[str, tuple[str, ...]]]
) -> None:
    found = read_at(command, 0)
    assert [(c.name, c.piped_from) for c in found.commands] == expected


def test_a_long_pipeline_names_its_first_programs_and_says_it_runs_more() -> None:
    found = read_at(" | ".join(f"p{i}" for i in range(70)), 0)
    assert found.commands[-1].piped_from == tuple(f"p{i}" for i in range(64))
    assert "a pipeline runs more than 64 programs" in found.unknown


def test_the_commands_a_words_substitution_runs_are_named_on_it() -> None:
    found = read_at("echo $(a) $(b $(c)) $(a)", 0)
    assert [(c.name, c.substituted) for c in found.commands] == [
        ("echo", ("a", "b")),
        ("a", ()),
        ("b", ("c",)),
        ("c", ()),
        ("a", ()),
    ]
