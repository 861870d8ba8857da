export { type AudioInput, SoriClient, type SoriClientOptions, SoriError, type WaitOptions } from "./client.js";
export type * from "./types.js";
