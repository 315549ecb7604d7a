"""Browser check of the audit reports: load each in headless Chromium at desktop and phone width.

    python scripts/check_reports.py                      # build the reports, check, screenshot
    python scripts/check_reports.py --report out/ --report mc=path/to/multiclass-report/
    python scripts/check_reports.py --quick --no-screenshots

What it asserts, per report and width (default 1280 and 400 CSS pixels):

- no console errors and no uncaught page errors;
- no request leaves the page: every URL the page asks for is a ``data:`` URL
  (the report is one self-contained file; anything else is recorded and
  blocked);
- no horizontal overflow of the page (``scrollWidth <= innerWidth``): wide
  tables must scroll inside their own card;
- every figure is drawn at a legible scale: text of the figure's smallest
  size (7 pt) is at least ``--min-text-px`` CSS pixels on screen, from the
  figure's PNG resolution and its displayed width.

Screenshots of the top of every page go to ``docs/img/`` (``--shots``).

Reports built by default (with ``--quick``, smaller samplers): the binary
audit of the embedded SNLI example with Bayesian channels and with point
channels, the multiclass audit of the CIFAR-10H 10-class example (both views) and the
ambiguity audit of the shipped ChaosNLI example. Any other saved report
folder is checked when given with ``--report``.

Requirements: ``pip install playwright`` (the Python package only: its own
browser download is not used) and a Chromium binary, on Debian
``apt-get install -y chromium`` (``/usr/bin/chromium``; ``--chromium PATH``
for another).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
    "--mute-audio",
]
#: Smallest text size used in report figures (tick labels), in points.
FIGURE_MIN_PT = 7.0

# Layout facts measured in the page (no page script of the report is involved: it has none).
MEASURE = """() => {
  const figs = [...document.querySelectorAll('figure img')].map(img => ({
    alt: img.alt.slice(0, 60),
    natural: img.naturalWidth,
    shown: img.getBoundingClientRect().width,
    narrow: img.currentSrc !== img.src,
    dpi: Number((img.currentSrc !== img.src ? img.dataset.narrowDpi : img.dataset.dpi) || 100),
  }));
  const tables = [...document.querySelectorAll('table')].map(t => {
    const box = t.parentElement;
    return {wide: t.scrollWidth, box: box.clientWidth,
            scrolls: getComputedStyle(box).overflowX === 'auto'};
  });
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
          figures: figs, tables: tables};
}"""


def build_reports(folder: Path, quick: bool) -> dict[str, Path]:
    """Binary (Bayesian and point channels), multiclass (both views) and ambiguity reports of
    the shipped examples."""
    import bayescal
    from bayescal.ambiguity import load_ambiguity_example
    from bayescal.report import audit_ambiguity
    from bayescal.report.audit import audit_multiclass

    data = bayescal.load_example("snli-entailment")
    draws = 300 if quick else 1000
    out = {}
    reports = {
        "binary-bayes": lambda: bayescal.audit(
            data, draws=draws, tune=draws, random_state=0, command="scripts/check_reports.py"
        ),
        "binary-point": lambda: bayescal.audit(
            data, channels="score-bin-em", random_state=0, command="scripts/check_reports.py"
        ),
        "multiclass": lambda: audit_multiclass(
            bayescal.load_example("cifar10h-10class"),
            draws=draws,
            tune=draws,
            view="both",
            random_state=0,
            command="scripts/check_reports.py",
        ),
        "ambiguity": lambda: audit_ambiguity(
            load_ambiguity_example("chaosnli-snli"),
            random_state=0,
            n_draws=20 if quick else 100,
            n_boot=50 if quick else 200,
            command="scripts/check_reports.py",
        ),
    }
    for name, make in reports.items():
        print(f"building {name} ...", flush=True)
        make().save(folder / name)
        out[name] = folder / name / "report.html"
    return out


def check_page(browser, name: str, path: Path, width: int, shots: Path | None, min_px: float):
    """Load ``path`` at ``width``; return a list of problems (empty when the page passes)."""
    problems: list[str] = []
    page = browser.new_page(viewport={"width": width, "height": 900})
    external: list[str] = []

    def route(r):
        url = r.request.url
        if url.startswith("data:") or url == path.resolve().as_uri():
            r.continue_()
        else:
            external.append(url)
            r.abort()

    page.route("**/*", route)
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(path.resolve().as_uri(), wait_until="load")
    facts = page.evaluate(MEASURE)
    if external:
        problems.append(f"external requests: {external[:5]}")
    if facts["scrollWidth"] > facts["innerWidth"]:
        problems.append(
            f"page overflows horizontally: {facts['scrollWidth']} px wide in a "
            f"{facts['innerWidth']} px window"
        )
    for t in facts["tables"]:
        if t["wide"] > t["box"] and not t["scrolls"]:
            problems.append(f"a table {t['wide']} px wide sticks out of its {t['box']} px card")
    smallest = None
    for f in facts["figures"]:
        if not f["natural"]:
            problems.append(f"figure '{f['alt']}' did not decode")
            continue
        # CSS px of 7 pt text: 7/72 inch x (natural px per inch) x (shown / natural).
        px = FIGURE_MIN_PT / 72 * f["dpi"] * f["shown"] / f["natural"]
        smallest = px if smallest is None else min(smallest, px)
        if px < min_px:
            problems.append(
                f"figure '{f['alt']}' text too small at {width} px: {FIGURE_MIN_PT:g} pt shows "
                f"as {px:.1f} CSS px ({'phone' if f['narrow'] else 'desktop'} layout, "
                f"{f['natural']} px drawn at {f['dpi']} dpi, shown {f['shown']:.0f} px wide)"
            )
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        target = shots / f"report-{name}-{width}.png"
        page.screenshot(path=str(target), clip={"x": 0, "y": 0, "width": width, "height": 1400})
    page.close()
    status = "ok" if not problems else "FAILED"
    print(
        f"{name:14s} {width:5d} px  {status}  page {facts['scrollWidth']} px wide, "
        f"{len(facts['tables'])} tables, {len(facts['figures'])} figures, smallest figure "
        f"text {smallest if smallest is None else round(smallest, 1)} px"
    )
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--report",
        action="append",
        default=[],
        metavar="[NAME=]DIR",
        help="an existing report folder to check as well (repeatable)",
    )
    parser.add_argument("--no-build", action="store_true", help="check only --report folders")
    parser.add_argument("--quick", action="store_true", help="smaller samplers when building")
    parser.add_argument("--widths", type=int, nargs="+", default=[1280, 400])
    parser.add_argument(
        "--shots", type=Path, default=ROOT / "docs" / "img", help="screenshot folder"
    )
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--min-text-px",
        type=float,
        default=7.0,
        help="smallest acceptable on-screen size of 7 pt figure text (CSS px, default 7)",
    )
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bayescal-reports-") as tmp:
        reports = {} if args.no_build else build_reports(Path(tmp), args.quick)
        for spec in args.report:
            name, _, folder = spec.rpartition("=")
            folder = Path(folder)
            reports[name or folder.name] = folder / "report.html"
        missing = [str(p) for p in reports.values() if not p.is_file()]
        if missing or not reports:
            print(f"no report to check: {missing or 'none given'}", file=sys.stderr)
            return 2
        failures = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS
            )
            for name, path in reports.items():
                for width in args.widths:
                    shots = None if args.no_screenshots else args.shots
                    for problem in check_page(browser, name, path, width, shots, args.min_text_px):
                        failures.append(f"{name} at {width} px: {problem}")
            browser.close()
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{len(reports) * len(args.widths)} page loads, {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
