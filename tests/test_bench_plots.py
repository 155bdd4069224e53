"""Benchmark plots are drawn once per language of the docs, Chinese text in a font that has it."""

from __future__ import annotations

import warnings

import pytest

from harness.bench import CJK_FONT, plot_path, pyplot, save_plots


def cjk_font_missing() -> bool:
    from matplotlib import font_manager

    try:
        font_manager.findfont(CJK_FONT, fallback_to_default=False)
    except ValueError:
        return True
    return False


def test_each_language_gets_its_own_file(tmp_path):
    if cjk_font_missing():
        pytest.skip(f"no {CJK_FONT} font (apt-get install fonts-noto-cjk)")
    said = []

    def draw(say):
        said.append(say("wall time (s)", "實際耗時（秒）"))
        fig, ax = pyplot().subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_ylabel(said[-1])
        return fig

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when a glyph is missing from its fonts
        save_plots(tmp_path / "speed.png", draw)
    assert said == ["wall time (s)", "實際耗時（秒）"]
    assert plot_path(tmp_path / "speed.png", "zh-TW").name == "speed.zh-TW.png"
    for name in ("speed.png", "speed.zh-TW.png"):
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")
