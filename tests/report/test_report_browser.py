"""report.html in a real headless browser: it renders, every figure loads, nothing is logged as an error, and
every table fits the page at 1280 px (no column behind a horizontal scroll)."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from support.browser import Chromium, find_chromium, tables_fit
from support.report_fixture import FIGURE_KEYS, built_report_fixture  # noqa: F401  (registers the built_report fixture)

WIDTH, HEIGHT = 1200, 900


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium is not installed (apt-get install chromium, or set MDAD_CHROMIUM); .ci/run installs it")
    return binary


def test_report_renders_with_every_figure_and_no_console_error(chromium, built_report, tmp_path):
    with Chromium(chromium, tmp_path / "profile") as browser:
        page = browser.check_page(built_report / "report.html", WIDTH, HEIGHT)
    assert page.errors == [], page.errors
    assert page.title.startswith("mdad report:")
    assert len(page.images) == len(FIGURE_KEYS)
    for img in page.images:
        assert img["complete"] and img["naturalWidth"] > 0 and img["naturalHeight"] > 0, img
    assert "In plain words" in page.text and "not reached" in page.text
    shot = Image.open(io.BytesIO(page.screenshot)).convert("RGB")
    assert shot.size == (WIDTH, HEIGHT)
    colors = shot.getcolors(WIDTH * HEIGHT)
    assert len(colors) > 20, "the screenshot is (nearly) blank"
    white = {rgb: count for count, rgb in colors}.get((255, 255, 255), 0)
    assert white < 0.98 * WIDTH * HEIGHT, "the screenshot is (nearly) blank"


def test_browser_check_catches_broken_images_and_script_errors(chromium, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><title>t</title></head><body><img alt="x" src="data:image/png;base64,AAAA">'
        "<script>console.error('boom'); undefinedFunction();</script></body></html>"
    )
    with Chromium(chromium, tmp_path / "profile") as browser:
        page = browser.check_page(bad)
    assert page.images[0]["naturalWidth"] == 0
    assert any("boom" in e for e in page.errors)
    assert any("undefinedFunction" in e for e in page.errors)


def test_every_table_fits_the_page_at_1280_pixels(chromium, built_report, tmp_path):
    assert tables_fit(chromium, built_report / "report.html", tmp_path / "profile") == []
