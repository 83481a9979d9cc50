// Lets code that sets a `style` attribute keep working under `style-src 'self'`: such a call is rerouted to the
// element's style declaration (the CSSOM), which the policy allows because it comes from the page's own script, not
// from markup. plotters (the chart library) measures every label with a <span style="font-size: ..."> and would
// otherwise get unstyled, wrong sizes and a policy violation per label. Nothing else changes: other attributes,
// and style attributes in served HTML, go through untouched (the latter stay blocked).
"use strict";
(function () {
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (String(name).toLowerCase() === "style" && this.style) {
      this.style.cssText = String(value);
      return;
    }
    return setAttribute.call(this, name, value);
  };
})();
