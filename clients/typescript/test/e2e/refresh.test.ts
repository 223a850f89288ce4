// The client's session keeping against the real service's rotation and its grace period (3 s in
// the e2e stack instead of 30).
import { test } from "node:test";
import assert from "node:assert/strict";
import { AuthState, MemoryStorage, StorageKeys } from "../../src/index.js";
import { PASSWORD, Tap, client, env, helper, rejectsWith, sleep, uniqueEmail, when } from "./support.js";

function stored(storage: MemoryStorage): any {
  return JSON.parse(storage.getItem(StorageKeys.session) as string);
}

/** A signed-up user's storage whose access token is replaced by a really expired one (same
 * claims, signed with the app's key, exp ten minutes ago); `clientBelievesValid` makes the stored
 * expiry lie, so only the service can tell (a device whose clock is wrong). */
async function storageWithExpiredToken(clientBelievesValid: boolean) {
  const storage = new MemoryStorage();
  const user = await client({ storage }).signUp({ email: uniqueEmail("expired"), password: PASSWORD });
  assert.equal(user.status, "signedIn");
  const session = stored(storage);
  const { access_token } = await helper("/token/expired", { access_token: session.accessToken });
  session.accessToken = access_token;
  session.expiresAt = clientBelievesValid ? Date.now() + 3600_000 : Date.now() - 600_000;
  storage.setItem(StorageKeys.session, JSON.stringify(session));
  return { storage, uid: user.status === "signedIn" ? user.user.uid : "", refreshToken: session.refreshToken as string };
}

test("100 parallel calls with an expired access token make one refresh", when, async () => {
  const { storage, uid, refreshToken } = await storageWithExpiredToken(false);
  const tap = new Tap();
  const restarted = client({ storage, fetch: tap.fetch });
  const states: AuthState[] = [];
  restarted.onAuthStateChange((s) => states.push(s));
  const users = await Promise.all(Array.from({ length: 100 }, () => restarted.me()));
  assert.deepEqual(new Set(users.map((u) => u.uid)), new Set([uid]));
  assert.equal(tap.to("/v1/auth/token/refresh").length, 1, "one refresh for 100 calls");
  assert.equal(tap.to("/v1/me").length, 100);
  assert.ok(tap.to("/v1/me").every((s) => s.status === 200));
  assert.notEqual(stored(storage).refreshToken, refreshToken, "rotated and kept");
  assert.ok(states.some((s) => s.status === "signedIn" && s.event === "refreshed"));
});

test("100 parallel calls that the service answers auth/token-expired: one refresh, each call retried once", when, async () => {
  const { storage, uid } = await storageWithExpiredToken(true);
  const tap = new Tap();
  const restarted = client({ storage, fetch: tap.fetch });
  const users = await Promise.all(Array.from({ length: 100 }, () => restarted.me()));
  assert.ok(users.every((u) => u.uid === uid));
  assert.equal(tap.to("/v1/auth/token/refresh").length, 1, "one refresh for 100 refusals");
  const me = tap.to("/v1/me");
  assert.equal(me.length, 200);
  assert.equal(me.filter((s) => s.status === 401).length, 100, "the service refused the expired token");
  assert.equal(me.filter((s) => s.status === 200).length, 100);
});

test("a refresh whose answer is lost is recovered within the grace; the successor lives on", when, async () => {
  const storage = new MemoryStorage();
  const tap = new Tap();
  const c = client({ storage, fetch: tap.fetch });
  await c.signUp({ email: uniqueEmail("lost"), password: PASSWORD });
  const first = stored(storage).refreshToken;
  tap.loseAnswers("/v1/auth/token/refresh");
  await c.refresh();
  const refreshes = tap.to("/v1/auth/token/refresh");
  assert.equal(refreshes.length, 2);
  assert.equal(new Set(refreshes.map((r) => r.body)).size, 1, "the retry presents the same refresh token");
  assert.notEqual(stored(storage).refreshToken, first);
  await c.me();
  await sleep((env.refreshGraceSeconds + 1) * 1000);
  await c.refresh();
  await c.me();
});

test("two installations refresh one session at once and share the successor; a late replay signs out", when, async () => {
  const storage = new MemoryStorage();
  await client({ storage }).signUp({ email: uniqueEmail("grace"), password: PASSWORD });
  const original = storage.getItem(StorageKeys.session) as string;
  const a = new MemoryStorage();
  const b = new MemoryStorage();
  a.setItem(StorageKeys.session, original);
  b.setItem(StorageKeys.session, original);
  const clientA = client({ storage: a });
  const clientB = client({ storage: b });
  await Promise.all([clientA.refresh(), clientB.refresh()]);
  assert.equal(stored(a).refreshToken, stored(b).refreshToken, "the grace answers the same successor");
  assert.notEqual(stored(a).refreshToken, JSON.parse(original).refreshToken);

  await sleep((env.refreshGraceSeconds + 1) * 1000);
  const thief = new MemoryStorage();
  thief.setItem(StorageKeys.session, original);
  const replay = client({ storage: thief });
  const states: string[] = [];
  replay.onAuthStateChange((s) => states.push(s.status));
  await rejectsWith("auth/refresh-token-revoked", replay.refresh());
  assert.equal(thief.getItem(StorageKeys.session), null, "a revoked session is cleared from storage");
  assert.deepEqual(states, ["signedIn", "signedOut"]);
  // The whole session ended: the legitimate installations are signed out too.
  await rejectsWith("auth/refresh-token-revoked", clientA.refresh());
  assert.equal(clientA.isSignedIn, false);
});

test("a token close to expiry is refreshed ahead of it, before the call", when, async () => {
  const storage = new MemoryStorage();
  await client({ storage }).signUp({ email: uniqueEmail("ahead"), password: PASSWORD });
  const session = stored(storage);
  session.expiresAt = Date.now() + 20_000; // inside the 60-second leeway of an hour-long token
  session.obtainedAt = session.expiresAt - 3600_000;
  storage.setItem(StorageKeys.session, JSON.stringify(session));
  const tap = new Tap();
  const c = client({ storage, fetch: tap.fetch });
  await c.me();
  assert.deepEqual(tap.seen.map((s) => [s.path, s.status]), [["/v1/auth/token/refresh", 200], ["/v1/me", 200]]);
  assert.notEqual(stored(storage).accessToken, session.accessToken);
});
