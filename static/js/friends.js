// «Amigos» (templates/games/friends.html): the pages «Ver más» added to a list stay when the lists are drawn
// again.  The page's socket draws them again whenever someone followed comes or goes, or a follow or a block
// changes, and so does the answer to a row's button: an out-of-band swap of #friends-live with every list at
// its first page (games.read.friends.friends_html).  When some list shows more than its first page, that
// drawing is put aside and the lists are asked for again with as many pages as each one shows
// (GET /amigos/?listas=1&sigues=3…, each list's data-pages).
(function () {
  "use strict";
  if (!document.getElementById("friends-live") || typeof htmx === "undefined") return;

  // The lists showing more than their first page, and how many (``also``: one more list's pages, at least).
  function pagesShown(also) {
    var query = new URLSearchParams();
    document.querySelectorAll("#friends-live ul.people[data-list]").forEach(function (list) {
      var pages = Number(list.getAttribute("data-pages")) || 1;
      if (pages > 1) query.set(list.getAttribute("data-list"), String(pages));
    });
    if (also && also.pages > Number(query.get(also.list) || 1)) query.set(also.list, String(also.pages));
    return query;
  }

  function drawAgain(query) {
    query.set("listas", "1");
    htmx.ajax("GET", window.location.pathname + "?" + query.toString(), {
      target: "#friends-live",
      swap: "outerHTML",
    });
  }

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "friends-live") return;
    var query = pagesShown(null);
    if (!query.toString()) return; // every list at its first page: as drawn
    event.detail.shouldSwap = false;
    drawAgain(query);
  });

  // «Ver más» answered: its list shows one page more.  If the lists were drawn again meanwhile (its row is no
  // longer on the page), they are asked for again with that page.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var link = event.detail.requestConfig && event.detail.requestConfig.elt; // (the event's elt: its target)
    var xhr = event.detail.xhr;
    if (!link || !link.hasAttribute || !link.hasAttribute("data-more") || !xhr || xhr.status !== 200) return;
    var list = link.closest("ul.people[data-list]");
    if (!list) return;
    var page = Number(link.getAttribute("data-more"));
    if (list.isConnected) {
      list.setAttribute("data-pages", String(page));
      return;
    }
    event.detail.shouldSwap = false;
    drawAgain(pagesShown({ list: list.getAttribute("data-list"), pages: page }));
  });
})();
