import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ErrorCode,
  IdentityClient,
  IdentityError,
  MemoryStorage,
  StorageKeys,
  base64urlDecode,
  base64urlEncode,
  credentialToJSON,
  localStorageStorage,
  secureStoreStorage,
  sha256Hex,
  toCreationOptions,
  toRequestOptions,
} from "../../src/index.js";
import { sha256Portable } from "../../src/encoding.js";
import { Stub, USER, json, problem, tokens } from "./stub.js";

const BASE = "https://id.example.test/";

function signedInClient(handler: ConstructorParameters<typeof Stub>[0]) {
  const stub = new Stub((r) => (r.path === "/v1/auth/sign-in" ? json(200, tokens()) : handler(r)));
  const storage = new MemoryStorage();
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch, headers: { "User-Agent": "unit" } });
  return { stub, storage, client, signIn: () => client.signIn({ email: "jane@example.com", password: "pw" }) };
}

test("problem+json becomes IdentityError with code, field errors, Retry-After and request id", async () => {
  const stub = new Stub(() =>
    problem(422, "auth/weak-password", { errors: [{ location: "body.password", message: "too short" }] }, { "Retry-After": "7" }),
  );
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", fetch: stub.fetch });
  const error = await client.signUp({ email: "a@example.com", password: "x" }).catch((e) => e);
  assert.ok(error instanceof IdentityError);
  assert.equal(error.code, ErrorCode.weakPassword);
  assert.equal(error.status, 422);
  assert.deepEqual(error.fieldErrors, [{ location: "body.password", message: "too short" }]);
  assert.equal(error.retryAfter, 7);
  assert.equal(error.requestId, "req_1");
  assert.equal(error.detail, "d");
  // A body that is not problem+json still gives the status.
  const html = new Stub(() => new Response("<html>bad gateway</html>", { status: 502, headers: { "X-Request-Id": "req_x" } }));
  const other = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", fetch: html.fetch });
  const e2 = await other.sendEmailCode("a@example.com").catch((e) => e);
  assert.ok(e2 instanceof IdentityError && e2.code === "http/502" && e2.requestId === "req_x");
});

test("requests: base URL, X-App-Key, JSON body, no credentials with bearer transport, extra headers", async () => {
  const stub = new Stub(() => json(202, { data: {} }));
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", fetch: stub.fetch, headers: { "User-Agent": "unit" } });
  await client.sendEmailCode("a@example.com");
  const [seen] = stub.seen;
  assert.equal(seen.method, "POST");
  assert.equal(seen.path, "/v1/auth/email-code/send");
  assert.equal(seen.headers["x-app-key"], "pk_test");
  assert.equal(seen.headers["content-type"], "application/json");
  assert.equal(seen.headers["user-agent"], "unit");
  assert.equal(seen.headers["authorization"], undefined);
  assert.equal(seen.credentials, "omit");
  assert.deepEqual(seen.body, { email: "a@example.com" });
});

