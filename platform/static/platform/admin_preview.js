// Admin live preview: htmx config as on the site (no injected styles: the CSP forbids them),
// and rows added to an inline formset get their preview wired up too.
(function () {
  "use strict";
  if (window.htmx) {
    window.htmx.config.includeIndicatorStyles = false;
    window.htmx.config.allowEval = false;
    window.htmx.config.allowScriptTags = false;
  }
  document.addEventListener("formset:added", function (event) {
    if (window.htmx && event.target) { window.htmx.process(event.target); }
  });
})();
