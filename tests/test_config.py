"""``kbx.toml`` as one typed settings object: every table and key checked where the file is
read, a bad one refused with exit 2 and a line that names it, read once per content."""

from __future__ import annotations

from pathlib import Path

import pytest
from inprocess import run_cli

from kbx.config import Config, DenseConfig, ResolveConfig, _load, load_config
from kbx.errors import BadArgument
from kbx.indexing.ingest import index
from kbx.linking.resolvers import Settings
from kbx.recognizers.identifiers import IdentifierRecognizer
from kbx.recognizers.registry import Registry


def _toml(root: Path, text: str) -> Path:
    root.mkdir(exist_ok=True)
    (root / "kbx.toml").write_text(text)
    return root


def test_no_file_is_every_default(tmp_path):
    assert load_config(tmp_path) == Config()
    assert Settings.load(load_config(tmp_path).resolve).rate == 5.0


def test_a_good_file_reads_as_typed_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("KBX_MAILTO", raising=False)
    root = _toml(
        tmp_path / "docs",
        '[recognizers]\ndisable = ["spacy"]\n\n[recognizers.gliner]\nlabels = ["x"]\n\n'
        '[resolve]\nmailto = "me@example.org"\nrate = 2\ntimeout = 2.5\n\n'
        '[dense]\nenable = false\n\n[engine]\nkind = "local"\n',
    )
    config = load_config(root)
    assert config.disabled == {"spacy"} and config.options == {"gliner": {"labels": ["x"]}}
    assert config.resolve == ResolveConfig(mailto="me@example.org", rate=2.0, timeout=2.5)
    assert config.dense == DenseConfig(enable=False)
    settings = Settings.load(config.resolve)
    assert (settings.mailto, settings.rate, settings.timeout) == ("me@example.org", 2.0, 2.5)


BAD = {  # kbx.toml → the line that refuses it (after "…/kbx.toml: ")
    '[resolve]\nrate = "fast"\n': "[resolve] rate: expected a number, got a string",
    "[resolve]\nrate = 0\n": "[resolve] rate: expected a number > 0.0",
    "[resolve]\ntimeout = -1\n": "[resolve] timeout: expected a number > 0.0",
    "[resolve]\nretries = 1.5\n": "[resolve] retries: expected a whole number, got a fraction",
    "[resolve]\nmailto = 3\n": "[resolve] mailto: expected a string, got a whole number",
    "[resolve]\nrat = 5\n": "[resolve] has no rat; keys: mailto, rate, timeout, retries,",
    '[resolv]\nmailto = "a"\n': "no table [resolv]; tables: recognizers, resolve, dense, engine",
    'resolve = "x"\n': "[resolve] must be a table",
    '[dense]\nenable = "yes"\n': "[dense] enable: expected true or false, got a string",
    '[dense]\nmodle = "x"\n': "[dense] has no modle; keys: model, enable",
    "[recognizers]\nthreshold = 0.5\n": "[recognizers] has no threshold; keys: disable, and",
    '[recognizers]\ndisable = "spacy"\n': "recognizers.disable must be a list of names",
    '[engine]\nkind = "ray"\n': "engine kind 'ray': choose from local, dask",
    '[engine]\nkinds = "dask"\n': "[engine] takes kind, address, timeout and spool, not kinds",
}


@pytest.mark.parametrize("text", BAD)
def test_an_unknown_key_or_a_bad_value_is_refused_by_name(tmp_path, text):
    root = _toml(tmp_path / "docs", text)
    with pytest.raises(BadArgument) as e:
        load_config(root)
    assert str(e.value).startswith(f"{root / 'kbx.toml'}: {BAD[text]}")


@pytest.mark.parametrize("rate", ['"fast"', "0"])
def test_kbx_resolve_with_a_bad_rate_exits_2_naming_it(tmp_path, rate):
    """Before: ``rate = "fast"`` exited 70 ("kbx hit a bug"), ``rate = 0`` divided by zero."""
    root = _toml(tmp_path / "docs", '[recognizers]\ndisable = ["spacy", "gliner"]\n')
    (root / "a.md").write_text("# A\n\ndoi:10.1145/1629575.1629596\n")
    index(root, registry=Registry([IdentifierRecognizer()]))
    (root / "kbx.toml").write_text(f"[resolve]\nrate = {rate}\n")
    r = run_cli("resolve", cwd=root)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "[resolve] rate: expected a number" in r.stderr


def test_the_file_is_checked_once_per_content(tmp_path):
    root = _toml(tmp_path / "docs", "[resolve]\nrate = 3\n")
    _load.cache_clear()
    assert load_config(root) == load_config(root)
    assert _load.cache_info().misses == 1 and _load.cache_info().hits == 1
    (root / "kbx.toml").write_text("[resolve]\nrate = 4\n")  # a change is read at once
    assert load_config(root).resolve.rate == 4.0


def test_kbx_resolve_reads_its_settings_at_the_start_and_passes_them_down(tmp_path, monkeypatch):
    """The command builds the resolve settings from kbx.toml where it starts and hands them
    to the library, which then reads no kbx.toml of its own."""
    from kbx import api
    from kbx.entities import resolve

    root = _toml(tmp_path / "docs", '[recognizers]\ndisable = ["spacy", "gliner"]\n')
    (root / "a.md").write_text("# A\n\nNo identifier here.\n")
    index(root, registry=Registry([IdentifierRecognizer()]))
    (root / "kbx.toml").write_text('[resolve]\nmailto = "edge@example.org"\nrate = 3\n')
    given = []
    real = resolve.resolve

    def spy(*args, **kwargs):
        given.append(kwargs["settings"])
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "resolve", spy)  # what the CLI calls
    monkeypatch.setattr(resolve, "load_config", lambda root: pytest.fail("read deep down"))
    r = run_cli("resolve", cwd=root)
    assert r.returncode == 0, r.stderr
    assert [(s.mailto, s.rate) for s in given] == [("edge@example.org", 3.0)]
