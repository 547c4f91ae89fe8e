"""The documentation site (mkdocs-material + the generated API reference) builds with --strict."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_docs_site_builds_strict(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("play_game", "GameResult", "Outcome", "outcome_of", "make_player", "decision_hash", "JiuVsBotEnv"):
        assert name in api
    assert (tmp_path / "site" / "architecture" / "index.html").exists()
