// Second factors through the client: TOTP (codes from pyotp in the helper), the 202 challenge
// as a typed result, backup codes, the email factor.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PASSWORD, client, helper, mailedCode, rejectsWith, totp, uniqueEmail, when } from "./support.js";

test("TOTP: enrol, challenge, verify, backup codes, disable", when, async () => {
  const email = uniqueEmail("mfa");
  const c = client();
  await c.signUp({ email, password: PASSWORD });
  assert.equal((await c.mfaStatus()).enabled, false);
  const enrollment = await c.enrollTOTP();
  assert.match(enrollment.otpauthUri, /^otpauth:\/\/totp\//);
  assert.match(enrollment.qrSvg, /^<svg/);
  const now = await totp(enrollment.secret);
  await rejectsWith("auth/invalid-code", c.confirmTOTP(now === "000000" ? "111111" : "000000"));
  const backupCodes = await c.confirmTOTP(await totp(enrollment.secret));
  assert.equal(new Set(backupCodes).size, 10);
  const status = await c.mfaStatus();
  assert.equal(status.enabled, true);
  assert.deepEqual(status.methods, ["totp"]);
  assert.equal(status.backupCodesRemaining, 10);

  // A first factor now answers a challenge; the client keeps no session until the second.
  const second = client();
  const result = await second.signIn({ email, password: PASSWORD });
  assert.equal(result.status, "mfaRequired");
  if (result.status !== "mfaRequired") return;
  assert.ok(result.challenge.methods.includes("totp"), String(result.challenge.methods));
  assert.ok(result.challenge.challengeToken);
  assert.equal(second.isSignedIn, false);
  await rejectsWith("auth/invalid-code", second.verifyMFA(result.challenge, "12345x"));
  const user = await second.verifyMFA(result.challenge, await totp(enrollment.secret, 1)); // the enrolment spent this step
  assert.equal(user.mfaEnabled, true);
  const current = (await second.sessions()).find((s) => s.current)!;
  assert.equal(current.mfaVerified, true);
  assert.ok(current.amr.includes("mfa"), String(current.amr));

  const third = client();
  const again = await third.signIn({ email, password: PASSWORD });
  assert.ok(again.status === "mfaRequired");
  await third.verifyMFA(again.challenge, backupCodes[0]);
  const fresh = await third.regenerateBackupCodes();
  assert.equal(fresh.length, 10);
  assert.ok(fresh.every((code) => !backupCodes.includes(code)));
  await rejectsWith("auth/invalid-code", third.disableMFA(backupCodes[1]));
  await third.disableMFA(fresh[0]);
  assert.equal((await third.mfaStatus()).enabled, false);
  const plain = await client().signIn({ email, password: PASSWORD });
  assert.equal(plain.status, "signedIn", "no challenge once MFA is off");
});

test("email as the second factor", when, async () => {
  const email = uniqueEmail("mfamail");
  const c = client();
  const first = await mailedCode(email, () => c.sendEmailCode(email));
  await c.signInWithEmailCode({ email, code: first.code });
  const enrol = await mailedCode(email, () => c.enrollEmailMFA());
  const codes = await c.confirmEmailMFA(enrol.code);
  assert.equal(codes.length, 10);
  assert.ok((await c.mfaStatus()).methods.includes("email"));
  // The next sign-in with a code is challenged for the emailed second factor.
  const other = client();
  const signIn = await mailedCode(email, () => other.sendEmailCode(email));
  const result = await other.signInWithEmailCode({ email, code: signIn.code });
  assert.equal(result.status, "mfaRequired");
});

test("SMS as the second factor: a verified phone, enrolment, the challenge's texted code", when, async () => {
  const email = uniqueEmail("mfasms");
  const c = client();
  await c.signUp({ email, password: PASSWORD });
  const digits = String(Math.floor(10_000_000 + Math.random() * 89_999_999));
  const phone = "+336" + digits;
  const sent = await c.addPhone({ phone });
  const linkCode = (await helper("/sms/code", { phone, count: 1 })).code;
  await rejectsWith("auth/invalid-code", c.verifyPhone({ sessionId: sent.sessionId, code: linkCode === "000000" ? "111111" : "000000" }));
  const withPhone = await c.verifyPhone({ sessionId: sent.sessionId, code: linkCode });
  assert.equal(withPhone.phone, phone);
  assert.equal(c.currentUser?.phone, phone);

  await c.enrollSMSMFA();
  const enrolCode = (await helper("/sms/code", { phone, count: 2 })).code;
  const codes = await c.confirmSMSMFA(enrolCode);
  assert.equal(codes.length, 10);
  assert.deepEqual((await c.mfaStatus()).methods, ["sms"]);

  const other = client();
  const result = await other.signIn({ email, password: PASSWORD });
  assert.ok(result.status === "mfaRequired");
  assert.deepEqual(result.challenge.methods, ["sms", "backup_code"]);
  const challengeCode = (await helper("/sms/code", { phone, count: 3 })).code;
  const user = await other.verifyMFA(result.challenge, challengeCode);
  assert.equal(user.mfaEnabled, true);
});
