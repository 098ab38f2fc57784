"""The HTML pages' templates and stylesheet, kept as files (not Python strings) and filled with string.Template.

Every value substituted here is already escaped HTML; the templates hold no script.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def _read(name: str) -> str:
    return (files(__package__) / name).read_text(encoding="utf-8")


def css() -> str:
    return _read("page.css")


def page(*, title: str, body: str) -> str:
    """A standalone page (the HTML report): the stylesheet inline, so a saved copy still renders."""
    import html

    return Template(_read("report.html")).substitute(title=html.escape(title), css=css(), body=body)


def status(**parts: str) -> str:
    """The status page; `parts` are escaped HTML fragments (see status.html for the names)."""
    return Template(_read("status.html")).substitute(css=css(), **parts)
