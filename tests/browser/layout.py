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
        " .bid-buttons, .trump-buttons, .final-links, .replay-now, .trick-area, #hand-hint",
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
        {
            "kinds": KINDS,
            "fanned": FANNED,
            "tolerance": TOLERANCE,
            "overlays": list(overlays),
            "width": width,
        },
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


# -- the seats' plates ------------------------------------------------------------------------------

#: What a seat's plate shows, by kind: each must show whole (not cut short by its own box or an ellipsis,
#: inside the badge) wherever it is shown.
PLATE_PARTS: dict[str, str] = {
    "name": ".seat-name",
    "level": ".seat-level",
    "dealer": ".tag.dealer",
    "away": ".tag.bot-plays",
    "bot": ".bot-tag",
    "tag": ".tag:not(.seat-level, .dealer, .bot-plays, .bot-tag)",
    "score": ".seat-score",
    "clock": ".clock",
}

PLATES = """
(parts) => {
  const shown = (el) => !el.closest('.visually-hidden, [hidden]') && el.checkVisibility
    && el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  return Array.from(document.querySelectorAll('#felt li.seat')).filter(shown).map((seat) => {
    const badge = seat.querySelector('.badge').getBoundingClientRect();
    const found = {};
    const problems = [];
    for (const [kind, selector] of Object.entries(parts)) {
      for (const el of seat.querySelectorAll(selector)) {
        if (!shown(el)) continue;
        // the words a reader sees (the visually hidden ones left out)
        const copy = el.cloneNode(true);
        copy.querySelectorAll('.visually-hidden').forEach((h) => h.remove());
        const text = copy.textContent.replace(/\\s+/g, ' ').trim();
        (found[kind] = found[kind] || []).push(text);
        const r = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        const why = [];
        if (!text) why.push('no text');
        if (el.scrollWidth > el.clientWidth + 1) why.push(`${el.scrollWidth} px of text in ${el.clientWidth} px across`);
        if (el.scrollHeight > el.clientHeight + 1) why.push(`${el.scrollHeight} px of text in ${el.clientHeight} px down`);
        if (style.textOverflow === 'ellipsis' && style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth) why.push('an ellipsis');
        if (r.left < badge.left - 1 || r.right > badge.right + 1 || r.top < badge.top - 1 || r.bottom > badge.bottom + 1) {
          why.push(`outside its badge (${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)})`);
        }
        if (why.length) problems.push(`${kind} "${text}": ${why.join(', ')}`);
      }
    }
    return {seat: seat.id, slot: (seat.className.match(/slot-(\\d+)/) || [])[1], me: seat.classList.contains('me'),
            found, problems};
  });
}
"""


def plate_report(page: Any) -> list[dict[str, Any]]:
    """Each seat's plate as it shows: what it shows of each kind (``found``: the texts) and what is cut."""
    result: list[dict[str, Any]] = page.evaluate(PLATES, PLATE_PARTS)
    return result


def check_plates(page: Any, where: str, seats: int, **expected: Any) -> list[dict[str, Any]]:
    """Fail if any part of a plate is cut; ``seats``: how many plates there must be; ``expected``: kind →
    the plates (by their ids) that must show it, or a count of plates that must."""
    plates = plate_report(page)
    assert len(plates) == seats, f"{where}: {len(plates)} plates, expected {seats}"
    problems = [f"{p['seat']}: {problem}" for p in plates for problem in p["problems"]]
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)
    for kind, wanted in expected.items():
        showing = [p["seat"] for p in plates if p["found"].get(kind)]
        if isinstance(wanted, int):
            assert len(showing) >= wanted, (
                f"{where}: {kind} shown on {showing}, expected on at least {wanted}: {plates}"
            )
        else:
            missing = set(wanted) - set(showing)
            assert not missing, f"{where}: no {kind} shown on {sorted(missing)}: {plates}"
    return plates


# -- tapping the hand -------------------------------------------------------------------------------

#: The least a card of the hand keeps in view to be tapped, across and down (px): WCAG 2.5.8 asks 24 by
#: 24; a hand of up to 13 cards keeps more than this at 375 px (two rows) and on a desktop (one row).
TAP_ACROSS = 40
TAP_DOWN = 32

# For each card of the hand: the largest rectangle of it that no card drawn after it covers (its exposed
# part), and whether a tap at that rectangle's middle lands on this very card (``elementFromPoint``).
TARGETS = """
() => {
  const cards = Array.from(document.querySelectorAll('#hand button.card'));
  const rects = cards.map((c) => c.getBoundingClientRect());
  return cards.map((card, i) => {
    const r = rects[i];
    const over = rects.slice(i + 1).filter((o) => o.left < r.right && o.right > r.left && o.top < r.bottom && o.bottom > r.top);
    const cuts = (lo, hi, edges) => [...new Set([lo, hi, ...edges.filter((v) => v > lo && v < hi)])].sort((a, b) => a - b);
    const xs = cuts(r.left, r.right, over.flatMap((o) => [o.left, o.right]));
    const ys = cuts(r.top, r.bottom, over.flatMap((o) => [o.top, o.bottom]));
    let best = null;
    for (let a = 0; a < xs.length; a++) for (let b = a + 1; b < xs.length; b++)
      for (let c = 0; c < ys.length; c++) for (let d = c + 1; d < ys.length; d++) {
        const box = {left: xs[a], right: xs[b], top: ys[c], bottom: ys[d]};
        if (over.some((o) => o.left < box.right - 0.5 && o.right > box.left + 0.5
                             && o.top < box.bottom - 0.5 && o.bottom > box.top + 0.5)) continue;
        const w = box.right - box.left, h = box.bottom - box.top;
        if (!best || Math.min(w, h) > Math.min(best.w, best.h)) best = {w, h, x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2};
      }
    const hit = document.elementFromPoint(best.x, best.y);
    return {card: card.dataset.card, across: best.w, down: best.h, x: best.x, y: best.y,
            hit: hit ? (hit.closest('button.card') === card ? 'itself' : (hit.closest('button.card') || hit).outerHTML.slice(0, 80)) : null};
  });
}
"""


def tap_problems(
    page: Any, across: float = TAP_ACROSS, down: float = TAP_DOWN
) -> tuple[list[dict[str, Any]], list[str]]:
    """(each card's exposed part, what is wrong): every card of the hand must keep an exposed part at least
    ``across`` by ``down`` px, and a tap at its middle must land on that card's own button."""
    page.locator("#hand").scroll_into_view_if_needed()
    page.evaluate(SETTLED)
    cards: list[dict[str, Any]] = page.evaluate(TARGETS)
    problems = []
    for card in cards:
        if card["across"] < across - TOLERANCE or card["down"] < down - TOLERANCE:
            problems.append(
                f"{card['card']}: {card['across']:.1f}x{card['down']:.1f} px in view, less than {across}x{down}"
            )
        if card["hit"] != "itself":
            problems.append(f"{card['card']}: a tap at {card['x']:.0f},{card['y']:.0f} lands on {card['hit']}")
    return cards, problems
