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
    if (!out) return;
    // A log temperature slider (forms.LogTemperatureSlider) moves s in [-1, 1]; show τ.
    var lo = parseFloat(input.getAttribute("data-tau-min")), hi = parseFloat(input.getAttribute("data-tau-max"));
    var s = parseFloat(input.value);
    if (lo && hi) {
      var tau = Number((s < 0 ? Math.pow(lo, -s) : Math.pow(hi, s)).toPrecision(3)).toString();
      out.textContent = tau;
      input.setAttribute("aria-valuetext", "τ = " + tau);
    } else {
      out.textContent = input.value;
    }
  });
})();
