// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Buttons with data-copy="element-id" copy that element's text to the clipboard.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button || !navigator.clipboard) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });
  // Copy buttons are hidden until this script runs (they do nothing without it).
  document.querySelectorAll("[data-copy][hidden]").forEach(function (el) { el.hidden = false; });
})();
