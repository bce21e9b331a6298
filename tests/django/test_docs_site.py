"""The documentation site builds, its links hold, and its settings table cannot go stale.

``make docs`` builds docs/ with MkDocs-Material (``mkdocs build --strict``:
a warning, a link to a missing page or a missing ``#anchor`` fails it). Here
the same build runs into a temporary directory when mkdocs is installed
(``pip install -e '.[docs]'``, which ``make docs`` does); without it the build
tests are skipped, or fail with ``REDCOORD_REQUIRE_DOCS=1`` (CI). The other
tests need nothing more than the package: the configuration page names every
setting of ``core/options.py``'s DEFAULTS, and the README stays short and
links only to files (and headings) that exist.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "docs" / "_hooks" / "settings_table.py"


def _settings_table():
    spec = importlib.util.spec_from_file_location("settings_table", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _require_mkdocs() -> None:
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if missing:
        why = (
            f"{' and '.join(missing)} not installed: `make docs` installs them (pip install -e "
            "'.[docs]')"
        )
        if os.environ.get("REDCOORD_REQUIRE_DOCS") == "1":
            pytest.fail(f"REDCOORD_REQUIRE_DOCS=1 but {why}")
        pytest.skip(why)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(config),
            "--site-dir",
            str(site),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    _require_mkdocs()
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    from django_redcoord.core.options import DEFAULTS

    page = (tmp_path / "site" / "configuration.html").read_text()
    missing = [key for key in DEFAULTS if f"<code>{key}</code>" not in page]
    assert not missing, f"the built configuration page lacks {missing}"
    changelog = (tmp_path / "site" / "changelog.html").read_text()
    assert "Keep a Changelog" in changelog, "the changelog page did not include CHANGELOG.md"


def test_a_broken_anchor_fails_the_build(tmp_path):
    """The negative control: the same build with one link to a heading that does not exist."""
    _require_mkdocs()
    import yaml

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    with (docs / "proof.md").open("a") as page:
        page.write("\nSee [nowhere](locks.md#no-such-heading).\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    config["hooks"] = [str(docs / "_hooks" / "settings_table.py")]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-heading" in done.stdout + done.stderr, (
        done.stdout + done.stderr
    )


def test_the_configuration_page_lists_every_setting():
    from django_redcoord.core.options import DEFAULTS

    page = (ROOT / "docs" / "configuration.md").read_text()
    rows = re.findall(r"^\| `([A-Z0-9_]+)` \| ", page, re.M)
    assert [key for key in DEFAULTS if key not in rows] == [], (
        "docs/configuration.md lacks settings"
    )
    assert [key for key in rows if key not in DEFAULTS] == [], (
        "docs/configuration.md lists settings that are gone"
    )
    done = subprocess.run(
        [sys.executable, str(HOOK), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, f"the settings table is stale: {done.stderr}"


def test_a_setting_without_a_row_fails_the_table(monkeypatch):
    """The negative control: a new key in DEFAULTS with no row here fails the build."""
    from django_redcoord.core import options

    table = _settings_table()
    monkeypatch.setitem(options.DEFAULTS, "BRAND_NEW_SETTING", 1)
    with pytest.raises(ValueError, match="BRAND_NEW_SETTING"):
        table.render()


def _slug(heading: str) -> str:
    """The anchor of a heading, as GitHub and Python-Markdown's toc both make it here."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r"[\s-]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {_slug(m) for m in re.findall(r"^#+ (.*)$", text, re.M)}


def test_the_readme_is_short_and_its_links_hold():
    readme = ROOT / "README.md"
    text = readme.read_text()
    assert text.count("\n") <= 300, "the README is a front page: the reference lives in docs/"
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (ROOT / target) if target else readme
        if not path.exists():
            broken.append(link)
        elif anchor and anchor not in _anchors(path):
            broken.append(link)
    assert len(links) >= 20 and not broken, f"README links to what does not exist: {broken}"
    for page in (
        "quickstart",
        "installation",
        "configuration",
        "locks",
        "semaphores",
        "rwlocks",
        "latches",
        "signals",
        "ratelimit",
        "leader",
        "queues",
        "topologies",
        "production",
        "admin",
        "operations",
        "benchmarks",
        "architecture",
    ):
        assert f"docs/{page}.md" in text, f"the README does not link docs/{page}.md"


def test_every_settings_table_of_the_docs_gives_the_true_defaults():
    """Pages that repeat a few settings (leader, queues) show the defaults DEFAULTS has."""
    from django_redcoord.core.options import DEFAULTS

    table = _settings_table()
    wrong, seen = [], 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for key, shown in re.findall(r"^\| `([A-Z0-9_]+)` \| (`[^|]*`)", page.read_text(), re.M):
            if key in DEFAULTS:
                seen += 1
                if not table._default(key, DEFAULTS[key]).startswith(shown):
                    wrong.append(
                        f"{page.relative_to(ROOT)}: {key} shown as {shown}, the default is "
                        f"{DEFAULTS[key]!r}"
                    )
    assert seen >= len(DEFAULTS) + 10 and not wrong, "\n".join(wrong)
