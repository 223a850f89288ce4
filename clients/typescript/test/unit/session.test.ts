import { test } from "node:test";
import assert from "node:assert/strict";
import { AuthState, IdentityClient, IdentityError, MemoryStorage, StorageKeys, TokenStorage } from "../../src/index.js";
import { Stub, USER, json, jwt, problem, tick, tokens } from "./stub.js";

const BASE = "https://id.example.test";

function storedSession(storage: MemoryStorage, accessToken: string, expiresAt: number, refreshToken = "rt_stored") {
  storage.setItem(
    StorageKeys.session,
    JSON.stringify({ refreshToken, accessToken, expiresAt, obtainedAt: expiresAt - 3600_000, sessionId: "ses_s", user: { uid: USER.uid } }),
  );
}

test("100 parallel calls with an expired stored access token make exactly one refresh", async () => {
  const storage = new MemoryStorage();
  storedSession(storage, jwt(Math.floor(Date.now() / 1000) - 600), Date.now() - 600_000);
  let fresh = "";
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/token/refresh") {
      assert.equal(r.body.refresh_token, "rt_stored");
      const answer = tokens();
      fresh = (answer.data as any).access_token;
      return json(200, answer);
    }
    if (r.path === "/v1/me") {
      assert.equal(r.headers["authorization"], `Bearer ${fresh}`);
      return json(200, { data: USER });
    }
    return problem(404, "auth/not-found");
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  const users = await Promise.all(Array.from({ length: 100 }, () => client.me()));
  assert.equal(users.length, 100);
  assert.ok(users.every((u) => u.uid === USER.uid && u.firstName === "Jane"));
  assert.equal(stub.to("/v1/auth/token/refresh").length, 1);
  assert.equal(stub.to("/v1/me").length, 100);
  const kept = JSON.parse(storage.getItem(StorageKeys.session) as string);
  assert.notEqual(kept.refreshToken, "rt_stored");
});

test("100 parallel calls whose token the service calls expired: one refresh, each call retried once", async () => {
  const storage = new MemoryStorage();
  // The client believes its token good for an hour (a wrong clock); the service says expired.
  const stale = jwt(Math.floor(Date.now() / 1000) + 3600, { stale: true });
  storedSession(storage, stale, Date.now() + 3600_000);
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/token/refresh") return json(200, tokens());
    if (r.headers["authorization"] === `Bearer ${stale}`) return problem(401, "auth/token-expired");
    return json(200, { data: USER });
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  await Promise.all(Array.from({ length: 100 }, () => client.me()));
  assert.equal(stub.to("/v1/auth/token/refresh").length, 1);
  assert.equal(stub.to("/v1/me").length, 200);
});

test("a token about to expire is refreshed before the call; a retry that fails again is not retried twice", async () => {
  const storage = new MemoryStorage();
  storedSession(storage, jwt(Math.floor(Date.now() / 1000) + 30), Date.now() + 30_000);
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/token/refresh") return json(200, tokens());
    return problem(401, "auth/token-expired");
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  await assert.rejects(client.me(), (e: unknown) => e instanceof IdentityError && e.code === "auth/token-expired");
  // Ahead of expiry (30 s < 60 s leeway): refresh first; then the 401 and its one retry.
  assert.deepEqual(stub.seen.map((s) => s.path), ["/v1/auth/token/refresh", "/v1/me", "/v1/auth/token/refresh", "/v1/me"]);
});

test("a revoked refresh token signs out: storage cleared, listeners told, the error thrown", async () => {
  const storage = new MemoryStorage();
  storedSession(storage, "", 0);
  const stub = new Stub(() => problem(401, "auth/refresh-token-revoked"));
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  const states: AuthState[] = [];
  client.onAuthStateChange((s) => states.push(s));
  await assert.rejects(client.me(), (e: unknown) => e instanceof IdentityError && e.code === "auth/refresh-token-revoked");
  assert.equal(storage.getItem(StorageKeys.session), null);
  assert.deepEqual(states.map((s) => s.status), ["signedIn", "signedOut"]);
  assert.equal(client.isSignedIn, false);
  await assert.rejects(client.me(), (e: any) => e.code === "client/not-signed-in");
});

test("a refresh whose answer is lost is retried once with the same token", async () => {
  const storage = new MemoryStorage();
  storedSession(storage, "", 0);
  let refreshes = 0;
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/token/refresh") {
      refreshes += 1;
      if (refreshes === 1) throw new TypeError("fetch failed");
      return json(200, tokens());
    }
    return json(200, { data: USER });
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  await client.me();
  const bodies = stub.to("/v1/auth/token/refresh").map((s) => s.body.refresh_token);
  assert.deepEqual(bodies, ["rt_stored", "rt_stored"]);
});

