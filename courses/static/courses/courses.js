// Explorable equations. The server marks every occurrence of a labelled part or a glossary symbol
// in the page's formulas with a class (pt-<id>, sy-<slug>; courses/explorable.py). Pointing at a
// part chip, a symbol chip or a marked piece of formula (mouse or keyboard focus) lights every
// element with that class and opens the part's explanation; Escape closes it.
(function () {
  "use strict";
  var lit = null;
  function markOf(target) {
    if (!target || !target.closest) return null;
    var chip = target.closest("[data-mark]");
    if (chip) return chip.getAttribute("data-mark");
    var node = target.closest(".eq-mark");
    if (!node) return null;
    var names = node.getAttribute("class").split(" ");
    return names.filter(function (n) { return n.indexOf("pt-") === 0; })[0] ||
      names.filter(function (n) { return n.indexOf("sy-") === 0; })[0] || null;
  }
  function light(mark) {
    if (mark === lit) return;
    [lit, mark].forEach(function (name, on) {
      if (!name || !/^(pt|sy)-[\w-]+$/.test(name)) return;
      document.querySelectorAll("." + name).forEach(function (el) { el.classList.toggle("is-lit", !!on); });
      document.querySelectorAll('[data-mark="' + name + '"]').forEach(function (el) { el.classList.toggle("is-active", !!on); });
    });
    lit = mark;
  }
  // What the pointer is over and what has keyboard focus are kept apart: the pointer wins
  // while it is on a mark; leaving one falls back to the focused one.
  var hovered = null, focused = null;
  function update() { light(hovered || focused); }
  document.addEventListener("mouseover", function (event) { hovered = markOf(event.target); update(); });
  document.addEventListener("focusin", function (event) { focused = markOf(event.target); update(); });
  document.addEventListener("focusout", function (event) {
    if (event.target.classList) event.target.classList.remove("tip-off");
    focused = null;
    update();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && lit) {
      if (document.activeElement && document.activeElement.classList) document.activeElement.classList.add("tip-off");
      hovered = focused = null;
      update();
    }
  });
})();
