export { SoriClient, SoriError, type AudioInput, type SoriClientOptions, type WaitOptions } from "./client.js";
export type * from "./types.js";
