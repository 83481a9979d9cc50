// Error hook of the explorer: collects console errors, uncaught errors, rejected promises and Content-Security-Policy
// violations into window.__errors before the wasm loads, so the browser tests fail on any of them. It is a file,
// not an inline script, because the page runs under `script-src 'self'` (no inline code).
"use strict";
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push("onerror: " + (e.message || e)); });
window.addEventListener("unhandledrejection", function (e) { window.__errors.push("unhandledrejection: " + e.reason); });
// A blocked inline style or script is a silent failure in the page (the browser only logs a warning), so it is
// recorded as an error: any violation means the page relies on something the policy forbids.
document.addEventListener("securitypolicyviolation", function (e) {
  window.__errors.push("csp: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
    (e.sourceFile ? " at " + e.sourceFile + ":" + e.lineNumber : "") + (e.sample ? " (" + e.sample + ")" : ""));
});
(function () {
  var orig = console.error;
  console.error = function () {
    window.__errors.push(Array.prototype.map.call(arguments, String).join(" "));
    return orig.apply(console, arguments);
  };
})();
