"""The dashboard screenshots' parts that need no browser (src/mpsched/testing/browser.py)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from mpsched.testing import browser


def test_the_first_width_keeps_the_name_the_others_carry_their_width(tmp_path):
    out = tmp_path / "dashboard-fabric.png"
    assert browser.WIDTHS == (1400, 1024)
    assert [browser.shot_path(out, w) for w in browser.WIDTHS] == [
        out, tmp_path / "dashboard-fabric-1024.png"]


class FakeDriver:
    """Saves a page of greys (antialiased text: far more than 256 shades) with a few pixels of
    green text, as the browser would."""

    def save_screenshot(self, path: str) -> None:
        image = Image.new("RGB", (400, 300))
        px = image.load()
        for x in range(400):
            for y in range(300):
                g = (x * 3 + y) % 256
                px[x, y] = (g, g, min(255, g + y % 7))
        for x in range(10, 14):
            px[x, 1] = (46, 125, 50)  # the dashboard's green of "up": median cut makes it grey
        image.save(path)


def test_screenshots_are_saved_with_256_colours_at_most_keeping_a_rare_colour(tmp_path):
    out: Path = tmp_path / "ui" / "shot.png"
    browser.save_small_png(FakeDriver(), out)
    with Image.open(out) as image:
        assert image.mode == "P"
        rgb = image.convert("RGB")
        assert len(set(rgb.getpixel((x, y)) for x in range(400) for y in range(300))) <= 256
        r, g, b = rgb.getpixel((11, 1))
        assert g > r + 40 and g > b + 40, (r, g, b)  # still green, not merged into grey
