"""Figures in the docs' prose come from the benchmark tables (docs/benchmarks/<kata>.md).

Each claim below reads the table a page cites, formats the figure the way the page prints it, and
expects that text on the English and the Chinese page: a new benchmark run that moves a figure
fails here until the prose says the new one. The goals on the Benchmarks page are checked the same
way: a goal the table misses says "not met" (未達成) with the figures, and a goal it meets does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TABLES = DOCS / "benchmarks"


@dataclass
class Table:
    """A benchmark file's first table, rows as {header: cell}, and the lines after it."""

    rows: list[dict[str, str]]
    notes: str

    def where(self, **match: str) -> list[dict[str, str]]:
        """The rows whose cells start with the given texts (keys are headers, `_` for spaces)."""
        return [row for row in self.rows
                if all(row[key.replace("_", " ")].startswith(text) for key, text in match.items())]

    def one(self, **match: str) -> dict[str, str]:
        (row,) = self.where(**match)
        return row


def table(kata: str) -> Table:
    lines = (TABLES / f"{kata}.md").read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines if line.startswith("|")]
    head = _cells(rows[0])
    body = [dict(zip(head, _cells(row), strict=True)) for row in rows[2:]]
    return Table(body, "\n".join(line for line in lines if not line.startswith(("|", "#"))))


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def num(cell: str, nth: int = 0) -> float:
    """The cell's nth number: "1,386 of 19,383" → 1386.0, "3.35 ms (2.80x the previous)" → 3.35."""
    return float(re.findall(r"-?\d[\d,]*\.?\d*", cell)[nth].replace(",", ""))


def page(name: str, lang: str) -> str:
    path = DOCS / (f"{name}.md" if lang == "en" else f"{name}.zh-TW.md")
    return _squash(path.read_text(encoding="utf-8"))


def _squash(text: str) -> str:
    """Whitespace out, so a figure wrapped across lines still reads as one."""
    return re.sub(r"\s+", "", text)


@dataclass
class Claim:
    page: str
    what: str
    says: Callable[[], dict[str, list[str]]]  # language → the texts the page must hold


def _padded_speedups():
    t = table("padded_attention")
    ratios = [num(r["ratio"]) for r in t.where(figure="varlen attention")]
    return {"en": [f"runs {min(ratios):.1f} to {max(ratios):.1f} times faster than padded"],
            "zh-TW": [f"快 {min(ratios):.1f} 到 {max(ratios):.1f} 倍"]}


def _padded_growth():
    t = table("padded_attention")
    growth = [float(g) for r in t.where(figure="varlen attention")
              for g in re.findall(r"([\d.]+)x the previous", r["measured"] + r["baseline"])]
    lo, hi = min(growth), max(growth)
    return {"en": [f"grow {lo:.1f} to {hi:.1f} times per doubling"],
            "zh-TW": [f"原來的 {lo:.1f} 到 {hi:.1f} 倍"]}


def _padded_waste():
    t = table("padded_attention")
    one = num(t.one(setting="10,000 log-normal lengths, 1 bucket")["measured"])
    equal = num(t.one(setting="10,000 log-normal lengths, 1 bucket")["baseline"])
    best = num(t.one(setting="10,000 log-normal lengths, 8 optimal")["measured"])
    return {"en": [f"one bucket pads {one:.0f} %", f"8 equal-width buckets {equal:.0f} %",
                   f"optimal edges {best:.0f} %"],
            "zh-TW": [f"所有 token 的 {one:.0f} % 是 padding", f"8 個等寬的桶是 {equal:.0f} %",
                      f"8 個最佳 edge 的桶是 {best:.0f} %"]}


def _padded_loop():
    t = table("padded_attention")
    ratio = {r["setting"].split(", ")[1].split(" ")[1]: num(r["ratio"])
             for r in t.where(figure="padded attention", setting="B = 256")}
    assert ratio["1-8"] > 1 and ratio["1-16"] > 1 and ratio["1-32"] < 1, ratio
    loop = int(1 / ratio["1-128"])
    return {"en": [f"at 1-128 it is more than {loop} times faster"],
            "zh-TW": [f"1-128 時迴圈快了 {loop} 倍以上"]}


