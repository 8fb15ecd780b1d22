// Widgets: live read-outs for sliders (what htmx does with answers is base.html's and site.js's).
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
})();
