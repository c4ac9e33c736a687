"""clients/js/src/contract.js: the JavaScript clients' one copy of the contract's limits and
close codes (the package's, which the web client imports), generated from their Python homes
and up to date."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from protocol.fields import PLAYER_NAME_MAX
from protocol.webcontract import CONTRACT_JS_PATH, main, render
from protocol.ws import CloseCode
from service.engine.game import MAX_SEED

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"
PACKAGE = ROOT / "clients" / "js" / "src"


def test_it_is_up_to_date() -> None:
    """As `python -m protocol.webcontract --check`: the file is byte for byte what it writes."""
    assert CONTRACT_JS_PATH == PACKAGE / "contract.js"
    assert CONTRACT_JS_PATH.read_text(encoding="utf-8") == render(), (
        "run: python -m protocol.webcontract")


def test_it_exports_the_values_of_their_python_homes() -> None:
    text = render()
    assert f"export const MAX_SEED = {MAX_SEED};" in text
    assert f"export const PLAYER_NAME_MAX = {PLAYER_NAME_MAX};" in text
    for code in CloseCode:
        assert f"  {code.name}: {code.value},\n" in text


def test_main_checks_and_rewrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "contract.js"
    shutil.copy(CONTRACT_JS_PATH, copy)
    assert main(["--check", str(copy)]) == 0
    copy.write_text(render().replace("= 32;", "= 33;"), encoding="utf-8")
    assert main(["--check", str(copy)]) == 1
    assert "out of date" in capsys.readouterr().out
    assert main([str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == render()


def test_no_other_module_of_the_clients_keeps_a_copy() -> None:
    # The values that are unmistakable as numbers in code: the seed limit (or the largest
    # seed) and the close codes other than 1000 (a thousand milliseconds is common).
    copies = {str(MAX_SEED), str(MAX_SEED - 1), *(str(c.value) for c in CloseCode if c > 1000)}
    found = {}
    for module in sorted([*WEB.glob("*.js"), *PACKAGE.glob("*.js")]):
        if module != CONTRACT_JS_PATH:
            code = re.sub(r"//[^\n]*", "", module.read_text(encoding="utf-8"))  # not comments
            if hits := sorted(v for v in copies if re.search(rf"\b{v}\b", code)):
                found[module.name] = hits
    assert found == {}, "import them from contract.js"
