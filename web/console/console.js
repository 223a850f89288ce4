// The console's one script (served by the gateway; the page's CSP allows no other script and no
// inline code). Everything works without it; it only reads a chosen key file (.p8, a service account's
// JSON, a token) into its field, so a secret can be uploaded as a file rather than pasted.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  for (const input of document.querySelectorAll("input[type=file][data-into]")) {
    input.addEventListener("change", () => {
      const target = document.getElementById(input.dataset.into);
      const file = input.files && input.files[0];
      if (!target || !file) return;
      if (file.size > 16384) {
        target.value = "";
        input.setCustomValidity("A key file is a few kilobytes at most; this file is too large.");
        input.reportValidity();
        return;
      }
      input.setCustomValidity("");
      file.text().then((text) => { target.value = text; });
    });
  }
});
