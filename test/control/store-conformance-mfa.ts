import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore } from '../../control/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

/** The MfaStore part of the control store conformance suite (see store-conformance.ts). */
export function mfaStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  const codes = () => Array.from({ length: 3 }, () => randomUUID().replaceAll('-', ''));

  t.test('mfa: an enrolment is pending until confirmed with its own secret', async (t) => {
    const { mfa } = await fresh(t);
    const account = randomUUID();
    t.equal(await mfa.get(account), undefined, 'nothing for an account without MFA');
    t.equal(await mfa.begin(account, 'SECRETA'), 'pending');
    t.match(await mfa.get(account), { pendingSecret: 'SECRETA' });
    t.equal((await mfa.get(account))?.secret, undefined, 'not on yet');
    t.equal(await mfa.begin(account, 'SECRETB'), 'pending', 'a new enrolment replaces the pending one');
    t.equal(await mfa.confirm(account, 'SECRETA', codes(), 100, NOW), 'stale', 'the replaced secret cannot be confirmed');
    const hashes = codes();
    t.equal(await mfa.confirm(account, 'SECRETB', hashes, 100, NOW), 'enabled');
    t.same(await mfa.get(account), { secret: 'SECRETB', enabledAt: NOW, lastStep: 100 });
    t.equal(await mfa.begin(account, 'SECRETC'), 'enabled', 'no enrolment while MFA is on');
    t.equal((await mfa.get(account))?.pendingSecret, undefined, 'and nothing was stored');
    t.equal(await mfa.confirm(account, 'SECRETB', codes(), 101, NOW), 'stale', 'confirming twice does nothing');
    t.equal(await mfa.unusedRecoveryCodes(account), 3);
  });

  t.test('mfa: a time step is accepted once, and only after the last', async (t) => {
    const { mfa } = await fresh(t);
    const account = randomUUID();
    t.equal(await mfa.useStep(account, 5), false, 'not without MFA');
    await mfa.begin(account, 'S');
    t.equal(await mfa.useStep(account, 5), false, 'not while pending');
    await mfa.confirm(account, 'S', codes(), 100, NOW);
    t.equal(await mfa.useStep(account, 100), false, 'the confirming step was used');
    t.equal(await mfa.useStep(account, 99), false, 'an earlier step');
    t.equal(await mfa.useStep(account, 101), true);
    const raced = await Promise.all(Array.from({ length: 5 }, () => mfa.useStep(account, 102)));
    t.equal(raced.filter(Boolean).length, 1, 'of five concurrent uses of one step exactly one wins');
    t.equal((await mfa.get(account))?.lastStep, 102);
  });

  t.test('mfa: recovery codes are used once each; confirming again replaces them; disabling forgets all', async (t) => {
    const { mfa } = await fresh(t);
    const account = randomUUID();
    const [first, second, third] = codes();
    await mfa.begin(account, 'S');
    await mfa.confirm(account, 'S', [first!, second!, third!], 1, NOW);
    t.equal(await mfa.useRecoveryCode(account, 'f'.repeat(32), NOW), false, 'an unknown code');
    t.equal(await mfa.useRecoveryCode(randomUUID(), first!, NOW), false, "another account's code");
    const raced = await Promise.all(Array.from({ length: 5 }, () => mfa.useRecoveryCode(account, first!, NOW)));
    t.equal(raced.filter(Boolean).length, 1, 'of five concurrent uses exactly one wins');
    t.equal(await mfa.unusedRecoveryCodes(account), 2);
    await mfa.disable(account);
    t.equal(await mfa.get(account), undefined, 'off: nothing left');
    t.equal(await mfa.useRecoveryCode(account, second!, NOW), false, 'the codes went with it');
    t.equal(await mfa.unusedRecoveryCodes(account), 0);
    await mfa.begin(account, 'T');
    const fresher = codes();
    await mfa.confirm(account, 'T', fresher, 1, NOW);
    t.equal(await mfa.useRecoveryCode(account, third!, NOW), false, 'old codes do not come back');
    t.equal(await mfa.useRecoveryCode(account, fresher[0]!, NOW), true);
  });

  t.test('mfa: a login challenge is used once', async (t) => {
    const { mfa } = await fresh(t);
    const id = randomUUID();
    const expires = Date.now() + 300_000;
    t.equal(await mfa.challengeUsed(id), false, 'unused at first');
    const raced = await Promise.all(Array.from({ length: 5 }, () => mfa.useChallenge(id, expires)));
    t.equal(raced.filter(Boolean).length, 1, 'of five concurrent uses exactly one wins');
    t.equal(await mfa.challengeUsed(id), true, 'it reads as used');
    t.equal(await mfa.useChallenge(id, expires), false, 'and later ones lose');
    t.equal(await mfa.useChallenge(randomUUID(), expires), true, 'another challenge is its own');
  });
}
