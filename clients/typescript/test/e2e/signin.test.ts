// Every sign-in method of the client against the real service.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AuthState, IdentityClient, IdentityError, MemoryStorage, StorageKeys, sha256Hex } from "../../src/index.js";
import { PASSWORD, client, googleToken, helper, mailedCode, rejectsWith, uniqueEmail, when } from "./support.js";

test("password sign-up and sign-in, and the errors apps match on", when, async () => {
  const c = client();
  const email = uniqueEmail("pwd");
  const states: AuthState[] = [];
  c.onAuthStateChange((s) => states.push(s));
  const username = "ada" + Math.random().toString(36).slice(2, 10);
  const signedUp = await c.signUp({ email, password: PASSWORD, firstName: "Ada", lastName: "Lovelace", username });
  assert.equal(signedUp.status, "signedIn");
  if (signedUp.status !== "signedIn") return;
  assert.equal(signedUp.isNewUser, true);
  assert.equal(signedUp.user.email, email);
  assert.equal(signedUp.user.firstName, "Ada");
  assert.equal(signedUp.user.isGuest, false);
  assert.deepEqual(states.map((s) => s.status), ["signedOut", "signedIn"]);

  const again = await client().signIn({ email, password: PASSWORD });
  assert.equal(again.status === "signedIn" && again.user.uid, signedUp.user.uid);
  const byUsername = await client().signIn({ identifier: username, password: PASSWORD });
  assert.equal(byUsername.status === "signedIn" && byUsername.isNewUser, false);

  await rejectsWith("auth/invalid-credential", client().signIn({ email, password: "not the password" }));
  await rejectsWith("auth/email-already-in-use", client().signUp({ email, password: PASSWORD }));
  const weak = await rejectsWith("auth/weak-password", client().signUp({ email: uniqueEmail("weak"), password: "short" }));
  assert.equal(weak.status, 422);
  assert.equal(weak.fieldErrors[0]?.location, "body.password");
  const invalid = await rejectsWith("auth/invalid-email", client().signUp({ email: "not an email", password: PASSWORD }));
  assert.equal(invalid.fieldErrors[0]?.location, "body.email");
  assert.ok(invalid.requestId);

  // Ten wrong passwords per identifier per 15 minutes: the next is 429 with Retry-After.
  const target = uniqueEmail("limited");
  let limited: IdentityError | undefined;
  for (let i = 0; i < 12 && !limited; i++) {
    try {
      await client().signIn({ email: target, password: "wrong password" });
    } catch (e) {
      if (e instanceof IdentityError && e.code === "auth/rate-limited") limited = e;
      else assert.equal((e as IdentityError).code, "auth/invalid-credential");
    }
  }
  assert.equal(limited?.status, 429);
  assert.ok((limited?.retryAfter ?? 0) > 0);
});

test("a guest comes back with its stored secret and upgrades keeping its uid; account-exists; deletion", when, async () => {
  const storage = new MemoryStorage();
  const c = client({ storage });
  const guest = await c.signInAsGuest();
  assert.equal(guest.isGuest, true);
  await c.signOut();
  const back = await client({ storage }).signInAsGuest();
  assert.equal(back.uid, guest.uid, "the same installation comes back as the same guest");

  const email = uniqueEmail("upgrade");
  const same = client({ storage });
  await same.signInAsGuest();
  const upgraded = await same.signUp({ email, password: PASSWORD });
  assert.ok(upgraded.status === "signedIn");
  assert.equal(upgraded.user.uid, guest.uid, "the guest became the account");
  assert.equal(upgraded.user.isGuest, false);
  assert.equal(storage.getItem(StorageKeys.guestSecret), null, "the service forgot the secret; so does the client");
  assert.equal((await same.me()).uid, guest.uid);

  // A second guest whose upgrade names an existing account: 409, then the same call without the
  // guest's token signs in to that account.
  const sub = `ts-${Math.random().toString(36).slice(2)}`;
  const googleUser = await client().signInWithGoogle({ idToken: await googleToken({ sub }) });
  assert.ok(googleUser.status === "signedIn");
  const other = client();
  const otherGuest = await other.signInAsGuest();
  const token = await googleToken({ sub });
  await rejectsWith("auth/account-exists", other.signInWithGoogle({ idToken: token }));
  const existing = await other.signInWithGoogle({ idToken: token }, { upgradeGuest: false });
  assert.ok(existing.status === "signedIn");
  assert.equal(existing.user.uid, googleUser.user.uid);
  assert.notEqual(existing.user.uid, otherGuest.uid);

  const doomed = client();
  await doomed.signInAsGuest();
  await doomed.deleteAccount({ storedGuestSecret: true });
  assert.equal(doomed.isSignedIn, false);
});