def _paged_waste():
    row = table("paged_kv_cache").one(figure="KV memory wasted")
    paged, contiguous = num(row["paged / cached"]), num(row["baseline"])
    return {"en": [f"measures {contiguous:.0f} % of reserved KV memory never written",
                   f"against {paged:.1f} % with blocks of 16"],
            "zh-TW": [f"有 {contiguous:.0f} % 從未寫入", f"只浪費 {paged:.1f} %"]}


def _autoscaler_hour():
    t = table("queue_autoscaler")
    base = t.one(policy="HPA")
    ours = t.one(policy="queue autoscaler")
    fixed = t.one(policy="fixed fleet")
    figures = [f"{num(base['SLO violations (> 2 s)'], 1):,.0f}",
               f"{num(ours['SLO violations (> 2 s)']):,.0f}",
               f"{num(base['SLO violations (> 2 s)']):,.0f}",
               f"{num(ours['violations / baseline']):.2f}",
               f"{num(ours['replica-seconds / baseline']):.2f}",
               f"{num(fixed['peak replicas']):.0f}",
               f"{num(fixed['replica-seconds / baseline']):.2f}"]
    per_call = [num(cell) for cell in re.findall(r": ([\d.]+)", t.notes)]
    assert max(per_call) < 2.5 and min(per_call) > 1.5, per_call  # "about 2 µs"
    return {"en": figures + ["about 2 µs"], "zh-TW": figures + ["大約是 2 µs"]}


def _slo_figures():
    t = table("slo_batcher")

    def row(load, policy):
        r = t.one(load=load, policy=policy)
        violations = num(r["violations %"])
        return [f"{violations:.1f} %" if violations >= 1 else f"{violations:.2f} %",
                f"{num(r['p50 ms']):.1f} ms",
                f"{num(r['p99 ms']):.1f} ms", f"{num(r['worker busy %']):.0f} %"]

    figures = (row("30%", "fixed max_wait 40") + row("30%", "deadline, OnlineCost")
               + row("90%", "fixed max_wait 1 ms") + row("90%", "deadline, OnlineCost"))
    shrunk = t.one(load="90%", policy="reference")
    figures += [f"{num(shrunk['violations %']):.1f} %", f"{num(shrunk['p50 ms']) / 1000:.0f} s",
                f"{num(shrunk['p99 ms']) / 1000:.0f} s"]
    untuned = [num(t.one(load=load, policy=f"deadline, {cost}")["violations %"])
               for load in ("30%", "60%") for cost in ("LinearCost", "OnlineCost")]
    assert max(untuned) < 0.1, untuned  # "under 0.1 % at 30 and 60 % load"
    at_90 = {r["policy"]: num(r["violations %"]) for r in t.where(load="90%")}
    assert min(at_90, key=at_90.get) == "deadline, OnlineCost", at_90  # "the fewest violations"
    at_once = [num(t.one(load=load, policy="fixed max_wait 1 ms")["p50 ms"])
               for load in ("30%", "60%")]
    span = f"{min(at_once):.0f} to {max(at_once):.0f} ms"
    return {"en": figures + [f"sending at once gives {span}"],
            "zh-TW": figures + [f"立刻送出只要 {span.replace(' to ', ' 到 ')}"]}


