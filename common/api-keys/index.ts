export { ApiKeyVerifier, API_KEY_ISSUER, type ApiKeyPrincipal, type KeyStatusSource, type PublicKeySource, type ApiKeyVerifierOptions } from './verifier.ts';
