// The newsletter boxes post with htmx. htmx does not swap 4xx answers by default; the sign-up
// answers 400 (bad address), 429 (rate limited) and 503 (mail down) with a message meant for
// the reader, so let those through for the boxes only. Loaded once per box; registers once.
(function () {
  "use strict";
  if (window.fsNewsletterBox) return;
  window.fsNewsletterBox = true;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.closest || !elt.closest("[data-newsletter-box]")) return;
    if ([400, 429, 503].indexOf(event.detail.xhr.status) !== -1) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