def _compatible_figures():
    t = table("compatible_batcher")
    light = t.where(scenario="multiplexing, light")
    heavy = t.where(scenario="multiplexing, heavy")
    buckets = t.where(scenario="buckets")
    def swaps(row, digits=None):  # a row of the page's table: swaps, then the p99 wait in s
        cells = f"| {num(row['swaps / 1k req']):.0f} |"
        wait = num(row["p99 wait ms"]) / 1000
        return cells if digits is None else f"{cells} {wait:.{digits}f} s |"

    figures = [swaps(light[0], 1), swaps(light[2], 2), swaps(heavy[0]), swaps(heavy[1]),
               swaps(heavy[2], 1)]
    figures += [f"{num(r['padding / real tokens']):.0f} %" for r in buckets]
    keyed, per_row = t.where(scenario="sampling")
    fewer = num(keyed["batches / 1k req"]) / num(per_row["batches / 1k req"])
    return {"en": figures + [f"forms {fewer:.1f} times fewer"],
            "zh-TW": figures + [f"少 {fewer:.1f} 倍"]}


def _speculative_figures():
    t = table("speculative_sampling")
    rows = t.where(figure="batch_sample")
    small = [num(r["ratio"]) for r in rows if "V = 1,000" in r["setting"]]
    large = [num(r["ratio"]) for r in rows if "V = 32,000" in r["setting"]]
    calls = t.where(figure="tokens per verify call")
    assert max(abs(num(r["ratio"]) - 1) for r in calls) <= 0.005  # "within half a percent"
    k4 = t.one(figure="tokens per verify call", setting="σ = 0.5 (α = 0.779), k = 4")
    k8 = t.one(figure="tokens per verify call", setting="σ = 2 (α = 0.247), k = 8")
    speedup = {r["setting"]: num(r["ratio"], 1) for r in (k4, k8)}
    common = [f"{num(k4['measured']):.1f}", f"{speedup[k4['setting']]:.1f}",
              f"{speedup[k8['setting']]:.2f}"]
    return {"en": [f"by {min(small):.1f} to {max(small):.1f} times",
                   f"by {min(large):.2f} to {max(large):.2f} times"] + common,
            "zh-TW": [f"快 {min(small):.1f} 到 {max(small):.1f} 倍",
                      f"快 {min(large):.2f} 到 {max(large):.2f} 倍"] + common}


def _tenant_figures():
    t = table("tenant_fair_queue")
    fifo = t.one(policy="FIFO")
    fair = [r for r in t.rows if r is not fifo]
    waits = [num(r["light mean wait (steps)"]) for r in fair]
    assert max(num(r["light mean / FIFO"]) for r in fair) < 0.01  # "less than 1 % of FIFO's"
    vtc, drr = t.one(policy="VTC"), t.one(policy="DRR")
    few, many = num(vtc["pop µs at 10 tenants"]), num(vtc["pop µs at 10,000 tenants"])
    assert many > 1000 and max(num(drr["pop µs at 10 tenants"]),
                               num(drr["pop µs at 10,000 tenants"])) < 1
    shares = [r["generated-token shares A, B, C (weights .25, .25, .50)"] for r in t.rows]
    return {"en": [f"waits {num(fifo['light mean wait (steps)']):.0f} steps on average",
                   f"it waits about {round(sum(waits) / len(waits))}",
                   f"about {round(few)} µs at 10 tenants and over a millisecond at 10,000"]
            + [f"| {share} |" for share in shares],
            "zh-TW": [f"平均等 {num(fifo['light mean wait (steps)']):.0f} 步",
                      f"大約等 {round(sum(waits) / len(waits))} 步",
                      f"一次 pop 約 {round(few)} µs，10,000 個時超過 1 毫秒"]
            + [f"| {share.replace(', ', '、')} |" for share in shares]}


def _kv_cache_goal():
    ups = [num(r["speed-up"]) for r in table("kv_cache_debug").where(comparison="generate")]
    said = f"{min(ups):.0f}–{max(ups):.0f}"
    return {"en": [f"{said}× faster from 32 to 512 new tokens"],
            "zh-TW": [f"從 32 到 512 個時快 {said} 倍"]}


