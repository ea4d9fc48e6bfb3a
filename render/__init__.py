"""Turn an item into a page image and a layout of boxes (question tokens, steps, figure primitives, answer area)."""

from render.handwriting import Writer, sample_writer, write
from render.page import PageImage, compose_page, render_page, sample_hand

__all__ = ["PageImage", "Writer", "compose_page", "render_page", "sample_hand", "sample_writer", "write"]
