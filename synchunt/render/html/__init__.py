"""The self-contained HTML pages (stall report, comparison, audit matrix), viewable offline in any browser."""

from synchunt.render.html.page import fill_shell, page_version, render_page

__all__ = ["fill_shell", "page_version", "render_page"]
