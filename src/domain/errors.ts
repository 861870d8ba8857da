// Errors of the domain, thrown below the API and mapped to the spec's codes by it (src/api/server.ts): no module
// under the API needs to know about HTTP.

/** Input that breaks a rule of the domain (a job config field, a value out of range): the API answers 400 H0001. */
export class InvalidInput extends Error {
  override readonly name = "InvalidInput";
}

/** Audio the service does not take (a format outside the spec's list, a WAV codec the engine cannot decode): the API
 * answers 400 H0010. */
export class UnsupportedAudio extends Error {
  override readonly name = "UnsupportedAudio";
}
