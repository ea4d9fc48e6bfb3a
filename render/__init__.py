"""Turn an item into a page image and a layout of boxes (question tokens, steps, answer area)."""

from render.page import PageImage, render_page

__all__ = ["PageImage", "render_page"]
