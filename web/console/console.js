// The console's one script (served by the gateway; the page's CSP allows no other script and no
// inline code). It reads a chosen key file (.p8, a service account's JSON, a token) into its
// field, so a secret can be uploaded as a file rather than pasted, and runs the passkey
// ceremonies (below); every other page works without it.
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

// Passkeys (docs/console.md): a form with `data-options` and a button with `data-passkey`
// ("create" on the Account page, "get" on the sign-in page). The button asks the console for the
// ceremony's options (the API's own, relayed by the console with its form token), lets the
// browser make or use the credential, and posts it in the form's `response` field (and the
// sign-in's `flow_id`), so the answer is an ordinary page. Where the browser has no WebAuthn,
// the sign-in form stays hidden.
const b64urlToBytes = (text) => {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
};
const bytesToB64url = (buffer) => {
  let text = "";
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const descriptors = (list) => (list || []).map((d) => ({ ...d, id: b64urlToBytes(d.id) }));

function creationOptions(options) {
  return { ...options, challenge: b64urlToBytes(options.challenge),
           user: { ...options.user, id: b64urlToBytes(options.user.id) },
           excludeCredentials: descriptors(options.excludeCredentials) };
}

function requestOptions(options) {
  return { ...options, challenge: b64urlToBytes(options.challenge), allowCredentials: descriptors(options.allowCredentials) };
}

function credentialJSON(credential) {
  const r = credential.response;
  const response = { clientDataJSON: bytesToB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = bytesToB64url(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  }
  if (r.authenticatorData) response.authenticatorData = bytesToB64url(r.authenticatorData);
  if (r.signature) response.signature = bytesToB64url(r.signature);
  if (r.userHandle) response.userHandle = bytesToB64url(r.userHandle);
  return { id: credential.id, rawId: bytesToB64url(credential.rawId), type: credential.type, response,
           authenticatorAttachment: credential.authenticatorAttachment || undefined,
           clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {} };
}

async function passkeyCeremony(form, kind) {
  const fields = new URLSearchParams();
  const csrf = form.querySelector("input[name=csrf]");
  if (csrf) fields.set("csrf", csrf.value);
  const email = document.getElementById("email");
  if (kind === "get" && email && email.value) fields.set("email", email.value);
  const answer = await fetch(form.dataset.options, { method: "POST", body: fields, credentials: "same-origin" });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(body.detail || "The console did not answer (HTTP " + answer.status + ").");
  let credential;
  if (kind === "create") {
    credential = await navigator.credentials.create({ publicKey: creationOptions(body.data) });
  } else {
    credential = await navigator.credentials.get({ publicKey: requestOptions(body.data.options) });
    form.elements.flow_id.value = body.data.flow_id;
  }
  if (!credential) throw new Error("No passkey was chosen.");
  form.elements.response.value = JSON.stringify(credentialJSON(credential));
  form.submit();
}

document.addEventListener("DOMContentLoaded", () => {
  if (!window.PublicKeyCredential) return;
  for (const button of document.querySelectorAll("button[data-passkey]")) {
    const form = button.form;
    if (!form) continue;
    form.hidden = false;
    const error = form.querySelector(".notice.error");
    button.addEventListener("click", () => {
      button.disabled = true;
      if (error) error.hidden = true;
      passkeyCeremony(form, button.dataset.passkey).catch((failure) => {
        button.disabled = false;
        if (!error) return;
        error.textContent = failure.name === "NotAllowedError" ? "The passkey was not used (cancelled or timed out)." : String(failure.message || failure);
        error.hidden = false;
      });
    });
  }
});
