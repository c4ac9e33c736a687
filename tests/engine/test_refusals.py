"""The catalogue of refusals is every rule a 422 can name, and only those: each place
in service/ that names a rule names one of the catalogue, the engine always by its
member (``Rule.BUILD``, never ``"build"``), and every rule of the catalogue is named
somewhere. docs/protocol.md's table is checked against it in tests/test_docs.py."""

from __future__ import annotations

import ast
from pathlib import Path

from service.engine import Game, IllegalCommand, Move
from service.engine.refusals import Rule
from service.engine.variants import VARIANTS

ROOT = Path(__file__).resolve().parent.parent.parent
SERVICE = ROOT / "service"
ENGINE = SERVICE / "engine"


def _returns_a_rule(function: ast.FunctionDef) -> bool:
    return function.returns is not None and "Rule" in ast.unparse(function.returns)


def rule_sites(path: Path) -> list[tuple[int, ast.expr]]:
    """Where ``path`` names a rule: the first argument of ``IllegalCommand(...)``, the
    first member of a pair a function returning a ``Rule`` returns, and the value of
    a ``"rule"`` key of a dict (the service's own refusals; not ``exc.rule`` passed on)."""
    tree = ast.parse(path.read_text(), str(path))
    sites: list[tuple[int, ast.expr]] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "IllegalCommand" and node.args
                and not isinstance(node.args[0], ast.Starred)):
            sites.append((node.lineno, node.args[0]))
        elif isinstance(node, ast.FunctionDef) and _returns_a_rule(node):
            for ret in (n for n in ast.walk(node) if isinstance(n, ast.Return)):
                for pair in (n for n in ast.walk(ret) if isinstance(n, ast.Tuple)):
                    sites.append((pair.lineno, pair.elts[0]))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                passed_on = isinstance(value, ast.Attribute) and value.attr == "rule"
                if isinstance(key, ast.Constant) and key.value == "rule" and not passed_on:
                    sites.append((node.lineno, value))
    return sites


def named_rule(site: ast.expr) -> str | None:
    """The rule a site names: ``Rule.X`` or a string; ``None`` for anything else."""
    if (isinstance(site, ast.Attribute) and isinstance(site.value, ast.Name)
            and site.value.id == "Rule"):
        member = Rule.__members__.get(site.attr)
        return member.value if member is not None else f"Rule.{site.attr}"
    if isinstance(site, ast.Constant) and isinstance(site.value, str):
        return site.value
    return None


def every_site() -> dict[str, list[tuple[int, ast.expr]]]:
    return {str(p.relative_to(ROOT)): rule_sites(p) for p in sorted(SERVICE.rglob("*.py"))
            if p.name != "refusals.py"}


def test_the_reading_finds_the_places_that_name_a_rule() -> None:
    sites = every_site()
    engine = {named_rule(s) for f, found in sites.items() if f.startswith("service/engine/")
              for _, s in found}
    # one of each kind: raised, returned by the move checker, returned by a variant's hook
    assert {"game_over", "build", "space_from_waste_first"} <= engine


def test_every_rule_a_refusal_names_is_in_the_catalogue() -> None:
    catalogue = {rule.value for rule in Rule}
    unknown = [f"{f}:{line}: {ast.unparse(site)}"
               for f, found in every_site().items() for line, site in found
               if named_rule(site) not in catalogue]
    assert unknown == []


def test_the_engine_names_a_rule_only_by_its_member() -> None:
    literal = [f"{f}:{line}: {ast.unparse(site)}"
               for f, found in every_site().items() if f.startswith("service/engine/")
               for line, site in found if not isinstance(site, ast.Attribute)]
    assert literal == []


def test_every_rule_of_the_catalogue_is_given_somewhere() -> None:
    given = {named_rule(site) for found in every_site().values() for _, site in found}
    assert {rule.value for rule in Rule} - given == set()


def test_the_refusals_of_every_move_of_a_deal_are_in_the_catalogue() -> None:
    # Exercised, not read: every move between two piles of each variant's first deal,
    # of one to three cards (and onto "foundation"), is refused by a catalogued rule.
    catalogue = {rule.value for rule in Rule}
    seen: set[str] = set()
    for variant_id in VARIANTS:
        game = Game.deal(variant_id, seed=1)
        piles = [*game.variant.spec, "foundation", "nowhere"]
        for src in piles:
            for dest in piles:
                for count in (1, 2, 3):
                    try:
                        game.apply(Move(src, dest, count))
                    except IllegalCommand as exc:
                        assert type(exc.rule) is str and exc.rule in catalogue, exc.rule
                        seen.add(exc.rule)
    assert len(seen) > 5  # the deals are refused for many reasons, not one


def test_a_rule_is_its_name() -> None:
    assert Rule.EMPTY_TABLEAU == "empty_tableau" and Rule("build") is Rule.BUILD
    assert len({rule.value for rule in Rule}) == len(Rule)
    assert all(rule.meaning and "\n" not in rule.meaning for rule in Rule)
