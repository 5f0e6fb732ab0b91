"""The board's templates translate through ``pocha_site.jinja2``'s own ``_``/``gettext``/``ngettext``, installed in
place of the wrappers of Jinja2's i18n extension (one call instead of three): whatever a template says, they
must draw exactly what the extension's newstyle gettext draws."""

from __future__ import annotations

import pytest
from django.template import engines
from jinja2 import Environment
from jinja2.ext import _make_new_gettext, _make_new_ngettext

from pocha_site import jinja2 as site_jinja2

SNIPPETS = [
    "{{ _('Mesa') }}",
    "{{ _('Todavía no es tu turno.') }}",
    "{{ _('100%% seguro') }}",  # a format string: %% is %
    "{{ _('Pedidas %(total)s de %(cards)s: %(balance)s', total=x, cards=3, balance='faltan 1') }}",
    "{% trans n=x %}Mesa {{ n }}{% endtrans %}",
    "{% trans name=who %}Turno de {{ name }}.{% endtrans %}",
    "{% trans cards=c %}{{ cards }} carta{% pluralize cards %}{{ cards }} cartas{% endtrans %}",
    "{% trans n=c %}{{ n }} mirando{% pluralize n %}{{ n }} mirando{% endtrans %}",
    "{% trans count=c %}{{ count }} baza{% pluralize %}{{ count }} bazas{% endtrans %}",
    "{% autoescape false %}{% trans name=who %}Turno de {{ name }}.{% endtrans %}{{ _('Mesa') }}{% endautoescape %}",
    "{% set t = _('Frases') %}{{ t }}|{{ t|length }}",
]
CONTEXTS = [
    {"x": 7, "who": "<b>Ana & Eva</b>", "c": 1},
    {"x": "<i>", "who": "Luis", "c": 3},
    {"x": 0, "who": "%(x)s", "c": 0},
]


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_the_sites_gettext_draws_what_jinjas_newstyle_gettext_draws(snippet: str, language: str) -> None:
    site: Environment = engines["jinja2"].env  # type: ignore[attr-defined]
    theirs = Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    theirs.globals.update(
        gettext=_make_new_gettext(lambda message: site_jinja2.translated(language, message)),
        ngettext=_make_new_ngettext(lambda s, p, n: site_jinja2.translated_plural(language, s, p, n)),
    )
    theirs.newstyle_gettext = True  # type: ignore[attr-defined]
    for context in CONTEXTS:
        ours = site.from_string(snippet).render({**context, site_jinja2.LANGUAGE: language})
        expected = theirs.from_string(snippet).render(context)
        assert ours == expected, (snippet, context, language)


def test_the_site_installs_its_own_gettext() -> None:
    site: Environment = engines["jinja2"].env  # type: ignore[attr-defined]
    assert site.globals["_"] is site_jinja2._gettext
    assert site.globals["gettext"] is site_jinja2._gettext
    assert site.globals["ngettext"] is site_jinja2._ngettext
    assert site.newstyle_gettext  # type: ignore[attr-defined]


def test_a_text_is_translated_in_the_language_it_is_drawn_in() -> None:
    site: Environment = engines["jinja2"].env  # type: ignore[attr-defined]
    template = site.from_string(
        "{{ _('Todavía no es tu turno.') }}|{% trans n=2 %}{{ n }} mirando{% pluralize n %}{{ n }} mirando{% endtrans %}"
    )
    spanish = template.render({site_jinja2.LANGUAGE: "es"})
    english = template.render({site_jinja2.LANGUAGE: "en"})
    assert spanish == "Todavía no es tu turno.|2 mirando"
    assert english != spanish and "2" in english
