// Passkeys through the client, with the harness's software authenticator standing in for
// navigator.credentials (real keys, real CBOR): the options go through toCreationOptions /
// toRequestOptions as a browser would get them, and the authenticator's answer comes back as a
// PublicKeyCredential-like object of ArrayBuffers that credentialToJSON turns into JSON.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CredentialJSON, CredentialLike, base64urlDecode, base64urlEncode } from "../../src/index.js";
import { PASSWORD, client, helper, uniqueEmail, when } from "./support.js";

/** The authenticator's JSON as the browser's object: ArrayBuffers and getTransports(). */
function asPlatformCredential(json: CredentialJSON): CredentialLike {
  const buf = (s?: string | null) => (s ? base64urlDecode(s).slice().buffer : undefined);
  return {
    id: json.id,
    rawId: buf(json.rawId)!,
    type: json.type,
    response: {
      clientDataJSON: buf(json.response.clientDataJSON)!,
      attestationObject: buf(json.response.attestationObject),
      getTransports: json.response.transports ? () => json.response.transports! : undefined,
      authenticatorData: buf(json.response.authenticatorData),
      signature: buf(json.response.signature),
      userHandle: buf(json.response.userHandle) ?? null,
    },
    authenticatorAttachment: json.authenticatorAttachment ?? null,
    getClientExtensionResults: () => json.clientExtensionResults,
  };
}

test("register, list, sign in and delete a passkey", when, async () => {
  const email = uniqueEmail("pk");
  const c = client();
  const signedUp = await c.signUp({ email, password: PASSWORD });
  assert.ok(signedUp.status === "signedIn");

  const registration = await c.passkeyRegistrationOptions();
  assert.equal(registration.options.rp.id, "sdk.example.test");
  const challenge = new Uint8Array(registration.publicKey.challenge as ArrayBuffer);
  assert.ok(challenge.length >= 16);
  assert.equal(base64urlEncode(challenge), registration.options.challenge, "the challenge's bytes, decoded");
  assert.equal(base64urlEncode(registration.publicKey.user.id as ArrayBuffer), registration.options.user.id);
  const created: CredentialJSON = await helper("/passkey/create", { options: registration.options });
  const passkey = await c.registerPasskey(asPlatformCredential(created), "Test key");
  assert.equal(passkey.name, "Test key");
  assert.deepEqual((await c.passkeys()).map((p) => p.id), [passkey.id]);

  const other = client();
  const started = await other.passkeySignInOptions(email);
  assert.equal(started.hasPasskeys, true);
  assert.equal(started.publicKey.allowCredentials?.length, 1);
  assert.equal(base64urlEncode(started.publicKey.allowCredentials![0].id as ArrayBuffer), created.rawId);
  const assertion: CredentialJSON = await helper("/passkey/get", { options: started.options, credential_id: created.id });
  const signedIn = await other.signInWithPasskey({ flowId: started.flowId, credential: asPlatformCredential(assertion) });
  assert.ok(signedIn.status === "signedIn");
  assert.equal(signedIn.user.uid, signedUp.user.uid);

  const unknown = await client().passkeySignInOptions(uniqueEmail("nobody"));
  assert.equal(unknown.hasPasskeys, false);

  await c.deletePasskey(passkey.id);
  assert.deepEqual(await c.passkeys(), []);
});
