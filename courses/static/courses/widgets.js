// Widgets: live read-outs for sliders, and showing 400/403 fragments that htmx would drop.
// Every widget works without this file (plain GET forms that return the whole page).
(function () {
  "use strict";
  if (window.fromScratchWidgets) return; // included once per embed; run once per page
  window.fromScratchWidgets = true;

  // A range input's <output data-readout-for="id"> shows its value while it moves.
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.id || input.type !== "range") return;
    var out = document.querySelector('[data-readout-for="' + input.id + '"]');
    if (out) out.textContent = input.value;
  });

  // htmx does not swap 4xx responses by default; a widget's 400 says what is wrong, show it.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    if ((status === 400 || status === 403) && event.detail.target &&
        event.detail.target.closest("[data-widget]")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
