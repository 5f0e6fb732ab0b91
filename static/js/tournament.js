// A tournament's page: the countdown to its start, and the line saying the connection was lost.  The page's
// live parts come over its socket as htmx out-of-band swaps (templates/games/_tournament_live.html); the
// countdown is read again from whatever element is there now, so a redrawn part keeps counting.
(function () {
  "use strict";
  var root = document.getElementById("tournament-root");
  if (!root) return;

  function two(n) { return (n < 10 ? "0" : "") + n; }

  // The time left as the server writes it (games.read.tournaments.countdown_text): 2 d 03:04:05, 1:02:03, 4:05.
  function format(seconds) {
    var days = Math.floor(seconds / 86400);
    var hours = Math.floor((seconds % 86400) / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var secs = seconds % 60;
    if (days) return days + " d " + two(hours) + ":" + two(minutes) + ":" + two(secs);
    if (hours) return hours + ":" + two(minutes) + ":" + two(secs);
    return minutes + ":" + two(secs);
  }

  // Each countdown counts from the seconds the server gave it when it was drawn (data-countdown), on this
  // page's own clock: a computer whose clock is wrong still counts the right time.
  function tick() {
    document.querySelectorAll("time[data-countdown]").forEach(function (el) {
      if (!el.dataset.endsAt) {
        el.dataset.endsAt = String(Date.now() + 1000 * Number(el.dataset.countdown || 0));
      }
      var left = Math.max(0, Math.round((Number(el.dataset.endsAt) - Date.now()) / 1000));
      var text = format(left);
      if (el.textContent !== text) el.textContent = text;
    });
  }
  tick();
  window.setInterval(tick, 1000);

  function connection(text, state) {
    var el = document.getElementById("connection");
    if (el) { el.textContent = text; el.dataset.state = state; }
  }
  document.body.addEventListener("htmx:wsOpen", function () { connection("", "open"); });
  document.body.addEventListener("htmx:wsClose", function () { connection(root.dataset.lost || "…", "closed"); });
})();
