"""Real image files for tests, drawn with Pillow."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def image_bytes(
    size: tuple[int, int] = (64, 48), kind: str = "PNG", *, noise: bool = False
) -> bytes:
    """An encoded image: flat colour, or noise (which compresses badly, so it is large)."""
    if noise:
        picture = Image.effect_noise(size, 90).convert("RGB")
    else:
        picture = Image.new("RGB", size, (200, 40, 40))
    buffer = io.BytesIO()
    picture.save(buffer, kind)
    return buffer.getvalue()


def write_image(
    path: Path, size: tuple[int, int] = (64, 48), kind: str = "PNG", *, noise: bool = False
) -> Path:
    """``path`` holding an image of ``size`` in format ``kind``."""
    path.write_bytes(image_bytes(size, kind, noise=noise))
    return path
