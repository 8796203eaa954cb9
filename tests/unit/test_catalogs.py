"""The gettext catalogs: complete in every locale, in step with the source and the .mo files."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

from lobby_display.i18n import DOMAIN, LOCALE_DIR
from lobby_display.models import LOCALES

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
TRANSLATED = [locale for locale in LOCALES if locale != "en_US"]


def po_path(locale: str) -> Path:
    return LOCALE_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=locale)


def message_key(message: Message) -> str | tuple[str, ...]:
    return message.id if isinstance(message.id, str) else tuple(message.id)


def template_ids() -> set[str | tuple[str, ...]]:
    return {message_key(message) for message in read_catalog(TEMPLATE) if message.id}


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_the_template_holds_every_message_marked_in_the_source() -> None:
    """A string added to the code without `make messages` would show in English everywhere."""
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    extracted: set[str | tuple[str, ...]] = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        ROOT / "src" / "lobby_display", method_map, options_map
    ):
        extracted.add(message if isinstance(message, str) else tuple(message))
    assert extracted, "nothing extracted: is babel.cfg right?"
    assert extracted == template_ids(), "run `make messages` and translate the new strings"


@pytest.mark.parametrize("locale", LOCALES)
def test_every_locale_has_a_catalog_in_step_with_the_template(locale: str) -> None:
    catalog = read_catalog(po_path(locale), locale)
    ids = {message_key(message) for message in catalog if message.id}
    assert ids == template_ids()
    assert not [message.id for message in catalog.obsolete.values()], "obsolete entries left"


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_message_is_translated_and_none_is_fuzzy(locale: str) -> None:
    catalog = read_catalog(po_path(locale), locale)
    assert not catalog.fuzzy, "the catalog header is marked fuzzy: it would not be compiled"
    nplurals = catalog.num_plurals
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"{locale}: fuzzy entry {message.id!r}"
        forms = [message.string] if isinstance(message.string, str) else list(message.string or ())
        assert all(form.strip() for form in forms), f"{locale}: untranslated {message.id!r}"
        if message.pluralizable:
            assert len(forms) == nplurals, f"{locale}: {message.id!r} needs {nplurals} forms"
        # Every placeholder of the source must be kept, and no other added (it would not be
        # filled and the screen would fall back to English).
        sources = [message.id] if isinstance(message.id, str) else list(message.id)
        expected = set().union(*(placeholders(source) for source in sources))
        for form in forms:
            assert placeholders(form) == expected, f"{locale}: placeholders in {form!r}"


@pytest.mark.parametrize("locale", LOCALES)
def test_plural_rule_is_the_languages(locale: str) -> None:
    catalog = read_catalog(po_path(locale), locale)
    rule = get_plural(Locale.parse(locale))
    assert catalog.plural_forms == rule.plural_forms
    assert catalog.num_plurals == (1 if locale[:2] in ("zh", "ja", "ko", "th") else 2)


@pytest.mark.parametrize("locale", LOCALES)
def test_compiled_catalog_matches_its_po_file(locale: str) -> None:
    """The .mo files are committed: they must say what the .po files say (`make catalogs`)."""
    mo_path = po_path(locale).with_suffix(".mo")
    assert mo_path.is_file(), f"{mo_path} missing: run `make catalogs`"
    with mo_path.open("rb") as file:
        compiled = read_mo(file)
    source = read_catalog(po_path(locale), locale)

    def translations(catalog: Catalog) -> dict[object, object]:
        return {
            message_key(message): message.string
            if isinstance(message.string, str)
            else tuple(message.string)
            for message in catalog
            if message.id and message.string and not message.fuzzy
        }

    assert translations(compiled) == translations(source)
    assert compiled.plural_forms == source.plural_forms
