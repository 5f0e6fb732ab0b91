"""The layout checks the browser tests run in a page: nothing drawn over anything else, nothing wider than
the screen, and every card of a fanned hand showing its whole index.

``OVERLAPS`` is one function run in the page.  It collects the visible controls, headings, tables, seat
badges, played cards and the table's panels (what ``KINDS`` selects), takes each one's box as it shows
(cut to any ancestor that clips it), and compares every pair.  Two boxes that share more than ``TOLERANCE``
px both ways are reported, with a description of each, except:

* an element and its own ancestors or descendants (a seat and the mute button on it);
* two cards of the fanned hand (they overlap on purpose: ``index_problems`` checks what they leave in view);
* a panel the player opened on purpose (``overlays``, such as «Última baza» or «Frases») over what is on
  the felt under it; such a panel must still not cover anything outside the felt.

Each visible box must also lie inside the viewport across, and the page must not be wider than the
viewport (``document.scrollingElement.scrollWidth``).
"""

from __future__ import annotations

from typing import Any

TOLERANCE = 1.0  # px: sub-pixel rounding where two boxes merely touch

#: (kind, selector): what may not overlap.  Hidden elements (display, visibility, opacity, the
#: visually-hidden class, a zero-sized box) are left out by the check itself.
KINDS: list[tuple[str, str]] = [
    ("control", "button, a[href], input:not([type=hidden]), select, textarea, summary, [role=button]"),
    ("heading", "h1, h2, h3, h4, h5, h6"),
    ("table", "table"),
    ("seat", "#felt li.seat"),
    ("played card", "#felt .trick .played"),
    (
        "panel",
        "#round-result, #last-trick, #talk-panel, .share, ol.ranking, .rematch, #flash, #connection,"
        " .bid-buttons, .trump-buttons, .final-links, .replay-now, .trick-area",
    ),
]

FANNED = "#hand button.card"

OVERLAPS = """
(options) => {
  const kinds = options.kinds, fanned = options.fanned, tolerance = options.tolerance;
  const overlays = options.overlays || [];
  const vw = document.documentElement.clientWidth;
  const text = (el) => {
    const said = el.getAttribute('aria-label') || el.innerText || el.textContent || '';
    return said.replace(/\\s+/g, ' ').trim().slice(0, 40);
  };
  const describe = (item) => {
    const el = item.el, r = item.rect;
    let name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
    for (const c of Array.from(el.classList).slice(0, 3)) name += '.' + c;
    return `${item.kind} <${name}> "${text(el)}" at ${Math.round(r.left)},${Math.round(r.top)}`
      + ` ${Math.round(r.width)}x${Math.round(r.height)}`;
  };
  const shown = (el) => {
    if (el.closest('.visually-hidden, [hidden]')) return false;
    if (el.checkVisibility && !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
    const style = getComputedStyle(el);
    return style.visibility === 'visible' && style.display !== 'none';
  };
  // The element's box as it shows: cut to every ancestor that clips its overflow (a scrolling table).
  const box = (el) => {
    const r = el.getBoundingClientRect();
    let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = a.getBoundingClientRect();
        if (s.overflowX !== 'visible') { left = Math.max(left, c.left); right = Math.min(right, c.right); }
        if (s.overflowY !== 'visible') { top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom); }
      }
    }
    return {left, top, right, bottom, width: right - left, height: bottom - top};
  };
  const items = [], seen = new Set(), counts = {};
  for (const [kind, selector] of kinds) {
    counts[kind] = counts[kind] || 0;
    for (const el of document.querySelectorAll(selector)) {
      if (seen.has(el) || !shown(el)) continue;
      const rect = box(el);
      if (rect.width < 2 || rect.height < 2) continue;
      seen.add(el);
      counts[kind] += 1;
      items.push({el, kind, rect});
    }
  }
  const overlay = (el) => overlays.some((s) => el.closest(s));  // the panel, or anything in it
  const problems = [];
  for (let i = 0; i < items.length; i++) {
    const a = items[i];
    if (a.rect.left < -tolerance || a.rect.right > vw + tolerance) {
      problems.push(`${describe(a)} is outside the ${vw} px wide viewport`);
    }
    for (let j = i + 1; j < items.length; j++) {
      const b = items[j];
      if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
      if (a.el.matches(fanned) && b.el.matches(fanned)) continue;
      const w = Math.min(a.rect.right, b.rect.right) - Math.max(a.rect.left, b.rect.left);
      const h = Math.min(a.rect.bottom, b.rect.bottom) - Math.max(a.rect.top, b.rect.top);
      if (w <= tolerance || h <= tolerance) continue;
      if ((overlay(a.el) && b.el.closest('#felt')) || (overlay(b.el) && a.el.closest('#felt'))) continue;
      problems.push(`${describe(a)} overlaps ${describe(b)} by ${Math.round(w)}x${Math.round(h)} px`);
    }
  }
  // What sticks out on the right, for the message when the page is too wide: the outermost such elements.
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (wide.length >= 5 || !shown(el) || wide.some((w) => w.contains(el))) continue;
    const rect = box(el);
    // its box, or what overflows it (a long word in a heading): el.scrollWidth past its left edge
    const overflows = getComputedStyle(el).overflowX === 'visible' ? el.scrollWidth - el.clientWidth : 0;
    if ((rect.right > options.width + tolerance || (overflows > 1 && rect.left + el.scrollWidth > options.width + tolerance))
        && rect.width > 0) wide.push(el);
  }
  // Nothing in view past the edge: then what is positioned out of the flow past it, shown or not (a visually
  // hidden name that escapes the scrolling box around it widens the page all the same).
  if (!wide.length) {
    for (const el of document.body.querySelectorAll('*')) {
      if (wide.length >= 5 || !['absolute', 'fixed'].includes(getComputedStyle(el).position)) continue;
      const r = el.getBoundingClientRect();
      if (r.right > options.width + tolerance && r.width > 0) wide.push(el);
    }
  }
  const scroller = document.scrollingElement;
  return {problems, counts, scrollWidth: scroller.scrollWidth, innerWidth: window.innerWidth, clientWidth: vw,
          wide: wide.map((el) => describe({el, kind: 'element', rect: box(el)}))};
}
"""


