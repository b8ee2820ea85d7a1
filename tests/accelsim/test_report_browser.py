"""report.html in a real browser: loads cleanly, images decode, tables sort and filter, sections fold, plot points
name themselves on hover, and a report of hundreds of points stays responsive.

The browser is Debian's chromium (`apt-get install chromium`; .ci/run installs it) driven by
playwright (a test extra). The tests skip, saying which is missing, only when one of the two is
absent; once both are there, anything that goes wrong (a launch failure included) fails.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from accelsim.reports import figures as report_figures
from accelsim.reports import report
from accelsim.reports.report import write_report
from tests.accelsim.test_report import EXPERIMENT, MISSING, NAME, golden_records

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
LARGE = 300  # design points in the large report

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

pytestmark = [
    pytest.mark.slow,  # a real browser: seconds per page
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH; install it with "
                       "`apt-get install chromium` (.ci/run does) to run the browser tests"),
    pytest.mark.skipif(sync_playwright is None, reason="the playwright package is missing; "
                       "`pip install -e '.[test]'` installs it"),
]


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A loaded report page and everything it reported: console errors, uncaught exceptions, network requests."""

    def __init__(self, browser, path: Path):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def rows(self, table: str, column: int) -> list[str]:
        """The visible text of one column of a table's body rows, in page order."""
        return self.page.eval_on_selector(
            table, "(t, c) => Array.from(t.tBodies[0].rows).filter(r => !r.hidden)"
            ".map(r => r.cells[c].textContent.trim())", column)


