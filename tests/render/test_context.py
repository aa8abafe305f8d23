from __future__ import annotations

from checker.render.context import RenderContext


def test_links_quote_the_path_and_keep_the_line_anchor() -> None:
    assert RenderContext().link("inv/a b.yaml", 3) == "inv/a%20b.yaml#L3"
    assert RenderContext(link_base="../").link("inv/a.yaml", 9) == "../inv/a.yaml#L9"