test("Apple with an issued nonce (SHA-256 for Apple, raw kept), Google and Firebase", when, async () => {
  const apple = client();
  const nonce = await apple.appleNonce();
  assert.equal(nonce.sha256, await sha256Hex(nonce.value));
  assert.match(nonce.sha256, /^[0-9a-f]{64}$/);
  assert.ok(new Date(nonce.expiresAt).getTime() > Date.now());
  const appleSub = `ts-apple-${Math.random().toString(36).slice(2)}`;
  // Apple puts into its token what the app gave it: the client's SHA-256 of the raw nonce,
  // which the service checks against the raw one it issued.
  const minted = await helper("/apple/token", { nonce_hash: nonce.sha256, sub: appleSub });
  const result = await apple.signInWithApple({
    identityToken: minted.identity_token,
    authorizationCode: minted.authorization_code,
    nonce: nonce.value,
    firstName: "Grace",
    lastName: "Hopper",
  });
  assert.ok(result.status === "signedIn");
  assert.equal(result.isNewUser, true);
  assert.ok(result.user.providers.includes("apple"), String(result.user.providers));
  assert.equal(result.user.firstName, "Grace");
  await rejectsWith("auth/invalid-apple-token", client().signInWithApple({ identityToken: minted.identity_token, nonce: nonce.value }));

  // Deletion with fresh Apple proof; the old token is refused as proof.
  const proofNonce = await apple.appleNonce();
  const proof = await helper("/apple/token", { nonce_hash: proofNonce.sha256, sub: appleSub });
  await rejectsWith("auth/reauth-required", apple.deleteAccount({ appleIdentityToken: minted.identity_token, authorizationCode: minted.authorization_code, nonce: nonce.value }));
  await apple.deleteAccount({ appleIdentityToken: proof.identity_token, authorizationCode: proof.authorization_code, nonce: proofNonce.value });
  assert.equal(apple.isSignedIn, false);

  const google = client();
  const idToken = await googleToken();
  const googleUser = await google.signInWithGoogle({ idToken });
  assert.ok(googleUser.status === "signedIn" && googleUser.user.providers.includes("google"));
  await rejectsWith("auth/invalid-google-token", client().signInWithGoogle({ idToken: idToken + "x" }));

  const firebase = client();
  const firebaseToken = (await helper("/firebase/token", { email: uniqueEmail("fb") })).id_token;
  const firebaseUser = await firebase.signInWithFirebase({ idToken: firebaseToken });
  assert.ok(firebaseUser.status === "signedIn");
  assert.equal((await firebase.me()).uid, firebaseUser.user.uid);
});

test("email code and the sign-in link; a passwordless account deletes itself with its fresh sign-in", when, async () => {
  const email = uniqueEmail("code");
  const c = client();
  const mail = await mailedCode(email, () => c.sendEmailCode(email));
  await rejectsWith("auth/invalid-code", c.signInWithEmailCode({ email, code: mail.code === "000000" ? "111111" : "000000" }));
  const result = await c.signInWithEmailCode({ email, code: mail.code, firstName: "Code" });
  assert.ok(result.status === "signedIn");
  assert.equal(result.isNewUser, true);
  assert.equal(result.user.emailVerified, true);

  const other = client();
  const next = await mailedCode(email, () => other.sendEmailCode(email));
  assert.ok(next.link, "a sign-in link in the mail");
  assert.equal(IdentityClient.parseMagicLink(next.link!)?.email, email);
  const viaLink = await other.signInWithMagicLink(next.link!);
  assert.ok(viaLink.status === "signedIn" && viaLink.user.uid === result.user.uid);

  await other.deleteAccount({ recentSignIn: true });
  await assert.rejects(c.me(), (e: unknown) => e instanceof IdentityError);
});

test("phone code, national number with its country", when, async () => {
  const c = client();
  const digits = String(Math.floor(10_000_000 + Math.random() * 89_999_999));
  const phone = "+336" + digits;
  const sent = await c.sendPhoneCode({ phone: "06" + digits, countryCode: "FR" });
  assert.equal(sent.expiresIn, 600);
  const { code } = await helper("/sms/code", { phone });
  await rejectsWith("auth/invalid-code", c.signInWithPhoneCode({ sessionId: sent.sessionId, code: code === "000000" ? "111111" : "000000" }));
  const result = await c.signInWithPhoneCode({ sessionId: sent.sessionId, code });
  assert.ok(result.status === "signedIn");
  assert.equal(result.isNewUser, true);
  assert.equal(result.user.phone, phone);
  assert.equal((await c.me()).uid, result.user.uid);
});
