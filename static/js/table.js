// The table page.  The server sends whole fragments (htmx out-of-band style) over the socket; this
// script applies them itself, in order, so that the table can be read:
//  * fragments older than what is shown are dropped (pushes can arrive out of order across processes);
//  * a card slides from its player's seat to the middle; a completed trick is held up (HOLD_MS) with
//    the winning card marked, then swept to the winner — later boards wait in the queue meanwhile, and
//    what must come after the trick (a round's result, the final ranking) is revealed only then;
//  * your turn: a short sound (mute toggle remembered per browser), the tab title and favicon, a
//    vibration where allowed, and an announcement for screen readers; the clock turns urgent at 5 s;
//  * tapping a card you may not play says why, just above the hand (the felt gives way to it);
//  * the keyboard: arrow keys through the hand (and the bids), Enter or Space to play;
//  * table talk bubbles by the seat, each player mutable per viewer.
// Every step is also recorded in window.pochaEvents (type, time) for the browser tests.
(function () {
  "use strict";
  var root = document.getElementById("table-root");
  if (!root) return;

  // A completed trick stays at least this long (POCHA_TRICK_HOLD; the server pauses a little longer).
  var HOLD_MS = parseInt(root.dataset.holdMs || "1800", 10);
  var SWEEP_MS = 350;
  var SLIDE_MS = 320;
  var URGENT_S = 5;
  var reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var texts = {};
  try { texts = JSON.parse((document.getElementById("table-texts") || {}).textContent || "{}"); } catch (e) { texts = {}; }
  var tableId = root.dataset.table || "";
  var shown = parseInt(root.dataset.seq || "0", 10);
  var seqPattern = /data-board-seq="(\d+)"/;

  window.pochaEvents = window.pochaEvents || [];
  function emit(type, detail) {
    var record = { type: type, at: performance.now(), detail: detail || {} };
    window.pochaEvents.push(record);
    document.dispatchEvent(new CustomEvent("pocha:" + type, { detail: record }));
  }

  function announce(text) {
    var el = document.getElementById("announcer");
    if (!el || !text) return;
    el.textContent = "";
    window.setTimeout(function () { el.textContent = text; }, 30);
  }

  function store(key, value) {
    try { if (value === null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch (e) { /* private mode */ }
  }
  function stored(key) {
    try { return localStorage.getItem(key); } catch (e) { return null; }
  }

  // --- the queue of messages ------------------------------------------------------------------

  var queue = [];
  var holdUntil = 0;       // while a completed trick is held up, nothing else is applied
  var heldKey = null;      // the trick being held (or held and not yet swept)
  var seenKeys = {};       // completed tricks already held up on this page
  var pumping = false;

  document.body.addEventListener("htmx:wsBeforeMessage", function (event) {
    event.preventDefault(); // applied here, in order, with the trick's pause
    queue.push(event.detail.message || "");
    pump();
  });

  function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length) {
        var wait = holdUntil - performance.now();
        if (wait > 0 && boardIn(queue[0])) { window.setTimeout(pump, wait + 5); return; }
        if (heldKey !== null && boardIn(queue[0]) && sweepPending) { return; }
        apply(queue.shift());
      }
    } finally {
      pumping = false;
    }
  }

  function boardIn(message) { return seqPattern.test(message); }

  function parse(message) {
    var template = document.createElement("template");
    template.innerHTML = message;
    return Array.prototype.slice.call(template.content.children);
  }

  function apply(message) {
    var parts = parse(message);
    var match = seqPattern.exec(message);
    var stale = false;
    if (match) {
      var seq = parseInt(match[1], 10);
      if (seq < shown) stale = true; else { shown = seq; root.dataset.seq = String(seq); }
    }
    var before = snapshot();
    var focus = rememberFocus();
    var scores = document.querySelector("#scores details");
    var scoresOpen = !!(scores && scores.open);
    var leaveOpen = !!document.querySelector("#leave-line[open]"); // «Dejar la partida» asked, not yet confirmed
    var seatMenu = document.querySelector("#felt .seat-menu[open]"); // «Seguir» / «Bloquear» open on a plate
    var seatMenuOf = seatMenu ? seatMenu.closest("[data-seat]").dataset.seat : null;
    var lastTrickOpen = !!document.querySelector("#last-trick:not([hidden])");
    var talkOpen = !!document.querySelector("#talk-panel:not([hidden])");
    var invite = typedInvite(); // the host's «Invitar a», half typed: someone sitting down must not erase it
    var boardApplied = false;
    parts.forEach(function (part) {
      if (part.id === "talk-event") { talk(part); return; }
      if (stale && part.hasAttribute("data-board-seq")) return;
      var current = part.id && document.getElementById(part.id);
      if (!current) return;
      current.replaceWith(part);
      if (window.htmx) window.htmx.process(part);
      if (part.hasAttribute("data-board-seq")) boardApplied = true;
    });
    sentSeq = null; // whatever came back (a new board or an error), the player may act again
    if (!boardApplied) return;
    var scoresNow = document.querySelector("#scores details");
    if (scoresNow && scoresOpen) scoresNow.open = true;
    var leaveNow = document.getElementById("leave-line");
    if (leaveNow && leaveOpen) leaveNow.open = true;
    var seatMenuNow = seatMenuOf !== null && document.querySelector('#felt [data-seat="' + seatMenuOf + '"] .seat-menu');
    if (seatMenuNow) seatMenuNow.open = true;
    if (lastTrickOpen) toggleLastTrick(true);
    if (talkOpen) toggleTalk(true, false);
    keepInvite(invite);
    stampClocks();
    afterBoard(before);
    restoreFocus(focus);
    applyMutes();
    rovingHand();
    checkTurn();
  }

  // What the felt showed before a new board: where each card on it was.
  function snapshot() {
    var cards = {};
    // (an indias card shown unplayed in front of its seat is "seen": played later, it does not slide in)
    document.querySelectorAll("#felt .trick .played").forEach(function (li) {
      cards[li.dataset.card] = li.classList.contains("seen") ? "seen" : true;
    });
    return { cards: cards };
  }

  function seatCentre(seat) {
    var badge = document.querySelector("#seat-" + seat + " .badge");
    if (!badge) return null;
    var r = badge.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }

  function afterBoard(before) {
    var felt = document.getElementById("felt");
    if (!felt) return;
    var names = {};
    document.querySelectorAll("#felt .seat").forEach(function (s) { names[s.dataset.seat] = s.dataset.name || ""; });
    // Cards new on the felt slide in from their player's seat.
    document.querySelectorAll("#felt .trick .played:not(.seen)").forEach(function (li) {
      if (before.cards[li.dataset.card] === true) return;
      var label = li.querySelector("[aria-label]");
      var from = seatCentre(li.dataset.seat);
      var slides = !!from && !reducedMotion && !!li.animate && before.cards[li.dataset.card] !== "seen";
      emit("card", { seat: li.dataset.seat, card: li.dataset.card, animated: slides });
      if (!felt.dataset.trickDone) announce((names[li.dataset.seat] || "") + " " + (texts.plays || "") + " " + (label ? label.getAttribute("aria-label") : ""));
      if (!slides) return;
      var r = li.getBoundingClientRect();
      var dx = from.x - (r.left + r.width / 2), dy = from.y - (r.top + r.height / 2);
      li.animate([
        { transform: "translate(-50%, -50%) translate(" + dx + "px, " + dy + "px) scale(0.6)", opacity: 0.3 },
        { transform: "translate(-50%, -50%)", opacity: 1 }
      ], { duration: SLIDE_MS, easing: "ease-out" });
    });
    var key = felt.dataset.trickKey || null;
    if (felt.dataset.trickDone) {
      if (!seenKeys[key]) {
        seenKeys[key] = true;
        holdTrick(felt, key, names);
      } else if (key !== heldKey) {
        markSwept();
        revealPending();
      } else if (performance.now() >= holdUntil && !sweepPending) {
        markSwept();
        revealPending();
      } else {
        hidePending(); // still held: what comes after the trick waits
      }
    } else {
      heldKey = null;
      revealPending();
    }
  }

  var sweepPending = false;

  function holdTrick(felt, key, names) {
    heldKey = key;
    holdUntil = performance.now() + HOLD_MS;
    sweepPending = true;
    root.classList.add("holding");
    hidePending();
    var won = felt.querySelector(".trick .played.won");
    var winner = won ? won.dataset.seat : null;
    emit("trick-complete", { key: key, last: !!felt.dataset.trickLast, winner: winner,
                             cards: felt.querySelectorAll(".trick .played").length });
    if (winner !== null) announce((texts.trick_for || "") + " " + (names[winner] || ""));
    window.setTimeout(function () { sweep(key, winner); }, HOLD_MS);
  }

  function sweep(key, winner) {
    var trick = document.querySelector("#felt .trick.done");
    var done = function () {
      if (heldKey === key) markSwept();
      sweepPending = false;
      root.classList.remove("holding");
      emit("trick-cleared", { key: key });
      revealPending();
      checkTurn();
      pump();
    };
    var to = winner !== null ? seatCentre(winner) : null;
    if (!trick || !to || reducedMotion || HOLD_MS === 0 || !trick.animate || heldKey !== key) { done(); return; }
    var animations = [];
    trick.querySelectorAll(".played").forEach(function (li) {
      var r = li.getBoundingClientRect();
      var dx = to.x - (r.left + r.width / 2), dy = to.y - (r.top + r.height / 2);
      animations.push(li.animate([
        { transform: "translate(-50%, -50%)", opacity: 1 },
        { transform: "translate(-50%, -50%) translate(" + dx + "px, " + dy + "px) scale(0.4)", opacity: 0 }
      ], { duration: SWEEP_MS, easing: "ease-in", fill: "forwards" }).finished);
    });
    Promise.all(animations).then(done, done);
  }

  function markSwept() {
    var trick = document.querySelector("#felt .trick.done");
    if (trick) trick.classList.add("swept");
  }

  function hidePending() {
    document.querySelectorAll("[data-after-trick]").forEach(function (el) { el.classList.add("pending"); });
  }

  function revealPending() {
    document.querySelectorAll("[data-after-trick]").forEach(function (el) {
      var wasPending = el.classList.contains("pending");
      el.classList.remove("pending");
      if (el.dataset.revealed) return;
      el.dataset.revealed = "1";
      if (el.id === "round-result") {
        emit("result-shown", { round: el.dataset.round, afterTrick: wasPending });
        var title = el.querySelector("h3");
        if (title) announce(title.textContent.trim());
      } else if (el.classList.contains("final")) {
        emit("final-shown", {});
      }
    });
  }

  // --- your turn ------------------------------------------------------------------------------

  var baseTitle = document.title;
  var wasMyTurn = false;
  var icon = document.querySelector("link[rel~='icon']");
  var baseIcon = icon ? icon.getAttribute("href") : "data:,";
  var turnIcon = "data:image/svg+xml," + encodeURIComponent(
    "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='7' fill='%23dc2626'/></svg>".replace("%23", "#"));

  function checkTurn() {
    var status = document.getElementById("board-status");
    var kind = status ? status.dataset.myTurn : "";
    var mine = !!kind && performance.now() >= holdUntil;
    if (mine && !wasMyTurn) {
      document.title = "● " + (texts.your_turn || "") + " · " + baseTitle;
      if (icon) icon.setAttribute("href", turnIcon);
      beep();
      try {
        // Browsers allow a vibration only once the person has touched the page.
        if (navigator.vibrate && navigator.userActivation && navigator.userActivation.hasBeenActive) navigator.vibrate(180);
      } catch (e) { /* not allowed */ }
      announce((texts.your_turn || "") + ": " + (texts[kind] || ""));
      emit("turn", { kind: kind });
    } else if (!mine && wasMyTurn) {
      document.title = baseTitle;
      if (icon) icon.setAttribute("href", baseIcon);
    }
    wasMyTurn = mine;
  }

  var audio = null;
  function soundOn() { return stored("pocha-sound") !== "off"; }
  function beep() {
    if (!soundOn()) return;
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    try {
      audio = audio || new Context();
      if (audio.state === "suspended") audio.resume();
      var now = audio.currentTime;
      var osc = audio.createOscillator(), gain = audio.createGain();
      osc.type = "sine";
      osc.frequency.setValueAtTime(660, now);
      osc.frequency.setValueAtTime(880, now + 0.09);
      gain.gain.setValueAtTime(0.0001, now);
      gain.gain.exponentialRampToValueAtTime(0.12, now + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + 0.22);
      osc.connect(gain).connect(audio.destination);
      osc.start(now);
      osc.stop(now + 0.24);
      emit("sound", {});
    } catch (e) { /* no audio here */ }
  }
  // Browsers start audio only after the person has touched the page.
  ["pointerdown", "keydown"].forEach(function (type) {
    document.addEventListener(type, function () {
      var Context = window.AudioContext || window.webkitAudioContext;
      if (!audio && Context && soundOn()) { try { audio = new Context(); } catch (e) { audio = null; } }
      if (audio && audio.state === "suspended") audio.resume();
    }, { once: true });
  });

  var soundToggle = document.getElementById("sound-toggle");
  function drawSoundToggle() {
    if (!soundToggle) return;
    soundToggle.setAttribute("aria-pressed", soundOn() ? "false" : "true");
    soundToggle.textContent = soundOn() ? (texts.mute || soundToggle.textContent) : (texts.unmute || soundToggle.textContent);
  }
  if (soundToggle) {
    soundToggle.addEventListener("click", function () { store("pocha-sound", soundOn() ? "off" : null); drawSoundToggle(); });
    drawSoundToggle();
  }

  // --- clocks ---------------------------------------------------------------------------------

  function stampClocks() {
    var now = performance.now();
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      if (!el.dataset.t0) el.dataset.t0 = String(now);
    });
  }
  function tick() {
    var now = performance.now();
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var t0 = parseFloat(el.dataset.t0 || String(now));
      var left = Math.max(0, Math.ceil(parseInt(el.dataset.countdown, 10) - (now - t0) / 1000));
      var text = el.textContent.replace(/\d+(?=\s*s\b)/, String(left));
      if (text !== el.textContent) el.textContent = text;
      if (el.classList.contains("clock")) el.classList.toggle("urgent", left <= URGENT_S);
    });
  }
  stampClocks();
  window.setInterval(tick, 250);

  // --- the hand: the reason a card may not be played, and the keyboard -----------------------

  var hintTimer = null;
  function hint(text) {
    var el = document.getElementById("hand-hint");
    if (!el) return;
    // Just above the hand, in the table's column: the felt gives way to it (as to the flash), so that it
    // covers nothing (drawn over the felt, it hid the player's own seat and clock).  Where the felt is at
    // its smallest already, the page grows instead: it scrolls by as much, so that the hand stays where the
    // finger is, and back when the note goes.
    var hand = document.getElementById("hand");
    if (hand && hand.parentNode && el.nextElementSibling !== hand) hand.parentNode.insertBefore(el, hand);
    keepInPlace(hand, function () { el.textContent = text; });
    window.clearTimeout(hintTimer);
    hintTimer = window.setTimeout(function () {
      keepInPlace(document.getElementById("hand"), function () { el.textContent = ""; });
    }, 3500);
  }
  function keepInPlace(anchor, change) {
    var before = anchor ? anchor.getBoundingClientRect().top : 0;
    change();
    if (!anchor) return;
    var moved = anchor.getBoundingClientRect().top - before;
    if (Math.abs(moved) > 0.5) window.scrollBy(0, moved);
  }

  document.addEventListener("click", function (event) {
    var card = event.target.closest && event.target.closest("#hand button.card");
    if (card && !card.classList.contains("playable")) {
      var reason = card.dataset.reason || "";
      if (reason) {
        hint(reason);
        card.classList.remove("refused");
        void card.offsetWidth;
        card.classList.add("refused");
        emit("illegal", { card: card.dataset.card, reason: reason });
      }
      return;
    }
    var toggle = event.target.closest && event.target.closest(".last-trick-toggle");
    if (toggle) { toggleLastTrick(toggle.getAttribute("aria-expanded") !== "true"); return; }
    var talkToggle = event.target.closest && event.target.closest(".talk-toggle");
    if (talkToggle) { toggleTalk(talkToggle.getAttribute("aria-expanded") !== "true", true); return; }
    // A phrase said (htmx has sent it by now) or a tap outside the panel: the phrases close.
    var inTalk = event.target.closest && event.target.closest("#talk-panel");
    var phrase = event.target.closest && event.target.closest("button.phrase");
    if (!inTalk || phrase) toggleTalk(false, !!phrase);
    var mute = event.target.closest && event.target.closest("[data-mute-talk]");
    if (mute) {
      var key = "pocha-talk-mute:" + mute.dataset.muteTalk;
      store(key, stored(key) ? null : "1");
      applyMutes();
    }
  });

  function toggleLastTrick(open) {
    var panel = document.getElementById("last-trick");
    var button = document.querySelector(".last-trick-toggle");
    if (!panel || !button) return;
    panel.hidden = !open;
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { toggleLastTrick(false); toggleTalk(false, true); }
  });

  // «Frases»: the phrases open in a panel over the felt, just above its toggle (bottom left of the felt),
  // so that they are in reach without scrolling the hand away.  ``focus``: the keyboard moves into the
  // panel as it opens, and back to the toggle as it closes.
  function toggleTalk(open, focus) {
    var panel = document.getElementById("talk-panel");
    var button = document.querySelector(".talk-toggle");
    if (!panel) return;
    var wasOpen = !panel.hidden;
    if (!button) open = false;
    panel.hidden = !open;
    if (button) button.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) {
      placeTalk(panel, button);
      if (focus && !wasOpen) { var first = panel.querySelector("button"); if (first) first.focus({ preventScroll: true }); }
      if (!wasOpen) emit("talk-open", {});
    } else if (wasOpen && focus && button && panel.contains(document.activeElement)) {
      button.focus({ preventScroll: true });
    }
  }
  function placeTalk(panel, button) {
    var r = button.getBoundingClientRect();
    var margin = 4;
    var width = panel.offsetWidth, height = panel.offsetHeight;
    var left = Math.max(margin, Math.min(r.left, document.documentElement.clientWidth - width - margin));
    var top = r.top - height - 6;
    if (top < margin) top = r.bottom + 6;
    panel.style.left = (left + window.scrollX) + "px";
    panel.style.top = (top + window.scrollY) + "px";
  }
  window.addEventListener("resize", function () {
    var panel = document.getElementById("talk-panel");
    var button = document.querySelector(".talk-toggle");
    if (panel && button && !panel.hidden) placeTalk(panel, button);
  });

  // One move per drawn board (a double tap would send the same seq twice and earn a "stale"
  // error), and no card while a completed trick is still held up.
  var sentSeq = null;
  document.body.addEventListener("htmx:wsConfigSend", function (event) {
    var params = event.detail.parameters || {};
    if (params.action === "play" && performance.now() < holdUntil) { event.preventDefault(); return; }
    var seq = params.seq;
    if (seq !== undefined && seq === sentSeq) { event.preventDefault(); return; }
    sentSeq = seq === undefined ? null : seq;
  });

  // Arrow keys move through the hand (and the bids); only one card is in the tab order.
  function rovingHand() {
    var cards = Array.prototype.slice.call(document.querySelectorAll("#hand button.card"));
    if (!cards.length) return;
    var current = cards.indexOf(document.activeElement);
    var chosen = current >= 0 ? current : Math.max(0, cards.findIndex(function (c) { return c.classList.contains("playable"); }));
    cards.forEach(function (c, i) { c.tabIndex = i === chosen ? 0 : -1; });
  }
  document.addEventListener("keydown", function (event) {
    var group = event.target.closest && (event.target.closest("#hand .hand") || event.target.closest(".bid-buttons"));
    if (!group) return;
    var items = Array.prototype.slice.call(group.querySelectorAll("button")).filter(function (b) { return !b.disabled; });
    var i = items.indexOf(event.target);
    if (i < 0) return;
    var next = null;
    if (event.key === "ArrowRight" || event.key === "ArrowDown") next = items[(i + 1) % items.length];
    else if (event.key === "ArrowLeft" || event.key === "ArrowUp") next = items[(i - 1 + items.length) % items.length];
    else if (event.key === "Home") next = items[0];
    else if (event.key === "End") next = items[items.length - 1];
    if (!next) return;
    event.preventDefault();
    if (group.classList.contains("hand")) { items.forEach(function (b) { b.tabIndex = -1; }); next.tabIndex = 0; }
    next.focus();
  });

  // The host's «Invitar a» field on a waiting private table's board (jinja2/games/_invite.html): what is typed
  // in it, and where, is kept across a new board (which draws the field again, empty).
  function typedInvite() {
    var field = document.getElementById("invite-name");
    if (!field || !field.value) return null;
    var focused = document.activeElement === field;
    return { field: field, value: field.value, focused: focused, start: field.selectionStart, end: field.selectionEnd };
  }
  function keepInvite(invite) {
    var field = document.getElementById("invite-name");
    if (!invite || !field || field === invite.field || field.value) return;
    field.value = invite.value;
    if (!invite.focused) return;
    field.focus({ preventScroll: true });
    try { field.setSelectionRange(invite.start, invite.end); } catch (error) { /* not a text field */ }
  }

  // A fragment replaced under the keyboard's focus: put the focus back on the same card, or on
  // what the player now has to do.
  function rememberFocus() {
    var el = document.activeElement;
    if (!el || el === document.body) return null;
    var section = el.closest && el.closest("#hand, #controls, #felt, #board-status");
    if (!section) return null;
    return { section: section.id, card: el.dataset && el.dataset.card, label: el.getAttribute("aria-label"), text: el.textContent };
  }
  function restoreFocus(focus) {
    if (!focus) return;
    if (document.activeElement && document.activeElement !== document.body && document.contains(document.activeElement)) return;
    var target = null;
    if (focus.card) target = document.querySelector('#hand button.card[data-card="' + focus.card + '"]');
    if (!target && focus.label) {
      target = Array.prototype.slice.call(document.querySelectorAll("#" + focus.section + " button")).filter(function (b) {
        return b.getAttribute("aria-label") === focus.label && !b.disabled;
      })[0] || null;
    }
    if (!target) target = document.querySelector("#controls button:not([disabled]), #controls a") ||
      document.querySelector("#hand button.card.playable") || document.querySelector("#hand button.card");
    if (!target) {
      var hand = document.getElementById("hand");
      if (hand) { hand.tabIndex = -1; target = hand; }
    }
    if (target) target.focus({ preventScroll: true });
  }

  // --- table talk -------------------------------------------------------------------------------

  function muted(name) { return !!stored("pocha-talk-mute:" + name); }
  function applyMutes() {
    document.querySelectorAll("[data-mute-talk]").forEach(function (button) {
      var name = button.dataset.muteTalk;
      var on = muted(name);
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.setAttribute("aria-label", (on ? texts.unmute_talk : texts.mute_talk) + " " + name);
    });
  }
  var bubbleTimers = {};
  function talk(part) {
    var seat = part.dataset.talkSeat, name = part.dataset.talkName || "", text = part.textContent;
    if (muted(name)) { emit("talk-muted", { seat: seat, phrase: part.dataset.talkPhrase }); return; }
    var bubble = document.querySelector("#seat-" + seat + " .bubble");
    if (bubble) {
      bubble.textContent = text;
      bubble.classList.add("shown");
      window.clearTimeout(bubbleTimers[seat]);
      bubbleTimers[seat] = window.setTimeout(function () {
        var now = document.querySelector("#seat-" + seat + " .bubble");
        if (now) { now.classList.remove("shown"); now.textContent = ""; }
      }, 3500);
    }
    announce(name + " " + (texts.says || "") + ": " + text);
    emit("talk", { seat: seat, phrase: part.dataset.talkPhrase });
  }

  // --- the connection ---------------------------------------------------------------------------

  function connection(text, state) {
    var el = document.getElementById("connection");
    if (el) { el.textContent = text; el.dataset.state = state; }
  }
  document.body.addEventListener("htmx:wsOpen", function () { connection("", "open"); });
  document.body.addEventListener("htmx:wsClose", function () { connection(texts.lost || "…", "closed"); });

  // The page as first drawn.
  afterBoard({ cards: (function () {
    var all = {};
    document.querySelectorAll("#felt .trick .played").forEach(function (li) { all[li.dataset.card] = true; });
    return all;
  })() });
  applyMutes();
  rovingHand();
  checkTurn();
  emit("ready", {});
})();

// "Copiar enlace": the private table's invitation link, absolute, to the clipboard.
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("[data-copy-link]");
  if (!button) return;
  var link = new URL(button.dataset.copyLink, window.location.href).href;
  var done = function () { button.dataset.copied = "true"; };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(link).then(done, function () { window.prompt("", link); });
  } else {
    window.prompt("", link);
  }
});