# Two animation frames: the page has been laid out and drawn since its last change, so that the width a
# phone shows it at (its page scale, which follows the content's width) is the current page's, not the one
# of a moment before (a wider page just left, a DOM just changed).
SETTLED = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def layout_report(page: Any, overlays: tuple[str, ...] = ()) -> dict[str, Any]:
    """What ``OVERLAPS`` finds on the page as it is now, with the page's width added to its problems."""
    width = page.viewport_size["width"]
    page.evaluate(SETTLED)
    report: dict[str, Any] = page.evaluate(
        OVERLAPS,
        {"kinds": KINDS, "fanned": FANNED, "tolerance": TOLERANCE, "overlays": list(overlays), "width": width},
    )
    add_width_problem(report, width)
    return report


def add_width_problem(report: dict[str, Any], width: int) -> None:
    """The page wider than the viewport.  A phone (Playwright's is_mobile) widens its layout viewport to a
    page wider than the screen, so innerWidth grows with it: the screen's width counts too."""
    wide = max(report["scrollWidth"], report["innerWidth"])
    if wide > min(report["innerWidth"], width):
        report["problems"].append(
            f"the page is {wide} px wide in a {width} px wide viewport (scrollWidth {report['scrollWidth']},"
            f" innerWidth {report['innerWidth']}); past its edge: {report['wide']}"
        )


def check_layout(page: Any, where: str, overlays: tuple[str, ...] = (), **at_least: int) -> dict[str, int]:
    """Fail with every overlap and overflow on the page; ``at_least``: how many elements of a kind must
    have been compared (``seat=4, played_card=4``), so that a check of a screen that is not there fails."""
    report = layout_report(page, overlays)
    assert not report["problems"], f"{where}:\n  " + "\n  ".join(report["problems"])
    counts: dict[str, int] = report["counts"]
    for kind, n in at_least.items():
        shown = counts.get(kind.replace("_", " "), 0)
        assert shown >= n, f"{where}: {shown} {kind.replace('_', ' ')}(s) compared, expected at least {n}: {counts}"
    return counts


# The index of each card of the hand (the number, a ::before of the face, and the suit mark, the face's
# <use class="ix">) against the cards drawn over it: the part of the card left in view must hold it all.
INDEX = """
() => {
  const cards = Array.from(document.querySelectorAll('#hand button.card'));
  const faces = cards.map((b) => b.querySelector('.card-face'));
  const rect = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const index = (face) => {
    // The number: the ::before box, placed from the face's padding box (its border is 1px).
    const f = face.getBoundingClientRect();
    const s = getComputedStyle(face);
    const n = getComputedStyle(face, '::before');
    const left = f.left + parseFloat(s.borderLeftWidth) + parseFloat(n.left);
    const top = f.top + parseFloat(s.borderTopWidth) + parseFloat(n.top);
    const number = {left, top, right: left + parseFloat(n.width), bottom: top + parseFloat(n.height)};
    const mark = rect(face.querySelector('use.ix').getBoundingClientRect());
    return {number, mark, content: n.content, width: n.width};
  };
  return faces.map((face, i) => ({
    card: cards[i].dataset.card,
    face: rect(face.getBoundingClientRect()),
    index: index(face),
    over: faces.slice(i + 1).map((f) => rect(f.getBoundingClientRect())),
  }));
}
"""


def index_problems(page: Any) -> tuple[int, list[str]]:
    """(how many cards were checked, what is wrong): for each card of the hand, its number and its suit
    mark must lie inside the card and clear of every card drawn over it (the later ones in the row)."""
    cards = page.evaluate(INDEX)
    problems = []
    for card in cards:
        face, index = card["face"], card["index"]
        if not index["content"].startswith('"') or index["width"] in ("auto", "0px"):
            problems.append(f"{card['card']}: the number's box cannot be read ({index['content']}, {index['width']})")
            continue
        for part in ("number", "mark"):
            r = index[part]
            inside = (
                r["left"] >= face["left"] - TOLERANCE
                and r["right"] <= face["right"] + TOLERANCE
                and r["top"] >= face["top"] - TOLERANCE
                and r["bottom"] <= face["bottom"] + TOLERANCE
            )
            if not inside:
                problems.append(f"{card['card']}: its {part} {r} sticks out of the card {face}")
            for other in card["over"]:
                w = min(r["right"], other["right"]) - max(r["left"], other["left"])
                h = min(r["bottom"], other["bottom"]) - max(r["top"], other["top"])
                if w > 0 and h > 0:
                    problems.append(f"{card['card']}: its {part} is {w:.1f} px under the next card {other}")
                    break
    return len(cards), problems