test("every signed-in route: method, path and body as docs/api-contract.md has them", async () => {
  const answers: Record<string, unknown> = {
    "GET /v1/me": { data: USER },
    "PATCH /v1/me": { data: { ...USER, first_name: "Ada" } },
    "GET /v1/me/sessions": { data: [{ id: "ses_1", current: true, created_at: "t", last_seen_at: "t", expires_at: "t", ip: "1.2.3.4", user_agent: "ua", amr: ["pwd"], mfa_verified: false }] },
    "POST /v1/me/devices": { data: { id: "dev_1", token: "tok", platform: "ios", kind: "apns", device_name: "phone", session_id: "ses_1", created_at: "t" } },
    "GET /v1/me/devices": { data: [] },
    "POST /v1/me/email/change": { data: { expires_in: 600 } },
    "POST /v1/me/email/change/confirm": { data: { ...USER, email: "new@example.com", email_verified: true } },
    "GET /v1/me/mfa": { data: { enabled: true, methods: ["totp"], backup_codes_remaining: 10, last_used_at: null, enabled_at: "t" } },
    "POST /v1/me/mfa/totp": { data: { secret: "ABC", otpauth_uri: "otpauth://totp/x", qr_svg: "<svg/>" } },
    "POST /v1/me/mfa/totp/confirm": { data: { backup_codes: ["a", "b"] } },
    "POST /v1/me/mfa/backup-codes": { data: { backup_codes: ["c"] } },
    "POST /v1/me/mfa/email/confirm": { data: { backup_codes: ["d"] } },
    "POST /v1/me/mfa/sms/confirm": { data: { backup_codes: ["e"] } },
    "POST /v1/me/phone": { data: { session_id: "ph_1", expires_in: 600 } },
    "POST /v1/me/phone/verify": { data: { ...USER, phone: "+33612345678" } },
    "GET /v1/me/passkeys": { data: [{ id: "pk_1", name: "key", credential_id: "abc", transports: [], backup_eligible: true, backup_state: false, created_at: "t", last_used_at: null }] },
  };
  const { stub, client, signIn } = signedInClient((r) => {
    const answer = answers[`${r.method} ${r.path}`];
    return answer ? json(200, answer) : json(204, null);
  });
  await signIn();
  assert.equal((await client.me()).firstName, "Jane");
  assert.equal((await client.updateMe({ firstName: "Ada" })).firstName, "Ada");
  assert.equal(client.currentUser?.firstName, "Ada", "the state follows the profile");
  const [session] = await client.sessions();
  assert.equal(session.userAgent, "ua");
  assert.equal(session.mfaVerified, false);
  const device = await client.registerDevice({ token: "tok", platform: "ios", kind: "apns", name: "phone" });
  assert.equal(device.deviceName, "phone");
  await client.devices();
  await client.unregisterDevice("dev_1/../x");
  assert.equal(await client.startEmailChange("new@example.com"), 600);
  assert.equal((await client.confirmEmailChange("123456")).email, "new@example.com");
  await client.changePassword({ currentPassword: "old", newPassword: "new long passphrase" });
  await client.sendEmailVerification();
  assert.equal((await client.mfaStatus()).backupCodesRemaining, 10);
  assert.equal((await client.enrollTOTP()).otpauthUri, "otpauth://totp/x");
  assert.deepEqual(await client.confirmTOTP("123456"), ["a", "b"]);
  assert.deepEqual(await client.regenerateBackupCodes(), ["c"]);
  await client.enrollEmailMFA();
  assert.deepEqual(await client.confirmEmailMFA("1"), ["d"]);
  await client.enrollSMSMFA();
  assert.deepEqual(await client.confirmSMSMFA("2"), ["e"]);
  await client.disableMFA("654321");
  assert.deepEqual(await client.addPhone({ phone: "0612345678", countryCode: "FR" }), { sessionId: "ph_1", expiresIn: 600 });
  assert.equal((await client.verifyPhone({ sessionId: "ph_1", code: "123456" })).phone, "+33612345678");
  assert.equal((await client.passkeys())[0].credentialId, "abc");
  await client.deletePasskey("pk_1");
  await client.endSession("ses_other");
  assert.equal(client.isSignedIn, true);
  const sent = stub.seen.slice(1).map((s) => [s.method, s.path, s.body]);
  assert.deepEqual(sent, [
    ["GET", "/v1/me", undefined],
    ["PATCH", "/v1/me", { first_name: "Ada" }],
    ["GET", "/v1/me/sessions", undefined],
    ["POST", "/v1/me/devices", { token: "tok", platform: "ios", kind: "apns", device_name: "phone" }],
    ["GET", "/v1/me/devices", undefined],
    ["DELETE", "/v1/me/devices/dev_1%2F..%2Fx", undefined],
    ["POST", "/v1/me/email/change", { email: "new@example.com" }],
    ["POST", "/v1/me/email/change/confirm", { code: "123456" }],
    ["POST", "/v1/me/password", { current_password: "old", new_password: "new long passphrase" }],
    ["POST", "/v1/me/email/verification", undefined],
    ["GET", "/v1/me/mfa", undefined],
    ["POST", "/v1/me/mfa/totp", undefined],
    ["POST", "/v1/me/mfa/totp/confirm", { code: "123456" }],
    ["POST", "/v1/me/mfa/backup-codes", undefined],
    ["POST", "/v1/me/mfa/email", undefined],
    ["POST", "/v1/me/mfa/email/confirm", { code: "1" }],
    ["POST", "/v1/me/mfa/sms", undefined],
    ["POST", "/v1/me/mfa/sms/confirm", { code: "2" }],
    ["DELETE", "/v1/me/mfa", { code: "654321" }],
    ["POST", "/v1/me/phone", { phone: "0612345678", country_code: "FR" }],
    ["POST", "/v1/me/phone/verify", { session_id: "ph_1", code: "123456" }],
    ["GET", "/v1/me/passkeys", undefined],
    ["DELETE", "/v1/me/passkeys/pk_1", undefined],
    ["DELETE", "/v1/me/sessions/ses_other", undefined],
  ]);
  assert.ok(stub.seen.slice(1).every((s) => /^Bearer /.test(s.headers["authorization"] ?? "")));
  // Ending the current session signs out.
  const current = JSON.parse(JSON.stringify(stub.seen[0]));
  void current;
  await client.endSession("ses_" + /ses_(\d+)/.exec(JSON.stringify(await Promise.resolve(client["session"])))![1]);
  assert.equal(client.isSignedIn, false);
});

