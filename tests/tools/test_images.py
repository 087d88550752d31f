"""Images read for the model: checked, scaled to the vendors' limits, refused when damaged."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image

from tests.fakes.images import image_bytes, write_image
from tests.fakes.vendor_rules import image_problem
from tools.images import MAX_BYTES, MAX_SIDE, ImageError, image_from_bytes, read_image


def _decoded(data: str) -> Image.Image:
    picture = Image.open(io.BytesIO(base64.b64decode(data)))
    picture.load()
    return picture


def test_a_small_image_is_sent_as_it_is(tmp_path: Path) -> None:
    path = write_image(tmp_path / "shot.png", (120, 80))

    image = read_image(path, "shot.png")

    assert image.media_type == "image/png"
    assert (image.width, image.height) == (120, 80)
    assert base64.b64decode(image.data) == path.read_bytes()
    assert image.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert image_problem(image.media_type, image.data) is None


def test_a_large_image_is_scaled_to_the_long_side_limit_keeping_its_shape() -> None:
    image = image_from_bytes(image_bytes((4000, 2000), "JPEG"), "wide.jpg")

    picture = _decoded(image.data)
    assert picture.size == (MAX_SIDE, MAX_SIDE // 2) == (image.width, image.height)
    assert image.media_type == "image/jpeg"
    assert image_problem(image.media_type, image.data) is None


def test_an_image_over_five_megabytes_is_encoded_under_it() -> None:
    raw = image_bytes((1800, 1800), "PNG", noise=True)
    assert len(raw) > MAX_BYTES

    image = image_from_bytes(raw, "noise.png")

    assert len(base64.b64decode(image.data)) <= MAX_BYTES
    assert max(_decoded(image.data).size) <= MAX_SIDE
    assert image_problem(image.media_type, image.data) is None


def test_the_format_is_read_from_the_content_not_the_name(tmp_path: Path) -> None:
    path = write_image(tmp_path / "really-a-jpeg.png", kind="JPEG")

    assert read_image(path, "really-a-jpeg.png").media_type == "image/jpeg"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is text, not a picture", "not an image Pillow can read"),
        (image_bytes((400, 300), "PNG", noise=True)[:2_000], "a damaged image"),
        (image_bytes(kind="BMP"), "BMP images are not supported"),
    ],
    ids=["text", "truncated", "bmp"],
)
def test_a_corrupt_or_unsupported_file_is_refused_naming_it(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "broken.png"
    path.write_bytes(content)

    with pytest.raises(ImageError) as refused:
        read_image(path, "broken.png")

    assert refused.value.message.startswith("broken.png: ")
    assert said in refused.value.message


def test_an_animated_gif_over_the_limit_is_sent_as_its_first_frame() -> None:
    frames = [Image.new("RGB", (2000, 1000), colour) for colour in ("red", "blue")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])

    image = image_from_bytes(buffer.getvalue(), "anim.gif")

    assert image.media_type == "image/png"
    assert _decoded(image.data).convert("RGB").getpixel((0, 0)) == (255, 0, 0)
    assert image_problem(image.media_type, image.data) is None
