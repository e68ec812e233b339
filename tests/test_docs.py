"""The README and the documentation site: a short README whose commands are the documentation's, a nav that
lists every page, links that resolve, and walk-throughs that print what they say (run through the CLI).

The site itself is built by .ci/run (`mkdocs build --strict`), which needs the docs extra; these tests need
nothing beyond the test extras."""

import re
import shlex
import tomllib

import pytest

from surfaces import ROOT, cli

README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250
QUICK_START = ["python3 -m venv .venv && .venv/bin/python -m pip install .", ".venv/bin/datalog-memory serve"]
TEST_COMMAND = "python -m pip install '.[test]' && python -m pytest -q"


def section(text: str, heading: str) -> str:
    """From `## heading` to the next heading of the same level (or the end)."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def blocks(text: str, language: str) -> list[str]:
    return [b.strip("\n") for b in re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)]


def commands(block: str) -> list[str]:
    """The command lines of a shell block, backslash continuations joined."""
    return [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav (one `- Title: page.md` line each; read without a YAML parser, which the test
    extras do not install)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:\n"):]
    return re.findall(r"^  - [^:\n]+: (\S+\.md)$", nav, flags=re.M)


def readme() -> str:
    return README.read_text(encoding="utf-8")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_the_readme_is_short():
    lines = readme().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move reference material to docs/"


def test_the_quick_start_is_two_commands_and_they_are_the_documentations():
    readme_commands = [commands(b) for b in blocks(section(readme(), "Quick start"), "sh")]
    assert readme_commands == [[c] for c in QUICK_START]
    docs_commands = [commands(b) for b in blocks(section(page("getting-started.md"), "Quick start"), "sh")]
    assert docs_commands == readme_commands
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert ".venv/bin/" + next(iter(scripts)) + " serve" == QUICK_START[1]


def test_every_readme_command_is_in_the_documentation():
    documented = "\n".join(page(p.name) for p in DOCS.glob("*.md"))
    documented_lines = {line for block in re.findall(r"```sh\n(.*?)```", documented, flags=re.S)
                        for line in commands(block)}
    for block in blocks(readme(), "sh"):
        for line in commands(block):
            assert line in documented_lines, f"README command not in docs/: {line}"


def test_the_development_section_keeps_the_test_command_ci_runs():
    development = blocks(section(readme(), "Development"), "sh")
    assert development[0] == TEST_COMMAND
    assert TEST_COMMAND in commands("\n".join(blocks(page("development.md"), "sh")))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert TEST_COMMAND in ci


def test_ci_builds_the_documentation_with_warnings_as_errors():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    build = next(line for line in ci.splitlines() if "mkdocs build" in line)
    assert "python -m pip install '.[docs]'" in build and "--strict" in build
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(d.startswith("mkdocs-material") for d in extras["docs"])
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_nav_lists_every_page_once():
    pages = nav_pages()
    assert len(pages) == len(set(pages)), "a page is listed twice in mkdocs.yml"
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(pages) == on_disk, "mkdocs.yml's nav and docs/*.md differ"


def test_readme_links_resolve_and_reach_the_documented_pages():
    targets = re.findall(r"\]\(([^)\s]+)\)", readme())
    local = [t for t in targets if "://" not in t]
    for target in local:
        path, _, anchor = target.partition("#")
        assert (ROOT / path).exists(), f"README links to a missing file: {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {slug(h) for h in headings}, f"README links to a missing anchor: {target}"
    linked = {t.partition("#")[0].removeprefix("docs/") for t in local if t.startswith("docs/")}
    assert {"differences.md", "getting-started.md", "tools.md"} <= linked
    assert linked - {"explorer-why.png"} <= set(nav_pages())


def slug(heading: str) -> str:
    """Python-Markdown's toc slug: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


@pytest.mark.parametrize("where", ["README.md", "docs/getting-started.md"])
def test_the_walk_through_prints_what_it_shows(where, db_path):
    """Each shell block of the walk-through runs through the CLI on a fresh store; a text block right after it
    is what those commands print."""
    text = section((ROOT / where).read_text(encoding="utf-8"), "A five-minute walk-through")
    pieces = re.findall(r"```(sh|text)\n(.*?)```", text, flags=re.S)
    assert [kind for kind, _ in pieces].count("sh") >= 2
    printed = ""
    checked = 0
    for kind, body in pieces:
        if kind == "text":
            assert _shown(printed) == _shown(body), f"{where}: the walk-through prints something else"
            checked += 1
            continue
        printed = ""
        for line in commands(body):
            if not line.startswith("datalog-memory ") or line == "datalog-memory explore":
                continue  # activating the environment, changing folder, a web server that runs until Ctrl-C
            ran = cli(db_path, *shlex.split(line)[1:], check=True)
            printed += ran.stdout
    assert checked >= 1


def _shown(text: str) -> str:
    """Output as a page shows it: a memory's id, random at every run, is `mem_…` (the page may show its start)."""
    return re.sub(r"mem_[0-9a-f-]*…?", "mem_…", text.strip("\n"))
