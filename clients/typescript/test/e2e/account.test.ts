// The signed-in user's account through the client: profile, sessions, devices, passwords, email
// verification and change, linking, deletion.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AuthState } from "../../src/index.js";
import { PASSWORD, client, googleToken, helper, mailedCode, rejectsWith, uniqueEmail, when } from "./support.js";

test("profile, sessions, ending one, sign-out and sign-out everywhere", when, async () => {
  const email = uniqueEmail("acct");
  const phone = client();
  const signedUp = await phone.signUp({ email, password: PASSWORD });
  assert.ok(signedUp.status === "signedIn");
  const me = await phone.me();
  assert.equal(me.uid, signedUp.user.uid);
  const updated = await phone.updateMe({ firstName: "Renamed", photoUrl: "https://example.com/p.png" });
  assert.equal(updated.firstName, "Renamed");
  assert.equal(updated.photoUrl, "https://example.com/p.png");
  assert.equal(updated.email, email, "fields left out are not changed");
  assert.equal(phone.currentUser?.firstName, "Renamed");

  const laptop = client();
  await laptop.signIn({ email, password: PASSWORD });
  const sessions = await phone.sessions();
  assert.equal(sessions.length, 2);
  assert.equal(sessions.filter((s) => s.current).length, 1);
  assert.equal(sessions.find((s) => s.current)?.userAgent, "TypeScriptClientE2E");
  const laptopSession = sessions.find((s) => !s.current)!;

  // The laptop's next call finds its token, then its refresh token, refused: it signs out.
  const laptopStates: AuthState[] = [];
  laptop.onAuthStateChange((s) => laptopStates.push(s));
  await phone.endSession(laptopSession.id);
  await rejectsWith("auth/refresh-token-revoked", laptop.me());
  assert.equal(laptop.isSignedIn, false);
  assert.deepEqual(laptopStates.map((s) => s.status), ["signedIn", "signedOut"]);

  await phone.signOut();
  assert.equal(phone.isSignedIn, false);
  await assert.rejects(phone.me(), (e: any) => e.code === "client/not-signed-in");

  const a = client();
  const b = client();
  await a.signIn({ email, password: PASSWORD });
  await b.signIn({ email, password: PASSWORD });
  await a.signOutEverywhere();
  await rejectsWith("auth/refresh-token-revoked", b.me());

  // The access token for the app's own backend; ending the current session signs out.
  const c = client();
  await c.signIn({ email, password: PASSWORD });
  assert.equal((await c.accessToken()).split(".").length, 3);
  const current = (await c.sessions()).find((s) => s.current)!;
  await c.endSession(current.id);
  assert.equal(c.isSignedIn, false);
});

test("devices", when, async () => {
  const c = client();
  await c.signUp({ email: uniqueEmail("dev"), password: PASSWORD });
  // An APNs device token: 32 bytes, hex.
  const token = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
  const device = await c.registerDevice({ token, platform: "ios", kind: "apns", name: "Ada's iPhone" });
  assert.match(device.id, /^dev_/);
  assert.equal(device.deviceName, "Ada's iPhone");
  assert.deepEqual((await c.devices()).map((d) => d.id), [device.id]);
  await c.unregisterDevice(device.id);
  assert.deepEqual(await c.devices(), []);
  await rejectsWith("auth/not-found", c.unregisterDevice(device.id));
});

test("password reset and change, email verification", when, async () => {
  const email = uniqueEmail("reset");
  const c = client();
  const signedUp = await c.signUp({ email, password: PASSWORD });
  assert.ok(signedUp.status === "signedIn" && !signedUp.user.emailVerified);

  const verification = await mailedCode(email, () => c.sendEmailVerification());
  const tooSoon = await rejectsWith("auth/rate-limited", c.sendEmailVerification());
  assert.ok((tooSoon.retryAfter ?? 0) > 0);
  const verified = await c.verifyEmail({ email, code: verification.code });
  assert.equal(verified.emailVerified, true);
  await c.me(); // the session stays

  const other = client();
  await other.signIn({ email, password: PASSWORD });
  await c.changePassword({ currentPassword: PASSWORD, newPassword: "a second long passphrase" });
  await rejectsWith("auth/invalid-credential", c.changePassword({ currentPassword: "wrong", newPassword: "whatever long enough" }));
  await rejectsWith("auth/refresh-token-revoked", other.me());
  await c.me();

  const reset = await mailedCode(email, () => client().forgotPassword(email));
  assert.equal(await client().checkPasswordResetCode({ email, code: reset.code }), true);
  await client().resetPassword({ email, code: reset.code, newPassword: "a third long passphrase" });
  await rejectsWith("auth/refresh-token-revoked", c.me());
  const again = await client().signIn({ email, password: "a third long passphrase" });
  assert.ok(again.status === "signedIn" && again.user.uid === signedUp.user.uid);
});

