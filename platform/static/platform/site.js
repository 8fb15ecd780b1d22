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
  // A <details data-open-wide> (the chapter's table of contents) starts open where there is
  // room for it beside the text; on a phone it stays a one-line "On this page".
  if (window.matchMedia("(min-width: 64rem)").matches) {
    document.querySelectorAll("details[data-open-wide]").forEach(function (el) { el.open = true; });
  }
  // Copy buttons are hidden until this script runs (they do nothing without it).
  document.querySelectorAll("[data-copy][hidden]").forEach(function (el) { el.hidden = false; });
})();

// Every htmx answer, in one place (the rules of what is swapped are base.html's htmx-config):
// * a 5xx, a network failure or a whole error page where a fragment was expected leaves the
//   page as it was and says "Could not reach the server — try again." inside the widget or
//   form that asked;
// * after a swap the result is read out (#live-region) and, when the learner pressed a button,
//   focus moves to the feedback ([data-focus], else the first status or alert in the new
//   content), so the next Tab continues from there.
(function () {
  "use strict";
  var UNREACHABLE = "Could not reach the server — try again.";

  function announce(text) {
    var region = document.getElementById("live-region");
    if (!region || !text) return;
    region.textContent = "";
    // A change after the clear is what screen readers notice, even for the same words twice.
    setTimeout(function () { region.textContent = text; }, 30);
  }

  function words(el) {
    return el ? el.textContent.replace(/\s+/g, " ").trim().slice(0, 400) : "";
  }

  // Where an error message goes: the widget, else the form, that made the request.
  function scopeOf(detail) {
    var elt = detail.elt && detail.elt.closest ? detail.elt : detail.target;
    return (elt && (elt.closest("[data-widget]") || elt.closest("form"))) || detail.target;
  }

  function clearError(scope) {
    if (!scope) return;
    var old = scope.querySelector(".request-error");
    if (old) old.remove();
  }

  function showError(detail, text) {
    var scope = scopeOf(detail);
    if (!scope || !scope.isConnected) return;
    clearError(scope);
    var p = document.createElement("p");
    p.className = "request-error feedback-bad";
    p.setAttribute("role", "alert");
    p.tabIndex = -1;
    p.textContent = text || UNREACHABLE;
    // Beside the button that was pressed ("Check Q2"), else at the top of the target that
    // would have changed (a widget's result), else at the end of the widget or form.
    var trigger = detail.requestConfig && detail.requestConfig.triggeringEvent;
    var submitter = trigger && trigger.submitter;
    var target = detail.target;
    if (submitter && scope.contains(submitter)) {
      submitter.insertAdjacentElement("afterend", p);
    } else if (target && target !== scope && scope.contains(target) && !target.matches("form")) {
      target.insertBefore(p, target.firstChild);
    } else {
      scope.appendChild(p);
    }
  }

  function isWholePage(text) {
    return /^\s*(<!doctype|<html)/i.test(text || "");
  }

  // A message an error response meant for the reader ([data-reader-message]), if any.
  function readerMessage(text) {
    if (!text) return "";
    var doc = new DOMParser().parseFromString(text, "text/html");
    return words(doc.querySelector("[data-reader-message]"));
  }

  var pending = new WeakMap(); // xhr -> what its swap should do once it has settled

  document.addEventListener("htmx:beforeRequest", function (event) {
    clearError(scopeOf(event.detail));
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var xhr = detail.xhr;
    if (xhr.status >= 400 && detail.shouldSwap && isWholePage(xhr.responseText)) {
      // A full error page (a CSRF failure, a proxy's page) would put a page inside the page.
      detail.shouldSwap = false;
      showError(detail, readerMessage(xhr.responseText) || UNREACHABLE);
      return;
    }
    if (!detail.shouldSwap) return;
    var trigger = detail.requestConfig && detail.requestConfig.triggeringEvent;
    pending.set(xhr, {
      targetId: detail.target && detail.target.id,
      move: !!trigger && (trigger.type === "submit" || trigger.type === "click")
    });
  });

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status >= 500) showError(event.detail, readerMessage(xhr.responseText) || UNREACHABLE);
  });
  document.addEventListener("htmx:sendError", function (event) { showError(event.detail); });
  document.addEventListener("htmx:timeout", function (event) { showError(event.detail); });

  document.addEventListener("htmx:afterSettle", function (event) {
    var job = event.detail.xhr && pending.get(event.detail.xhr);
    if (!job) return; // not ours, or done: out-of-band parts settle too
    pending.delete(event.detail.xhr);
    var root = (job.targetId && document.getElementById(job.targetId)) || event.target;
    if (!root || !root.isConnected) return;
    var feedback = root.querySelector("[data-focus]");
    if (!feedback) {
      var candidates = root.querySelectorAll("[data-announce], [role=status], [role=alert], .form-feedback");
      for (var i = 0; i < candidates.length && !feedback; i++) {
        if (words(candidates[i])) feedback = candidates[i];
      }
    }
    // A target that is itself a live region (the newsletter boxes) speaks for itself.
    if (!root.closest("[aria-live]")) announce(words(root.querySelector("[data-announce]") || feedback || root));
    if (job.move) {
      var target = feedback || root;
      if (target.tabIndex < 0 && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "nearest" });
    }
  });
})();

// htmx on demand. A page that names it in <meta name="htmx-src"> (every page but the chapter
// and widget pages, which load it with the page) fetches it the first time a reader focuses or
// presses a form htmx drives (the newsletter box, a review card). Links (the notebook's filters)
// do not ask for it: a click navigates before it could arrive; once here, htmx takes them over.
// A form sent before htmx has arrived waits for it and is then sent through it, so the answer
// still lands in place; if htmx cannot be fetched, the form is sent as a plain one. Without
// JavaScript they are plain forms and links.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="htmx-src"]');
  if (!meta || window.htmx) return;
  var state = "idle"; // then "loading", "ready" or "failed"
  var waiting = [];
  function settle(outcome) {
    state = outcome;
    waiting.splice(0).forEach(function (send) { send(); });
  }
  function fetchHtmx() {
    if (state !== "idle") return;
    state = "loading";
    var insert = function () {
      var script = document.createElement("script");
      script.src = meta.getAttribute("content");
      script.onload = function () { settle("ready"); };
      script.onerror = function () { settle("failed"); };
      document.head.appendChild(script);
    };
    // htmx sets itself up at once only on a fully loaded document.
    if (document.readyState === "complete") insert();
    else window.addEventListener("load", insert, { once: true });
  }
  function drivesHtmx(target) {
    return target && target.closest && target.closest("form[hx-get], form[hx-post]");
  }
  function reached(event) {
    if (drivesHtmx(event.target)) fetchHtmx();
  }
  document.addEventListener("focusin", reached);
  document.addEventListener("pointerdown", reached);
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (state === "ready" || state === "failed" || !drivesHtmx(form)) return;
    event.preventDefault();
    var submitter = event.submitter || null;
    waiting.push(function () {
      if (state === "ready") form.requestSubmit(submitter);
      else HTMLFormElement.prototype.submit.call(form);
    });
    fetchHtmx();
  });
})();
