"""What the tests of scripts/import-v2fly-hosts and scripts/import-ut1-hosts share: where
things are, running a script, reading back the table it generates, and refusing a bad
mapping file."""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CATEGORIES = {"realtime", "interactive", "web", "streaming", "bulk"}


def path(*parts):
    return os.path.join(ROOT, *parts)


def run(script, *args, check=True):
    """scripts/<script> with `args`; the finished process (stdout, stderr, returncode)."""
    return subprocess.run([sys.executable, path("scripts", script), *args], check=check, capture_output=True,
                          text=True, timeout=60)


def entries(text):
    """{pattern: (group name, category)} from a table of {"name", "category", "patterns" ...} groups."""
    out = {}
    for name, category, body in re.findall(r'\{"([^"]*)", "(\w+)", ((?:"[^"]*"\s*)+)\},', text):
        for p in " ".join(re.findall(r'"([^"]*)"', body)).split():
            out[p] = (name, category)
    return out


def run_with_mapping(script, tree, mapping_text):
    """The script on `tree` with a mapping file holding `mapping_text` (written beside the
    fixture, removed after); the finished process, whatever its exit status."""
    mapping = os.path.join(tree, "..", os.path.basename(tree) + "_test_mapping.tsv")
    try:
        with open(mapping, "w", encoding="utf-8") as f:
            f.write(mapping_text)
        return run(script, "--tree", tree, "--mapping", mapping, check=False)
    finally:
        os.remove(mapping)


def run_fixture(script, tree):
    """The script on the fixture `tree` with its own mapping.tsv, as commit 0123abc, naming
    conflicts: (the table, standard error)."""
    done = run(script, "--tree", tree, "--commit", "0123abc", "--mapping", os.path.join(tree, "mapping.tsv"),
               "--verbose")
    return done.stdout, done.stderr