@pytest.fixture(scope="module")
def golden_page(browser, tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    files = write_report(out, NAME, golden_records(), missing=MISSING, experiment=EXPERIMENT)
    page = Page(browser, files["html"])
    yield page, files, out
    page.page.close()


SUMMARY = "h2:text('Summary') >> xpath=ancestor::details//table"
# Past report.SUMMARY_MAX_ROWS points, every point is in a collapsed HTML-only table inside the summary.
EVERY_POINT = "h3:text('Every point') >> xpath=ancestor::details[1]//table"


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").rstrip("×"))
    except ValueError:
        return None


def test_the_page_loads_without_errors_or_network(golden_page):
    page, files, _ = golden_page
    assert page.errors == []
    assert page.requests == [files["html"].resolve().as_uri()]  # one self-contained file, nothing fetched
    assert page.page.title() == f"accelsim report: {NAME}"


def test_every_image_decodes(golden_page):
    page, files, _ = golden_page
    sizes = page.page.evaluate("""async () => {
        const images = Array.from(document.images);
        await Promise.all(images.map(i => i.decode()));
        return images.map(i => [i.naturalWidth, i.naturalHeight]);
    }""")
    assert len(sizes) == sum(1 for k in files if k.startswith("plots/"))
    assert all(w > 300 and h > 100 for w, h in sizes)


def test_summary_sorts_on_click_numbers_as_numbers_and_errors_last(golden_page):
    page, _, _ = golden_page
    latency = page.page.locator(SUMMARY).locator("th", has_text="Latency")
    column = page.page.eval_on_selector(SUMMARY, "t => Array.from(t.tHead.rows[0].cells)"
                                                 ".findIndex(c => c.textContent.startsWith('Latency'))")
    before = page.rows(SUMMARY, column)
    latency.click()
    up = page.rows(SUMMARY, column)
    numbers = [_number(t) for t in up if _number(t) is not None]
    assert numbers == sorted(numbers) and up != before and up[-1] == "error"
    assert latency.get_attribute("aria-sort") == "ascending"
    latency.click()
    down = page.rows(SUMMARY, column)
    assert [_number(t) for t in down[:-1]] == sorted(numbers, reverse=True) and down[-1] == "error"
    variant = page.page.locator(SUMMARY).locator("th", has_text="Variant")
    variant.click()
    assert page.rows(SUMMARY, 1) == sorted(page.rows(SUMMARY, 1))
    assert latency.get_attribute("aria-sort") is None


def test_the_filter_box_hides_rows_that_do_not_match(golden_page):
    page, _, _ = golden_page
    box = page.page.locator("h2:text('Summary') >> xpath=ancestor::details//input[@type='search']")
    box.fill("hexagon")
    assert page.rows(SUMMARY, 1) == ["hexagon_dsp"]
    box.fill("EDGETPU_USB")  # case-insensitive
    assert set(page.rows(SUMMARY, 1)) == {"edgetpu_usb"} and len(page.rows(SUMMARY, 1)) == 5
    box.fill("")
    assert len(page.rows(SUMMARY, 1)) == 7


def test_per_node_tables_start_folded_open_on_click_and_sort(golden_page):
    page, _, _ = golden_page
    section = page.page.locator("#interleaved_int8__hexagon_dsp >> xpath=ancestor::details[1]")
    folded = section.locator("details", has=page.page.locator("h4", has_text="Per node"))
    table = folded.locator("table")
    assert folded.get_attribute("open") is None and not table.is_visible()
    folded.locator("summary").click()
    assert table.is_visible()
    table.locator("th", has_text="Time (µs)").click()
    times = [float(t) for t in table.evaluate("t => Array.from(t.tBodies[0].rows).map(r => r.cells[4].textContent)")]
    assert times == sorted(times) and len(times) == 20
    whole = page.page.locator("h2:text('Design points in detail') >> xpath=ancestor::details[1]")
    whole.locator("summary").first.click()  # a whole section folds away
    assert not page.page.locator("#interleaved_int8__hexagon_dsp").is_visible()
    whole.locator("summary").first.click()


def test_sweep_plot_points_name_themselves_on_hover(golden_page):
    page, _, _ = golden_page
    spots = page.page.locator("h2:text('Sweeps') >> xpath=ancestor::details[1]").locator("span.spot")
    assert spots.count() == 4 + 2 + 3  # latency: 3 + 1 swept points, 2 not swept; speed-up: 3 swept points
    spot = spots.nth(0)
    label = spot.get_attribute("data-tip")
    spot.hover()
    shown = spot.evaluate("s => getComputedStyle(s, '::after').content")
    assert label.splitlines()[0] in shown and "µs" in shown
    box, image = spot.bounding_box(), spot.locator("xpath=../img").bounding_box()
    assert image["x"] <= box["x"] <= image["x"] + image["width"]
    assert image["y"] <= box["y"] <= image["y"] + image["height"]


def _large_records() -> list[dict]:
    """LARGE points of one model on one variant swept over bandwidth, plus the CPU-only baseline."""
    records = golden_records()
    cpu = next(r for r in records if r["variant"] == "cpu_only")
    usb = next(r for r in records if r["variant"] == "edgetpu_usb" and r["status"] == "ok"
               and r["model_name"] == "interleaved_int8")
    out = [cpu]
    for k in range(LARGE - 1):
        rec = copy.deepcopy(usb)
        rec["sweep"] = {"edgetpu_usb.link.bandwidth": f"{10 + 5 * k} MB/s"}
        rec["id"] = f"{k:016x}"
        rec["latency_us"] = round(usb["latency_us"] + 3000 / (10 + 5 * k), 4)
        rec["speedup"] = round(cpu["latency_us"] / rec["latency_us"], 3)
        out.append(rec)
    return out


def test_a_report_of_hundreds_of_points_stays_responsive(browser, tmp_path):
    files = write_report(tmp_path, "large", _large_records(), experiment=EXPERIMENT)
    page = Page(browser, files["html"])
    try:
        assert page.errors == []
        assert report.SUMMARY_MAX_ROWS < LARGE <= report.HTML_MAX_ROWS
        assert len(page.rows(EVERY_POINT, 0)) == LARGE
        # A sort moves each row once, into one DocumentFragment: mutations grow with the rows, not their square.
        result = page.page.evaluate("""() => {
            const table = document.querySelector("table.interactive");
            const heading = Array.from(table.tHead.rows[0].cells).find(c => c.textContent.startsWith("Latency"));
            const records = [];
            const observer = new MutationObserver(list => records.push(...list));
            observer.observe(table.tBodies[0], {childList: true});
            heading.click();
            records.push(...observer.takeRecords());
            observer.disconnect();
            const moved = records.reduce((n, r) => n + r.addedNodes.length, 0);
            return {records: records.length, moved: moved};
        }""")
        assert result["moved"] == LARGE and result["records"] <= LARGE + 2
        latencies = [_number(t) for t in page.rows(EVERY_POINT, 3)]
        assert latencies == sorted(latencies)
        spots = page.page.locator("span.spot").count()
        assert spots >= 2 * (LARGE - 1)  # every swept point in the latency and speed-up panels
        # A filter hides rows in place: no row is moved or rebuilt, and each row changes at most once.
        filtered = page.page.evaluate("""() => {
            const box = document.querySelector("input.filter");
            const body = document.querySelector("table.interactive").tBodies[0];
            const observer = new MutationObserver(() => {});
            observer.observe(body, {childList: true, attributes: true, subtree: true});
            box.value = "1490 MB/s";
            box.dispatchEvent(new Event("input"));
            const records = observer.takeRecords();
            observer.disconnect();
            return {shown: Array.from(body.rows).filter(r => !r.hidden).length,
                    moved: records.filter(r => r.type === "childList").length,
                    rows_changed: records.filter(r => r.type === "attributes" && r.target.tagName === "TR").length};
        }""")
        assert filtered["shown"] == 1 and filtered["moved"] == 0 and filtered["rows_changed"] <= LARGE
        intro = page.page.locator("p").first.text_content()
        assert f"over {LARGE - 1} values from 10 MB/s to {10 + 5 * (LARGE - 2)} MB/s;" in intro
        bars = "the 3 points shown in detail below; all 300 are in results.csv"
        assert report_figures.BREAKDOWN_MAX_BARS < LARGE and bars in page.page.content()
    finally:
        page.page.close()