test("email change: start, wrong code, confirm; an address of another account", when, async () => {
  const old = uniqueEmail("chg-old");
  const fresh = uniqueEmail("chg-new");
  const c = client();
  const signedUp = await c.signUp({ email: old, password: PASSWORD });
  assert.ok(signedUp.status === "signedIn");
  const other = client();
  await other.signIn({ email: old, password: PASSWORD });
  let lifetime = 0;
  const mailed = await mailedCode(fresh, async () => {
    lifetime = await c.startEmailChange(fresh);
  });
  assert.ok(lifetime > 0);
  await rejectsWith("auth/invalid-code", c.confirmEmailChange(mailed.code === "000000" ? "111111" : "000000"));
  const changed = await c.confirmEmailChange(mailed.code);
  assert.equal(changed.uid, signedUp.user.uid);
  assert.equal(changed.email, fresh);
  assert.equal(changed.emailVerified, true);
  assert.equal(c.currentUser?.email, fresh);
  assert.equal((await c.me()).email, fresh);
  await rejectsWith("auth/refresh-token-revoked", other.me());
  await rejectsWith("auth/invalid-credential", client().signIn({ email: old, password: PASSWORD }));

  const taken = uniqueEmail("chg-taken");
  await client().signUp({ email: taken, password: PASSWORD });
  const { code } = await mailedCode(taken, () => c.startEmailChange(taken));
  await rejectsWith("auth/email-already-in-use", c.confirmEmailChange(code));
  assert.equal((await c.me()).email, fresh);
});

test("linking Google and Apple, unlinking, deletion with a password and with a Google token", when, async () => {
  const email = uniqueEmail("link");
  const c = client();
  const signedUp = await c.signUp({ email, password: PASSWORD });
  assert.ok(signedUp.status === "signedIn");
  const sub = `ts-link-${Math.random().toString(36).slice(2)}`;
  const linked = await c.linkGoogle({ idToken: await googleToken({ sub }) });
  assert.ok(linked.providers.includes("google"), String(linked.providers));
  const nonce = await c.appleNonce();
  const apple = await helper("/apple/token", { nonce_hash: nonce.sha256 });
  const withApple = await c.linkApple({ identityToken: apple.identity_token, authorizationCode: apple.authorization_code, nonce: nonce.value });
  assert.ok(withApple.providers.includes("apple"));
  await c.unlink("apple");
  assert.ok(!(await c.me()).providers.includes("apple"));
  const viaGoogle = await client().signInWithGoogle({ idToken: await googleToken({ sub }) });
  assert.ok(viaGoogle.status === "signedIn" && viaGoogle.user.uid === signedUp.user.uid);

  await rejectsWith("auth/reauth-required", c.deleteAccount({ password: "not it" }));
  await c.me(); // nothing deleted
  await c.deleteAccount({ password: PASSWORD });
  assert.equal(c.isSignedIn, false);
  await rejectsWith("auth/invalid-credential", client().signIn({ email, password: PASSWORD }));

  const googleSub = `ts-del-${Math.random().toString(36).slice(2)}`;
  const g = client();
  await g.signInWithGoogle({ idToken: await googleToken({ sub: googleSub }) });
  await g.deleteAccount({ googleIdToken: await googleToken({ sub: googleSub }) });
  await assert.rejects(g.me(), (e: any) => e.code === "client/not-signed-in");
});