test("onAuthStateChange calls the listener at once with the current state, then on each change; never with a token", async () => {
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/sign-in") return json(200, tokens());
    if (r.path === "/v1/auth/sign-out") return json(204, null);
    return json(200, { data: USER });
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", fetch: stub.fetch });
  const states: AuthState[] = [];
  const stop = client.onAuthStateChange((s) => states.push(s));
  assert.deepEqual(states, [{ status: "signedOut", event: "initial" }], "called at once, synchronously");
  const result = await client.signIn({ email: "jane@example.com", password: "a long passphrase" });
  assert.equal(result.status, "signedIn");
  await client.signOut();
  assert.deepEqual(states.map((s) => [s.status, "event" in s ? s.event : undefined]), [
    ["signedOut", "initial"],
    ["signedIn", "signedIn"],
    ["signedOut", "signedOut"],
  ]);
  assert.ok(!JSON.stringify(states).includes("rt_"), "no refresh token in a state");
  assert.ok(!JSON.stringify(states).includes("eyJ"), "no access token in a state");
  // A listener added later gets the current state at once.
  const late: AuthState[] = [];
  client.onAuthStateChange((s) => late.push(s));
  assert.deepEqual(late, [{ status: "signedOut", event: "initial" }]);
  stop();
});

test("an async storage (React Native secure store): unknown at first, then the restored session", async () => {
  const values = new Map<string, string>();
  const asyncStorage: TokenStorage = {
    getItem: async (k) => values.get(k) ?? null,
    setItem: async (k, v) => {
      values.set(k, v);
    },
    removeItem: async (k) => {
      values.delete(k);
    },
  };
  values.set(
    StorageKeys.session,
    JSON.stringify({ refreshToken: "rt_x", accessToken: jwt(9999999999), expiresAt: Date.now() + 3600_000, obtainedAt: Date.now(), user: { ...USER, firstName: "Jane" } }),
  );
  const stub = new Stub(() => json(200, { data: USER }));
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage: asyncStorage, fetch: stub.fetch });
  const states: AuthState[] = [];
  client.onAuthStateChange((s) => states.push(s));
  assert.deepEqual(states, [{ status: "unknown" }]);
  await client.ready;
  assert.equal(states.length, 2);
  assert.equal(states[1].status, "signedIn");
  assert.equal(client.currentUser?.uid, USER.uid);
  await client.me();
  assert.equal(stub.seen.length, 1, "no refresh: the stored access token is still good");
});

test("sign-in with MFA on answers the challenge as a typed result; verifyMFA keeps the session", async () => {
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/sign-in") {
      return json(202, { data: { mfa: { challenge_token: "mfa_c", expires_at: "2026-01-01T00:00:00.000000Z", methods: ["totp", "backup_code"] } } });
    }
    if (r.path === "/v1/auth/mfa/verify") {
      assert.deepEqual(r.body, { challenge_token: "mfa_c", code: "123456" });
      return json(200, tokens({ user: { ...USER, mfa_enabled: true } }));
    }
    return problem(404, "auth/not-found");
  });
  const storage = new MemoryStorage();
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  const result = await client.signIn({ email: "jane@example.com", password: "pw" });
  assert.equal(result.status, "mfaRequired");
  if (result.status !== "mfaRequired") return;
  assert.deepEqual(result.challenge, { challengeToken: "mfa_c", expiresAt: "2026-01-01T00:00:00.000000Z", methods: ["totp", "backup_code"] });
  assert.equal(client.isSignedIn, false);
  assert.equal(storage.getItem(StorageKeys.session), null);
  const user = await client.verifyMFA(result.challenge, "123456");
  assert.equal(user.mfaEnabled, true);
  assert.equal(client.isSignedIn, true);
});

test("guests: a 256-bit secret made once and kept; a sign-up while a guest upgrades it and forgets the secret", async () => {
  const storage = new MemoryStorage();
  const guest = { ...USER, email: null, is_guest: true, has_password: false, providers: ["guest"] };
  const stub = new Stub((r) => {
    if (r.path === "/v1/auth/guest") return json(200, tokens({ user: guest, is_new_user: true }));
    if (r.path === "/v1/auth/sign-up") {
      assert.match(r.headers["authorization"] ?? "", /^Bearer /, "the guest's token upgrades it");
      return json(201, tokens({ user: USER, is_new_user: false }));
    }
    return problem(404, "auth/not-found");
  });
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  const user = await client.signInAsGuest();
  assert.equal(user.isGuest, true);
  const secret = storage.getItem(StorageKeys.guestSecret) as string;
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(stub.to("/v1/auth/guest")[0].body.secret, secret);
  await client.signOut().catch(() => undefined);
  await client.signInAsGuest();
  assert.equal(stub.to("/v1/auth/guest")[1].body.secret, secret, "the same guest comes back");
  const upgraded = await client.signUp({ email: "jane@example.com", password: "a long passphrase" });
  assert.equal(upgraded.status === "signedIn" && upgraded.user.isGuest, false);
  assert.equal(storage.getItem(StorageKeys.guestSecret), null);
  // upgradeGuest: false sends no token.
  await client.signInAsGuest().catch(() => undefined);
});

test("the refresh and the retry never happen for errors other than expired or invalid tokens", async () => {
  const storage = new MemoryStorage();
  storedSession(storage, jwt(9999999999), Date.now() + 3600_000);
  const stub = new Stub(() => problem(403, "auth/reauth-required"));
  const client = new IdentityClient({ baseUrl: BASE, appKey: "pk_test", storage, fetch: stub.fetch });
  await assert.rejects(client.deleteAccount({ password: "x" }), (e: any) => e.code === "auth/reauth-required" && e.status === 403);
  assert.equal(stub.seen.length, 1);
  assert.equal(client.isSignedIn, true, "nothing deleted, still signed in");
  await tick();
});
