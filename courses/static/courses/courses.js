// Courses: let htmx swap in the 4xx fragments the chapter forms answer with. They say what was
// wrong ("Pick an answer to question 2 first.") and must replace the form like a success does.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    if (status === 400 || status === 403 || status === 404) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