test("sign-in methods send the contract's bodies", async () => {
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/nonce") return json(200, { data: { nonce: "abc", expires_at: "t" } });
    if (r.path === "/v1/auth/phone/send") return json(202, { data: { session_id: "ph_1", expires_in: 600 } });
    if (r.path === "/v1/auth/email-code/send") return json(202, { data: {} });
    return json(200, tokens({ is_new_user: true }));
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", fetch: stub.fetch });
  const nonce = await client.appleNonce();
  assert.deepEqual(nonce, { value: "abc", sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", expiresAt: "t" });
  const apple = await client.signInWithApple({ identityToken: "it", authorizationCode: "ac", nonce: nonce.value, firstName: "Grace" }, { upgradeGuest: false });
  assert.equal(apple.status === "signedIn" && apple.isNewUser, true);
  await client.signInWithGoogle({ idToken: "gt" });
  await client.signInWithFirebase({ idToken: "ft" });
  await client.sendEmailCode("a@example.com");
  await client.signInWithEmailCode({ email: "a@example.com", code: "123456" });
  await client.signInWithMagicLink("https://app.example/auth?mode=sign_in&email=a%40example.com&code=654321");
  assert.deepEqual(await client.sendPhoneCode({ phone: "0612345678", countryCode: "FR" }), { sessionId: "ph_1", expiresIn: 600 });
  await client.signInWithPhoneCode({ sessionId: "ph_1", code: "111111" });
  await client.signIn({ identifier: "ada", password: "pw" });
  await client.signUp({ email: "b@example.com", password: "pw", firstName: "B" });
  assert.deepEqual(stub.seen.map((s) => [s.method, s.path, s.body]), [
    ["GET", "/v1/auth/nonce", undefined],
    ["POST", "/v1/auth/apple", { identity_token: "it", authorization_code: "ac", nonce: "abc", first_name: "Grace" }],
    ["POST", "/v1/auth/google", { id_token: "gt" }],
    ["POST", "/v1/auth/id-token", { provider: "firebase", id_token: "ft" }],
    ["POST", "/v1/auth/email-code/send", { email: "a@example.com" }],
    ["POST", "/v1/auth/email-code/verify", { email: "a@example.com", code: "123456" }],
    ["POST", "/v1/auth/email-code/verify", { email: "a@example.com", code: "654321" }],
    ["POST", "/v1/auth/phone/send", { phone: "0612345678", country_code: "FR" }],
    ["POST", "/v1/auth/phone/verify", { session_id: "ph_1", code: "111111" }],
    ["POST", "/v1/auth/sign-in", { identifier: "ada", password: "pw" }],
    ["POST", "/v1/auth/sign-up", { email: "b@example.com", password: "pw", first_name: "B" }],
  ]);
  assert.equal(IdentityClient.parseMagicLink("https://x.example/?mode=reset_password&email=a&code=1"), null);
  assert.equal(IdentityClient.parseMagicLink("not a url"), null);
});

test("account deletion sends each kind of proof and signs out", async () => {
  const proofs: [Parameters<IdentityClient["deleteAccount"]>[0], Record<string, unknown>][] = [
    [{ password: "pw" }, { password: "pw" }],
    [{ guestSecret: "s".repeat(43) }, { secret: "s".repeat(43) }],
    [{ googleIdToken: "gt" }, { id_token: "gt" }],
    [{ appleIdentityToken: "it", authorizationCode: "ac", nonce: "n" }, { identity_token: "it", authorization_code: "ac", nonce: "n" }],
    [{ recentSignIn: true }, {}],
  ];
  for (const [proof, body] of proofs) {
    const { stub, client, signIn } = signedInClient(() => json(204, null));
    await signIn();
    await client.deleteAccount(proof);
    const [seen] = stub.to("/v1/me");
    assert.equal(seen.method, "DELETE");
    assert.deepEqual(seen.body, body);
    assert.equal(client.isSignedIn, false);
  }
  const { client, storage, signIn } = signedInClient(() => json(204, null));
  await signIn();
  storage.setItem(StorageKeys.guestSecret, "g".repeat(43));
  await client.deleteAccount({ storedGuestSecret: true });
  assert.equal(storage.getItem(StorageKeys.guestSecret), null);
});

test("cookie transport: credentials included, no token anywhere in JavaScript, sign-out clears the state", async () => {
  let signedIn = false;
  const stub = new Stub((r) => {
    assert.equal(r.headers["authorization"], undefined, "no Authorization header");
    if (r.path === "/v1/auth/login") {
      assert.deepEqual(r.body, { email: "jane@example.com", password: "pw", transport: "cookie" });
      signedIn = true;
      return json(200, { session: { id: "ses_1" }, user: { id: "usr_1" } }, { "Set-Cookie": "__Host-session=st_x; HttpOnly" });
    }
    if (r.path === "/v1/me") return signedIn ? json(200, { data: USER }) : problem(401, "auth/invalid-token");
    if (r.path === "/v1/auth/sign-out") {
      signedIn = false;
      return json(204, null);
    }
    if (r.path === "/v1/auth/apple/nonce") return json(200, { nonce: "abc", expires_at: "t" });
    return problem(404, "auth/not-found");
  });
  const storage = new MemoryStorage();
  const writes: string[] = [];
  const spy = { getItem: (k: string) => storage.getItem(k), setItem: (k: string, v: string) => { writes.push(k); storage.setItem(k, v); }, removeItem: (k: string) => storage.removeItem(k) };
  const client = new IdentityClient({ baseUrl: BASE, transport: "cookie", storage: spy, fetch: stub.fetch });
  const states: string[] = [];
  client.onAuthStateChange((s) => states.push(s.status));
  await client.ready;
  assert.deepEqual(states, ["unknown", "signedOut"]);
  const result = await client.signIn({ email: "jane@example.com", password: "pw" });
  assert.equal(result.status, "signedIn");
  assert.equal(client.currentUser?.uid, USER.uid);
  await client.refresh();
  assert.equal((await client.me()).uid, USER.uid);
  assert.equal((await client.appleNonce()).sha256.length, 64);
  await assert.rejects(client.accessToken(), (e: any) => e.code === "client/unsupported");
  await assert.rejects(client.signInWithGoogle({ idToken: "x" }), (e: any) => e.code === "client/unsupported");
  await client.signOut();
  assert.deepEqual(states, ["unknown", "signedOut", "signedIn", "signedIn", "signedIn", "signedOut"]);
  assert.ok(stub.seen.every((s) => s.credentials === "include"));
  assert.ok(stub.seen.every((s) => s.headers["x-app-key"] === undefined), "found by its domain: no app key");
  assert.deepEqual(writes, [], "nothing stored");
  await assert.rejects(client.me(), (e: any) => e.code === "auth/invalid-token");
});

test("storage adapters: localStorage with a prefix, expo-secure-store's three methods", async () => {
  const backing = new Map<string, string>();
  const fakeLocal = {
    getItem: (k: string) => backing.get(k) ?? null,
    setItem: (k: string, v: string) => void backing.set(k, v),
    removeItem: (k: string) => void backing.delete(k),
  } as unknown as Storage;
  const local = localStorageStorage("app1:", fakeLocal);
  local.setItem("identity.session", "x");
  assert.equal(backing.get("app1:identity.session"), "x");
  const secure = new Map<string, string>();
  const store = secureStoreStorage({
    getItemAsync: async (k) => secure.get(k) ?? null,
    setItemAsync: async (k, v) => void secure.set(k, v),
    deleteItemAsync: async (k) => void secure.delete(k),
  });
  const stub = new Stub(() => json(200, tokens()));
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk", storage: store, fetch: stub.fetch });
  await client.signIn({ email: "a@example.com", password: "pw" });
  const kept = JSON.parse(secure.get(StorageKeys.session) as string);
  assert.match(kept.refreshToken, /^rt_/);
  // A new client on the same store (an app restart) is signed in without a request.
  const restarted = new IdentityClient({ baseUrl: BASE, appKey: "pk", storage: store, fetch: stub.fetch });
  await restarted.ready;
  assert.equal(restarted.isSignedIn, true);
  assert.equal(stub.seen.length, 1);
});

test("SHA-256: WebCrypto and the portable implementation agree with FIPS 180-4's vectors", async () => {
  const vectors: [string, string][] = [
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
    ["a".repeat(1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"],
  ];
  for (const [input, digest] of vectors) {
    assert.equal(await sha256Hex(input), digest);
    const portable = Array.from(sha256Portable(new TextEncoder().encode(input)), (b) => b.toString(16).padStart(2, "0")).join("");
    assert.equal(portable, digest);
  }
});

test("base64url round trips every length and refuses other characters", () => {
  for (let n = 0; n < 70; n++) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
    const text = base64urlEncode(bytes);
    assert.match(text, /^[A-Za-z0-9_-]*$/);
    assert.deepEqual(Array.from(base64urlDecode(text)), Array.from(bytes));
  }
  assert.equal(base64urlEncode(new Uint8Array([0xfb, 0xff])), "-_8");
  assert.throws(() => base64urlDecode("ab$c"));
});

test("passkey helpers: options JSON to WebAuthn's ArrayBuffers, a credential back to JSON", () => {
  const challenge = base64urlEncode(Uint8Array.from({ length: 32 }, (_, i) => i));
  const creation = toCreationOptions({
    challenge,
    rp: { id: "example.test", name: "Example" },
    user: { id: base64urlEncode(new Uint8Array([1, 2, 3])), name: "jane", displayName: "Jane" },
    pubKeyCredParams: [{ type: "public-key", alg: -7 }],
    excludeCredentials: [{ id: "AQID", type: "public-key", transports: ["internal"] }],
    authenticatorSelection: { residentKey: "preferred" },
  });
  assert.ok(creation.challenge instanceof ArrayBuffer);
  assert.deepEqual(Array.from(new Uint8Array(creation.challenge as ArrayBuffer)).slice(0, 3), [0, 1, 2]);
  assert.deepEqual(Array.from(new Uint8Array(creation.user.id as ArrayBuffer)), [1, 2, 3]);
  assert.equal(creation.rp.id, "example.test");
  assert.deepEqual(creation.authenticatorSelection, { residentKey: "preferred" });
  assert.deepEqual(Array.from(new Uint8Array(creation.excludeCredentials![0].id as ArrayBuffer)), [1, 2, 3]);
  const request = toRequestOptions({ challenge, rpId: "example.test", allowCredentials: [{ id: "AQID", type: "public-key" }], userVerification: "preferred" });
  assert.equal(request.rpId, "example.test");
  assert.equal(request.userVerification, "preferred");
  assert.ok(request.allowCredentials![0].id instanceof ArrayBuffer);

  const bytes = (...b: number[]) => new Uint8Array(b).buffer;
  const attestation = credentialToJSON({
    id: "AQID",
    rawId: bytes(1, 2, 3),
    type: "public-key",
    response: { clientDataJSON: bytes(123, 125), attestationObject: bytes(0xa0), getTransports: () => ["internal", "hybrid"] },
    authenticatorAttachment: "platform",
    getClientExtensionResults: () => ({ credProps: { rk: true } }),
  });
  assert.deepEqual(attestation, {
    id: "AQID",
    rawId: "AQID",
    type: "public-key",
    response: { clientDataJSON: "e30", attestationObject: "oA", transports: ["internal", "hybrid"] },
    clientExtensionResults: { credProps: { rk: true } },
    authenticatorAttachment: "platform",
  });
  const assertion = credentialToJSON({
    id: "AQID",
    rawId: bytes(1, 2, 3),
    type: "public-key",
    response: { clientDataJSON: bytes(123, 125), authenticatorData: bytes(9), signature: bytes(8), userHandle: bytes(7) },
  });
  assert.deepEqual(assertion.response, { clientDataJSON: "e30", authenticatorData: "CQ", signature: "CA", userHandle: "Bw" });
  // JSON already (React Native passkey libraries): passed through.
  assert.equal(credentialToJSON(attestation), attestation);
});

test("passkey sign-in and registration through the client", async () => {
  const challenge = base64urlEncode(new Uint8Array(32));
  const { stub, client, signIn } = signedInClient((r) => {
    if (r.path === "/v1/me/passkeys/options") {
      return json(200, { data: { challenge, rp: { id: "example.test", name: "x" }, user: { id: "AQID", name: "j", displayName: "J" }, pubKeyCredParams: [] } });
    }
    if (r.path === "/v1/me/passkeys") return json(201, { data: { id: "pk_1", name: "Laptop", credential_id: "AQID", transports: [], created_at: "t" } });
    if (r.path === "/v1/auth/passkey/options") return json(200, { data: { flow_id: "pkf_1", has_passkeys: true, options: { challenge, allowCredentials: [] } } });
    if (r.path === "/v1/auth/passkey/verify") return json(200, tokens());
    return problem(404, "auth/not-found");
  });
  await signIn();
  const registration = await client.passkeyRegistrationOptions();
  assert.equal(registration.options.rp.id, "example.test");
  assert.ok(registration.publicKey.user.id instanceof ArrayBuffer);
  const passkey = await client.registerPasskey({ id: "AQID", rawId: "AQID", type: "public-key", response: { clientDataJSON: "e30", attestationObject: "oA" }, clientExtensionResults: {} }, "Laptop");
  assert.equal(passkey.credentialId, "AQID");
  const started = await client.passkeySignInOptions("jane@example.com");
  assert.equal(started.flowId, "pkf_1");
  assert.equal(started.hasPasskeys, true);
  const result = await client.signInWithPasskey({ flowId: started.flowId, credential: { id: "AQID", rawId: new Uint8Array([1, 2, 3]), type: "public-key", response: { clientDataJSON: new Uint8Array([123, 125]), authenticatorData: new Uint8Array([1]), signature: new Uint8Array([2]) } } });
  assert.equal(result.status, "signedIn");
  const verify = stub.to("/v1/auth/passkey/verify")[0];
  assert.equal(verify.body.flow_id, "pkf_1");
  assert.equal(verify.body.response.rawId, "AQID");
  assert.equal(verify.headers["authorization"], undefined, "a passkey sign-in does not upgrade by default");
  assert.deepEqual(stub.to("/v1/me/passkeys")[0].body, { response: { id: "AQID", rawId: "AQID", type: "public-key", response: { clientDataJSON: "e30", attestationObject: "oA" }, clientExtensionResults: {} }, name: "Laptop" });
  await assert.rejects(client.registerPasskeyPrompt(), (e: any) => e.code === "client/no-webauthn");
});

test("cookie transport: sign-up ends the token session it answers, then signs in with the cookie; MFA is refused without keeping tokens", async () => {
  let cookie = false;
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/sign-up") return json(201, tokens({ is_new_user: true }));
    if (r.path === "/v1/auth/sign-out") {
      assert.match(r.headers["authorization"] ?? "", /^Bearer /);
      assert.equal(r.credentials, "omit", "the cookie (if any) is not touched");
      return json(204, null);
    }
    if (r.path === "/v1/auth/login") {
      if (r.body.email === "mfa@example.com") return json(202, { mfa: { challenge_token: "c", expires_at: "t", methods: ["totp"] } });
      cookie = true;
      return json(200, { session: {}, user: {} });
    }
    if (r.path === "/v1/auth/mfa/verify") return json(200, tokens());
    if (r.path === "/v1/me") return cookie ? json(200, { data: USER }) : problem(401, "auth/invalid-token");
    return problem(404, "auth/not-found");
  });
  const client = new IdentityClient({ baseUrl: BASE, transport: "cookie", fetch: stub.fetch });
  await client.ready;
  const result = await client.signUp({ email: "jane@example.com", password: "pw" });
  assert.ok(result.status === "signedIn" && result.isNewUser);
  assert.deepEqual(stub.seen.map((s) => s.path), ["/v1/me", "/v1/auth/sign-up", "/v1/auth/sign-out", "/v1/auth/login", "/v1/me"]);
  const mfa = await client.signIn({ email: "mfa@example.com", password: "pw" });
  assert.ok(mfa.status === "mfaRequired");
  await assert.rejects(client.verifyMFA(mfa.challenge, "123456"), (e: any) => e.code === "client/unsupported");
  assert.equal(stub.seen[stub.seen.length - 1].path, "/v1/auth/sign-out", "the token session the service answered is ended");
});

test("magic links: the sign_in mode only, email and code decoded", () => {
  assert.deepEqual(IdentityClient.parseMagicLink("myapp://auth?mode=sign_in&email=jane%2Bx%40example.com&code=123456"), { email: "jane+x@example.com", code: "123456" });
  assert.equal(IdentityClient.parseMagicLink("https://x.example/auth?mode=sign_in&email=a%40b.c"), null);
  assert.equal(IdentityClient.parseMagicLink("https://x.example/auth#mode=sign_in&email=a&code=1"), null);
});
