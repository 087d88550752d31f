"""Images for the model: read from a file or the clipboard, checked, fitted to the vendors'
limits, encoded as an `ImageBlock`.

PNG, JPEG, GIF and WebP are taken, recognised by their content, not their name. An image
whose long side is over `MAX_SIDE` pixels, or whose encoding is over `MAX_BYTES`, is scaled
down with Pillow (imported on first use: a session without images does not pay for it); a
GIF is sent as a PNG of its first frame then. Anything Pillow cannot read, or reads as
another format, is an `ImageError` naming the file, and nothing is sent.
"""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import TYPE_CHECKING

from providers.messages import ImageBlock, ImageType
from tools.base import ToolError
from tools.fileio import read_whole

if TYPE_CHECKING:
    from PIL.Image import Image

MAX_SIDE = 1568
"""Longest side sent, in pixels: Anthropic scales anything larger down itself, at a cost in
latency, and OpenAI's high-detail tiles stop at about the same size."""
MAX_BYTES = 5 * 1024 * 1024
"""Largest encoded image Anthropic accepts (5 MB); OpenAI takes more."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest image file read at all."""
MAX_PIXELS = 100_000_000
"""Larger images are refused before they are decoded (a decompression bomb)."""
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
_TYPES: dict[str, ImageType] = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}


class ImageError(ToolError):
    """An image that cannot be sent: the message names it and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="check the file, or send a PNG, JPEG, GIF or WebP")


def is_image_name(name: str | Path) -> bool:
    """Whether ``name`` ends like an image file we send as a picture."""
    return Path(name).suffix.lower() in IMAGE_SUFFIXES


def read_image(path: Path, shown: str) -> ImageBlock:
    """The image in ``path`` (``shown``: its name for the person and the model), read as
    `tools.fileio` reads every file: a regular file, not through a link, bounded.

    Raises:
        ToolError: it cannot be read (an `ImageError` when it is not an image of a supported
            format, or is damaged).
    """
    return image_from_bytes(read_whole(path, shown, MAX_FILE_BYTES), shown)


def image_from_bytes(data: bytes, name: str) -> ImageBlock:
    """``data`` (an encoded image) as an image block, scaled down to fit if needed.

    Raises:
        ImageError: ``data`` is not a complete image of a supported format.
    """
    from PIL import Image

    picture = _decoded(data, name)
    media_type = _TYPES.get(picture.format or "")
    if media_type is None:
        raise ImageError(
            f"{name}: {picture.format or 'this'} images are not supported; "
            "send a PNG, JPEG, GIF or WebP"
        )
    width, height = picture.size
    if max(width, height) > MAX_SIDE or len(data) > MAX_BYTES:
        data, media_type = _fitted(picture, media_type)
        with Image.open(io.BytesIO(data)) as fitted:
            width, height = fitted.size
    return ImageBlock(
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        name=name,
        width=width,
        height=height,
        data=base64.b64encode(data).decode("ascii"),
    )


def _decoded(data: bytes, name: str) -> Image:
    """The image in ``data``, fully decoded (a truncated file fails here, not at the vendor)."""
    from PIL import Image, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except UnidentifiedImageError:
        raise ImageError(f"{name}: not an image Pillow can read; nothing was sent") from None
    except Image.DecompressionBombError:
        raise ImageError(f"{name}: over {MAX_PIXELS:,} pixels, too large to send") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise ImageError(f"{name}: a damaged image ({error}); nothing was sent") from None
    return picture


def _fitted(picture: Image, media_type: ImageType) -> tuple[bytes, ImageType]:
    """``picture`` scaled to `MAX_SIDE` and encoded under `MAX_BYTES`: in its own format
    (a GIF as PNG), else as JPEG of falling quality and size."""
    picture = picture.copy()  # the first frame of an animation
    picture.thumbnail((MAX_SIDE, MAX_SIDE))
    if media_type in ("image/png", "image/gif", "image/webp"):
        kind: ImageType = "image/webp" if media_type == "image/webp" else "image/png"
        encoded = _encode(picture, kind, quality=90)
        if len(encoded) <= MAX_BYTES:
            return encoded, kind
    quality = 85
    while True:
        encoded = _encode(picture, "image/jpeg", quality=quality)
        if len(encoded) <= MAX_BYTES or max(picture.size) <= 64:
            return encoded, "image/jpeg"
        if quality > 50:
            quality -= 15
        else:
            picture.thumbnail((picture.width * 3 // 4, picture.height * 3 // 4))


def _encode(picture: Image, media_type: ImageType, *, quality: int) -> bytes:
    buffer = io.BytesIO()
    if media_type == "image/jpeg":
        picture.convert("RGB").save(buffer, "JPEG", quality=quality, optimize=True)
    elif media_type == "image/webp":
        picture.save(buffer, "WEBP", quality=quality)
    else:
        if picture.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
            picture = picture.convert("RGBA")
        picture.save(buffer, "PNG")
    return buffer.getvalue()
