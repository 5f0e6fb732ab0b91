"""The Jinja2 environment of the templates drawn on the per-move path (``jinja2/``: the table's board and
its seats), through Django's own Jinja2 backend (settings.TEMPLATES).

Everything else stays in the Django template language.  The board is drawn for every seat of a table at
every move, which makes its drawing the biggest part of a server process's work under load; Jinja2
compiles a template to Python code and draws the same HTML several times faster than Django's templates.

What the board's templates need from Django, and how they get it here:

* translations: ``{% trans %}`` blocks and ``_()`` go through Django's gettext and ngettext, in the language
  active when the template is drawn (``translation.override``), with the same msgids as Django's
  ``{% blocktrans %}`` (``%(name)s`` placeholders).  ``draw`` reads the active language once and hands it
  to the drawing (``_language``); each text is translated once per language and process (``translated``),
  because Django's gettext looks the language up in a context-local at every call, once for every text
  on a board;
* ``url(name, *args)`` for ``{% url %}``, the ``fichas`` and ``format_signed`` filters (the board's own
  ``seat()`` and ``hand_card()`` come in its context: ``games.read.board.draw_board``);
* ``dtl(name)``: a rarely drawn part that stays in Django's templates (the rematch box), with this
  template's context;
* undefined names and attributes are empty, as in Django's templates (``ChainableUndefined``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.template import engines
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, ngettext, override
from jinja2 import ChainableUndefined, Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from accounts.templatetags.chips import fichas

#: The context variable holding the language a template is drawn in (``draw``).
LANGUAGE = "_language"


def draw(name: str, context: dict[str, Any]) -> SafeString:
    """``jinja2/<name>`` drawn with ``context`` in its ``LANGUAGE``, else the active language (autoescaped:
    safe to embed).  Here and in the kept fragments a drawing is made a ``SafeString`` directly: it is what
    ``mark_safe`` makes of a ``str``, without the wrapper that ``mark_safe`` goes through for lazy texts."""
    template = engines["jinja2"].env.get_template(name)  # type: ignore[attr-defined]
    if LANGUAGE in context:
        return SafeString(template.render(context))  # (autoescaped by Jinja2)
    return SafeString(template.render(context, **{LANGUAGE: get_language()}))


@lru_cache(maxsize=4096)
def translated(language: str | None, message: str) -> str:
    """Django's translation of ``message`` in ``language`` (None: none active, the text as written), looked up
    once per language and process (mark the text with ``gettext_noop`` where it is written)."""
    with override(language):
        return gettext(message)


@lru_cache(maxsize=4096)
def translated_plural(language: str | None, singular: str, plural: str, n: int) -> str:
    """``translated`` for ``ngettext``."""
    with override(language):
        return ngettext(singular, plural, n)


def language(context: Context) -> str | None:
    """The language the template is being drawn in: ``draw``'s, else (drawn some other way) the active one."""
    return context[LANGUAGE] if LANGUAGE in context else get_language()


@lru_cache(maxsize=4096)
def _translated_safe(language: str | None, message: str) -> Markup:
    """A text with no variables as a template shows it, autoescaped: its translation, taken as a format string
    (``%%`` is ``%``), as Jinja2's newstyle gettext does."""
    return Markup(translated(language, message)) % {}


@pass_context
def _gettext(context: Context, message: str, /, **variables: Any) -> str:
    """``_()`` and ``{% trans %}``: Jinja2's newstyle gettext (``jinja2.ext._make_new_gettext``) in one call
    instead of three, and a text with no variables translated and escaped once per language (a board draws
    several at every move)."""
    lang = language(context)
    if not context.eval_ctx.autoescape:
        return translated(lang, message) % variables
    if not variables:
        return _translated_safe(lang, message)
    return Markup(translated(lang, message)) % variables


@pass_context
def _ngettext(context: Context, singular: str, plural: str, n: int, /, **variables: Any) -> str:
    """``{% trans %}…{% pluralize %}``: Jinja2's newstyle ngettext in one call (``num`` is ``n`` unless given)."""
    variables.setdefault("num", n)
    text = translated_plural(language(context), singular, plural, n)
    return (Markup(text) if context.eval_ctx.autoescape else text) % variables


def url(name: str, *args: Any) -> str:
    return reverse(name, args=args)


@pass_context
def dtl(context: Context, name: str) -> str:
    """A part drawn by Django's templates, with the calling template's context."""
    return render_to_string(name, context.get_all())


def format_signed(value: int) -> str:
    """A number with its sign: +3, -2, +0."""
    return "%+d" % value


def environment(**options: Any) -> Environment:
    options["undefined"] = ChainableUndefined
    options.setdefault("extensions", []).append("jinja2.ext.i18n")
    env = Environment(**options)  # noqa: S701 (Django's backend sets autoescape=True)
    env.install_gettext_callables(_gettext, _ngettext, newstyle=True)  # type: ignore[attr-defined]
    # (installed, the extension wraps each in a call of its own; ``_`` looks ``gettext`` up at every call)
    env.globals.update(_=_gettext, gettext=_gettext, ngettext=_ngettext)
    env.globals.update(url=url, dtl=dtl)
    env.filters.update(fichas=fichas, format_signed=format_signed)
    return env


def messages_as_python() -> str:
    """The Jinja2 templates' translatable texts as Python gettext calls (``make messages``: Django's
    ``makemessages`` reads Django's templates and Python, not Jinja2)."""
    from pathlib import Path

    extractor = Environment(extensions=["jinja2.ext.i18n"])  # noqa: S701 (reads templates; draws nothing)
    root = Path(__file__).resolve().parent.parent / "jinja2"
    lines = ["# Generated by `make messages` from jinja2/ (pocha_site/jinja2.py); not kept.", "# ruff: noqa", ""]
    for path in sorted(root.rglob("*.html")):
        for lineno, function, message in extractor.extract_translations(path.read_text()):
            where = f"{path.relative_to(root.parent)}:{lineno}"
            if function in ("ngettext", "npgettext") and isinstance(message, tuple):
                lines.append(f"ngettext({message[0]!r}, {message[1]!r}, 1)  # {where}")
            elif isinstance(message, str):
                lines.append(f"gettext({message!r})  # {where}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(messages_as_python(), end="")
