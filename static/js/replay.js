// A finished game's replay: steps through the embedded pocha-record/1 (the deal, every bid, the
// trump choice, every card, the round's result), drawing every hand.  Who played each card, who won
// each trick and each round's points come worked out by the server (#replay-data), so no rule of
// the game is repeated here.  Keys: ←/→ a step, PageUp/PageDown a round, Home/End; with the game's
// analysis, N/P the next and the previous marked mistake, whose weighing is shown beside the step.
(function () {
  "use strict";
  var viewer = document.getElementById("replay-viewer");
  var recordNode = document.getElementById("replay-record");
  var dataNode = document.getElementById("replay-data");
  if (!viewer || !recordNode || !dataNode) return;
  var record = JSON.parse(recordNode.textContent);
  var data = JSON.parse(dataNode.textContent);
  if (!record.rounds || !record.rounds.length) return;

  var S = data.strings;
  var names = record.players;
  var seats = names.length;
  var order = {};
  data.card_order.forEach(function (code, i) { order[code] = i; });

  function fmt(text, params) {
    return text.replace(/%\((\w+)\)s/g, function (whole, key) {
      return params[key] === undefined ? whole : String(params[key]);
    });
  }
  function signed(n) { return n > 0 ? "+" + n : String(n).replace("-", "\u2212"); }
  function cardName(code) { return data.cards[code] || code; }

  // A card as the board draws it: a copy of templates/games/_card.html rendered for that card.
  function cardFace(code) {
    var holder = document.createElement("span");
    holder.setAttribute("role", "img");
    holder.setAttribute("aria-label", cardName(code));
    holder.dataset.card = code;
    var template = document.querySelector('template[data-card="' + code + '"]');
    if (template) holder.appendChild(template.content.cloneNode(true));
    else holder.textContent = code;
    return holder;
  }

  // -- the steps: per round, the deal, each bid, the trump choice (auctions), each card, the result
  var steps = [];
  var roundStarts = [];
  record.rounds.forEach(function (round, r) {
    roundStarts.push(steps.length);
    steps.push({ r: r, kind: "deal", k: 0 });
    round.bids.forEach(function (bid, k) { steps.push({ r: r, kind: "bid", k: k }); });
    if (round.trump_suit) steps.push({ r: r, kind: "trump", k: 0 });
    round.plays.forEach(function (card, k) { steps.push({ r: r, kind: "play", k: k }); });
    steps.push({ r: r, kind: "end", k: 0 });
  });

  // -- the analysis, when there is one: each decision by its step, and the marked ones in order
  var A = data.analysis || null;
  var stepIndex = {};
  steps.forEach(function (step, i) { stepIndex[step.r + ":" + step.kind + ":" + step.k] = i; });
  var marked = [];
  if (A) {
    A.marks.forEach(function (key) { if (stepIndex[key] !== undefined) marked.push(stepIndex[key]); });
    marked.sort(function (a, b) { return a - b; });
  }
  var analysisBox = document.getElementById("replay-analysis");
  var practiceForm = document.getElementById("practice-form");
  var practiceRounds = {};
  (data.practice_rounds || []).forEach(function (n) { practiceRounds[n] = true; });

  function drawAnalysis(step) {
    if (!A || !analysisBox) return;
    var d = A.decisions[step.r + ":" + step.kind + ":" + step.k];
    var T = A.strings;
    analysisBox.textContent = "";
    analysisBox.className = "replay-analysis" + (d && d.mark ? " marked" : "");
    analysisBox.dataset.mark = d && d.mark ? d.mark : "";
    viewer.dataset.mark = d && d.mark ? d.mark : "";
    if (!d) { analysisBox.textContent = T.none; return; }
    var lines = [fmt(T.decision, d)];
    if (d.forced) lines.push(T.forced);
    else if (d.is_best) lines.push(T.is_best);
    else {
      lines.push(fmt(T.best, d));
      lines.push(d.mark ? fmt(T.loss, { loss: d.loss, margin: d.margin, mark: d.mark_label })
                        : fmt(T.small_loss, { loss: d.loss, margin: d.margin }));
    }
    lines.forEach(function (text, i) {
      var p = document.createElement("p");
      if (i === 0 && d.mark) {
        var tag = document.createElement("span");
        tag.className = "mark mark-" + d.mark;
        tag.textContent = d.mark_label;
        p.appendChild(tag);
        p.appendChild(document.createTextNode(" "));
      }
      p.appendChild(document.createTextNode(text));
      analysisBox.appendChild(p);
    });
  }

  function drawPractice(state) {
    if (!practiceForm) return;
    var n = state.info.number;
    practiceForm.querySelector("input[name=round]").value = String(n);
    practiceForm.hidden = !practiceRounds[n];
  }

  // -- what the table looks like at a step
  function stateAt(step) {
    var round = record.rounds[step.r];
    var info = data.rounds[step.r];
    var bidders = info.bidders.length;
    var afterBids = step.kind !== "deal" && step.kind !== "bid";
    var bidsMade = step.kind === "deal" ? 0 : step.kind === "bid" ? step.k + 1 : round.bids.length;
    var playsMade = step.kind === "play" ? step.k + 1 : step.kind === "end" ? round.plays.length : 0;
    var hands = round.hands.map(function (hand) { return hand.slice(); });
    for (var i = 0; i < playsMade; i++) {
      var hand = hands[info.play_seats[i]];
      hand.splice(hand.indexOf(round.plays[i]), 1);
    }
    var bids = new Array(seats).fill(null);
    for (var b = 0; b < bidsMade; b++) bids[info.bidders[b]] = round.bids[b];
    var complete = Math.floor(playsMade / bidders);
    var tricks = new Array(seats).fill(0);
    for (var t = 0; t < complete; t++) tricks[info.trick_winners[t]] += 1;
    var trick = null;
    if (playsMade > 0) {
      var index = Math.floor((playsMade - 1) / bidders);
      var first = index * bidders;
      var cards = [];
      for (var p = first; p < playsMade; p++) cards.push({ seat: info.play_seats[p], card: round.plays[p] });
      var done = playsMade - first === bidders;
      trick = { index: index, cards: cards, winner: done ? info.trick_winners[index] : null };
    }
    var previous = step.r > 0 ? data.rounds[step.r - 1].totals : new Array(seats).fill(0);
    var actor = null;
    if (step.kind === "bid") actor = info.bidders[step.k];
    else if (step.kind === "trump") actor = info.auction_winner;
    else if (step.kind === "play") actor = info.play_seats[step.k];
    return {
      round: round, info: info, hands: hands, bids: bids, tricks: tricks, trick: trick, actor: actor,
      trumpKnown: !!round.trump_card || afterBids,
      ended: step.kind === "end",
      totals: step.kind === "end" ? info.totals : previous
    };
  }

  function describe(step, state) {
    var info = state.info;
    var n = info.number;
    if (step.kind === "deal") {
      return state.round.trump_card
        ? fmt(S.deal, { n: n, dealer: names[info.dealer], trump: cardName(state.round.trump_card) })
        : fmt(S.deal_auction, { n: n, dealer: names[info.dealer] });
    }
    if (step.kind === "bid") return fmt(S.bid, { n: n, name: names[state.actor], bid: state.round.bids[step.k] });
    if (step.kind === "trump") {
      return fmt(S.trump, { n: n, name: names[state.actor], suit: data.suits[state.round.trump_suit].name });
    }
    if (step.kind === "play") {
      var text = fmt(S.play, { n: n, t: state.trick.index + 1, name: names[state.actor],
                               card: cardName(state.round.plays[step.k]) });
      if (state.trick.winner !== null) text += " " + fmt(S.trick_won, { name: names[state.trick.winner] });
      return text;
    }
    var parts = names.map(function (name, seat) { return name + " " + signed(info.points[seat]); });
    var text2 = fmt(S.end, { n: n, points: parts.join(", ") });
    if (step.r === record.rounds.length - 1 && record.rounds.length === data.total_rounds) {
      var best = Math.max.apply(null, info.totals);
      var winners = names.filter(function (name, seat) { return info.totals[seat] === best; });
      text2 += " " + fmt(S.game_over, { names: winners.join(S.and), total: best });
    }
    return text2;
  }

  // -- drawing
  var els = {
    now: document.getElementById("replay-now"),
    position: document.getElementById("replay-position"),
    round: document.getElementById("replay-round"),
    trump: document.getElementById("replay-trump"),
    multiplier: document.getElementById("replay-multiplier"),
    trickTitle: document.getElementById("replay-trick-title"),
    trick: document.getElementById("replay-trick")
  };
  var rows = {};
  viewer.querySelectorAll("#replay-players tr[data-seat]").forEach(function (tr) { rows[tr.dataset.seat] = tr; });
  var handLists = {};
  viewer.querySelectorAll("[data-hand]").forEach(function (ul) { handLists[ul.dataset.hand] = ul; });
  var buttons = {};
  viewer.querySelectorAll("[data-go]").forEach(function (button) { buttons[button.dataset.go] = button; });

  function setCell(tr, col, text) {
    var cell = tr.querySelector('[data-col="' + col + '"]');
    if (cell) cell.textContent = text;
  }

  function drawTrump(state) {
    els.trump.textContent = "";
    els.multiplier.textContent = "";
    if (state.round.trump_card) {
      var face = cardFace(state.round.trump_card);
      face.classList.add("trump-card");
      els.trump.appendChild(face);
    } else if (state.trumpKnown) {
      var suit = data.suits[state.round.trump_suit];
      var strong = document.createElement("strong");
      strong.className = "suit-" + state.round.trump_suit;
      var mark = document.querySelector('template[data-suit-mark="' + state.round.trump_suit + '"]');
      if (mark) strong.appendChild(mark.content.cloneNode(true));
      strong.appendChild(document.createTextNode(" " + suit.name));
      els.trump.appendChild(strong);
    } else {
      els.trump.textContent = S.pending_trump;
    }
    if (state.trumpKnown && state.info.multiplier > 1) els.multiplier.textContent = "\u00d7" + state.info.multiplier;
  }

  function drawPlayers(state) {
    var info = state.info;
    for (var seat = 0; seat < seats; seat++) {
      var tr = rows[seat];
      if (!tr) continue;
      var resting = info.resting === seat;
      tr.classList.toggle("turn", state.actor === seat);
      tr.querySelector('[data-tag="dealer"]').hidden = info.dealer !== seat;
      tr.querySelector('[data-tag="resting"]').hidden = !resting;
      setCell(tr, "bid", resting ? "\u2014" : state.bids[seat] === null ? "\u00b7" : String(state.bids[seat]));
      setCell(tr, "tricks", resting ? "\u2014" : String(state.tricks[seat]));
      setCell(tr, "points", state.ended ? signed(info.points[seat]) : "");
      setCell(tr, "total", String(state.totals[seat]));
    }
  }

  function drawTrick(state, fresh) {
    els.trick.textContent = "";
    els.trickTitle.textContent = "";
    if (!state.trick) return;
    var title = fmt(S.trick_title, { t: state.trick.index + 1, of: state.info.cards });
    if (state.trick.winner !== null) title += " \u00b7 " + fmt(S.trick_won_by, { name: names[state.trick.winner] });
    els.trickTitle.textContent = title;
    state.trick.cards.forEach(function (play, i) {
      var li = document.createElement("li");
      if (state.trick.winner === play.seat) li.className = "won";
      if (fresh && i === state.trick.cards.length - 1) li.classList.add("just-played");
      var who = document.createElement("span");
      who.className = "who";
      who.textContent = names[play.seat];
      li.appendChild(who);
      li.appendChild(cardFace(play.card));
      els.trick.appendChild(li);
    });
    els.trick.classList.toggle("last", state.trick.winner !== null);
  }

  function drawHands(state) {
    for (var seat = 0; seat < seats; seat++) {
      var ul = handLists[seat];
      if (!ul) continue;
      ul.textContent = "";
      var hand = state.hands[seat].slice().sort(function (a, b) { return order[a] - order[b]; });
      if (!hand.length) {
        var empty = document.createElement("li");
        empty.className = "hint";
        empty.textContent = state.info.resting === seat ? S.resting : S.empty_hand;
        ul.appendChild(empty);
      }
      hand.forEach(function (code) {
        var li = document.createElement("li");
        li.appendChild(cardFace(code));
        ul.appendChild(li);
      });
      ul.closest(".replay-seat").classList.toggle("acting", state.actor === seat);
    }
  }

  var current = -1;

  function show(index) {
    index = Math.max(0, Math.min(steps.length - 1, index));
    var fresh = index === current + 1;
    if (index === current) return;
    current = index;
    var step = steps[index];
    var state = stateAt(step);
    els.round.textContent = state.info.title;
    drawTrump(state);
    drawPlayers(state);
    drawTrick(state, fresh);
    drawHands(state);
    els.now.textContent = describe(step, state);
    drawAnalysis(step);
    drawPractice(state);
    els.position.textContent = fmt(S.position, { i: index + 1, n: steps.length });
    viewer.dataset.step = String(index);
    viewer.dataset.round = String(state.info.number);
    // aria-disabled rather than disabled: a focused button keeps its focus at either end
    setDisabled("prev", index === 0);
    setDisabled("round-prev", index === 0);
    setDisabled("next", index === steps.length - 1);
    setDisabled("round-next", step.r === record.rounds.length - 1 && index === steps.length - 1);
    setDisabled("mistake-prev", !marked.some(function (i) { return i < index; }));
    setDisabled("mistake-next", !marked.some(function (i) { return i > index; }));
  }

  function setDisabled(name, off) {
    if (buttons[name]) buttons[name].setAttribute("aria-disabled", off ? "true" : "false");
  }

  function roundOf(index) { return steps[index].r; }

  function go(where) {
    var r = roundOf(current);
    if (where === "next") show(current + 1);
    else if (where === "prev") show(current - 1);
    else if (where === "round-next") show(r + 1 < roundStarts.length ? roundStarts[r + 1] : steps.length - 1);
    else if (where === "round-prev") show(roundStarts[Math.max(0, r - 1)]);
    else if (where === "first") show(0);
    else if (where === "last") show(steps.length - 1);
    else if (where === "mistake-next" || where === "mistake-prev") {
      var found = where === "mistake-next"
        ? marked.filter(function (i) { return i > current; })[0]
        : marked.filter(function (i) { return i < current; }).pop();
      if (found === undefined) { if (analysisBox) analysisBox.textContent = A.strings.no_more; return; }
      show(found);
    }
  }

  // the list of marked mistakes: each one's «ver» goes to its step in the viewer
  var mistakes = document.getElementById("analysis-mistakes");
  if (mistakes) {
    mistakes.querySelectorAll("[data-jump]").forEach(function (button) {
      if (stepIndex[button.dataset.jump] === undefined) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        show(stepIndex[button.dataset.jump]);
        viewer.scrollIntoView({ block: "start" });
        var next = viewer.querySelector('[data-go="next"]');
        if (next) next.focus();
      });
    });
  }

  viewer.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-go]");
    if (!button || button.getAttribute("aria-disabled") === "true") return;
    go(button.dataset.go);
  });

  var KEYS = { ArrowRight: "next", ArrowLeft: "prev", PageDown: "round-next", PageUp: "round-prev",
               Home: "first", End: "last" };
  if (A) { KEYS.n = "mistake-next"; KEYS.N = "mistake-next"; KEYS.p = "mistake-prev"; KEYS.P = "mistake-prev"; }
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var where = KEYS[event.key];
    if (!where) return;
    event.preventDefault();
    go(where);
  });

  viewer.hidden = false;
  show(0);
})();

// The analysis's tables that scroll inside their own box (round by round, many players on a phone): the
// line above one says so while it does not fit, looked at again when its disclosure opens or the page turns.
(function () {
  "use strict";
  var boxes = document.querySelectorAll(".analysis .scroll");
  if (!boxes.length) return;
  function look() {
    boxes.forEach(function (box) {
      var cue = box.parentElement && box.parentElement.querySelector(".scroll-cue");
      if (cue) cue.hidden = !(box.scrollWidth > box.clientWidth + 1);
    });
  }
  document.querySelectorAll(".analysis details").forEach(function (d) { d.addEventListener("toggle", look); });
  window.addEventListener("resize", look);
  look();
})();