CLAIMS = [
    Claim("katas/padded_attention", "varlen against padded", _padded_speedups),
    Claim("katas/padded_attention", "growth per doubling of T", _padded_growth),
    Claim("katas/padded_attention", "padding waste of the buckets", _padded_waste),
    Claim("katas/padded_attention", "where the loop overtakes padding", _padded_loop),
    Claim("katas/paged_kv_cache", "contiguous against paged waste", _paged_waste),
    Claim("katas/queue_autoscaler", "the benchmark's hour", _autoscaler_hour),
    Claim("katas/slo_batcher", "what the benchmark shows", _slo_figures),
    Claim("katas/compatible_batcher", "what the benchmark shows", _compatible_figures),
    Claim("katas/speculative_sampling", "batch, loop, tokens per call", _speculative_figures),
    Claim("katas/tenant_fair_queue", "what the benchmark shows", _tenant_figures),
    Claim("benchmarks", "kv_cache_debug's goal", _kv_cache_goal),
]


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.page}: {c.what}")
def test_a_figure_in_prose_is_the_tables(claim, lang):
    text = page(claim.page, lang)
    missing = [said for said in claim.says()[lang] if _squash(said) not in text]
    assert not missing, f"docs/{claim.page} ({lang}) should say, from the table: {missing}"


# --- goals on the Benchmarks page -----------------------------------------------------------------

def _extra_trees():
    ratios = [num(r["ratio (goal <= 2)"]) for r in table("extra_trees_debug").rows]
    return all(r <= 2 for r in ratios), [f"{r:.2f}×" for r in ratios if r > 2]


def _paged_flat():
    rows = [r for r in table("paged_kv_cache").rows if "blocks vs 10^3" in r["setting"]]
    grown = [(r["figure"].split(" ")[0], num(r["ratio"])) for r in rows if num(r["ratio"]) > 1.5]
    return not grown, [text for name, ratio in grown for text in (f"`{name}`", f"{ratio:.2f}×")]


def _compatible_fewer():
    rows = table("compatible_batcher").where(scenario="multiplexing")
    notes = [(r["setting"], r["note"]) for r in rows if "fewer swaps" in r["note"]]
    missed = [setting for setting, note in notes
              if float(re.search(r"([\d.]+)x fewer swaps", note).group(1)) <= 1.0
              or float(re.search(r"p99 wait ([\d.]+)x lower", note).group(1)) <= 1.0]
    return not missed, [re.search(r"starvation_ms=\d+", s).group() for s in missed]


def _met(kata: str, check: Callable[[dict[str, str]], bool], column: str):
    return lambda: (all(check(r) for r in table(kata).rows if r.get(column)), [])


AUC, ROLLING = "ratio (goal <= 0.6)", "ratio (goal <= 1.0)"
GOALS = {
    "extra_trees_debug": _extra_trees,
    "paged_kv_cache": _paged_flat,
    "compatible_batcher": _compatible_fewer,
    "auc_roc": _met("auc_roc", lambda r: num(r[AUC]) <= 0.6, AUC),
    "rolling_feature_leakage": _met("rolling_feature_leakage", lambda r: num(r[ROLLING]) <= 1.0,
                                    ROLLING),
    "queue_autoscaler": _met("queue_autoscaler", lambda r: "fixed" in r["policy"] or (
        num(r["violations / baseline"]) <= 1 and num(r["replica-seconds / baseline"]) <= 1),
        "policy"),
}


@pytest.mark.parametrize("lang, missed", [("en", "**not met**"), ("zh-TW", "**未達成**")])
@pytest.mark.parametrize("kata", GOALS)
def test_a_goal_the_table_misses_says_so_where_it_is_stated(kata, lang, missed):
    met, figures = GOALS[kata]()
    name = "benchmarks.md" if lang == "en" else "benchmarks.zh-TW.md"
    source = (DOCS / name).read_text(encoding="utf-8")
    (row,) = [line for line in source.splitlines() if line.startswith(f"| [`{kata}`]")]
    if met:
        assert missed not in row, f"{kata}'s goal is met by its table; the page says {missed}"
    else:
        assert missed in row and all(f in row for f in figures), \
            f"{kata}'s table misses its goal: the page should say {missed} and {figures}"
