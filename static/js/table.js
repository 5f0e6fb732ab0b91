// The table page: ignore fragments older than what is shown (pushes can arrive out of order
// across processes), keep an opened scoreboard open across pushes, show the connection state, and
// count down visible timers.
(function () {
  "use strict";
  var root = document.getElementById("table-root");
  if (!root) return;
  var shown = parseInt(root.dataset.seq || "0", 10);
  var seqPattern = /data-board-seq="(\d+)"/;
  var scoresOpen = false;

  document.body.addEventListener("htmx:wsBeforeMessage", function (event) {
    var scores = document.querySelector("#scores details");
    scoresOpen = !!(scores && scores.open);
    var match = seqPattern.exec(event.detail.message || "");
    if (!match) return; // errors and other messages always apply
    var seq = parseInt(match[1], 10);
    if (seq < shown) { event.preventDefault(); return; }
    shown = seq;
    root.dataset.seq = String(seq);
  });
  // One move per drawn board: a double tap would send the same seq twice and earn a "stale" error.
  var sentSeq = null;
  document.body.addEventListener("htmx:wsConfigSend", function (event) {
    var seq = event.detail.parameters && event.detail.parameters.seq;
    if (seq !== undefined && seq === sentSeq) { event.preventDefault(); return; }
    sentSeq = seq === undefined ? null : seq;
  });
  // Every push re-renders the scoreboard: keep it open if the player opened it.
  document.body.addEventListener("htmx:wsAfterMessage", function () {
    sentSeq = null; // whatever came back (a new board or an error), the player may act again
    var scores = document.querySelector("#scores details");
    if (scores && scoresOpen) scores.open = true;
  });
  function connection(text, state) {
    var el = document.getElementById("connection");
    if (el) { el.textContent = text; el.dataset.state = state; }
  }
  var lang = document.documentElement.lang || "es";
  var es = lang.indexOf("es") === 0;
  document.body.addEventListener("htmx:wsOpen", function () { connection("", "open"); });
  document.body.addEventListener("htmx:wsClose", function () {
    connection(es ? "Conexión perdida: reconectando…" : "Connection lost: reconnecting…", "closed");
  });
  setInterval(function () {
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = parseInt(el.dataset.countdown, 10);
      if (left > 0) {
        left -= 1;
        el.dataset.countdown = String(left);
        el.textContent = el.textContent.replace(/\d+(?=\s*s\b)/, String(left));
      }
    });
  }, 1000);
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
